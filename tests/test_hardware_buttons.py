"""Buttons: debounce and hold times from the pin map, presses and long presses to callbacks."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace

import pytest

from hardware.pinmap import EXAMPLE_PINMAP, load_pinmap
from hardware.simulation import SimulatedTower, simulation_timing

STOP, UNDO, NEW_GAME = 2, 3, 8  # the example pin map's buttons


@pytest.fixture
def tower() -> Iterator[SimulatedTower]:
    pinmap = load_pinmap(EXAMPLE_PINMAP)
    timing = replace(simulation_timing(), button_bounce=0.02, long_press=0.08)
    with SimulatedTower(replace(pinmap, timing=timing)) as tower:
        yield tower


def test_debounce_and_hold_time_come_from_the_pinmap(tower: SimulatedTower) -> None:
    for name, bcm in (("stop", STOP), ("undo", UNDO), ("new_game", NEW_GAME)):
        assert tower.pin(bcm).bounce == pytest.approx(0.02)
        assert tower.pin(bcm).pull == "up"
        assert tower.buttons.device(name).hold_time == pytest.approx(0.08)


def test_press_calls_its_callbacks_only(tower: SimulatedTower) -> None:
    pressed: list[str] = []
    tower.on_button("stop", lambda: pressed.append("stop"))
    tower.on_button("stop", lambda: pressed.append("stop again"))
    tower.on_button("undo", lambda: pressed.append("undo"))
    tower.press("stop")
    assert pressed == ["stop", "stop again"]
    tower.pin(UNDO).drive_low()  # pressed by hand: the pin goes to GND
    tower.pin(UNDO).drive_high()
    assert pressed == ["stop", "stop again", "undo"]


def test_long_press_is_told_apart(tower: SimulatedTower) -> None:
    short: list[str] = []
    long: list[str] = []
    tower.on_button("new_game", lambda: short.append("press"))
    tower.on_button("new_game", lambda: long.append("held"), long_press=True)
    tower.press("new_game")
    assert (short, long) == (["press"], [])
    tower.press("new_game", hold=True)
    assert (short, long) == (["press", "press"], ["held"])


def test_failing_callback_does_not_silence_the_others(
        tower: SimulatedTower, caplog: pytest.LogCaptureFixture) -> None:
    pressed: list[str] = []

    def broken() -> None:
        raise RuntimeError("boom")

    tower.on_button("stop", broken)
    tower.on_button("stop", lambda: pressed.append("stop"))
    with caplog.at_level(logging.ERROR, logger="hardware.buttons"):
        tower.press("stop")
    assert pressed == ["stop"]
    assert "button stop callback" in caplog.text


def test_unknown_button_is_refused(tower: SimulatedTower) -> None:
    with pytest.raises(ValueError, match="unknown button 'reset'"):
        tower.on_button("reset", lambda: None)
