"""The league's own storage: every tower's actions, statuses and games, in SQLite (WAL).

`LeagueStore.take` is the one way in for a checked message (`messages.parse`). An action is
kept under (tower, journal action id): a second delivery of the same id finds it there and
changes nothing. Each tower's game is rebuilt by the rules engine, as the tower built it, in a
`GameHub` of the league's (no journal, no odds): actions in id order; one that arrives late
(an id below one already taken) makes the tower's last games be replayed from their start.
The games table (preset, players, over or not, winner, loser) is what the standings count.
An input whose message names who made it (``who``) is checked against the replay first: one
naming another player is never applied, and is listed with the refused messages.

The file is created with WAL and ``synchronous=FULL`` like the tower's journal: a message
taken before a power cut is there after it, and opening the league again rebuilds every
table from its stored actions. It can also be filled again from scratch by the broker's
retained statuses and the towers' journals (`dicetower league serve` on a new file; each tower
publishes its whole journal when its cursor file is removed).

Every change bumps a version and wakes the board's live streams (`wait_for_change`).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from firmware_host.hub import GameHub, HubError
from firmware_host.hub.replay import replay_action
from firmware_host.league.messages import ActionMessage, StatusMessage
from firmware_host.league.standings import Scoring, history, player_key, resolve, standings
from firmware_host.league.throwers import thrower
from firmware_host.rules import RuleError

log = logging.getLogger(__name__)

APPLICATION_ID = 0x44544C47  # "DTLG": tells the league's file from any other SQLite file
SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS actions (
    tower TEXT NOT NULL, id INTEGER NOT NULL, prev INTEGER NOT NULL,
    received REAL NOT NULL, body TEXT NOT NULL, PRIMARY KEY (tower, id));
CREATE TABLE IF NOT EXISTS towers (
    name TEXT PRIMARY KEY, status TEXT NOT NULL DEFAULT 'offline',
    status_at REAL NOT NULL DEFAULT 0, seen REAL NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS games (
    tower TEXT NOT NULL, start INTEGER NOT NULL, preset TEXT NOT NULL, players TEXT NOT NULL,
    last INTEGER NOT NULL, state TEXT NOT NULL, winner INTEGER, loser INTEGER,
    started REAL, finished REAL, PRIMARY KEY (tower, start));
CREATE TABLE IF NOT EXISTS players (key TEXT PRIMARY KEY, name TEXT NOT NULL, at REAL);
CREATE TABLE IF NOT EXISTS aliases (key TEXT PRIMARY KEY, target TEXT NOT NULL, at REAL);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

REPLAY_ERRORS = (RuleError, HubError, ValueError, KeyError, TypeError)
FLOORS = "floors"  # the setting of a season started from another (`season`)
SEASON = "season"  # the setting naming the season: {"name", "since", "after"}


class StreamsEnded(Exception):
    """The board is stopping: open live streams should finish now."""


class LeagueError(Exception):
    """The league's file cannot be used; the message names it and says what to do."""


class _Table:
    """One tower's game as the league rebuilt it."""

    def __init__(self) -> None:
        self.hub = GameHub()
        self.last = 0  # the last action id applied
        self.start = 0  # the id of the current game's new_game (0: none yet)
        self.throw_at: float | None = None  # when its last accepted throw was made
        # The lowest action id taken but not yet applied (late, or after a missing one):
        # the game is replayed from there once nothing is missing.
        self.held: int | None = None


class LeagueStore:
    """The league's file and every table's game; thread-safe (one lock)."""

    def __init__(self, path: str | Path, scoring: Scoring | None = None) -> None:
        self.path = Path(path)
        self.scoring = scoring or Scoring()
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._version = 0
        self._ended = 0
        self.duplicates = 0  # actions delivered again, taken once
        self.refused: list[str] = []  # why messages were refused, the latest last
        self._tables: dict[str, _Table] = {}
        self._db = _open(self.path)
        # Per tower, the last action id of an earlier season (`season.new_season`): what is
        # at or below it is not this season's, and never missing.
        self._floors = {str(tower): int(floor)
                        for tower, floor in (self.setting(FLOORS) or {}).items()}
        for (tower,) in self._db.execute("SELECT DISTINCT tower FROM actions").fetchall():
            self._replay(tower, 0)
            if self.missing_from(tower) is not None:
                self._tables[tower].held = 1  # holes left: wait for them (see `take`)

    # ------------------------------------------------------------------ taking messages in

    def take(self, kind: str, message: ActionMessage | StatusMessage) -> str:
        """Take one checked message; return ``new`` (applied), ``duplicate`` (already held),
        ``late`` (a missing one: the tower's game replayed), ``held`` (kept until the
        missing ones before it come: ask for them, `missing_from`), ``refused`` (it names
        another player than the game's: see `_apply`) or ``status``."""
        with self._changed:
            if isinstance(message, StatusMessage):
                self._db.execute(
                    "INSERT INTO towers (name, status, status_at, seen) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET status = excluded.status, "
                    "status_at = excluded.status_at, seen = excluded.seen",
                    (message.tower, message.status, message.at, time.time()))
                self._bump()
                return "status"
            body = message.action.model_dump()
            if body.get("who") is None:
                body.pop("who", None)  # an input by no player: kept as the hub wrote it
            with self._transaction():
                return self._take_action(message, body)

    def _take_action(self, message: ActionMessage, body: dict[str, Any]) -> str:
        floor = self._floors.get(message.tower, 0)
        if message.id <= floor:
            return "duplicate"  # an earlier season's: counted there already
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO actions (tower, id, prev, received, body) "
            "VALUES (?, ?, ?, ?, ?)", (message.tower, message.id, message.prev,
                                       time.time(), json.dumps(body)))
        if cursor.rowcount == 0:
            self.duplicates += 1
            return "duplicate"
        self._db.execute("INSERT OR IGNORE INTO towers (name, seen) VALUES (?, ?)",
                         (message.tower, time.time()))
        tower = message.tower
        table = self._tables.setdefault(tower, _Table())
        follows = message.prev <= floor or self._db.execute(
            "SELECT 1 FROM actions WHERE tower = ? AND id = ?", (tower, message.prev)
        ).fetchone() is not None
        if table.held is None and message.id > table.last and follows:
            # The usual case: the next one.
            outcome = "new" if self._apply(tower, table, message.id, body) else "refused"
        else:
            # Late, or after a missing one: the game is replayed once nothing is missing.
            table.held = min(message.id, table.held or message.id)
            if self.missing_from(tower) is None:
                self._replay(tower, table.held)
                outcome = "late"
            else:
                outcome = "held"
        self._bump()
        return outcome

    def missing_from(self, tower: str) -> int | None:
        """The first action id of ``tower`` the league lacks before one it holds (what to
        ask the tower to publish again from), or None when nothing is missing."""
        with self._lock:
            floor = self._floors.get(tower, 0)
            row = self._db.execute(
                "SELECT min(a.prev) FROM actions a WHERE a.tower = ? AND a.prev > ? AND NOT "
                "EXISTS (SELECT 1 FROM actions b WHERE b.tower = a.tower AND b.id = a.prev)",
                (tower, floor)).fetchone()
            if row is None or row[0] is None:
                return None
            below = self._db.execute("SELECT max(id) FROM actions WHERE tower = ? AND id < ?",
                                     (tower, row[0])).fetchone()
        return max(int(below[0] or 0), floor) + 1

    def refuse(self, reason: str) -> None:
        """Note a refused message (shown to the game master, kept short)."""
        with self._changed:
            self.refused = [*self.refused[-49:], reason]
            self._bump()

    # ------------------------------------------------------------------ the players

    def register(self, name: str) -> str:
        """A player picks a name once: kept as they wrote it; returns its key."""
        shown = " ".join(str(name).split())[:40]
        key = player_key(shown)
        if not key:
            raise ValueError("empty name")
        with self._changed:
            self._db.execute("INSERT INTO players (key, name, at) VALUES (?, ?, ?) "
                             "ON CONFLICT(key) DO UPDATE SET name = excluded.name",
                             (key, shown, time.time()))
            self._bump()
        return key

    def merge(self, name: str, into: str) -> None:
        """The game master merges two names: ``name``'s games count for ``into``."""
        source, target = player_key(name), player_key(into)
        if not source or not target or source == target:
            raise ValueError("two different names are needed")
        with self._changed:
            if resolve(target, self._aliases()) == source:
                raise ValueError(f"{into!r} is already merged into {name!r}")
            self._db.execute("INSERT INTO aliases (key, target, at) VALUES (?, ?, ?) "
                             "ON CONFLICT(key) DO UPDATE SET target = excluded.target",
                             (source, target, time.time()))
            self._bump()

    def setting(self, key: str) -> Any:
        """A JSON document the league keeps (the tournament), or None."""
        with self._lock:
            row = self._db.execute("SELECT value FROM settings WHERE key = ?", (key,)
                                   ).fetchone()
        return None if row is None else json.loads(row[0])

    def set_setting(self, key: str, value: Any) -> None:
        with self._changed:
            self._db.execute("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) "
                             "DO UPDATE SET value = excluded.value", (key, json.dumps(value)))
            self._bump()

    # ------------------------------------------------------------------ reading

    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    def wait_for_change(self, after: int, timeout: float) -> int | None:
        """Block until the version differs from ``after``; None on timeout. Raises
        `StreamsEnded` when `end_streams` is called meanwhile (the server stops)."""
        with self._changed:
            ended = self._ended
            if not self._changed.wait_for(
                    lambda: self._version != after or self._ended != ended, timeout=timeout):
                return None
            if self._ended != ended:
                raise StreamsEnded
            return self._version

    def end_streams(self) -> None:
        with self._changed:
            self._ended += 1
            self._changed.notify_all()

    def games(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT tower, start, preset, players, last, state, winner, loser, started, "
                "finished FROM games ORDER BY started, tower, start").fetchall()
        keys = ("tower", "start", "preset", "players", "last", "state", "winner", "loser",
                "started", "finished")
        return [{**dict(zip(keys, row, strict=True)), "players": json.loads(row[3])}
                for row in rows]

    def standings(self, preset: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            games, aliases, names = self.games(), self._aliases(), self._names()
        return [record.to_json()
                for record in standings(games, self.scoring, aliases, names, preset=preset)]

    def player(self, name: str) -> dict[str, Any]:
        """A player's record (after merges) and every game of theirs."""
        with self._lock:
            games, aliases, names = self.games(), self._aliases(), self._names()
        key = resolve(player_key(name), aliases)
        line = next((r for r in standings(games, self.scoring, aliases, names)
                     if r.key == key), None)
        merged = sorted(alias for alias in aliases if resolve(alias, aliases) == key)
        return {"key": key, "name": names.get(key, line.name if line else name),
                "record": line.to_json() if line else None, "merged": merged,
                "games": history(games, key, self.scoring, aliases)}

    def tables(self) -> list[dict[str, Any]]:
        """Every tower the league knows, with its status and its game as it stands."""
        with self._lock:
            rows = self._db.execute("SELECT name, status, status_at, seen FROM towers "
                                    "ORDER BY name").fetchall()
            # Only a table holding actions back can lack some: the others cost no query.
            gaps = {name: self._db.execute(
                "SELECT count(*) FROM actions a WHERE a.tower = ? AND a.prev > ? AND NOT "
                "EXISTS (SELECT 1 FROM actions b WHERE b.tower = a.tower AND b.id = a.prev)",
                (name, self._floors.get(name, 0))).fetchone()[0]
                for name, table in self._tables.items() if table.held is not None}
            result = []
            for name, status, status_at, seen in rows:
                table = self._tables.get(name)
                state = table.hub.state() if table is not None else None
                result.append({"tower": name, "status": status, "status_at": status_at,
                               "seen": seen, "last": table.last if table else 0,
                               "throw_at": table.throw_at if table else None,
                               "gaps": int(gaps.get(name, 0)),
                               "game": _summary(state.game, state.ended) if state else None})
            return result

    def counts(self) -> dict[str, int]:
        """Actions kept per tower (what a check against the towers' journals compares)."""
        with self._lock:
            return dict(self._db.execute("SELECT tower, count(*) FROM actions GROUP BY tower"
                                         ).fetchall())

    def close(self) -> None:
        self.end_streams()
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------------ internals

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """An action, its game's row and its tower's row are written together or not."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _bump(self) -> None:
        self._version += 1
        self._changed.notify_all()

    def _aliases(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT key, target FROM aliases").fetchall())

    def _names(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT key, name FROM players").fetchall())

    def _apply(self, tower: str, table: _Table, action_id: int, body: dict[str, Any]) -> bool:
        """Apply one action after the table's last; keep the games table in step. False
        when it names another thrower than the game's (kept in its place, so that what follows
        is not held back, but never applied, and listed with the refused messages)."""
        table.last = action_id
        claimed = body.get("who")
        if claimed is not None:
            expected = thrower(table.hub, body)
            if claimed != expected:
                self.refused = [*self.refused[-49:], f"{tower}: action {action_id} refused: "
                                f"it names {_seat(claimed)} as the player, the game says "
                                f"{_seat(expected)}"]
                return False
        try:
            replay_action(table.hub, body)
        except REPLAY_ERRORS as exc:
            # Accepted by the tower's engine but not by ours (another version?): the
            # action is kept, the game goes on without it, the game master is told.
            self.refused = [*self.refused[-49:], f"{tower}: action {action_id} not "
                            f"replayed ({exc})"]
            return True
        kind = body.get("action")
        if kind == "new_game":
            table.start = action_id
            self._db.execute(
                "INSERT OR REPLACE INTO games (tower, start, preset, players, last, state, "
                "started) VALUES (?, ?, ?, ?, ?, 'playing', ?)",
                (tower, action_id, str(body.get("preset")), json.dumps(body.get("players")),
                 action_id, body.get("at")))
            return True
        if kind in ("event", "correct") and (body.get("event") or {}).get("type") != "undo":
            table.throw_at = body.get("at")
        if not table.start:
            return True
        state = table.hub.state()
        game = state.game or {}
        over = game.get("phase") == "over"  # over by the rules, not ended by hand
        status = "over" if over else "ended" if state.ended else "playing"
        self._db.execute("UPDATE games SET last = ?, state = ?, winner = ?, loser = ?, "
                         "finished = ? WHERE tower = ? AND start = ?",
                         (action_id, status, game.get("winner") if over else None,
                          game.get("loser") if over else None,
                          body.get("at") if status != "playing" else None, tower, table.start))
        return True

    def _replay(self, tower: str, late_id: int) -> None:
        """Rebuild ``tower``'s game from the start of the game holding ``late_id`` on."""
        row = self._db.execute("SELECT max(id) FROM actions WHERE tower = ? AND id <= ? AND "
                               "json_extract(body, '$.action') = 'new_game'",
                               (tower, late_id or 0)).fetchone()
        start = row[0] if row and row[0] is not None else 0
        self._db.execute("DELETE FROM games WHERE tower = ? AND start >= ?", (tower, start))
        table = self._tables[tower] = _Table()
        rows = self._db.execute("SELECT id, body FROM actions WHERE tower = ? AND id >= ? "
                                "ORDER BY id", (tower, start)).fetchall()
        for action_id, body in rows:
            self._apply(tower, table, int(action_id), json.loads(body))


def _seat(who: Any) -> str:
    """A player named in a message, for the game master's list of refusals."""
    if not isinstance(who, dict):
        return "no one"
    return f"{who.get('name')!r} (seat {who.get('player')})"


def _summary(view: dict[str, Any] | None, ended: bool) -> dict[str, Any] | None:
    """What the board shows of a table's game: players, tokens, who throws, the hand."""
    if view is None:
        return None
    to_move = view.get("to_move")
    players = view.get("players") or []
    return {
        "kind": view.get("game"), "preset": view.get("preset"), "phase": view.get("phase"),
        "ended": ended, "to_move": players[to_move]["name"] if to_move is not None else None,
        "players": [{"name": p["name"], "tokens": p.get("tokens", 0),
                     "score": p.get("score", 0), "out": p.get("out", False)}
                    for p in players],
        "dice": list(view.get("dice") or []), "pot": view.get("pot"),
        "winner": players[view["winner"]]["name"] if view.get("winner") is not None else None,
        "loser": players[view["loser"]]["name"] if view.get("loser") is not None else None,
    }


def _open(path: Path) -> sqlite3.Connection:
    """Open or create the league's file, checking it is one (and not from a newer version)."""
    if path.is_dir():
        raise LeagueError(f"{path}: is a folder; give the league a file name (league.sqlite3)")
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists() or path.stat().st_size == 0
    try:
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
        if new:
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if app_id != APPLICATION_ID:
            db.close()
            raise LeagueError(f"{path}: not a dicetower league file; point --league "
                              "at another file")
        if version > SCHEMA_VERSION:
            db.close()
            raise LeagueError(f"{path}: written by a newer dicetower; upgrade dicetower")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
        db.executescript(SCHEMA)
    except sqlite3.DatabaseError as exc:
        raise LeagueError(f"{path}: not a readable league file ({exc}); move it away or "
                          "point --league elsewhere") from None
    return db
