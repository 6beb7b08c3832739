"""`dicetower hw-test`: the simulated walk-through, its failures, and machines without pins."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin
from helpers import pinmap_text

from firmware_host.cli import main
from hardware import factory as factory_module
from hardware.factory import NotOnAPi, real_factory
from hardware.pinmap import EXAMPLE_PINMAP, load_pinmap, parse_pinmap
from hardware.simulation import SimulatedTower, simulated_pinmap
from hardware.walkthrough import Probe, SimulatedProbe, run_walkthrough

PER_SEAT_PLAIN = pinmap_text([(17, 12, 5), (27, 13, None), (22, 18, None)], status=23)


class DeadPin(MockPWMPin):
    """A pin whose wire is cut: whatever is written, it reads back 0."""

    def _set_state(self, value: float) -> None:
        super()._set_state(0)


@pytest.fixture
def not_a_pi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    model = tmp_path / "model"  # absent: no device tree, as on a laptop
    monkeypatch.setattr(factory_module, "MODEL_FILE", model)
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.delenv("DICETOWER_PINMAP", raising=False)
    return model


@pytest.fixture
def tower() -> Iterator[SimulatedTower]:
    with SimulatedTower(simulated_pinmap(load_pinmap(EXAMPLE_PINMAP))) as tower:
        yield tower


def test_simulated_walkthrough_passes(capsys: pytest.CaptureFixture[str],
                                      not_a_pi: Path) -> None:
    assert main(["hw-test", "--simulate"]) == 0
    out = capsys.readouterr().out
    assert "16 of 16 devices answered." in out
    assert "FAIL" not in out
    for device in ("seat 4 light", "status error", "ring light", "flourish", "servo chute",
                   "pot dispenser", "button new game"):
        assert f"[ok  ] {device}:" in out


def test_simulated_failure_exits_non_zero(capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch,
                                          not_a_pi: Path) -> None:
    build = SimulatedTower.__init__

    def empty_hopper(self: SimulatedTower, pinmap: object, **kwargs: object) -> None:
        build(self, pinmap, **{**kwargs, "tokens": 0})  # type: ignore[arg-type]

    monkeypatch.setattr(SimulatedTower, "__init__", empty_hopper)
    assert main(["hw-test", "--simulate"]) == 1
    out = capsys.readouterr().out
    assert "15 of 16 devices answered." in out
    assert "FAILED: pot dispenser: seat 1: 0 of 1 token(s)" in out


def test_dead_led_pin_is_found() -> None:
    pinmap = simulated_pinmap(load_pinmap(EXAMPLE_PINMAP))
    mock = MockFactory(pin_class=MockPWMPin)
    mock.pin(6, pin_class=DeadPin)  # seat 2's green leg
    said: list[str] = []
    with SimulatedTower(pinmap, factory=mock) as tower:
        checks = {c.device: c for c in run_walkthrough(tower, SimulatedProbe(tower, said.append))}
    assert not checks["seat 2 light"].ok
    assert "GPIO 6 read 0, expected a steady 1" in checks["seat 2 light"].detail
    assert all(c.ok for name, c in checks.items() if name != "seat 2 light")
    assert "  [FAIL] seat 2 light: GPIO 6 read 0, expected a steady 1" in said


def test_dead_servo_pin_is_found() -> None:
    pinmap = simulated_pinmap(load_pinmap(EXAMPLE_PINMAP))
    mock = MockFactory(pin_class=MockPWMPin)
    mock.pin(13, pin_class=DeadPin)  # the chute servo
    with SimulatedTower(pinmap, factory=mock) as tower:
        checks = {c.device: c for c in run_walkthrough(tower, SimulatedProbe(tower, print))}
    assert not checks["servo chute"].ok
    assert "-54° gave 0.000 ms, expected 1.200 ms" in checks["servo chute"].detail
    assert checks["servo pusher"].ok


def test_per_seat_plain_led_build_walks_through() -> None:
    pinmap = parse_pinmap(PER_SEAT_PLAIN)
    with SimulatedTower(simulated_pinmap(pinmap), tokens=2) as tower:
        checks = run_walkthrough(tower, SimulatedProbe(tower, print))
    assert [c.device for c in checks] == [
        "seat 1 light", "seat 2 light", "seat 3 light", "status ready", "status reading",
        "status reroll", "status error", "ring light", "servo seat 1", "servo seat 2",
        "servo seat 3", "seat 1 dispenser", "seat 2 dispenser", "seat 3 dispenser",
        "button stop", "button undo", "button new game"]
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]
    assert "counted" in checks[11].detail  # seat 1 has a beam
    assert checks[12].detail == "1 token(s) left the mock hopper (no beam to count them)"


def test_interactive_walkthrough_asks_and_waits(tower: SimulatedTower) -> None:
    answers = iter(["y", "maybe", "n"] + ["y"] * 20)
    asked: list[str] = []
    said: list[str] = []

    def ask(question: str) -> str:
        asked.append(question)
        return next(answers)

    def say(line: str) -> None:
        said.append(line)
        if line.startswith("Press the stop button") or line.startswith("Press the undo"):
            tower.press(line.split()[2])  # the builder presses it; new game is left alone

    probe = Probe(ask=ask, say=say, button_timeout=0.05, show_time=0)
    checks = {c.device: c for c in run_walkthrough(tower, probe)}
    assert asked[0] == "Did seat 1 light red, then green, then blue? [y/n] "
    assert "Please answer y or n." in said
    assert checks["seat 1 light"].ok and not checks["seat 2 light"].ok
    assert "Did exactly one token fall" not in " ".join(asked)  # the beam counted it
    assert checks["pot dispenser"].ok
    assert checks["button stop"].ok and checks["button undo"].ok
    assert not checks["button new game"].ok
    assert "no press within 0.05 s" in checks["button new game"].detail


def test_not_a_pi_is_a_clear_message(capsys: pytest.CaptureFixture[str],
                                     not_a_pi: Path) -> None:
    assert main(["hw-test"]) == 2
    out = capsys.readouterr().out
    assert "this machine is not a Raspberry Pi" in out
    assert "--simulate" in out
    assert "Traceback" not in out


def test_pi_without_lgpio_says_what_to_install(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\0")
    try:
        import lgpio  # noqa: F401
    except ImportError:
        with pytest.raises(NotOnAPi, match="lgpio library is missing"):
            real_factory(model)
    else:  # pragma: no cover - only on a Pi
        pytest.skip("lgpio is installed here")


def test_pin_factory_environment_is_respected(monkeypatch: pytest.MonkeyPatch,
                                              not_a_pi: Path) -> None:
    saved = Device.pin_factory
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    try:
        assert isinstance(real_factory(), MockFactory)
        monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "no-such-factory")
        with pytest.raises(NotOnAPi, match="no-such-factory"):
            real_factory()
    finally:
        if Device.pin_factory is not None:
            Device.pin_factory.close()
        Device.pin_factory = saved


def test_refused_pinmap_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "pinmap.toml"
    text = EXAMPLE_PINMAP.read_text(encoding="utf-8").replace("red = 23", "red = 17")
    bad.write_text(text, encoding="utf-8")
    assert main(["hw-test", "--simulate", "--pinmap", str(bad)]) == 2
    out = capsys.readouterr().out
    assert f"{bad}: [seats.3].red: pin 17 is already used by [seats.1].red" in out


def test_pinmap_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    chosen = tmp_path / "mine.toml"
    chosen.write_text(EXAMPLE_PINMAP.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv("DICETOWER_PINMAP", str(chosen))
    assert main(["hw-test", "--simulate"]) == 0
    assert f"pin map {chosen}" in capsys.readouterr().out


def test_simulated_pinmap_keeps_pins_and_shortens_timing() -> None:
    pinmap = load_pinmap(EXAMPLE_PINMAP)
    fast = simulated_pinmap(pinmap)
    assert replace(fast, timing=pinmap.timing) == pinmap
    assert fast.timing.push_time < 0.01


def test_closed_input_fails_the_question_without_a_traceback(tower: SimulatedTower) -> None:
    def closed(prompt: str) -> str:
        raise EOFError

    check = Probe(ask=closed, say=print).confirm("seat 1 light", "Did seat 1 light up?")
    assert not check.ok
    assert check.detail == "no answer (input closed)"


def test_devices_that_cannot_start_are_reported(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str],
                                                not_a_pi: Path) -> None:
    saved = Device.pin_factory
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")  # plain mock pins: no PWM
    monkeypatch.delenv("GPIOZERO_MOCK_PIN_CLASS", raising=False)
    try:
        assert main(["hw-test"]) == 2
    finally:
        if Device.pin_factory is not None:
            Device.pin_factory.reset()
        Device.pin_factory = saved
    out = capsys.readouterr().out
    assert "Real pins (MockFactory)" in out
    assert "cannot set up the devices: PinPWMUnsupported" in out
