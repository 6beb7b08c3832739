"""Seat lights, status LED, ring light and flourishes, read back from gpiozero's mock pins."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest
from conftest import assert_states_and_min_times
from gpiozero import LED
from gpiozero.exc import GPIOPinInUse
from helpers import pinmap_text

from hardware.factory import mock_factory
from hardware.lights import SeatState
from hardware.pinmap import EXAMPLE_PINMAP, PinMap, load_pinmap, parse_pinmap
from hardware.simulation import SimulatedTower, simulation_timing
from hardware.tower import Tower

# Pins of the example pin map.
SEAT1 = (17, 27, 22)
SEAT2 = (5, 6, 26)
STATUS = (9, 10, 11)
RING, BUZZER = 4, 7

# Plain LEDs on the seats and no status LED, buzzer or flourish LED.
PLAIN = pinmap_text([(17, 12, None), (27, 13, None)], ring=18, buttons=(2, 3, 4))


def example(**timing: float) -> PinMap:
    pinmap = load_pinmap(EXAMPLE_PINMAP)
    return replace(pinmap, timing=replace(simulation_timing(), **timing))


@pytest.fixture
def tower() -> Iterator[SimulatedTower]:
    # gpiozero's timing assertions allow 50 ms either way: blink periods must differ by more.
    with SimulatedTower(example(blink_fast=0.05, blink_slow=0.2, beep=0.08)) as tower:
        yield tower


@pytest.fixture
def plain() -> Iterator[SimulatedTower]:
    pinmap = parse_pinmap(PLAIN)
    with SimulatedTower(replace(pinmap, timing=simulation_timing())) as tower:
        yield tower


def values(tower: SimulatedTower, pins: tuple[int, ...]) -> tuple[float, ...]:
    return tuple(round(float(tower.pin(p).state), 6) for p in pins)


def test_turn_lights_one_seat_green(tower: SimulatedTower) -> None:
    tower.show_turn(1)
    assert values(tower, SEAT1) == (0, 1, 0)
    tower.show_turn(2)
    assert values(tower, SEAT2) == (0, 1, 0)
    assert values(tower, SEAT1) == (0, 0, 0)
    assert tower.seat_state(1) is SeatState.IDLE
    assert tower.seat_state(2) is SeatState.TURN


def test_out_is_dim_red_and_stays_when_turn_moves(tower: SimulatedTower) -> None:
    tower.show_out(1)
    tower.show_turn(2)
    assert values(tower, SEAT1) == (0.15, 0, 0)
    tower.clear_seats()
    assert values(tower, SEAT1 + SEAT2) == (0,) * 6


def test_owes_blinks_amber_slowly(tower: SimulatedTower) -> None:
    red, green, blue = (tower.pin(p) for p in SEAT1)
    for pin in (red, green, blue):
        pin.clear_states()
    tower.show_owes(1)
    time.sleep(0.5)
    tower.clear_seat(1)  # at 0.5 s, halfway through the second "on"
    assert len(red.states) == 5
    assert_states_and_min_times(red, [(0, 0), (0, 1), (0.2, 0), (0.2, 1), (None, 0)])
    assert_states_and_min_times(green, [(0, 0), (0, 0.5), (0.2, 0), (0.2, 0.5)])
    assert [s.state for s in blue.states] == [0]


def test_status_patterns_differ(tower: SimulatedTower) -> None:
    red, green, blue = (tower.pin(p) for p in STATUS)
    tower.set_status("ready")
    assert values(tower, STATUS) == (0, 1, 0)
    for pin in (red, green, blue):
        pin.clear_states()
    tower.set_status("error")  # short red flashes: 50 ms on, 200 ms off
    time.sleep(0.33)
    tower.set_status("off")
    assert len(red.states) >= 5
    assert_states_and_min_times(red, [(0, 0), (0, 1), (0.05, 0), (0.2, 1), (0.05, 0)])
    assert_states_and_min_times(green, [(0, 1), (0, 0)])
    assert tower.status.status == "off"
    assert values(tower, STATUS) == (0, 0, 0)


def test_reading_blinks_blue_fast(tower: SimulatedTower) -> None:
    blue = tower.pin(STATUS[2])
    blue.clear_states()
    tower.set_status("reading")
    time.sleep(0.17)
    tower.set_status("off")
    assert len(blue.states) >= 4
    assert_states_and_min_times(blue, [(0, 0), (0, 1), (0.05, 0), (0.05, 1)])


def test_unknown_status_and_seat_are_refused(tower: SimulatedTower) -> None:
    with pytest.raises(ValueError, match="unknown status 'happy'"):
        tower.set_status("happy")
    with pytest.raises(ValueError, match="no seat 5"):
        tower.show_turn(5)


def test_ring_level_and_frequency(tower: SimulatedTower) -> None:
    ring = tower.pin(RING)
    assert math.isclose(ring.state, 0.8)  # [ring].level at start-up
    assert ring.frequency == 400
    tower.set_ring(0.3)
    assert math.isclose(ring.state, 0.3)
    assert tower.ring_level == pytest.approx(0.3)
    with pytest.raises(ValueError, match="between 0 and 1"):
        tower.set_ring(1.2)


def test_ring_stays_steady_while_camera_reads(tower: SimulatedTower) -> None:
    ring = tower.pin(RING)
    tower.set_ring(0.3)
    ring.clear_states()
    with tower.camera_reading():
        tower.set_ring(0.6)
        tower.set_ring(0.7)
        assert math.isclose(ring.state, 0.3)
    assert math.isclose(ring.state, 0.7)
    assert [round(s.state, 6) for s in ring.states] == [0.3, 0.7]


def test_flourish_421_beeps_three_times(tower: SimulatedTower) -> None:
    buzzer = tower.pin(BUZZER)
    buzzer.clear_states()
    assert tower.flourish("421") is True
    time.sleep(0.55)
    assert [s.state for s in buzzer.states] == [0, 1, 0, 1, 0, 1, 0]
    assert_states_and_min_times(buzzer,
        [(0, 0), (0, 1), (0.08, 0), (0.08, 1), (0.08, 0), (0.08, 1), (0.08, 0)])


def test_flourish_nenette_is_one_long_beep(tower: SimulatedTower) -> None:
    buzzer = tower.pin(BUZZER)
    buzzer.clear_states()
    assert tower.flourish("Nénette") is True
    time.sleep(0.6)
    assert [s.state for s in buzzer.states] == [0, 1, 0]
    assert_states_and_min_times(buzzer, [(0, 0), (0, 1), (0.48, 0)])


def test_flourish_unknown_or_unfitted(tower: SimulatedTower, plain: SimulatedTower) -> None:
    with pytest.raises(ValueError, match="unknown flourish 'yam'"):
        tower.flourish("yam")
    assert plain.flourish("421") is False
    plain.set_status("error")  # no status LED fitted: accepted, shows nothing
    assert plain.status.status == "error"


def test_plain_led_seats(plain: SimulatedTower) -> None:
    led = plain.pin(17)
    plain.show_turn(1)
    assert math.isclose(led.state, 1)
    plain.show_out(1)
    assert math.isclose(led.state, 0.15)
    led.clear_states()
    plain.show_owes(1)
    time.sleep(0.1)
    plain.clear_seat(1)
    assert_states_and_min_times(led, [(0, 0.15), (0, 1), (0.04, 0), (0.04, 1)])
    assert math.isclose(led.state, 0)


def test_failed_start_releases_the_pins_it_took() -> None:
    factory = mock_factory()
    pinmap = example()
    intruder = LED(pinmap.dispenser.beam, pin_factory=factory)  # another program holds GPIO 19
    with pytest.raises(GPIOPinInUse):
        Tower(pinmap, factory)
    intruder.close()
    with Tower(pinmap, factory) as tower:  # every pin taken before the failure was given back
        tower.show_turn(1)
    factory.reset()


def test_close_releases_every_pin() -> None:
    factory = mock_factory()
    pinmap = example()
    Tower(pinmap, factory).close()
    # Built again on the same factory: any pin still reserved would raise GPIOPinInUse.
    with Tower(pinmap, factory) as tower:
        tower.show_turn(1)
    factory.reset()


def test_the_status_may_change_from_two_threads_at_once(tower: SimulatedTower) -> None:
    # The controller's loop and the game master's page change the status light at the same
    # time: a blink stopped by the other thread must never be stopped before it has started.
    import threading

    errors: list[str] = []

    def change(statuses: tuple[str, ...]) -> None:
        for _ in range(150):
            for status in statuses:
                try:
                    tower.set_status(status)
                except RuntimeError as exc:
                    errors.append(str(exc))

    threads = [threading.Thread(target=change, args=(pair,))
               for pair in (("reading", "error"), ("reroll", "ready"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    tower.set_status("error")
    assert tower.status.status == "error"
