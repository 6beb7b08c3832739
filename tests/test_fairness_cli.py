"""`dicetower fairness` on real journals: written through the store and the journal API, and
read while another process is writing one."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from firmware_host.cli import main
from firmware_host.controller.config import default_journal
from firmware_host.fairness.analysis import DEFAULT_QUESTION
from firmware_host.hub import GameHub
from firmware_host.hub.journal import Journal, JournalError
from firmware_host.rules.simulation import play, policy_421

REPO = Path(__file__).resolve().parent.parent
FAIR = [1 / 6] * 6
LOADED_SIX = DEFAULT_QUESTION.loaded_die(6).tolist()


def record_games(journal: Journal, seed: int, dice: list[float], games: int,
                 preset: str = "tim-11") -> np.ndarray:
    """Play ``games`` whole games whose dice fall by the probabilities ``dice`` and journal
    every input through the scoreboard's store, with an undo and a correction now and then.
    Returns how often each face was thrown in the games as they stand (the engine's own
    history: undone inputs gone, corrections in)."""
    faces_rng = np.random.default_rng(seed)
    rng = random.Random(seed)

    def strategy(game: Any, rng: random.Random) -> dict[str, Any]:
        event = policy_421(game, rng)
        if event.get("faces"):
            event["faces"] = (faces_rng.choice(6, len(event["faces"]), p=dice) + 1).tolist()
        return event

    store = GameHub()
    store.open_journal(journal, replay=False, tokens=False)
    counts = np.zeros(6, dtype=int)
    players = ["Ana", "Ben"] if preset == "4d" else ["Ana", "Ben", "Cleo"]
    for _ in range(games):
        game, _ = play(preset, players, rng, strategy=strategy if preset != "4d" else None)
        store.start_game(preset, players)
        for entry in game.history:
            event = entry["event"]
            if event.get("faces") and rng.random() < 0.05:
                store.apply(event)
                store.undo()  # the camera misread it: thrown again
            if event.get("faces") and rng.random() < 0.05:
                store.apply({**event, "faces": [1] * len(event["faces"])})
                store.correct_last(event["faces"])  # the game master put it right
            else:
                store.apply(event)
            if event["type"] == "throw":  # a 4D turn's faces are set by hand
                counts += np.bincount(np.array(event["faces"]) - 1, minlength=6)
    return counts


def fairness(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["fairness", *args])
    out, err = capsys.readouterr()
    return status, out, err


def report(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> dict[str, Any]:
    status, out, err = fairness(capsys, "--journal", str(path), "--json", *args)
    assert status == 0 and err == ""
    return json.loads(out)


# ---------------------------------------------------------------------- verdicts


def test_a_loaded_set_is_flagged_with_its_face(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    with Journal(path, exclusive=True) as journal:
        counts = record_games(journal, 1, LOADED_SIX, games=4)
    assert counts.sum() > 2 * DEFAULT_QUESTION.dice_needed()
    data = report(capsys, path)
    assert data["overall"]["counts"] == counts.tolist()
    assert (data["verdict"], data["overall"]["face"]) == ("biased", 6)
    status, out, _ = fairness(capsys, "--journal", str(path))
    assert status == 0
    assert "verdict: looks biased: the 6 comes up" in out
    assert f"{counts.sum()} dice read" in out
    assert "the dice are not told apart" in out


def test_a_fair_set_looks_fair_and_a_few_throws_are_too_few(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    with Journal(path) as journal:
        few = record_games(journal, 2, FAIR, games=1)
        assert few.sum() < DEFAULT_QUESTION.dice_needed()  # one game is not enough
        data = report(capsys, path)
        assert data["overall"]["counts"] == few.tolist()
        assert data["verdict"] == "too-few"
        _, out, _ = fairness(capsys, "--journal", str(path))
        assert f"verdict: too few throws: {few.sum()} of the {DEFAULT_QUESTION.dice_needed()} " \
            "dice needed" in out
        counts = few + record_games(journal, 3, FAIR, games=2)
    data = report(capsys, path)
    assert data["overall"]["counts"] == counts.tolist()
    assert counts.sum() >= DEFAULT_QUESTION.dice_needed()
    assert data["verdict"] == "fair", data
    assert data["overall"]["needed"] == DEFAULT_QUESTION.dice_needed()


def test_4d_turns_are_not_counted_only_its_throws(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    with Journal(path) as journal:
        counts = record_games(journal, 4, FAIR, games=2, preset="4d")
        assert len(journal.accepted_throws()) > len(journal.accepted_throws(turns=False))
    data = report(capsys, path)
    assert data["throws"] == 2
    assert data["overall"]["counts"] == counts.tolist() and counts.sum() in (8, 10)


def test_since_keeps_the_throws_from_that_date_on(capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    from datetime import datetime

    march, april = datetime(2026, 3, 1, 20, 0).timestamp(), datetime(2026, 4, 2, 21).timestamp()
    with Journal(path) as journal:
        journal.record({"action": "new_game", "at": march, "preset": "tim-11",
                        "players": ["A", "B"], "knobs": None})
        for k, at in enumerate((march + 60, march + 120, april, april + 60)):
            journal.record({"action": "event", "at": at,
                            "event": {"type": "throw", "faces": [k + 1, 6, 6]}})
    assert report(capsys, path)["overall"]["dice"] == 12
    april_on = report(capsys, path, "--since", "2026-04-01")
    assert april_on["throws"] == 2 and april_on["overall"]["counts"] == [0, 0, 1, 1, 0, 4]
    assert report(capsys, path, "--since", "2026-04-02T21:00")["throws"] == 2
    assert report(capsys, path, "--since", "2026-04-02T21:00:01")["throws"] == 1
    assert report(capsys, path, "--since", "2030-01-01")["throws"] == 0


# ---------------------------------------------------------------------- while the tower writes

WRITER = textwrap.dedent("""
    import sys
    from firmware_host.hub.journal import Journal
    journal = Journal(sys.argv[1], exclusive=True)  # the tower's own claim on its journal
    journal.record({"action": "new_game", "preset": "tim-11", "players": ["A", "B"]})
    for batch in range(3):
        for k in range(50):
            journal.record({"action": "event",
                            "event": {"type": "throw", "faces": [k % 6 + 1, 2, 1]}})
        print("wrote", 50 * (batch + 1), flush=True)
        sys.stdin.readline()  # the test has read the journal meanwhile
    print("done", flush=True)
    sys.stdin.readline()  # still holding the journal open when killed
""")


def test_it_reads_a_journal_while_another_process_writes_it(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], cwd=REPO,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    assert writer.stdin is not None and writer.stdout is not None
    try:
        for batch in range(1, 4):
            assert writer.stdout.readline().split() == ["wrote", str(50 * batch)]
            data = report(capsys, path)
            assert data["throws"] == 50 * batch and data["overall"]["dice"] == 150 * batch
            first = np.bincount([k % 6 for k in range(50)], minlength=6)
            expected = batch * (first + np.array([50, 50, 0, 0, 0, 0]))  # a 2 and a 1 in each
            assert data["overall"]["counts"] == expected.tolist()
            writer.stdin.write("next\n")
            writer.stdin.flush()
        assert writer.stdout.readline().strip() == "done"
        # The writer's claim was never taken from it: a second writer is still refused.
        with pytest.raises(JournalError, match="in use by another dicetower"):
            Journal(path, exclusive=True)
        assert writer.poll() is None
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    assert report(capsys, path)["throws"] == 150  # and after it was killed


# ---------------------------------------------------------------------- errors


def test_the_default_journal_is_the_towers(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = fairness(capsys)
    assert status == 2 and out == ""
    assert err == (f"dicetower fairness: {default_journal()}: no journal there yet (the tower "
                   "writes it as it plays)\n")
    assert not default_journal().exists()  # nothing created by looking
    with Journal(default_journal()) as journal:
        record_games(journal, 5, FAIR, games=1)
    status, out, err = fairness(capsys)
    assert status == 0 and err == "" and str(default_journal()) in out


def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path) -> None:
    import sqlite3

    foreign = tmp_path / "other.sqlite3"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE actions (id INTEGER PRIMARY KEY)")
    db.close()
    text = tmp_path / "notes.txt"
    text.write_text("not a journal\n")
    journal = tmp_path / "journal.sqlite3"
    Journal(journal).close()
    cases = {
        ("--journal", str(tmp_path / "none.sqlite3")): "no journal there yet",
        ("--journal", str(foreign)): "not a dicetower journal",
        ("--journal", str(text)): "not a dicetower journal",
        ("--journal", str(tmp_path)): "is a folder",
        ("--journal", str(journal), "--since", "2026-13-01"): "--since '2026-13-01': not a date",
        ("--journal", str(journal), "--since", "last week"): "not a date",
        # A real date, only out of the clock's reach: said so, not "not a date".
        ("--journal", str(journal), "--since", "0001-01-01"): "give a date since 1970",
    }
    for args, message in cases.items():
        status, out, err = fairness(capsys, *args)
        assert status == 2 and out == "", args
        assert err.startswith("dicetower fairness: ") and message in err, err
        assert err.count("\n") == 1, err
    assert not (tmp_path / "none.sqlite3").exists()
