"""`dicetower doctor`: the simulated tower passes; each broken part fails with a fix line.

The Pi's own reports are faked where they come from: a thermal-zone file, a `vcgencmd`
program on the PATH printing what the firmware prints, a pin factory whose pin is busy.
"""

from __future__ import annotations

import datetime
import re
import socket
import stat
from pathlib import Path

import cv2
import numpy as np
import pytest

from firmware_host.cli import main
from firmware_host.commands import doctor

LINE = re.compile(r"^  (OK|FAIL|SKIP)\s+(\S+)\s+(.+)$")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _config(tmp_path: Path, *, port: int | None = None, extra: str = "",
            journal: str = "journal.sqlite3", tower: str = 'pinmap = "simulated"') -> Path:
    path = tmp_path / "tower.toml"
    path.write_text(f"""
[camera]
source = "simulated"
[tower]
{tower}
[scoreboard]
host = "127.0.0.1"
port = {port or _free_port()}
[journal]
path = "{journal}"
{extra}
""")
    return path


@pytest.fixture(autouse=True)
def cool_pi_or_none(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No thermal zone and no vcgencmd unless a test fakes them: results must not depend on
    the machine the tests run on."""
    monkeypatch.setattr(doctor, "THERMAL_ZONE", tmp_path / "no-thermal-zone")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))


def _doctor(capsys: pytest.CaptureFixture[str], config: Path,
            *args: str) -> tuple[int, dict[str, tuple[str, str]], str]:
    code = main(["doctor", "--config", str(config), *args])
    out = capsys.readouterr().out
    lines = out.splitlines()
    checks: dict[str, tuple[str, str]] = {}
    for k, line in enumerate(lines):
        match = LINE.match(line)
        if match:
            state, name, detail = match.groups()
            checks[name] = (state, detail)
            if state == "FAIL":  # every failure comes with its fix, on the next line
                assert lines[k + 1].strip().startswith("fix: "), out
    assert lines[-1].startswith("doctor: ") and "FAIL" in lines[-1]
    return code, checks, out


def test_the_simulated_tower_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, checks, out = _doctor(capsys, _config(tmp_path))
    assert code == 0, out
    assert {name for name, (state, _) in checks.items() if state == "OK"} >= {
        "configuration", "camera", "journal", "scoreboard", "clock", "disk"}
    assert checks["camera"][1] == "simulated: 3 frames of 640x480"
    assert checks["networks"][0] == "OK" and "ONNX Runtime" in checks["networks"][1]
    assert checks["temperature"][0] == "SKIP" and checks["power"][0] == "SKIP"
    assert checks["pins"][0] == "SKIP" and "mock pins" in checks["pins"][1]
    assert not (tmp_path / "journal.sqlite3").exists()  # looked at, never made


def test_a_busy_port_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        code, checks, out = _doctor(capsys, _config(tmp_path, port=busy.getsockname()[1]))
    assert code == 1
    assert checks["scoreboard"][0] == "FAIL" and "in use" in checks["scoreboard"][1]
    assert "set [scoreboard] port" in out


def test_an_unwritable_journal_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                     ) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    code, checks, _ = _doctor(capsys, _config(tmp_path, journal="a-file/journal.sqlite3"))
    assert code == 1 and checks["journal"][0] == "FAIL"
    assert "a-file is a file, not a folder" in checks["journal"][1]


@pytest.mark.parametrize(("journal", "words"), [
    ("", "is a folder"),
    ("a-file/j.sqlite3", "a-file is a file, not a folder"),
    ("a-file", "not a dicetower journal"),  # what `run` would refuse
])
def test_a_journal_run_would_refuse_fails(journal: str, words: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-file").write_bytes(b"\x00\xff not SQLite")
    code, checks, out = _doctor(capsys, _config(tmp_path), "--journal",
                                str(tmp_path / journal))
    assert code == 1 and checks["journal"][0] == "FAIL" and words in checks["journal"][1]
    assert "chown" not in out


def test_the_services_journal_before_its_first_start(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import firmware_host.service as service

    state = tmp_path / "var-lib-dicetower"  # StateDirectory=: systemd makes it at the start
    monkeypatch.setattr(service, "STATE_DIR", state)
    code, checks, out = _doctor(capsys, _config(tmp_path), "--journal",
                                str(state / "journal.sqlite3"))
    assert code == 0 and checks["journal"][0] == "OK", out
    assert "created at the service's first start" in checks["journal"][1]
    assert "chown" not in out and not state.exists()
    (tmp_path / "elsewhere").write_text("a file where a folder should be")
    code, checks, out = _doctor(capsys, _config(tmp_path), "--journal",
                                str(tmp_path / "elsewhere" / "journal.sqlite3"))
    assert code == 1 and "first start" not in checks["journal"][1]  # only the service's


def test_a_host_that_does_not_resolve_is_not_blamed_on_another_program() -> None:
    check = doctor.check_port("no-such-host.invalid", 8000)
    assert check.state == "fail" and "[scoreboard] host" in check.fix
    assert "another program" not in check.fix


def test_the_journal_option_is_the_one_checked(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    code, checks, _ = _doctor(capsys, _config(tmp_path), "--journal",
                              str(tmp_path / "a-file" / "j.sqlite3"))
    assert code == 1 and checks["journal"][0] == "FAIL"


def test_networks_that_do_not_load_fail_with_the_fix(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import vision

    def no_runtime() -> None:  # as on a 32-bit system, where pip found no ONNX Runtime
        raise ModuleNotFoundError("No module named 'onnxruntime'")

    monkeypatch.setattr(vision, "shipped_readers", no_runtime)
    code, checks, out = _doctor(capsys, _config(tmp_path))
    assert code == 1 and checks["networks"][0] == "FAIL"
    assert "onnxruntime" in checks["networks"][1] and "64-bit system" in out


def test_a_missing_profile_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path, tower='pinmap = "simulated"\nprofile = "profile.json"')
    code, checks, out = _doctor(capsys, config)
    assert code == 1 and checks["profile"][0] == "FAIL"
    assert "profile.json" in checks["profile"][1] and "[tower] profile" in out


@pytest.mark.parametrize(("size", "state"), [((640, 480), "OK"), ((320, 240), "FAIL")])
def test_a_profile_must_fit_the_camera(size: tuple[int, int], state: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    cv2.imwrite(str(tmp_path / "empty.png"), np.full((size[1], size[0], 3), 60, np.uint8))
    (tmp_path / "profile.json").write_text('{"background": "empty.png"}')
    config = _config(tmp_path, tower='pinmap = "simulated"\nprofile = "profile.json"')
    code, checks, _ = _doctor(capsys, config)
    assert checks["profile"][0] == state and code == (0 if state == "OK" else 1)
    if state == "FAIL":
        assert "calibrate again" in checks["profile"][1]


def test_a_camera_that_does_not_open_fails(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path)
    config.write_text(config.read_text().replace('"simulated"\n[tower]',
                                                 f'"folder:{tmp_path / "none"}"\n[tower]'))
    code, checks, out = _doctor(capsys, config)
    assert code == 1 and checks["camera"][0] == "FAIL" and "no such folder" in out
    assert checks["profile"][0] == "SKIP"


@pytest.mark.parametrize(("millidegrees", "state"), [("85123\n", "FAIL"), ("47000\n", "OK")])
def test_cpu_temperature(millidegrees: str, state: str, tmp_path: Path,
                         monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> None:
    zone = tmp_path / "temp"
    zone.write_text(millidegrees)
    monkeypatch.setattr(doctor, "THERMAL_ZONE", zone)
    code, checks, _ = _doctor(capsys, _config(tmp_path))
    assert checks["temperature"][0] == state
    assert checks["temperature"][1].startswith(f"CPU at {int(millidegrees) // 1000} °C")
    assert code == (1 if state == "FAIL" else 0)


def _fake_vcgencmd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str) -> None:
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    program = folder / "vcgencmd"
    program.write_text(f'#!/bin/sh\n[ "$1" = get_throttled ] && echo "{answer}"\n')
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(folder))


@pytest.mark.parametrize(("answer", "state", "words"), [
    # Under-voltage and the throttling it causes, both now and since boot.
    ("throttled=0x50005", "FAIL", "under-voltage now, throttled now, under-voltage since boot, "
                                  "throttled since boot (throttled=0x50005)"),
    ("throttled=0x50000", "FAIL", "under-voltage since boot"),
    ("throttled=0x80000", "FAIL", "soft temperature limit since boot"),
    ("throttled=0x0", "OK", "no under-voltage"),
])
def test_under_voltage_from_vcgencmd(answer: str, state: str, words: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    _fake_vcgencmd(tmp_path, monkeypatch, answer)
    code, checks, out = _doctor(capsys, _config(tmp_path))
    assert checks["power"][0] == state and words in checks["power"][1]
    if state == "FAIL" and "under-voltage" in words:
        assert "official power supply" in out
    assert code == (1 if state == "FAIL" else 0)


def test_pins_off_a_pi_fail_and_a_busy_pin_is_named(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from hardware import factory as factories
    from hardware.pinmap import EXAMPLE_PINMAP

    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.setattr(factories, "MODEL_FILE", tmp_path / "no-model")
    config = _config(tmp_path, tower=f'pinmap = "{EXAMPLE_PINMAP}"')
    code, checks, _ = _doctor(capsys, config)
    assert code == 1 and checks["pins"][0] == "FAIL"
    assert "not a Raspberry Pi" in checks["pins"][1]

    class BusyAt17(factories.MockFactory):
        def pin(self, name: object) -> object:
            if name == 17:
                raise RuntimeError("GPIO busy")  # what lgpio says of a claimed line
            return super().pin(name)

    monkeypatch.setattr(factories, "real_factory", lambda: BusyAt17())
    code, checks, out = _doctor(capsys, config)
    assert code == 1 and checks["pin"] == ("FAIL", "GPIO 17 ([seats.1].red, seat 1 LED red): "
                                                   "GPIO busy")
    assert "sudo systemctl stop dicetower" in out
    monkeypatch.setattr(factories, "real_factory", factories.mock_factory)
    code, checks, _ = _doctor(capsys, config)
    assert code == 0 and checks["pins"][0] == "OK" and "free on MockFactory" in checks["pins"][1]


def test_a_bad_configuration_fails_and_the_machine_is_still_checked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, checks, out = _doctor(capsys, tmp_path / "none.toml")
    assert code == 1 and checks["configuration"][0] == "FAIL"
    assert {"clock", "disk", "temperature", "power"} <= set(checks)
    assert "camera" not in checks and "dicetower run --example" in out


def test_clock_and_disk() -> None:
    assert doctor.check_clock(datetime.date(1970, 1, 1)).state == "fail"
    assert doctor.check_clock(datetime.date(doctor.RELEASE_YEAR, 1, 1)).state == "ok"
    free = doctor.check_disk(Path("/"), 0)
    assert free.state == "ok" and "GB free on /" in free.detail
    assert doctor.check_disk(Path("/"), 10**12).state == "fail"


# A stand-in for lgpio as far as its import goes, following lg's own code: its C library works
# in $LG_WD or else the current folder (lguGetWorkDir, which chdir()s there), makes the named
# pipe .lgd-nfy0 there with mkfifo, and on failure hands back an error number, with which the
# Python module opens '.lgd-nfy-3' by its relative name: FileNotFoundError at import.
FAKE_LGPIO = '''
import os

SET_PULL_NONE, SET_PULL_UP, SET_PULL_DOWN = 0, 1, 2
RISING_EDGE, FALLING_EDGE, BOTH_EDGES = 0, 1, 2


class error(Exception):
    pass


def _notify_open():
    try:
        folder = os.environ.get("LG_WD") or os.getcwd()
    except OSError:
        folder = "/tmp"
    os.chdir(folder)
    name = os.path.join(folder, ".lgd-nfy0")
    try:
        if not os.path.exists(name):
            os.mkfifo(name, 0o664)
        os.open(name, os.O_RDWR | os.O_NONBLOCK)
    except OSError:
        return -3
    return 0


_notify = _notify_open()
_file = open(".lgd-nfy{}".format(_notify), "rb")


def gpiochip_open(chip):
    raise error("can not open gpiochip")
'''


@pytest.fixture
def fake_lgpio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """lgpio importable (the fake above), not imported yet; the board said to be a Pi."""
    import sys

    from hardware import factory as factories

    library = tmp_path / "lib"
    library.mkdir()
    (library / "lgpio.py").write_text(FAKE_LGPIO)
    monkeypatch.syspath_prepend(str(library))
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\0")
    monkeypatch.setattr(factories, "MODEL_FILE", model)
    monkeypatch.setattr(factories, "_pipe_folder_used", None)
    for variable in ("GPIOZERO_PIN_FACTORY", "LG_WD"):
        monkeypatch.delenv(variable, raising=False)
    runtime = tmp_path / "run-user"
    runtime.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    for name in ("lgpio", "gpiozero.pins.lgpio"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield runtime
    for name in ("lgpio", "gpiozero.pins.lgpio"):  # not to be found by later tests
        sys.modules.pop(name, None)


def test_lgpio_from_a_folder_that_takes_no_pipe(fake_lgpio: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from hardware.pinmap import EXAMPLE_PINMAP

    config = _config(tmp_path, tower=f'pinmap = "{EXAMPLE_PINMAP}"')
    # /proc takes no file, even from root (whom os.access would let write there).
    monkeypatch.chdir("/proc")
    code, checks, out = _doctor(capsys, config)
    assert code == 1  # the pins fail (the fake chip), nothing else
    assert "Traceback" not in out and (fake_lgpio / ".lgd-nfy0").exists(), out
    assert checks.get("lgpio") == ("OK", f"its notification pipe in {fake_lgpio} (the current "
                                     "folder takes none)")
    # Past the import, the fake's GPIO chip refuses: the line says that, not a crash.
    assert checks["pins"][0] == "FAIL" and "cannot open the GPIO chip" in checks["pins"][1]
    assert Path.cwd() == Path("/proc")  # back where it was run from


def test_lgpio_pipe_nowhere_is_one_line(fake_lgpio: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from hardware.pinmap import EXAMPLE_PINMAP

    monkeypatch.setenv("LG_WD", "/proc")  # the owner's own choice, where no pipe can go
    code, checks, out = _doctor(capsys, _config(tmp_path, tower=f'pinmap = "{EXAMPLE_PINMAP}"'))
    assert code == 1 and checks["pins"][0] == "FAIL"
    assert "notification pipe in $LG_WD (/proc)" in checks["pins"][1]
    assert "fix: run it from a folder you can write to" in out and "lgpio" not in checks
