"""Path checks shared by the commands that write files (journals, profiles).

Python's own errors for a path whose folder is in fact a file ("File exists", "Not a
directory") do not say which part of the path is wrong; these checks do, before anything is
written.
"""

from __future__ import annotations

from pathlib import Path


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
