"""The journal: inputs in order, the token ledger, images within budget, and files refused
unchanged (another database, a newer format, a truncated file, not SQLite at all)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware_host.hub.journal import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    Journal,
    JournalError,
    accepted_throws,
)

REPO = Path(__file__).resolve().parent.parent


def throw(faces: list[int], at: float, **more: object) -> dict[str, object]:
    return {"action": "event", "at": at, "event": {"type": "throw", "faces": faces, **more}}


def new_game(at: float, players: tuple[str, ...] = ("Ana", "Ben")) -> dict[str, object]:
    return {"action": "new_game", "at": at, "preset": "tim-11", "players": list(players)}


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal(tmp_path / "journal.sqlite3") as opened:
        yield opened


def pragma(path: Path, name: str) -> object:
    db = sqlite3.connect(path)
    try:
        return db.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        db.close()


# ---------------------------------------------------------------------- inputs


def test_record_and_replay_in_order(tmp_path: Path) -> None:
    path = tmp_path / "j" / "journal.sqlite3"  # its folder is made
    with Journal(path) as journal:
        first = journal.record(new_game(1.0, ("Old", "Game")))
        journal.record(throw([6, 6, 6], 2.0))
        start = journal.record(new_game(3.0))
        ids = [journal.record(throw([k, 2, 1], 4.0 + k)) for k in (3, 4, 5)]
        assert first < start < ids[0] < ids[1] < ids[2]
        assert journal.last_action_id() == ids[2]
    with Journal(path) as journal:
        replay = journal.actions_since_last_game()
    assert [i for i, _ in replay] == [start, *ids]
    assert replay[0][1] == new_game(3.0)
    assert [a["event"]["faces"] for _, a in replay[1:]] == [[3, 2, 1], [4, 2, 1], [5, 2, 1]]


def test_an_empty_journal(journal: Journal) -> None:
    assert journal.actions_since_last_game() == []
    assert journal.last_action_id() == 0
    assert journal.dispenses() == []
    assert journal.delivered_by_seat() == {}
    assert journal.image_bytes() == 0


def test_unicode_names_survive(journal: Journal) -> None:
    journal.record(new_game(1.0, ("Zoé", "Ægir")))
    assert journal.actions_since_last_game()[0][1]["players"] == ["Zoé", "Ægir"]


def test_wal_mode_and_our_marks_are_on(journal: Journal) -> None:
    journal.record(new_game(1.0))
    path = journal.path
    assert pragma(path, "journal_mode") == "wal"
    assert pragma(path, "application_id") == APPLICATION_ID
    assert pragma(path, "user_version") == SCHEMA_VERSION
    assert journal._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_a_damaged_action_is_a_journal_error(journal: Journal) -> None:
    action = journal.record(new_game(1.0))
    journal._db.execute("UPDATE actions SET body = '{not json' WHERE id = ?", (action,))
    with pytest.raises(JournalError, match=f"action {action} is damaged"):
        journal.actions_since_last_game()


# ---------------------------------------------------------------------- files refused


def refused(path: Path, *words: str) -> None:
    """Opening ``path`` is a JournalError naming it, and leaves every byte as it was."""
    before = path.read_bytes()
    siblings = sorted(p.name for p in path.parent.iterdir())
    with pytest.raises(JournalError) as exc:
        Journal(path)
    message = str(exc.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    for word in words:
        assert word in message
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == siblings


def test_another_sqlite_database_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (text TEXT)")
    db.execute("INSERT INTO notes VALUES ('mine')")
    db.commit()
    db.close()
    refused(path, "not a dicetower journal")


def test_a_newer_journal_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    with Journal(path) as journal:
        journal.record(new_game(1.0))
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    refused(path, "newer dicetower", f"format {SCHEMA_VERSION + 1}", "upgrade")


def a_full_journal(path: Path) -> bytes:
    with Journal(path) as journal:
        journal.record(new_game(1.0))
        for k in range(200):
            journal.record(throw([6, 5, k % 6 + 1], 2.0 + k), [(k % 2, 1)])
        journal.keep_image(2, bytes(range(256)) * 200, [{"value": 6}])
    assert not Path(f"{path}-wal").exists()  # closed cleanly: all in the main file
    return path.read_bytes()


@pytest.mark.parametrize("keep", [0.5, 0.9, "page-1", "byte-1", 60])
def test_a_truncated_journal_is_refused_unchanged(tmp_path: Path, keep: float | str) -> None:
    path = tmp_path / "journal.sqlite3"
    whole = a_full_journal(path)
    page = int.from_bytes(whole[16:18], "big")
    if keep == "page-1":
        size = len(whole) - page
    elif keep == "byte-1":
        size = len(whole) - 1
    elif isinstance(keep, int):
        size = keep  # not even the whole header
    else:
        size = int(len(whole) * keep)
    path.write_bytes(whole[:size])
    refused(path, "--journal")


def test_a_file_that_is_not_sqlite_is_refused_unchanged(tmp_path: Path) -> None:
    short = tmp_path / "notes.txt"
    short.write_text("hello")
    refused(short, "not a dicetower journal")
    long = tmp_path / "photo.jpg"
    long.write_bytes(b"\xff\xd8\xff\xe0" + bytes(range(256)) * 40)
    refused(long, "not a dicetower journal")


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="is a folder; give the journal a file name"):
        Journal(tmp_path)


def test_an_empty_file_becomes_a_journal(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    path.touch()
    with Journal(path) as journal:
        journal.record(new_game(1.0))
    assert pragma(path, "application_id") == APPLICATION_ID


def test_a_folder_that_cannot_be_made(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(JournalError, match="cannot create its folder"):
        Journal(blocker / "sub" / "journal.sqlite3")


# ---------------------------------------------------------------------- the token ledger


def test_dispenses_are_written_with_their_input(journal: Journal) -> None:
    journal.record(new_game(1.0))
    action = journal.record(throw([4, 2, 1], 2.0), [(0, 3), (1, 2)])
    rows = journal.dispenses()
    assert [(r.action, r.seat, r.requested, r.delivered, r.state) for r in rows] == [
        (action, 0, 3, 0, "intended"), (action, 1, 2, 0, "intended")]
    assert rows[0].remaining == 3
    assert rows[0].to_json() == {"id": rows[0].id, "seat": 0, "requested": 3, "delivered": 0,
                                 "state": "intended", "note": ""}


def test_an_input_and_its_dispenses_are_one_transaction(journal: Journal) -> None:
    journal.record(new_game(1.0))
    with pytest.raises(sqlite3.Error):
        # The second dispense cannot be written (a seat SQLite cannot store): neither the
        # input nor the first dispense may stay.
        journal.record(throw([4, 2, 1], 2.0), [(0, 1), ([1], 1)])  # type: ignore[list-item]
    assert journal.last_action_id() == 1
    assert journal.dispenses() == []
    assert journal.record(throw([4, 2, 1], 3.0), [(0, 1)]) == 2  # and it goes on


def test_intend_is_once_per_action_and_seat(journal: Journal) -> None:
    action = journal.record(throw([4, 2, 1], 1.0), [(0, 3)])
    journal.intend(action, 0, 5)  # found missing twice: the first stands
    journal.intend(action, 1, 2)
    journal.intend(action, 1, 2)
    rows = journal.dispenses()
    assert [(r.seat, r.requested) for r in rows] == [(0, 3), (1, 2)]


def test_ledger_states_and_counts(journal: Journal) -> None:
    action = journal.record(throw([4, 2, 1], 1.0), [(0, 3), (1, 1), (2, 2), (0, 9)])
    a, b, c = journal.dispenses()  # (0, 9) repeats (action, seat 0): ignored
    journal.mark(a.id, "started")
    journal.count_token(a.id, 1)
    journal.count_token(a.id, 2)
    assert journal.dispense(a.id).delivered == 2
    journal.mark(a.id, "done", delivered=3)
    journal.mark(b.id, "void", note="undone")
    journal.mark(c.id, "started")
    journal.count_token(c.id, 1)
    states = {r.id: (r.state, r.delivered, r.note) for r in journal.dispenses()}
    assert states == {a.id: ("done", 3, ""), b.id: ("void", 0, "undone"),
                      c.id: ("started", 1, "")}
    assert [r.id for r in journal.dispenses(("done", "void"))] == [a.id, b.id]
    assert journal.delivered_by_seat() == {0: 3, 1: 0, 2: 1}
    with pytest.raises(ValueError, match="unknown dispense state 'paid'"):
        journal.mark(a.id, "paid")
    with pytest.raises(KeyError):
        journal.dispense(12345)
    assert {r.action for r in journal.dispenses()} == {action}


def test_cut_off_dispenses_become_doubt_on_restart(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    with Journal(path) as journal:
        journal.record(throw([4, 2, 1], 1.0), [(0, 3), (1, 2), (2, 1)])
        a, b, c = journal.dispenses()
        journal.mark(a.id, "started")
        journal.count_token(a.id, 1)
        journal.mark(b.id, "done", delivered=2)
    with Journal(path) as journal:
        doubts = journal.mark_cut_off()
        assert [(d.id, d.delivered, d.state, d.note) for d in doubts] == [
            (a.id, 1, "doubt", "cut off mid-way")]
        assert journal.dispense(b.id).state == "done"
        assert journal.dispense(c.id).state == "intended"  # never started: paid as usual
        assert journal.mark_cut_off() == doubts  # nothing new is cut off


# ---------------------------------------------------------------------- images


def test_images_are_pruned_oldest_first_within_budget(tmp_path: Path) -> None:
    with Journal(tmp_path / "journal.sqlite3", max_image_bytes=2500) as journal:
        ids = [journal.record(throw([k, 2, 1], float(k))) for k in range(1, 6)]
        for k, action in enumerate(ids):
            journal.keep_image(action, bytes([k]) * 1000, [{"value": k}])
            assert journal.image_bytes() <= 2500
        assert [journal.image(a) is not None for a in ids] == [False, False, False, True, True]
        assert journal.image(ids[4]) == bytes([4]) * 1000
        assert journal.image_bytes() == 2000
        # Kept again (a corrected throw): replaced, not counted twice.
        journal.keep_image(ids[4], b"x" * 500, [])
        assert journal.image_bytes() == 1500 and journal.image(ids[3]) is not None
        # Alone past the budget: not kept at all.
        journal.keep_image(ids[0], b"y" * 3000, [])
        assert journal.image(ids[0]) is None and journal.image_bytes() <= 2500


def test_pruning_follows_action_order_not_arrival(tmp_path: Path) -> None:
    with Journal(tmp_path / "journal.sqlite3", max_image_bytes=2000) as journal:
        ids = [journal.record(throw([k, 2, 1], float(k))) for k in range(1, 4)]
        journal.keep_image(ids[2], b"c" * 1000, [])
        journal.keep_image(ids[0], b"a" * 1000, [])
        journal.keep_image(ids[1], b"b" * 1000, [])
        assert journal.image(ids[0]) is None
        assert journal.image(ids[1]) is not None and journal.image(ids[2]) is not None


# ---------------------------------------------------------------------- accepted throws


def test_accepted_throws_with_corrections(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    with Journal(path) as journal:
        journal.record(new_game(1.0))
        journal.record(throw([3], 2.0))
        journal.record(throw([6, 5, 4], 3.0))
        journal.record({"action": "correct", "at": 4.0, "faces": [6, 5, 3]})
        journal.record({"action": "event", "at": 5.0, "event": {"type": "stop"}})
        journal.record({"action": "pause", "at": 5.5, "paused": True})
        journal.record({"action": "event", "at": 6.0,
                        "event": {"type": "turn", "faces": [1, 2, 3, 4]}})
        journal.record({"action": "event", "at": 7.0, "event": {"type": "throw", "faces": []}})
        assert journal.accepted_throws() == [
            {"at": 2.0, "faces": [3], "colours": None},
            {"at": 4.0, "faces": [6, 5, 3], "colours": None},
            {"at": 6.0, "faces": [1, 2, 3, 4], "colours": None},
        ]
        assert [t["at"] for t in journal.accepted_throws(since=3.5)] == [4.0, 6.0]
    with Journal(path) as journal:
        assert accepted_throws(path) == journal.accepted_throws()
        assert len(accepted_throws(path, since=5.0)) == 1
    with pytest.raises(JournalError, match="no journal there yet"):
        accepted_throws(tmp_path / "none.sqlite3")
    assert not (tmp_path / "none.sqlite3").exists()


# ---------------------------------------------------------------------- durability


KILLER = textwrap.dedent("""
    import os, signal, sys
    from firmware_host.hub.journal import Journal
    journal = Journal(sys.argv[1])
    n = int(sys.argv[2])
    for k in range(n):
        journal.record({"action": "event", "at": float(k),
                        "event": {"type": "throw", "faces": [k % 6 + 1, 2, 1]}},
                       [(k % 3, 1)] if k % 5 == 0 else [])
    rows = journal.dispenses()
    journal.mark(rows[0].id, "started")
    journal.count_token(rows[0].id, 1)
    print("recorded", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_every_recorded_action_survives_a_kill(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    n = 40
    result = subprocess.run([sys.executable, "-c", KILLER, str(path), str(n)], cwd=REPO,
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == -9, result.stderr
    assert result.stdout.strip() == "recorded"
    with Journal(path) as journal:
        actions = journal.actions_since_last_game()
        assert len(actions) == n
        assert [a["event"]["faces"][0] for _, a in actions] == [k % 6 + 1 for k in range(n)]
        assert len(journal.dispenses()) == n // 5
        doubts = journal.mark_cut_off()
        assert [(d.delivered, d.state) for d in doubts] == [(1, "doubt")]

def test_accepted_throws_follow_undo_and_late_corrections(tmp_path: Path) -> None:
    with Journal(tmp_path / "journal.sqlite3") as journal:
        journal.record(new_game(1.0))
        journal.record(throw([3], 2.0))
        journal.record(throw([5], 3.0))
        journal.record({"action": "event", "at": 4.0, "event": {"type": "stop"}})
        journal.record({"action": "event", "at": 5.0, "event": {"type": "undo"}})  # the stop
        journal.record({"action": "event", "at": 6.0, "event": {"type": "undo"}})  # the 5
        journal.record(throw([4], 7.0))
        journal.record({"action": "correct", "at": 8.0, "faces": [2]})
        assert [t["faces"] for t in journal.accepted_throws()] == [[3], [2]]
        # A correction after ``since`` of a throw made before it replaces that throw only.
        assert [t["faces"] for t in journal.accepted_throws(since=7.5)] == [[2]]
        journal.record(new_game(9.0))
        journal.record({"action": "event", "at": 10.0, "event": {"type": "undo"}})
        assert [t["faces"] for t in journal.accepted_throws()] == [[3], [2]]


def test_one_writer_at_a_time_and_a_killed_one_leaves_no_stale_lock(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    path = tmp_path / "journal.sqlite3"
    first = Journal(path, exclusive=True)
    with pytest.raises(JournalError, match="in use by another dicetower"):
        Journal(path, exclusive=True)
    with Journal(path) as reader:  # reading alongside the writer is fine
        assert reader.last_action_id() == 0
    first.close()
    Journal(path, exclusive=True).close()  # released on close
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\n"
         "from firmware_host.hub.journal import Journal\n"
         f"journal = Journal({str(path)!r}, exclusive=True)\n"
         "print('held', flush=True)\n"
         "time.sleep(60)\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(JournalError, match="in use"):
            Journal(path, exclusive=True)
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
        Journal(path, exclusive=True).close()  # the kernel released the dead writer's lock
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
