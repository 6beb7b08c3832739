"""The tower's configuration file (`dicetower run --config tower.toml`), checked at start-up.

Every error names the file, the key and the fix, in one line (`ConfigError`). Relative paths
are taken from the file's folder, so a tower folder can be moved whole. The commented example,
`tower.example.toml`, ships beside this module; `load_config` reads it as it is.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from firmware_host.camera import SPEC_HELP, CameraError, camera_from_spec

EXAMPLE_CONFIG = Path(__file__).with_name("tower.example.toml")
LANGUAGES = ("fr", "en")
# Who sees the odds advice (firmware_host.scoreboard.odds.ODDS_MODES, named here so that the
# configuration is read without loading the scoreboard).
ODDS_MODES = ("public", "admin-only")

#: Every table and key the file may hold, with the type each value must have.
SCHEMA: dict[str, dict[str, tuple[type, ...]]] = {
    "camera": {"source": (str,), "fps": (int, float), "size": (list,), "lock": (bool,),
               "exposure_us": (int, float), "gain": (int, float), "colour_gains": (list,),
               "lens_position": (int, float)},
    "tower": {"pinmap": (str,), "profile": (str,)},
    "game": {"preset": (str,), "players": (list,), "knobs": (dict,)},
    "scoreboard": {"host": (str,), "port": (int,), "pin": (str,), "lang": (str,),
                   "odds": (str,)},
    "journal": {"path": (str,), "max_images_mb": (int, float)},
    "reading": {"hold": (int, float), "agree": (int,)},
}


class ConfigError(ValueError):
    """The configuration cannot be used; the message names the file, the key and the fix."""


def default_journal() -> Path:
    """Where the journal lives unless told otherwise: the user's data directory."""
    return Path(platformdirs.user_data_dir("dicetower")) / "journal.sqlite3"


@dataclass
class TowerConfig:
    """A checked configuration. ``pinmap`` None means mock pins (a simulated tower)."""

    camera: str = "simulated"
    fps: float = 15.0
    camera_size: tuple[int, int] | None = None  # None: the source's own default
    # Locked picture settings in picamera2's names and units (ExposureTime in µs...).
    camera_controls: dict[str, Any] = field(default_factory=dict)
    camera_lock: bool = True  # measure what is not given at start, then fix it
    pinmap: Path | None = None
    profile: Path | None = None
    preset: str = "tim-11"
    players: list[str] = field(default_factory=lambda: ["Ana", "Ben", "Cleo"])
    knobs: dict[str, Any] = field(default_factory=dict)
    host: str = "0.0.0.0"
    port: int = 8000
    pin: str | None = None
    lang: str = "fr"
    odds: str = "public"  # who sees the odds advice: public, or admin-only (SCOREBOARD_ODDS)
    journal: Path = field(default_factory=default_journal)
    max_images_mb: float = 200.0
    hold: float = 0.4
    agree: int = 2
    source: Path | None = None  # the file it was read from


def load_config(path: str | Path) -> TowerConfig:
    """Read and check ``path``; `ConfigError` (one line: file, key, fix) when it is wrong."""
    file = Path(path)
    try:
        # utf-8-sig: a file saved by an editor that writes a byte-order mark reads the same.
        text = file.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{file}: no such file (copy {EXAMPLE_CONFIG.name} from "
                          f"{EXAMPLE_CONFIG.parent} and edit it)") from None
    except IsADirectoryError:
        raise ConfigError(f"{file}: is a folder, not a configuration file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read it ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML ({exc}); fix the line it names") from None
    return config_from_dict(data, file)


def config_from_dict(data: dict[str, Any], file: Path) -> TowerConfig:
    """A `TowerConfig` from parsed TOML; relative paths are taken from ``file``'s folder."""
    where = str(file)
    for table, values in data.items():
        if table not in SCHEMA:
            raise ConfigError(f"{where}: unknown table [{table}]; the tables are "
                              f"{', '.join(f'[{t}]' for t in SCHEMA)}")
        if not isinstance(values, dict):
            raise ConfigError(f"{where}: '{table}' must be a table ([{table}]), not a value")
        for key, value in values.items():
            types = SCHEMA[table].get(key)
            if types is None:
                raise ConfigError(f"{where}: unknown key '{key}' in [{table}]; known keys: "
                                  f"{', '.join(SCHEMA[table])}")
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                wanted = " or ".join(t.__name__.replace("str", "text").replace(
                    "dict", "table").replace("float", "number").replace("int", "whole number"
                    ).replace("bool", "true or false")
                    for t in types)
                raise ConfigError(f"{where}: [{table}] {key} must be {wanted}, "
                                  f"not {value!r}")
    base = file.parent
    config = TowerConfig(source=file)
    camera = data.get("camera", {})
    if "source" in camera:
        config.camera = _camera_spec(base, camera["source"])
        try:
            camera_from_spec(config.camera)  # checks the spec; opens nothing
        except ValueError:
            raise ConfigError(f"{where}: [camera] source = {camera['source']!r} is not a "
                              f"camera; use {SPEC_HELP}") from None
        except CameraError as exc:
            raise ConfigError(f"{where}: [camera] source: {exc}") from None
    if "fps" in camera:
        config.fps = _positive(where, "camera", "fps", camera["fps"], 1, 120)
    _camera_settings(where, camera, config)
    tower = data.get("tower", {})
    if "pinmap" in tower:
        config.pinmap = None if tower["pinmap"] == "simulated" else _path(base, tower["pinmap"])
    if "profile" in tower:
        config.profile = _path(base, tower["profile"])
    game = data.get("game", {})
    if "preset" in game:
        config.preset = game["preset"]
    if "players" in game:
        names = game["players"]
        if not all(isinstance(n, str) for n in names):
            raise ConfigError(f"{where}: [game] players must be a list of names in quotes, "
                              f'e.g. players = ["Ana", "Ben"]')
        config.players = list(names)
    if "knobs" in game:
        config.knobs = dict(game["knobs"])
    _check_game(where, config)
    board = data.get("scoreboard", {})
    config.host = board.get("host", config.host)
    if "port" in board:
        config.port = int(_positive(where, "scoreboard", "port", board["port"], 1, 65535))
    if "pin" in board:
        pin = board["pin"]
        if not (pin.isdigit() and pin.isascii() and len(pin) >= 4):
            raise ConfigError(f"{where}: [scoreboard] pin must be at least 4 digits in quotes, "
                              f'e.g. pin = "4821" (or leave it out for a random one)')
        config.pin = pin
    if "lang" in board:
        if board["lang"] not in LANGUAGES:
            raise ConfigError(f"{where}: [scoreboard] lang must be one of "
                              f"{', '.join(LANGUAGES)}, not {board['lang']!r}")
        config.lang = board["lang"]
    if "odds" in board:
        if board["odds"] not in ODDS_MODES:
            raise ConfigError(f"{where}: [scoreboard] odds must be one of "
                              f"{', '.join(ODDS_MODES)}, not {board['odds']!r}")
        config.odds = board["odds"]
    journal = data.get("journal", {})
    if "path" in journal:
        config.journal = _path(base, journal["path"])
    if "max_images_mb" in journal:
        config.max_images_mb = _positive(where, "journal", "max_images_mb",
                                         journal["max_images_mb"], 0, 100_000)
    reading = data.get("reading", {})
    if "hold" in reading:
        config.hold = _positive(where, "reading", "hold", reading["hold"], 0.05, 5.0)
    if "agree" in reading:
        config.agree = int(_positive(where, "reading", "agree", reading["agree"], 1, 10))
    return config


def _camera_settings(where: str, camera: dict[str, Any], config: TowerConfig) -> None:
    """[camera] size, lock and the picture settings it locks."""
    if "size" in camera:
        size = camera["size"]
        if not (len(size) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                       and 64 <= v <= 8192 and v % 2 == 0 for v in size)):
            raise ConfigError(f"{where}: [camera] size must be [width, height] in even whole "
                              f"pixels from 64 to 8192, e.g. size = [2304, 1296], not {size!r}")
        config.camera_size = (size[0], size[1])
    if "lock" in camera:
        config.camera_lock = camera["lock"]
    controls: dict[str, Any] = {}
    if "exposure_us" in camera:
        controls["ExposureTime"] = int(_positive(where, "camera", "exposure_us",
                                                 camera["exposure_us"], 10, 1_000_000))
    if "gain" in camera:
        controls["AnalogueGain"] = _positive(where, "camera", "gain", camera["gain"], 1, 64)
    if "colour_gains" in camera:
        gains = camera["colour_gains"]
        if not (len(gains) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                        and 0 < v <= 32 for v in gains)):
            raise ConfigError(f"{where}: [camera] colour_gains must be [red, blue] gains from "
                              f"0 to 32, e.g. colour_gains = [1.9, 1.6], not {gains!r}")
        controls["ColourGains"] = (float(gains[0]), float(gains[1]))
    if "lens_position" in camera:
        controls["LensPosition"] = _positive(where, "camera", "lens_position",
                                             camera["lens_position"], 0, 32)
    config.camera_controls = controls


def _check_game(where: str, config: TowerConfig) -> None:
    from firmware_host.rules import RuleError, new_game

    try:
        new_game(config.preset, list(config.players), dict(config.knobs) or None)
    except RuleError as exc:
        raise ConfigError(f"{where}: [game] {exc}") from None


def _positive(where: str, table: str, key: str, value: float, low: float,
              high: float) -> float:
    if not low <= value <= high:
        raise ConfigError(f"{where}: [{table}] {key} must be from {low:g} to {high:g}, "
                          f"not {value!r}")
    return float(value)


def _camera_spec(base: Path, spec: str) -> str:
    """``spec`` with the path of a ``folder:`` or ``file:`` camera taken from ``base``."""
    kind, colon, rest = spec.strip().partition(":")
    if colon and kind in ("folder", "file") and rest.strip():
        return f"{kind}:{_path(base, rest)}"
    return spec


def _path(base: Path, text: str) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else base / path
