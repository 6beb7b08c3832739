"""Starting at boot: `dicetower service install`, and `dicetower run` speaking systemd's notify
protocol to a real unix datagram socket (READY, WATCHDOG from the loop, STOPPING)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from firmware_host.cli import main
from firmware_host.commands import service
from firmware_host.service import JOURNAL, UNIT_TEMPLATE, render_unit

USER = "nobody"  # present on every Debian system, not root


def _config(tmp_path: Path, port: int = 0, journal: str = "tower.sqlite3") -> Path:
    config = tmp_path / "tower folder" / "tower.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(f"""
[camera]
source = "simulated"
[tower]
pinmap = "simulated"
[game]
players = ["Zoe", "Yann"]
[scoreboard]
host = "127.0.0.1"
port = {port or 8000}
pin = "2468"
[journal]
path = "{journal}"
""")
    return config


def _install(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["service", "install", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _unit_of(out: str) -> str:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# dicetower:"))
    end = next(i for i, line in enumerate(lines) if line.startswith("WantedBy="))
    return "\n".join(lines[start:end + 1]) + "\n"


def _keys(unit: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in unit.splitlines()
                if "=" in line and not line.startswith("#"))


# ---------------------------------------------------------------------- the unit


def test_dry_run_prints_the_unit_and_the_next_commands(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    config = _config(tmp_path)
    code, out, _ = _install(capsys, "--user", USER, "--config", str(config), "--dry-run")
    assert code == 0
    keys = _keys(_unit_of(out))
    assert keys["Type"] == "notify" and int(keys["WatchdogSec"]) > 0
    assert keys["Restart"] == "on-failure" and keys["User"] == USER
    assert keys["SupplementaryGroups"].split() == ["gpio", "video"]
    assert keys["StateDirectory"] == "dicetower" and JOURNAL.parent == Path("/var/lib/dicetower")
    # lgpio makes a pipe in the working directory: the state directory, the user's own.
    assert keys["WorkingDirectory"] == "/var/lib/dicetower"
    assert keys["ExecStart"].startswith(f"{sys.executable} -m firmware_host.cli run --config ")
    assert f"'{config}'" in keys["ExecStart"]  # the space in the folder's name is quoted
    assert keys["ExecStart"].endswith(f"--journal {JOURNAL}")
    assert "sudo systemctl daemon-reload" in out and "sudo systemctl enable --now dicetower" in out
    assert "would write /etc/systemd/system/dicetower.service" in out


def test_the_unit_gives_up_on_what_a_restart_cannot_fix(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    code, out, _ = _install(capsys, "--user", USER, "--config", str(_config(tmp_path)),
                            "--dry-run")
    assert code == 0
    keys = _keys(_unit_of(out))
    assert keys["RestartPreventExitStatus"] == "2"  # what `run` exits with on a start-up error
    # Bounded: 5 starts in 10 minutes (RestartSec=5 never reaches systemd's 5 in 10 s).
    burst, interval = int(keys["StartLimitBurst"]), int(keys["StartLimitIntervalSec"])
    assert burst * int(keys["RestartSec"]) < interval and 1 < burst <= 10
    unit = _unit_of(out)
    assert unit.index("StartLimitBurst") < unit.index("[Service]")  # a [Unit] setting


def test_the_unit_waits_for_the_clock_a_bounded_time(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from firmware_host.service import CLOCK_WAIT_SECONDS

    code, out, _ = _install(capsys, "--user", USER, "--config", str(_config(tmp_path)),
                            "--dry-run")
    assert code == 0
    keys = _keys(_unit_of(out))
    # time-sync.target alone does not wait for systemd-timesyncd: its waiting service does,
    # under a time limit ("-": a system without it, or without Internet, starts anyway).
    wait = keys["ExecStartPre"].split()
    assert wait[0] == "-/usr/bin/timeout" and int(wait[1]) == CLOCK_WAIT_SECONDS
    assert wait[2].endswith("/systemd-time-wait-sync")
    assert int(keys["TimeoutStartSec"]) > CLOCK_WAIT_SECONDS + 30  # the start after it
    assert "time-sync.target" in keys["After"]


def test_a_configuration_naming_another_journal_is_warned(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    code, out, _ = _install(capsys, "--user", USER, "--config", str(_config(tmp_path)),
                            "--dry-run")
    assert code == 0 and "the configuration's journal is" in out
    assert f'[journal] path = "{JOURNAL}"' in out
    code, out, _ = _install(capsys, "--user", USER, "--dry-run", "--config",
                            str(_config(tmp_path, journal=str(JOURNAL))))
    assert code == 0 and "the configuration's journal" not in out


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze absent")
def test_the_unit_is_valid_for_systemd(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _install(capsys, "--user", USER, "--config", str(_config(tmp_path)),
                            "--dry-run")
    assert code == 0
    unit = tmp_path / "dicetower.service"
    unit.write_text(_unit_of(out))
    result = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Unknown key" not in result.stderr and "Failed to parse" not in result.stderr


def test_percent_and_dollar_in_paths_reach_systemd_as_themselves() -> None:
    unit = render_unit(exec_start="/opt/a%b/python -m x $HOME", user="pi",
                       workdir=Path("/srv/50%"))
    keys = _keys(unit)
    assert keys["ExecStart"] == "/opt/a%%b/python -m x $$HOME"
    assert keys["WorkingDirectory"] == "/srv/50%%"
    assert "${" not in unit and UNIT_TEMPLATE.is_file()


def test_install_writes_the_unit_where_systemd_reads_it(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    units = tmp_path / "units"
    units.mkdir()
    monkeypatch.setattr(service, "SYSTEMD_UNIT_DIR", units)
    monkeypatch.setattr(service, "SYSTEMD_RUNNING", tmp_path)  # "systemd runs here"
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    config = _config(tmp_path)
    code, out, err = _install(capsys, "--user", USER, "--config", str(config))
    assert code == 0, err
    written = (units / "dicetower.service").read_text()
    assert written == _unit_of(out)
    assert f"wrote {units / 'dicetower.service'}" in out
    code, dry, _ = _install(capsys, "--user", USER, "--config", str(config), "--dry-run")
    assert _unit_of(dry) == written


@pytest.mark.parametrize(("args", "code", "words"), [
    (["--user", "root"], 2, "must not be root"),
    (["--user", "no-such-user-here"], 1, "no user 'no-such-user-here'"),
    (["--user", USER, "--config", "missing.toml"], 2, "no such file"),
    # Written into the unit as they are: a newline would start a line of its own there.
    (["--user", "pi\nExecStartPre=/bin/true", "--dry-run"], 2, "not a user name"),
    (["--user", "a b", "--dry-run"], 2, "not a user name"),
    (["--user", USER, "--dry-run", "--config", "{newline}"], 2, "control character"),
])
def test_bad_input_is_one_line(args: list[str], code: int, words: str, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    if "--config" not in args:
        args = [*args, "--config", str(_config(tmp_path))]
    if "{newline}" in args:
        newline = tmp_path / "a\nb.toml"
        newline.write_bytes(_config(tmp_path).read_bytes())
        args = [str(newline) if arg == "{newline}" else arg for arg in args]
    got, out, err = _install(capsys, *args)
    assert got == code
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert out == ""


def test_without_user_or_sudo_it_asks_for_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("SUDO_USER", raising=False)
    code, _, err = _install(capsys, "--config", str(_config(tmp_path)))
    assert code == 2 and "--user NAME is needed" in err
    monkeypatch.setenv("SUDO_USER", USER)  # `sudo dicetower service install` by that user
    code, out, _ = _install(capsys, "--config", str(_config(tmp_path)), "--dry-run")
    assert code == 0 and f"User={USER}" in out


def test_no_systemd_and_not_root_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    config = str(_config(tmp_path))
    monkeypatch.setattr(service, "SYSTEMD_RUNNING", tmp_path / "absent")
    code, _, err = _install(capsys, "--user", USER, "--config", config)
    assert code == 1 and "does not run systemd" in err
    monkeypatch.setattr(service, "SYSTEMD_RUNNING", tmp_path)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    code, _, err = _install(capsys, "--user", USER, "--config", config)
    assert code == 1 and "needs root" in err and "sudo" in err
    code, out, _ = _install(capsys, "--user", USER, "--config", config, "--dry-run")
    assert code == 0 and "warning: writing the unit needs root" in out


# ---------------------------------------------------------------------- the notify protocol


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _messages(sock: socket.socket, until: str, limit: int = 40) -> list[str]:
    """Datagrams received until one holds ``until`` (each recv waits at most the socket's
    time-out: a tower that never says it fails the test instead of hanging it)."""
    got: list[str] = []
    while len(got) < limit:
        got.append(sock.recv(4096).decode())
        if until in got[-1]:
            return got
    raise AssertionError(f"no {until} in {got}")
def _run_failing(config: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess, str]:
    """`dicetower run --config CONFIG` in a process of its own under a notify socket, as
    systemd runs it: its result and the last STATUS= it sent."""
    path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(60)
        result = subprocess.run(
            [sys.executable, "-m", "firmware_host.cli", "run", "--config", str(config),
             "--journal", str(tmp_path / "journal.sqlite3")],
            env={**os.environ, "NOTIFY_SOCKET": str(path)}, capture_output=True, text=True,
            timeout=120)
        return result, _messages(sock, "STATUS=")[-1]




def test_run_says_ready_pings_the_watchdog_and_says_stopping(tmp_path: Path) -> None:
    path = tmp_path / "notify.sock"
    journal = tmp_path / "state" / "journal.sqlite3"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(60)
        env = {**os.environ, "NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "30000000"}
        process = subprocess.Popen(
            [sys.executable, "-m", "firmware_host.cli", "run", "--config",
             str(_config(tmp_path, _free_port())), "--journal", str(journal)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            ready = _messages(sock, "READY=1")
            assert "STATUS=started a new game" in ready[-1]
            assert not any("WATCHDOG=1" in m for m in ready[:-1])  # the loop runs after READY
            pings = [m for m in _messages(sock, "WATCHDOG=1") if m == "WATCHDOG=1"]
            pings += [m for m in _messages(sock, "WATCHDOG=1") if m == "WATCHDOG=1"]
            assert len(pings) == 2  # again and again while the loop goes round
            process.send_signal(signal.SIGTERM)
            assert "STOPPING=1" in _messages(sock, "STOPPING=1")[-1]
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert journal.is_file()  # --journal took the place of the configuration's path
    assert not (tmp_path / "tower folder" / "tower.sqlite3").exists()


def test_a_start_up_error_exits_2_and_says_why_to_systemd(tmp_path: Path) -> None:
    config = _config(tmp_path, _free_port())
    from hardware.pinmap import EXAMPLE_PINMAP

    pinmap = config.parent / "pinmap.toml"
    example = EXAMPLE_PINMAP.read_text(encoding="utf-8")
    assert "red = 17" in example
    pinmap.write_text(example.replace("red = 17", "red = 99"))  # no restart will fix it
    config.write_text(config.read_text().replace('pinmap = "simulated"', 'pinmap = "pinmap.toml"'))
    result, status = _run_failing(config, tmp_path)
    assert result.returncode == 2, result.stderr  # RestartPreventExitStatus=2: left failed
    line = result.stderr.strip()
    assert "\n" not in line and "Traceback" not in line and "pinmap.toml" in line
    assert status.startswith("STATUS=cannot start: ") and "pinmap.toml" in status


def test_a_pin_map_with_several_problems_says_each_on_its_own_line(tmp_path: Path) -> None:
    config = _config(tmp_path, _free_port())
    from hardware.pinmap import EXAMPLE_PINMAP

    pinmap = config.parent / "pinmap.toml"
    example = EXAMPLE_PINMAP.read_text(encoding="utf-8")
    broken = example.replace("red = 17", "red = 99").replace("green = 6", "green = 5")
    broken = broken.replace("chute_angle = 18", 'chute_angle = "x"')
    assert broken.count("\n") == example.count("\n") and broken != example
    pinmap.write_text(broken)
    config.write_text(config.read_text().replace('pinmap = "simulated"', 'pinmap = "pinmap.toml"'))
    result, status = _run_failing(config, tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert "Traceback" not in result.stderr and len(lines) == 3, result.stderr
    assert all(line.startswith(f"dicetower run: {pinmap}: [seats.") for line in lines)
    assert [line.split("]")[0].rsplit("[", 1)[1] for line in lines] == [
        "seats.1", "seats.2", "seats.3"]
    assert "pin 99" in lines[0] and "pin 5 is already used" in lines[1]
    assert "chute_angle" in lines[2]
    # systemd's status is one line: the three problems side by side.
    assert "\n" not in status.strip() and status.count(str(pinmap)) == 3
