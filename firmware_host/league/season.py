"""A new season: a new league file started from the last one, which is kept as it is.

One league file is one season. `new_season` makes the next season's file from the last one:
the tables the league knows (with their statuses), the players and their merged names, and
each table's game under way (its actions from its new game on: it goes on, and counts in the
season in which it ends). The finished games, the standings and the tournament stay in the old
file, which is only read, and can be served again on its own.

The new file keeps, per tower, the last action id before the season (its floor, see
`LeagueStore`): the league takes nothing at or below it and never asks a tower for it, so the
towers do not publish their journals again from their start.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

from firmware_host.league.store import APPLICATION_ID, FLOORS, SEASON, LeagueError, LeagueStore

# A season's name is part of a file name: letters, digits, '.', '-' and '_'.
SEASON_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")


def check_season_name(name: str) -> str:
    """``name`` if it can name a season, else ValueError saying what it may be."""
    if not SEASON_NAME.match(name):
        raise ValueError(f"{name!r} cannot name a season: letters, digits, '.', '-' and '_' "
                         "(40 at most), e.g. 2026-autumn")
    return name


def season_file(old: Path, name: str) -> Path:
    """Where season ``name`` goes by default: ``league-NAME.sqlite3`` beside ``old``."""
    return old.with_name(f"league-{check_season_name(name)}{old.suffix or '.sqlite3'}")


def new_season(old: Path, new: Path, name: str, *, now: float | None = None) -> dict[str, Any]:
    """Make season ``name``'s file ``new`` from the league file ``old`` (only read); returns
    what it carried over: ``{"tables", "games_under_way", "players", "merged"}``.
    `LeagueError` when ``old`` is not a league file or ``new`` exists already."""
    check_season_name(name)
    if not old.is_file():
        raise LeagueError(f"{old}: no such league file; give the last season's with --league")
    if new.exists():
        raise LeagueError(f"{new}: exists already; a new season needs a new file")
    carried = _read(old)
    # Filled aside and put in place at once: a failure leaves no half-made season behind.
    temporary = new.with_name(new.name + ".new")
    for leftover in _files(temporary):
        leftover.unlink(missing_ok=True)
    LeagueStore(temporary).close()  # the league's schema, application id and version
    db = sqlite3.connect(temporary, isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT INTO towers (name, status, status_at, seen) VALUES (?, ?, ?, ?)",
                       carried["towers"])
        db.executemany("INSERT INTO actions (tower, id, prev, received, body) "
                       "VALUES (?, ?, ?, ?, ?)", carried["actions"])
        db.executemany("INSERT INTO players (key, name, at) VALUES (?, ?, ?)",
                       carried["players"])
        db.executemany("INSERT INTO aliases (key, target, at) VALUES (?, ?, ?)",
                       carried["aliases"])
        season = {"name": name, "since": time.time() if now is None else now,
                  "after": str(old)}
        db.executemany("INSERT INTO settings (key, value) VALUES (?, ?)",
                       [(FLOORS, json.dumps(carried["floors"])),
                        (SEASON, json.dumps(season))])
        db.execute("COMMIT")
    finally:
        db.close()
    os.replace(temporary, new)
    return {"tables": len(carried["towers"]), "games_under_way": carried["under_way"],
            "players": len(carried["players"]), "merged": len(carried["aliases"])}


def _read(old: Path) -> dict[str, Any]:
    """What the next season takes from ``old``, read without writing to it."""
    try:
        db = sqlite3.connect(f"{old.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise LeagueError(f"{old}: cannot be read ({exc})") from None
    try:
        if db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
            raise LeagueError(f"{old}: not a dicetower league file")
        towers = db.execute("SELECT name, status, status_at, seen FROM towers").fetchall()
        floors: dict[str, int] = {}
        actions: list[tuple[Any, ...]] = []
        under_way = 0
        for (tower,) in db.execute("SELECT DISTINCT tower FROM actions").fetchall():
            last = db.execute("SELECT max(id) FROM actions WHERE tower = ?",
                              (tower,)).fetchone()[0]
            game = db.execute("SELECT start, state FROM games WHERE tower = ? "
                              "ORDER BY start DESC LIMIT 1", (tower,)).fetchone()
            if game is not None and game[1] == "playing":
                floors[tower] = int(game[0]) - 1  # the game under way goes on
                actions += db.execute(
                    "SELECT tower, id, prev, received, body FROM actions WHERE tower = ? "
                    "AND id >= ? ORDER BY id", (tower, game[0])).fetchall()
                under_way += 1
            else:
                floors[tower] = int(last)
        return {"towers": towers, "floors": floors, "actions": actions,
                "under_way": under_way,
                "players": db.execute("SELECT key, name, at FROM players").fetchall(),
                "aliases": db.execute("SELECT key, target, at FROM aliases").fetchall()}
    except sqlite3.DatabaseError as exc:
        raise LeagueError(f"{old}: not a readable league file ({exc})") from None
    finally:
        db.close()


def _files(path: Path) -> list[Path]:
    """An SQLite file and the files it may leave beside it."""
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
