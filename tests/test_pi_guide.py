"""docs/install-pi.md: every command outside a "Pi only" block is run here, as written.

The guide's ``sh`` blocks are run in a shell with a temporary home folder in which the
project's folder stands where the guide clones it (``~/dicetower/src``); ``sh pi-only`` blocks
need the Pi (apt, systemd, its camera and pins) and are only checked for being marked. Three
commands get a fake where this machine differs from a Pi: the scoreboard's port is a free one,
`serve` runs until it is up and is then stopped, and `bench tower` plays 10 throws.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
GUIDE = REPO / "docs" / "install-pi.md"
BIN = Path(sys.executable).parent  # where the `dicetower` script is installed
FENCE = re.compile(r"^```(\S*)(.*)$")

MKDIR = "mkdir -p ~/dicetower"
COPY_PINMAP = "cp ~/dicetower/src/hardware/pinmap.example.toml ~/dicetower/pinmap.toml"
HW_TEST = "dicetower hw-test --simulate --pinmap ~/dicetower/pinmap.toml"
EXAMPLE = "dicetower run --example > ~/dicetower/tower.toml"
DOCTOR = "dicetower doctor --config ~/dicetower/tower.toml"
SERVICE = "dicetower service install --user pi --config ~/dicetower/tower.toml --dry-run"
BACKUP = "sqlite3 ~/dicetower/journal.sqlite3 \".backup '$HOME/dicetower/backup.sqlite3'\""
SERVE = "dicetower serve --journal ~/dicetower/journal.sqlite3"
BENCH = "dicetower bench tower --json"
TESTED = {MKDIR, COPY_PINMAP, HW_TEST, EXAMPLE, DOCTOR, SERVICE, BACKUP, SERVE, BENCH}


def _blocks() -> list[tuple[str, list[str]]]:
    """(info string, lines) of every fenced block of the guide."""
    blocks: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    for line in GUIDE.read_text(encoding="utf-8").splitlines():
        match = FENCE.match(line)
        if match and current is None:
            current = []
            blocks.append(((match.group(1) + match.group(2)).strip(), current))
        elif line.startswith("```"):
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def _commands(info: str) -> list[str]:
    return [line.strip() for kind, lines in _blocks() if kind == info for line in lines
            if line.strip() and not line.strip().startswith("#")]


def test_every_command_is_run_here_or_marked_pi_only() -> None:
    kinds = {kind for kind, _ in _blocks()}
    assert kinds <= {"sh", "sh pi-only", "toml"}, kinds
    assert set(_commands("sh")) == TESTED
    pi_only = "\n".join(_commands("sh pi-only"))
    for needed in ("python3-picamera2", "python3-lgpio", "--system-site-packages",
                   "systemctl enable --now dicetower", "journalctl -u dicetower",
                   "vcgencmd get_throttled", "/var/lib/dicetower/journal.sqlite3"):
        assert needed in pi_only


def test_the_readme_and_the_docs_index_link_the_guide() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    pi_section = readme.split("## On a Raspberry Pi", 1)[1].split("\n## ", 1)[0]
    assert "docs/install-pi.md" in pi_section
    assert "(install-pi.md)" in (REPO / "docs" / "README.md").read_text(encoding="utf-8")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home folder as the guide leaves it after step 4: the project in ~/dicetower/src."""
    home = tmp_path / "home"
    (home / "dicetower").mkdir(parents=True)
    (home / "dicetower" / "src").symlink_to(REPO)
    return home


def _shell(home: Path, command: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    return subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=home)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _tower_toml(home: Path) -> Path:
    """The example configuration the guide writes, on a free port (8000 may be taken here)."""
    path = home / "dicetower" / "tower.toml"
    text = path.read_text(encoding="utf-8")
    assert "port = 8000" in text
    path.write_text(text.replace("port = 8000", f"port = {_free_port()}"), encoding="utf-8")
    return path


def test_wiring_configuration_doctor_and_service_steps(home: Path) -> None:
    for command in (MKDIR, COPY_PINMAP, HW_TEST, EXAMPLE):
        result = _shell(home, command)
        assert result.returncode == 0, (command, result.stdout, result.stderr)
    assert "devices answered" in _shell(home, HW_TEST).stdout
    _tower_toml(home)
    doctor = _shell(home, DOCTOR)
    assert doctor.returncode == 0, doctor.stdout
    assert doctor.stdout.splitlines()[-1].startswith("doctor: ")
    service = _shell(home, SERVICE)
    assert service.returncode == 0, service.stderr
    assert "User=pi" in service.stdout and "sudo systemctl enable --now dicetower" in service.stdout
    assert f"--config {home}/dicetower/tower.toml" in service.stdout


def test_the_pi_configuration_of_the_guide_loads(home: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from firmware_host.controller.config import config_from_dict

    # The Pi's camera library, as far as reading a configuration needs it.
    monkeypatch.setitem(sys.modules, "picamera2", types.ModuleType("picamera2"))
    monkeypatch.setitem(sys.modules, "libcamera", types.ModuleType("libcamera"))
    import tomllib

    toml = next("\n".join(lines) for kind, lines in _blocks() if kind == "toml")
    assert _shell(home, f"{MKDIR} && {COPY_PINMAP}").returncode == 0
    config = config_from_dict(tomllib.loads(toml), home / "dicetower" / "tower.toml")
    assert config.camera == "picamera2" and config.camera_lock
    assert config.pinmap == home / "dicetower" / "pinmap.toml" and config.pin == "4821"


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="the sqlite3 program is absent")
def test_backup_of_a_journal_in_use(home: Path) -> None:
    assert _shell(home, f"{EXAMPLE}").returncode == 0
    config = _tower_toml(home)
    journal = home / "dicetower" / "journal.sqlite3"
    env = {**os.environ, "HOME": str(home)}
    tower = subprocess.Popen([sys.executable, "-m", "firmware_host.cli", "run", "--config",
                              str(config), "--journal", str(journal)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in tower.stdout:  # type: ignore[union-attr]
            if line.startswith("Ctrl-C"):
                break
        else:
            raise AssertionError(f"the tower did not start: {tower.stderr.read()}")  # type: ignore[union-attr]
        result = _shell(home, BACKUP)
        assert result.returncode == 0, result.stderr
    finally:
        tower.send_signal(signal.SIGTERM)
        tower.wait(timeout=30)
    with sqlite3.connect(home / "dicetower" / "backup.sqlite3") as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        kinds = [row[0] for row in copy.execute("SELECT kind FROM actions")]
    assert kinds, "the backup holds the game started"


def test_serve_on_the_towers_journal(home: Path) -> None:
    env = {**os.environ, "HOME": str(home), "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    serve = subprocess.Popen(["bash", "-c", f"exec {SERVE} --port {_free_port()}"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        for line in serve.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if line.startswith("Ctrl+C"):
                break
        assert any("scoreboard:" in line for line in lines), serve.stderr.read()  # type: ignore[union-attr]
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=30)
    assert (home / "dicetower" / "journal.sqlite3").is_file()


def test_bench_tower_gives_its_figures(home: Path) -> None:
    import json

    result = _shell(home, f"{BENCH} --throws 10", timeout=300)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["throws"] == 10 and {"p50_ms", "p95_ms", "misread"} <= set(figures)
