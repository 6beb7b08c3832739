"""`dicetower serve` keeps the game in the tower's journal: the one its configuration names
(``--config``, else ~/dicetower/tower.toml when there), else the user's data directory's,
unless ``--journal`` says otherwise. A configuration it cannot use is a one-line error.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import lines_until_ready

from firmware_host.cli import main
from firmware_host.commands.paths import tower_journal
from firmware_host.controller.config import default_journal


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of its own, with the user's data directory inside it."""
    home = tmp_path / "home"
    (home / "dicetower").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    return home


def write_config(folder: Path, journal_lines: str) -> Path:
    config = folder / "tower.toml"
    config.write_text(f'[camera]\nsource = "picamera2"\n{journal_lines}', encoding="utf-8")
    return config


def test_without_a_configuration_the_users_data_directory(home: Path) -> None:
    assert tower_journal(None, None) == (default_journal(), None)
    assert str(default_journal()).startswith(str(home))


def test_the_default_configuration_names_the_journal(home: Path) -> None:
    config = write_config(home / "dicetower", '[journal]\npath = "/var/lib/dicetower/j.sqlite3"\n')
    assert tower_journal(None, None) == (Path("/var/lib/dicetower/j.sqlite3"), config)
    # --journal wins over every configuration.
    assert tower_journal(Path("mine.sqlite3"), None) == (Path("mine.sqlite3"), None)


def test_a_relative_path_is_taken_from_the_configurations_folder(tmp_path: Path,
                                                                 home: Path) -> None:
    config = write_config(tmp_path, '[journal]\npath = "state/tower.sqlite3"\n')
    assert tower_journal(None, config) == (tmp_path / "state" / "tower.sqlite3", config)
    tilde = write_config(tmp_path, '[journal]\npath = "~/games.sqlite3"\n')
    assert tower_journal(None, tilde)[0] == home / "games.sqlite3"


def test_a_configuration_without_a_journal_means_runs_default(tmp_path: Path, home: Path) -> None:
    config = write_config(tmp_path, "[journal]\nmax_images_mb = 50\n")
    assert tower_journal(None, config) == (default_journal(), config)


@pytest.mark.parametrize(("text", "said"), [
    ("[journal\n", "not valid TOML"),
    ("[journal]\npath = 5\n", "[journal] path must be a file name, not 5"),
    ('[journal]\npath = " "\n', "[journal] path must be a file name"),
    ("journal = 3\n", "'journal' must be a table"),
])
def test_an_unusable_configuration_is_one_line_exit_2(
    text: str, said: str, tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    config = tmp_path / "tower.toml"
    config.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=r"tower\.toml"):
        tower_journal(None, config)
    assert main(["serve", "--config", str(config), "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dicetower serve: ") and said in err and err.count("\n") == 1


def test_a_missing_configuration_given_is_refused(tmp_path: Path, home: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--config", str(tmp_path / "nowhere.toml")]) == 2
    err = capsys.readouterr().err
    assert "nowhere.toml: no such configuration file" in err and err.count("\n") == 1


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_serve_opens_the_journal_the_configuration_names(tmp_path: Path, home: Path) -> None:
    journal = tmp_path / "state" / "journal.sqlite3"
    config = write_config(home / "dicetower", f'[journal]\npath = "{journal}"\n')
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share")}
    serve = subprocess.Popen(
        [sys.executable, "-m", "firmware_host.cli", "serve", "--host", "127.0.0.1",
         "--port", str(_free_port()), "--pin", "2468"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = lines_until_ready(serve)
    finally:
        serve.send_signal(signal.SIGINT)
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serve.kill()  # never leave a server behind, holding its port
            serve.wait()
            raise
    said = "".join(lines)
    assert f"journal {journal} (named by {config})" in said, said + serve.stderr.read()  # type: ignore[union-attr]
    assert journal.is_file() and not (home / ".local" / "share" / "dicetower").exists()
