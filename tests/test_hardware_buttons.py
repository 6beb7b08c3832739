"""Buttons: debounce and hold times from the pin map, presses and long presses to callbacks."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from hardware.pinmap import EXAMPLE_PINMAP, load_pinmap
from hardware.simulation import SimulatedTower, simulation_timing

STOP, UNDO, NEW_GAME = 2, 3, 8  # the example pin map's buttons


def make_tower(long_press: float) -> SimulatedTower:
    pinmap = load_pinmap(EXAMPLE_PINMAP)
    timing = replace(simulation_timing(), button_bounce=0.02, long_press=long_press)
    return SimulatedTower(replace(pinmap, timing=timing))


@pytest.fixture
def tower() -> Iterator[SimulatedTower]:
    with make_tower(0.08) as tower:
        yield tower


@pytest.fixture
def slow_hold_tower() -> Iterator[SimulatedTower]:
    # A hold time no test machine stalls for between two lines: every press here is short.
    with make_tower(30) as tower:
        yield tower
        for bcm in (STOP, UNDO, NEW_GAME):
            # A test failing mid-press would leave gpiozero's hold timer waiting 30 s.
            tower.pin(bcm).drive_high()


def wait_until(condition: Callable[[], bool], timeout: float = 5) -> None:
    """Poll `condition` (set by gpiozero's own threads) until it holds or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.005)


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


def test_short_press_fires_the_short_action_on_release(
        slow_hold_tower: SimulatedTower) -> None:
    tower = slow_hold_tower
    short: list[str] = []
    long: list[str] = []
    tower.on_button("new_game", lambda: short.append("press"))
    tower.on_button("new_game", lambda: long.append("held"), long_press=True)
    tower.pin(NEW_GAME).drive_low()
    assert (short, long) == ([], [])  # it may yet become a long press
    tower.pin(NEW_GAME).drive_high()
    assert (short, long) == (["press"], [])
    tower.press("new_game")
    assert (short, long) == (["press", "press"], [])


def test_long_press_fires_only_the_long_action(tower: SimulatedTower) -> None:
    short: list[str] = []
    long: list[str] = []
    tower.on_button("new_game", lambda: short.append("press"))
    tower.on_button("new_game", lambda: long.append("held"), long_press=True)
    tower.pin(NEW_GAME).drive_low()
    wait_until(lambda: bool(long))
    assert (short, long) == ([], ["held"])  # fired while still held down
    tower.pin(NEW_GAME).drive_high()
    assert (short, long) == ([], ["held"])  # and the release adds nothing
    tower.press("new_game", hold=True)
    assert (short, long) == ([], ["held", "held"])


def test_a_release_past_the_hold_time_is_a_long_press(tower: SimulatedTower) -> None:
    # The hold timer and the release run on different threads; when the release gets in
    # first, the press's length still makes it a long press.
    short: list[str] = []
    long: list[str] = []
    tower.on_button("new_game", lambda: short.append("press"))
    tower.on_button("new_game", lambda: long.append("held"), long_press=True)
    tower.buttons.device("new_game").when_held = None  # the timer never gets its turn
    tower.pin(NEW_GAME).drive_low()
    time.sleep(0.08 * 1.5)
    tower.pin(NEW_GAME).drive_high()
    assert (short, long) == ([], ["held"])


def test_without_a_long_action_a_press_fires_at_once(tower: SimulatedTower) -> None:
    pressed: list[str] = []
    tower.on_button("stop", lambda: pressed.append("stop"))
    tower.pin(STOP).drive_low()
    assert pressed == ["stop"]  # no need to wait for the release
    wait_until(lambda: tower.buttons.device("stop").is_held)
    tower.pin(STOP).drive_high()
    assert pressed == ["stop"]  # held or not, one press is one action


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
