"""The tower's commands: `dicetower demo`, `run`, `serve --journal` and `bench tower`.

Each plays for real (simulated tray, mock pins, the vision pipeline, SQLite) but small: short
games through the `pot` knob, a handful of throws for the benchmark.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import tomllib
from pathlib import Path
from urllib.request import urlopen

import pytest

from firmware_host.cli import main

SHORT = ["--knob", "pot=3"]  # a tim-11 game of a few dozen throws


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _demo_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["demo", "--fast", "--no-scoreboard", "--json", *args]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1, "--json prints one object and nothing else"
    return json.loads(out[0])


def test_demo_plays_a_whole_game_and_reports_it(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "demo.sqlite3"
    summary = _demo_json(capsys, "--games", "1", "--journal", str(journal), "--seed", "3",
                         *SHORT)
    assert summary["games"] == 1
    assert summary["throws"] > 5
    assert summary["misread"] == 0
    assert summary["tokens_conserved"] is True
    assert summary["resumed"] is False
    assert sum(summary["rethrow_reasons"].values()) == summary["rethrows"]
    # The game ended, so the next demo starts a new one rather than resuming it.
    again = _demo_json(capsys, "--games", "1", "--journal", str(journal), "--seed", "4",
                       *SHORT)
    assert again["resumed"] is False and again["games"] == 1


def test_demo_ctrl_c_stops_cleanly_and_the_next_demo_resumes(tmp_path: Path) -> None:
    journal = tmp_path / "demo.sqlite3"
    command = [sys.executable, "-m", "firmware_host.cli", "demo", "--fast", "--no-scoreboard",
               "--journal", str(journal), "--seed", "5"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        reads = 0
        while reads < 4:
            line = process.stdout.readline()  # type: ignore[union-attr]
            assert line, f"demo exited early: {process.stderr.read()}"  # type: ignore[union-attr]
            reads += "✓ read" in line
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        assert "stopped" in out and "Traceback" not in err
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    result = subprocess.run([*command, "--json", "--games", "1", *SHORT], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["resumed"] is True
    assert summary["tokens_conserved"] is True and summary["misread"] == 0


@pytest.mark.parametrize("args, words", [
    (["--players", ",,"], "at least one name"),
    (["--players", "Ana,,Ben"], "empty name"),
    (["--players", ""], "at least one name"),
    (["--players", "Ana,ana"], "twice"),
    (["--players", "A" * 40], "longer than"),
    (["--knob", "pot"], "NAME=VALUE"),
    (["--knob", "pot=1000"], "pot"),
    (["--port", "70000"], "--port"),
    (["--pin", "12"], "--pin"),
    (["--pin", "٤٨٢١"], "--pin"),
])
def test_demo_refuses_bad_options_in_one_line(args: list[str], words: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--journal", str(tmp_path / "j.sqlite3"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dicetower demo: ") and words in err and "\n" not in err
    assert not (tmp_path / "j.sqlite3").exists()


def test_demo_refuses_a_folder_or_foreign_file_as_journal(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    assert main(["demo", "--journal", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    foreign = tmp_path / "notes.sqlite3"
    foreign.write_text("shopping list\n")
    assert main(["demo", "--journal", str(foreign), "--no-scoreboard"]) == 2
    assert str(foreign) in capsys.readouterr().err
    assert foreign.read_text() == "shopping list\n"  # never replaced


def test_run_example_config_is_the_shipped_file_and_loads(capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    from firmware_host.controller.config import EXAMPLE_CONFIG, load_config

    assert main(["run", "--example"]) == 0
    printed = capsys.readouterr().out
    assert printed == EXAMPLE_CONFIG.read_text(encoding="utf-8")
    assert tomllib.loads(printed)["game"]["preset"] == load_config(EXAMPLE_CONFIG).preset


def test_run_needs_a_good_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run"]) == 2
    assert "--config" in capsys.readouterr().err
    assert main(["run", "--config", str(tmp_path / "nope.toml")]) == 2
    assert "nope.toml" in capsys.readouterr().err
    bad = tmp_path / "tower.toml"
    bad.write_text("[reading]\nhold = 9\n")
    assert main(["run", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "hold" in err and err.count("\n") == 1


def tower_config(tmp_path: Path, port: int, extra: str = "") -> Path:
    """A simulated tower's tower.toml serving its scoreboard on ``port`` (PIN 2468), with
    ``extra`` TOML at its end."""
    config = tmp_path / "tower.toml"
    config.write_text(f"""
[camera]
source = "simulated"
[tower]
pinmap = "simulated"
[game]
preset = "tim-11"
players = ["Zoe", "Yann"]
[scoreboard]
host = "127.0.0.1"
port = {port}
pin = "2468"
lang = "en"
[journal]
path = "tower.sqlite3"
{extra}""")
    return config


def start_run(config: Path) -> tuple[subprocess.Popen[str], list[str]]:
    process = subprocess.Popen([sys.executable, "-m", "firmware_host.cli", "run", "--config",
                                str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    lines: list[str] = []
    while not lines or not lines[-1].startswith("Ctrl-C"):
        line = process.stdout.readline()  # type: ignore[union-attr]
        if not line:
            process.wait(timeout=10)
            raise AssertionError(f"run exited early: {process.stderr.read()}")  # type: ignore[union-attr]
        lines.append(line.rstrip("\n"))
    return process, lines


def test_run_serves_the_configured_game_stops_on_sigterm_and_resumes(tmp_path: Path) -> None:
    port = free_port()
    config = tower_config(tmp_path, port)
    process, lines = start_run(config)
    try:
        printed = "\n".join(lines)
        assert "started a new game" in printed and "2468" in printed
        with urlopen(f"http://127.0.0.1:{port}/api/state", timeout=5) as response:
            state = json.load(response)
        assert [p["name"] for p in state["game"]["players"]] == ["Zoe", "Yann"]
        assert state["tower"]["camera"] == "ok"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert (tmp_path / "tower.sqlite3").is_file()
    process, lines = start_run(config)
    try:
        assert any("resumed the unfinished game" in line for line in lines)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=15)


def test_run_says_when_its_port_is_taken(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        config = tower_config(tmp_path, busy.getsockname()[1])
        result = subprocess.run([sys.executable, "-m", "firmware_host.cli", "run", "--config",
                                 str(config)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2  # the service's unit does not restart it for ever
    assert "cannot serve the scoreboard" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("command", [["demo", "--no-scoreboard"], ["serve", "--port", "8000"]])
def test_a_file_in_the_journals_path_is_named(command: list[str], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-file").write_text("not a folder\n")
    journal = tmp_path / "a-file" / "j.sqlite3"
    assert main([*command, "--journal", str(journal)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{tmp_path / 'a-file'} is a file, not a folder" in err and "\n" not in err
    assert [p.name for p in tmp_path.iterdir()] == ["a-file"]


def test_serve_keeps_the_game_in_the_journal(tmp_path: Path) -> None:
    from firmware_host.commands.serve import resume_into
    from firmware_host.hub import GameHub
    from firmware_host.hub.journal import Journal

    path = tmp_path / "journal.sqlite3"
    with Journal(path) as journal:
        store = GameHub()
        assert resume_into(store, journal) is False  # an empty journal: nothing to resume
        store.start_game("tim-11", ["Ana", "Ben"])
        store.apply({"type": "throw", "faces": [5]})
        store.apply({"type": "throw", "faces": [2]})
        before = store.snapshot()["game"]
        assert journal.dispenses() == []  # tokens are handed out by hand under `serve`
    with Journal(path) as journal:
        again = GameHub()
        assert resume_into(again, journal) is True
        assert again.snapshot()["game"] == before
        again.apply({"type": "throw", "faces": [6, 6, 6]})
    with Journal(path) as journal:
        third = GameHub()
        resume_into(third, journal)
        assert third.snapshot()["history_length"] == 3


def test_bench_tower_reports_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "tower", "--throws", "10", "--json", "--fps", "30"]) == 0
    result = json.loads(capsys.readouterr().out)
    for key in ("p50_ms", "p95_ms", "throws", "read_ok", "refused", "misread", "first_try"):
        assert key in result
    assert result["throws"] >= 10
    assert result["read_ok"] + result["misread"] + sum(result["refused"].values()) \
        == result["throws"]
    assert result["p50_ms"] is not None and result["p50_ms"] <= result["p95_ms"]
    assert main(["bench", "tower", "--throws", "3"]) == 2


def test_bench_tower_shows_each_misread_and_keeps_its_frame(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # A reader that sees every pip face one higher than it is: every throw it passes is a
    # misread, and each one is listed and its frame kept.
    from dataclasses import replace

    import firmware_host.controller.controller as controller_module

    real = controller_module.read_dice

    def one_off(*args: object, **kwargs: object) -> list:
        return [replace(d, value=d.value % 6 + 1) if d.value is not None else d
                for d in real(*args, **kwargs)]

    monkeypatch.setattr(controller_module, "read_dice", one_off)
    frames = tmp_path / "misread"
    assert main(["bench", "tower", "--throws", "10", "--json", "--fps", "30",
                 "--keep-frames", str(frames)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["misread"] > 0 and len(result["misreads"]) == result["misread"]
    assert all(m.startswith("accepted [") and "the tray holds" in m for m in result["misreads"])
    assert len(list(frames.glob("misread-*.png"))) == result["misread"]
    (tmp_path / "file").write_text("")
    assert main(["bench", "tower", "--keep-frames", str(tmp_path / "file")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_make_demo_is_the_demo_command() -> None:
    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    assert "dicetower demo" in makefile.split("demo: $(STAMP)", 1)[1].split("\n\n", 1)[0]


def test_demo_prints_a_line_per_throw_and_the_scoreboard(tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "firmware_host.cli", "demo", "--fast", "--games", "1",
               "--journal", str(tmp_path / "d.sqlite3"), "--port", str(port), "--pin", "1357",
               *SHORT]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"http://localhost:{port}/" in out and "1357" in out
    throws = [line for line in out.splitlines() if " throws " in line]
    reads = [line for line in out.splitlines() if "✓ read" in line]
    assert throws and len(reads) <= len(throws)
    assert "1 game(s)" in out.splitlines()[-1]


def test_a_second_tower_on_the_same_journal_is_refused(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    from firmware_host.hub.journal import Journal

    path = tmp_path / "shared.sqlite3"
    with Journal(path, exclusive=True):
        assert main(["demo", "--journal", str(path), "--no-scoreboard"]) == 2
        assert "in use by another dicetower" in capsys.readouterr().err
        assert main(["serve", "--journal", str(path), "--port", "8123"]) == 2
        assert "in use by another dicetower" in capsys.readouterr().err
