"""Path checks shared by the commands that write files (journals, profiles).

Python's own errors for a path whose folder is in fact a file ("File exists", "Not a
directory") do not say which part of the path is wrong; these checks do, before anything is
written.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from firmware_host.hub.journal import default_journal


def file_in_the_way(path: Path) -> Path | None:
    """The first folder of ``path`` that exists as something other than a folder, if any."""
    for folder in reversed(path.parents):
        if folder.exists() and not folder.is_dir():
            return folder
        if not folder.exists():
            return None
    return None


def writable_file_problem(path: Path, what: str) -> str | None:
    """Why ``path`` cannot be written as a file named by ``what`` ("the journal"), or None."""
    blocker = file_in_the_way(path)
    if blocker is not None:
        return f"{path}: {blocker} is a file, not a folder; give {what} another place"
    if path.is_dir():
        return f"{path}: is a folder; give {what} a file name"
    return None


# Where the guide, `doctor` and `service install` keep the tower's configuration.
DEFAULT_CONFIG = Path("~/dicetower/tower.toml")


def tower_journal(journal: Path | None, config: Path | None) -> tuple[Path, Path | None]:
    """The journal a command keeps the game in, and the configuration that named it.

    ``journal`` when given; else the ``[journal] path`` of ``config`` (or of `DEFAULT_CONFIG`
    when it exists), taken from the configuration's folder when relative, as `dicetower run`
    takes it; else, as `run` does without one, the user's data directory. Only that key is
    read: a configuration whose camera or pin map `run` refuses still names the journal.
    ValueError (one line) for a configuration given but missing or unreadable, not valid
    TOML, or whose path is not text.
    """
    if journal is not None:
        return journal, None
    if config is None:
        config = DEFAULT_CONFIG.expanduser()
        if not config.is_file():
            return default_journal(), None
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ValueError(f"{config}: no such configuration file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{config}: cannot read it ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{config}: not valid TOML ({exc})") from None
    table = data.get("journal", {})
    if not isinstance(table, dict):
        raise ValueError(f"{config}: 'journal' must be a table ([journal]), not a value")
    path = table.get("path")
    if path is None:
        return default_journal(), config
    if not isinstance(path, str) or not path.strip():
        raise ValueError(f"{config}: [journal] path must be a file name, not {path!r}")
    named = Path(path).expanduser()
    return (named if named.is_absolute() else config.parent / named), config
