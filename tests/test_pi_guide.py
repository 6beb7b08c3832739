"""docs/install-pi.md: every command outside a "Pi only" block is run here, as written.

The guide's ``sh`` blocks are run in a shell with a temporary home folder in which the
project's folder stands where the guide clones it (``~/dicetower/src``); ``sh pi-only`` blocks
need the Pi (apt, systemd, its camera and pins) and are only checked for being marked. Four
things get a fake where this machine differs from a Pi: the scoreboard's port is a free one,
`serve` runs until it is up and is then stopped, `bench tower` plays 10 throws, and a
temporary folder stands for the service's /var/lib/dicetower, made by systemd on the Pi.
The guide's order and its one journal path are checked from its text.
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
from helpers import lines_until_ready

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
BACKUP = ("sqlite3 /var/lib/dicetower/journal.sqlite3 "
          "\".backup '$HOME/journal-$(date +%F).sqlite3'\"")
SERVE = "dicetower serve --journal /var/lib/dicetower/journal.sqlite3"
STATE = "/var/lib/dicetower"  # the service's StateDirectory=, a temporary folder here
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
                   "vcgencmd get_throttled"):
        assert needed in pi_only


def test_each_step_works_when_it_is_reached() -> None:
    """A command on the service comes after the service is installed and started."""
    commands = [line.strip() for kind, lines in _blocks() if kind.startswith("sh")
                for line in lines]
    started = commands.index("sudo systemctl enable --now dicetower")
    installed = next(k for k, line in enumerate(commands)
                     if "service install" in line and "--dry-run" not in line)
    assert installed < started
    for k, line in enumerate(commands):
        if "systemctl stop dicetower" in line or "systemctl start dicetower" in line:
            assert k > started, line  # "Unit dicetower.service not loaded" before
    # The first doctor, before the service, finds no journal folder and says why.
    text = GUIDE.read_text(encoding="utf-8")
    step8 = text.split("## 8.", 1)[1].split("## 9.", 1)[0]
    assert "--journal" not in step8 and "will be created at the service's first start" in step8


def test_one_journal_for_the_tower() -> None:
    from firmware_host.service import JOURNAL

    text = GUIDE.read_text(encoding="utf-8")
    paths = set(re.findall(r"[~/$\w.{}-]*journal\.sqlite3", text))
    assert paths == {str(JOURNAL)}, paths  # backups, serve, doctor and the service: one file
    toml = next("\n".join(lines) for kind, lines in _blocks() if kind == "toml")
    import tomllib

    assert tomllib.loads(toml)["journal"]["path"] == str(JOURNAL)


def test_what_doctor_is_said_to_print_before_the_service(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    import firmware_host.service as service
    from firmware_host.commands.doctor import check_journal

    monkeypatch.setattr(service, "STATE_DIR", tmp_path / "not-yet")
    check = check_journal(service.STATE_DIR / "journal.sqlite3")
    said = "will be created at the service's first start"
    assert check.state == "ok" and said in check.detail and said in GUIDE.read_text()


def test_installing_leaves_the_systems_packages_alone() -> None:
    pi_only = _commands("sh pi-only")
    for line in pi_only:
        if line.startswith("sudo apt install"):  # Lite: no desktop extras
            assert "--no-install-recommends" in line, line
        if "pip install" in line and "--ignore-installed" in line:
            assert "--no-deps" in line, line  # else pip brings the newest NumPy along
    assert any("simplejpeg" in line and "--no-deps" in line for line in pi_only)


def test_the_throttle_flags_are_said_in_full() -> None:
    text = " ".join(GUIDE.read_text(encoding="utf-8").split())
    said = text.split("`0x50005` means", 1)[1].split(":", 1)[0]
    assert "under-voltage" in said and "throttling" in said and "now and since boot" in said


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
    return subprocess.run(["bash", "-c", _here(home, command)], env=env, capture_output=True,
                          text=True, timeout=timeout, cwd=home)


def _here(home: Path, command: str) -> str:
    """The command with the service's state folder where this machine has one."""
    state = home.parent / "var-lib-dicetower"
    state.mkdir(exist_ok=True)
    return command.replace(STATE, str(state))


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
    assert str(config.journal) == STATE + "/journal.sqlite3"


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="the sqlite3 program is absent")
def test_backup_of_a_journal_in_use(home: Path) -> None:
    assert _shell(home, f"{EXAMPLE}").returncode == 0
    config = _tower_toml(home)
    journal = Path(_here(home, STATE)) / "journal.sqlite3"
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
    (backup,) = home.glob("journal-*.sqlite3")  # dated
    with sqlite3.connect(backup) as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        kinds = [row[0] for row in copy.execute("SELECT kind FROM actions")]
    assert kinds, "the backup holds the game started"


def test_serve_on_the_towers_journal(home: Path) -> None:
    env = {**os.environ, "HOME": str(home), "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    serve = subprocess.Popen(["bash", "-c", f"exec {_here(home, SERVE)} --port {_free_port()}"],
                             env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = lines_until_ready(serve)
        assert any("scoreboard:" in line for line in lines), serve.stderr.read()  # type: ignore[union-attr]
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=30)
    assert (Path(_here(home, STATE)) / "journal.sqlite3").is_file()


def test_bench_tower_gives_its_figures(home: Path) -> None:
    import json

    result = _shell(home, f"{BENCH} --throws 10", timeout=300)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["throws"] == 10 and {"p50_ms", "p95_ms", "misread"} <= set(figures)
