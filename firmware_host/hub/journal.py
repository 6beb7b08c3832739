"""The journal: every game input, every token dispensed and every accepted throw's image, in SQLite.

One file, in WAL mode with ``synchronous=FULL``: a change committed before the power went is
there after it. The hub (`GameHub`) hands each accepted input to `Journal.record` before the
phones hear of it and before any of its effects is carried out, so restarting replays the
same inputs into a fresh hub (`GameHub.open_journal`) and finds the same game.

Tokens have a ledger of their own (`dispenses`): a dispense is written as *intended* in the
same transaction as the input that caused it (or as soon as a restart finds it missing), marked
*started* before the first servo stroke, counted token by token, and *done* at the end. A
dispense found *started* on restart was cut off: how many tokens really fell is known only to
the people at the table, so it waits for the game master to confirm (`confirm`), never guessed.

Images of accepted throws (`images`) are kept for review within a disk budget, oldest pruned.
A journal written by a newer dicetower, a truncated file or one that is not a journal is
refused with a `JournalError` naming the file; nothing is ever silently replaced.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import platformdirs

try:
    import fcntl
except ImportError:  # Windows: no flock, so no lock (see _claim)
    fcntl = None  # type: ignore[assignment]

SCHEMA_VERSION = 1
APPLICATION_ID = 0x44544F57  # "DTOW": tells our files from any other SQLite database
SQLITE_MAGIC = b"SQLite format 3\x00"

SCHEMA = """
CREATE TABLE IF NOT EXISTS actions (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS dispenses (
    id INTEGER PRIMARY KEY,
    action INTEGER NOT NULL REFERENCES actions(id),
    seat INTEGER NOT NULL,
    requested INTEGER NOT NULL,
    delivered INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT 'intended',
    note TEXT NOT NULL DEFAULT '',
    updated REAL NOT NULL,
    UNIQUE (action, seat)
);
CREATE TABLE IF NOT EXISTS images (
    action INTEGER PRIMARY KEY REFERENCES actions(id),
    at REAL NOT NULL,
    jpeg BLOB NOT NULL,
    dice TEXT NOT NULL
);
"""

#: States of a dispense: intended -> started -> done; or void (its input was undone or
#: corrected before a token fell); or doubt (cut off mid-way: waits for the game master).
DISPENSE_STATES = ("intended", "started", "done", "void", "doubt")


def default_journal() -> Path:
    """Where the tower's journal lives unless told otherwise: the user's data directory."""
    return Path(platformdirs.user_data_dir("dicetower")) / "journal.sqlite3"


class JournalError(Exception):
    """The journal file cannot be used; the message names it and says what to do."""


@dataclass(frozen=True)
class Dispense:
    """One row of the token ledger."""

    id: int
    action: int
    seat: int  # 0-based, as the rules engine numbers players
    requested: int
    delivered: int
    state: str
    note: str = ""

    @property
    def remaining(self) -> int:
        return max(0, self.requested - self.delivered)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "seat": self.seat, "requested": self.requested,
                "delivered": self.delivered, "state": self.state, "note": self.note}


class Journal:
    """An open journal file. Thread-safe: one connection, one lock."""

    def __init__(self, path: str | Path, *, max_image_bytes: int = 200 * 1024 * 1024,
                 exclusive: bool = False, read_only: bool = False) -> None:
        """Open (or create) the journal at ``path``. ``exclusive``: the game's one writer
        (`run`, `demo`, `serve`); a second one on the same file is a `JournalError`, as two
        towers appending to one game would make a game neither of them played.
        ``read_only``: an existing journal, read beside its running writer (WAL lets a reader
        in while it commits): no lock taken, nothing created or changed."""
        if exclusive and read_only:
            raise ValueError("a read-only journal cannot be the game's writer")
        self.path = Path(path)
        self.max_image_bytes = max_image_bytes
        self._lock = threading.RLock()
        self._claim = _claim(self.path) if exclusive else None
        try:
            self._db = _open_read_only(self.path) if read_only else _open(self.path)
        except BaseException:
            if self._claim is not None:
                self._claim.close()
            raise

    # ------------------------------------------------------------------ inputs

    def record(self, action: dict[str, Any], dispenses: list[tuple[int, int]] = ()) -> int:
        """Write one hub action (and the dispenses it makes: (seat, count)) atomically;
        return its id. Durable when this returns."""
        body = json.dumps(action, separators=(",", ":"), ensure_ascii=False)
        with self._transaction() as db:
            cursor = db.execute("INSERT INTO actions (at, kind, body) VALUES (?, ?, ?)",
                                (float(action.get("at", time.time())),
                                 str(action.get("action", "")), body))
            action_id = int(cursor.lastrowid or 0)
            for seat, count in dispenses:
                self._intend(db, action_id, seat, count)
            return action_id

    def actions_since_last_game(self) -> list[tuple[int, dict[str, Any]]]:
        """(id, action) of the last game's actions, from its `new_game` on: what resuming
        replays (earlier games cannot change the current one)."""
        with self._lock:
            row = self._db.execute("SELECT max(id) FROM actions WHERE kind = 'new_game'"
                                   ).fetchone()
            start = row[0] if row and row[0] is not None else 0
            rows = self._db.execute("SELECT id, body FROM actions WHERE id >= ? ORDER BY id",
                                    (start,)).fetchall()
        actions = []
        for action_id, body in rows:
            try:
                actions.append((int(action_id), json.loads(body)))
            except json.JSONDecodeError:
                raise JournalError(f"{self.path}: action {action_id} is damaged; the journal "
                                   "cannot be replayed (keep the file for inspection, start "
                                   "with --journal pointing elsewhere)") from None
        return actions

    def actions_after(self, after: int, limit: int = 100) -> list[tuple[int, dict[str, Any]]]:
        """(id, action) of at most ``limit`` actions after id ``after``, oldest first: what a
        reader that follows the journal (the league's publisher) has not taken yet."""
        with self._lock:
            rows = self._db.execute("SELECT id, body FROM actions WHERE id > ? ORDER BY id "
                                    "LIMIT ?", (int(after), int(limit))).fetchall()
        return [(int(action_id), json.loads(body)) for action_id, body in rows]

    def last_action_id(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT max(id) FROM actions").fetchone()
        return int(row[0] or 0)

    # ------------------------------------------------------------------ the token ledger

    def intend(self, action: int, seat: int, count: int) -> None:
        """Add a dispense found missing (a restart between an input and its ledger rows)."""
        with self._transaction() as db:
            self._intend(db, action, seat, count)

    @staticmethod
    def _intend(db: sqlite3.Connection, action: int, seat: int, count: int) -> None:
        db.execute("INSERT OR IGNORE INTO dispenses (action, seat, requested, updated) "
                   "VALUES (?, ?, ?, ?)", (action, seat, count, time.time()))

    def dispenses(self, states: tuple[str, ...] = DISPENSE_STATES) -> list[Dispense]:
        marks = ",".join("?" * len(states))
        with self._lock:
            rows = self._db.execute(
                f"SELECT id, action, seat, requested, delivered, state, note FROM dispenses "
                f"WHERE state IN ({marks}) ORDER BY id", states).fetchall()
        return [Dispense(*row) for row in rows]

    def dispense(self, dispense_id: int) -> Dispense:
        with self._lock:
            row = self._db.execute(
                "SELECT id, action, seat, requested, delivered, state, note FROM dispenses "
                "WHERE id = ?", (dispense_id,)).fetchone()
        if row is None:
            raise KeyError(dispense_id)
        return Dispense(*row)

    def mark(self, dispense_id: int, state: str, *, delivered: int | None = None,
             note: str | None = None) -> None:
        """Move a dispense to ``state`` (and set how many tokens fell); durable on return."""
        if state not in DISPENSE_STATES:
            raise ValueError(f"unknown dispense state {state!r}")
        with self._transaction() as db:
            db.execute("UPDATE dispenses SET state = ?, updated = ?, "
                       "delivered = coalesce(?, delivered), note = coalesce(?, note) "
                       "WHERE id = ?", (state, time.time(), delivered, note, dispense_id))

    def count_token(self, dispense_id: int, delivered: int) -> None:
        """One more token fell for this dispense: ``delivered`` so far (durable on return)."""
        with self._transaction() as db:
            db.execute("UPDATE dispenses SET delivered = ?, updated = ? WHERE id = ?",
                       (delivered, time.time(), dispense_id))

    def mark_cut_off(self) -> list[Dispense]:
        """At start: every dispense left *started* was cut off by the crash; mark it *doubt*."""
        with self._transaction() as db:
            db.execute("UPDATE dispenses SET state = 'doubt', updated = ?, note = "
                       "'cut off mid-way' WHERE state = 'started'", (time.time(),))
        return self.dispenses(("doubt",))

    def delivered_by_seat(self) -> dict[int, int]:
        """Tokens that fell for each seat over every dispense of the journal (any game)."""
        with self._lock:
            rows = self._db.execute("SELECT seat, sum(delivered) FROM dispenses GROUP BY seat"
                                    ).fetchall()
        return {int(seat): int(total or 0) for seat, total in rows}

    # ------------------------------------------------------------------ images

    def keep_image(self, action: int, jpeg: bytes, dice: list[dict[str, Any]]) -> None:
        """Keep the image of an accepted throw; prune the oldest past the disk budget."""
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO images (action, at, jpeg, dice) "
                       "VALUES (?, ?, ?, ?)", (action, time.time(), sqlite3.Binary(jpeg),
                                               json.dumps(dice, separators=(",", ":"))))
            total = db.execute("SELECT coalesce(sum(length(jpeg)), 0) FROM images"
                               ).fetchone()[0]
            while total > self.max_image_bytes:
                oldest = db.execute("SELECT action, length(jpeg) FROM images ORDER BY action "
                                    "LIMIT 1").fetchone()
                if oldest is None:
                    break
                db.execute("DELETE FROM images WHERE action = ?", (oldest[0],))
                total -= oldest[1]

    def image(self, action: int) -> bytes | None:
        with self._lock:
            row = self._db.execute("SELECT jpeg FROM images WHERE action = ?",
                                   (action,)).fetchone()
        return None if row is None else bytes(row[0])

    def image_bytes(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT coalesce(sum(length(jpeg)), 0) FROM images"
                                        ).fetchone()[0])

    # ------------------------------------------------------------------ accepted throws

    def accepted_throws(self, since: float | None = None, *,
                        turns: bool = True) -> list[dict[str, Any]]:
        """Every throw the camera or the game master entered, with its time and faces
        (``{"at", "faces", "colours"}``; colours None: the dice are not told apart).
        ``turns=False`` leaves out 4D turns: their faces are set by hand, not thrown."""
        with self._lock:
            # Every row, not only those after ``since``: a later correction or undo must
            # find the throw it replaces even when that throw is older.
            rows = self._db.execute(
                "SELECT at, body FROM actions WHERE kind IN ('event', 'correct', 'new_game') "
                "ORDER BY id").fetchall()
        throws: list[tuple[str, dict[str, Any]] | None] = []
        # The current game's history, one entry per input (None: not a throw), as undo and
        # corrections see it; each throw with its event type (a corrected turn stays a turn).
        game: list[tuple[str, dict[str, Any]] | None] = []
        for at, body in rows:
            action = json.loads(body)
            event = action.get("event") or {}
            kind = action.get("action")
            if kind == "new_game":
                throws.extend(game)
                game = []
            elif event.get("type") == "undo":
                if game:
                    game.pop()
            elif kind == "correct":
                if game:
                    thrown = game[-1][0] if game[-1] is not None else "throw"
                    game[-1] = (thrown, {"at": float(at), "faces": list(action.get("faces") or []),
                                         "colours": None})
            elif event.get("type") in ("throw", "turn") and event.get("faces"):
                game.append((event["type"], {"at": float(at), "faces": list(event["faces"]),
                                             "colours": None}))
            else:
                game.append(None)
        throws.extend(game)
        return [throw for thrown, throw in filter(None, throws)
                if (turns or thrown != "turn") and (since is None or throw["at"] >= since)]

    # ------------------------------------------------------------------ life cycle

    def close(self) -> None:
        with self._lock:
            self._db.close()
            if self._claim is not None:
                self._claim.close()  # closing the file releases the lock
                self._claim = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise


def _claim(path: Path) -> IO[bytes] | None:
    """Hold an exclusive lock beside the journal (``NAME.lock``) for as long as it is open.

    The operating system releases it when the process ends, however it ends (a SIGKILL or a
    power cut leaves no stale lock behind), which is why it is a kernel lock (``flock``) and not
    a file whose existence means "taken". Where ``flock`` does not exist (Windows), no lock.
    """
    if fcntl is None:
        return None
    if path.is_dir():
        raise JournalError(f"{path}: is a folder; give the journal a file name "
                           "(e.g. journal.sqlite3)")
    lock_path = path.with_name(path.name + ".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_path, "ab")  # noqa: SIM115 - held open until the journal closes
    except OSError as exc:
        raise JournalError(f"{path}: cannot lock the journal ({exc.strerror})") from None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise JournalError(f"{path}: in use by another dicetower (run, serve or demo); stop "
                           "it first, or point --journal elsewhere") from None
    return handle


def _open(path: Path) -> sqlite3.Connection:
    """Open or create the journal at ``path``, checking it is ours and not from the future."""
    if path.is_dir():
        raise JournalError(f"{path}: is a folder; give the journal a file name "
                           "(e.g. journal.sqlite3)")
    new = not path.exists() or path.stat().st_size == 0
    if not new:
        _check_header(path)
    if new:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise JournalError(f"{path}: cannot create its folder ({exc.strerror})") from None
    try:
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot open the journal ({exc})") from None
    try:
        if new:
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        _check_identity(db, path)
        check = db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise JournalError(f"{path}: the journal is damaged ({check}); keep the file for "
                               "inspection and start with --journal pointing elsewhere")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
        db.execute("PRAGMA foreign_keys = ON")
        db.executescript(SCHEMA)
    except sqlite3.DatabaseError as exc:
        db.close()
        raise JournalError(f"{path}: not a readable journal ({exc}); a truncated or damaged "
                           "file is never replaced: move it away or point --journal elsewhere"
                           ) from None
    except JournalError:
        db.close()
        raise
    return db


def _check_identity(db: sqlite3.Connection, path: Path) -> None:
    """Refuse another application's SQLite file, or a journal from a newer dicetower."""
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if app_id != APPLICATION_ID:
        raise JournalError(f"{path}: not a dicetower journal (another SQLite database?); "
                           "point --journal at another file")
    if version > SCHEMA_VERSION:
        raise JournalError(f"{path}: written by a newer dicetower (journal format "
                           f"{version}, this one reads up to {SCHEMA_VERSION}); upgrade "
                           "dicetower")


def _open_read_only(path: Path) -> sqlite3.Connection:
    """Open an existing journal to read it, even while its writer runs (no lock, no change)."""
    if path.is_dir():
        raise JournalError(f"{path}: is a folder; give the journal's file (journal.sqlite3)")
    if not path.is_file():
        raise JournalError(f"{path}: no journal there yet (the tower writes it as it plays)")
    _check_header(path)
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                             isolation_level=None, check_same_thread=False, timeout=10)
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot open the journal ({exc})") from None
    try:
        _check_identity(db, path)
        db.execute("PRAGMA query_only = ON")
        db.execute("SELECT 1 FROM actions LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        db.close()
        raise JournalError(f"{path}: not a readable journal ({exc})") from None
    except JournalError:
        db.close()
        raise
    return db


def _check_header(path: Path) -> None:
    """Refuse, before SQLite touches it, a file that is not SQLite or has lost its tail.

    SQLite writes whole pages, so a file whose size is not a whole number of pages was cut
    short; SQLite itself would open it and read the missing bytes as zeros.
    """
    try:
        size = path.stat().st_size
        with path.open("rb") as file:
            header = file.read(100)
    except OSError as exc:
        raise JournalError(f"{path}: cannot read the journal ({exc.strerror})") from None
    if not header.startswith(SQLITE_MAGIC):
        raise JournalError(f"{path}: not a dicetower journal (not an SQLite file); point "
                           "--journal at another file")
    page = int.from_bytes(header[16:18], "big") if len(header) >= 18 else 0
    page = 65536 if page == 1 else page
    if len(header) < 100 or page < 512 or size % page:
        raise JournalError(f"{path}: the journal is truncated ({size} bytes, not whole pages); "
                           "a truncated file is never replaced: move it away or point "
                           "--journal elsewhere")


def accepted_throws(path: str | Path, since: float | None = None, *,
                    turns: bool = True) -> list[dict[str, Any]]:
    """The accepted throws of the journal at ``path`` (for `dicetower fairness`), read-only:
    it works while the tower plays."""
    with Journal(path, read_only=True) as journal:
        return journal.accepted_throws(since, turns=turns)
