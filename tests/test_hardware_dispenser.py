"""Servo pulse widths, homing, token counts through a debounced mock break-beam, jams, and the
camera freeze."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest
from conftest import assert_states_and_min_times
from gpiozero.pins.mock import MockFactory
from helpers import pinmap_text

from hardware.dispenser import ServoArm
from hardware.factory import mock_factory
from hardware.pinmap import EXAMPLE_PINMAP, PinMap, ServoConfig, load_pinmap, parse_pinmap
from hardware.simulation import HopperServoPin, SimulatedTower, simulation_timing

PUSHER, CHUTE, BEAM = 12, 13, 19  # the example pin map's pot dispenser

PER_SEAT = pinmap_text([(17, 12, 5), (27, 13, None), (22, 18, 6)],
                       dispenser="rest_angle = -30\npush_angle = 45")


def pot(**timing: float) -> PinMap:
    pinmap = load_pinmap(EXAMPLE_PINMAP)
    return replace(pinmap, timing=replace(simulation_timing(), **timing))


def per_seat() -> PinMap:
    return replace(parse_pinmap(PER_SEAT), timing=simulation_timing())


def pulse_ms(tower: SimulatedTower, bcm: int) -> float | None:
    pin = tower.pin(bcm)
    return None if pin.frequency is None else pin.state * 20.0


@pytest.fixture
def tower() -> Iterator[SimulatedTower]:
    with SimulatedTower(pot(), tokens=10) as tower:
        yield tower


@pytest.mark.parametrize(
    ("angle", "pulse"),
    [(-90, 1.0), (-45, 1.25), (0, 1.5), (60, 1.8333333), (90, 2.0)],
)
def test_servo_pulse_width_for_each_angle(angle: float, pulse: float) -> None:
    factory = mock_factory()
    arm = ServoArm(PUSHER, ServoConfig(), factory)
    try:
        pin = factory.pin(PUSHER)
        assert pin.frequency is None  # built detached: no twitch at power-up
        arm.move(angle)
        assert pin.frequency == 50
        assert arm.device.pulse_width == pytest.approx(pulse / 1000)
        assert pin.state == pytest.approx(pulse / 20)
        arm.detach()
        assert pin.frequency is None and pin.state == 0
    finally:
        arm.close()
        factory.reset()


def test_servo_calibration_from_pinmap() -> None:
    factory = mock_factory()
    wide = ServoConfig(min_angle=0, max_angle=180, min_pulse_ms=0.5, max_pulse_ms=2.5,
                       frame_ms=20)
    arm = ServoArm(PUSHER, wide, factory)
    try:
        for angle, pulse in ((0, 0.5), (90, 1.5), (180, 2.5)):
            arm.move(angle)
            assert arm.device.pulse_width == pytest.approx(pulse / 1000)
    finally:
        arm.close()
        factory.reset()


def test_whole_percent_duty_lands_on_the_nearest_step() -> None:
    # lgpio pins truncate the duty cycle to a whole percent: the arm aims half a percent
    # above the nearest step so that the truncation lands exactly on it.
    factory = mock_factory()
    arm = ServoArm(PUSHER, ServoConfig(), factory, whole_percent_duty=True)
    try:
        pin = factory.pin(PUSHER)
        for angle, percent in ((-90, 5), (-60, 6), (-54, 6), (0, 8), (54, 9), (60, 9), (90, 10)):
            arm.move(angle)
            assert int(pin.state * 100) == percent
            assert arm.config.whole_percent_angle(angle) == pytest.approx(
                arm.config.angle_for(percent / 100))
    finally:
        arm.close()
        factory.reset()
    assert ServoArm.__init__.__kwdefaults__ == {"whole_percent_duty": None}


def test_pot_dispense_turns_chute_then_pushes_each_token(tower: SimulatedTower) -> None:
    pusher, chute = tower.pin(PUSHER), tower.pin(CHUTE)
    pusher.clear_states()  # forget the homing at start (tested on its own below)
    chute.clear_states()
    result = tower.dispense(2, 3)
    assert result.ok and not result.jammed
    assert (result.requested, result.dispensed, result.strokes) == (3, 3, 3)
    assert result.verified
    assert tower.hoppers[2].tokens == 7
    # The chute went to seat 2's angle (-18 degrees: 1.4 ms) before the first push.
    chute_pulses = [round(s.state * 20, 4) for s in chute.states if s.state]
    assert chute_pulses == [1.4]
    pushes = [round(s.state * 20, 4) for s in pusher.states if s.state]
    assert pushes == [1.8, 1.4] * 3  # push at 54 degrees, back to rest at -18
    # Both servos are detached once the dispense is over.
    assert pulse_ms(tower, PUSHER) is None and pulse_ms(tower, CHUTE) is None


def test_stroke_timing_comes_from_the_pinmap() -> None:
    with SimulatedTower(pot(push_time=0.1, return_time=0.15, chute_time=0.1), tokens=5) as tower:
        pusher = tower.pin(PUSHER)
        pusher.clear_states()
        tower.dispense(1, 2)
        push, rest = 1.8 / 20, 1.4 / 20
        assert_states_and_min_times(pusher,
            [(0, 0), (0.1, push), (0.1, rest), (0.15, push), (0.1, rest), (0.15, 0)])
        assert len(pusher.states) == 6


def test_injected_sleep_gets_every_delay() -> None:
    slept: list[float] = []
    with SimulatedTower(pot(), tokens=5, sleep=slept.append) as tower:
        tower.dispense(4, 2)
    timing = simulation_timing()
    push_return = [timing.push_time, timing.return_time]
    homing = max(timing.push_time, timing.return_time, timing.chute_time)
    assert slept == [homing, timing.chute_time, *push_return, *push_return]


def test_partial_dispense_reports_exactly_what_went_out() -> None:
    with SimulatedTower(pot(), tokens=3) as tower:
        result = tower.dispense(1, 5)
    assert result.jammed and not result.ok
    assert (result.dispensed, result.missing) == (3, 2)
    assert result.strokes == 5  # three tokens, then one stroke and its retry dropping nothing
    assert "3 of 5 token(s)" in result.describe()
    assert "hopper is empty or jammed" in result.describe()


def test_empty_hopper_is_a_jam_after_one_retry() -> None:
    with SimulatedTower(pot(), tokens=0) as tower:
        result = tower.dispense(3, 2)
        assert (result.dispensed, result.strokes, result.jammed) == (0, 2, True)
        assert tower.hoppers[3].strokes == 2


def test_one_empty_stroke_is_retried() -> None:
    with SimulatedTower(pot(), tokens=10) as tower:
        tower.hoppers[1].empty_strokes = {2}  # the second stroke catches on the lip
        result = tower.dispense(1, 3)
    assert result.ok
    assert (result.dispensed, result.strokes) == (3, 4)


def test_blocked_beam_refuses_to_push(tower: SimulatedTower) -> None:
    tower.pin(BEAM).drive_low()  # something sits in the beam
    result = tower.dispense(1, 2)
    assert (result.dispensed, result.strokes, result.jammed) == (0, 0, True)
    assert "blocked" in result.reason
    assert tower.hoppers[1].strokes == 0


def test_per_seat_layout_moves_only_that_seat() -> None:
    with SimulatedTower(per_seat(), tokens=4) as tower:
        for bcm in (12, 13, 18):
            tower.pin(bcm).clear_states()  # forget the homing at start
        result = tower.dispense(3, 2)
        assert result.ok and result.verified
        assert tower.hoppers[3].dropped == 2
        assert tower.hoppers[1].strokes == tower.hoppers[2].strokes == 0
        assert all(not s.state for s in tower.pin(12).states)
        pulses = [round(s.state * 20, 4) for s in tower.pin(18).states if s.state]
        assert pulses == [round(1.5 + 45 / 180, 4), round(1.5 - 30 / 180, 4)] * 2


def test_without_a_beam_each_stroke_is_trusted() -> None:
    with SimulatedTower(per_seat(), tokens=1) as tower:
        result = tower.dispense(2, 3)  # seat 2 has no beam
    assert (result.dispensed, result.strokes, result.verified) == (3, 3, False)
    assert result.ok
    assert "not counted" in result.describe()


def test_bad_requests(tower: SimulatedTower) -> None:
    assert tower.dispense(1, 0).strokes == 0
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="token count"):
            tower.dispense(1, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no seat 5"):
        tower.dispense(5, 1)


def test_servos_never_move_while_the_camera_reads(tower: SimulatedTower) -> None:
    pusher = tower.pin(PUSHER)
    results = []
    with tower.camera_reading():
        worker = threading.Thread(target=lambda: results.append(tower.dispense(1, 2)))
        worker.start()
        time.sleep(0.1)
        assert pusher.frequency is None  # not one pulse while the camera reads
        assert tower.hoppers[1].strokes == 0
        assert not results
    worker.join(timeout=1)
    assert results and results[0].ok
    assert tower.hoppers[1].strokes == 2


def test_reading_detaches_servos_and_waits_for_the_stroke() -> None:
    in_stroke = threading.Event()
    release = threading.Event()

    def slow_sleep(seconds: float) -> None:
        in_stroke.set()
        release.wait(1)

    with SimulatedTower(pot(), tokens=5, sleep=slow_sleep) as tower:
        tower.pin(CHUTE).clear_states()
        worker = threading.Thread(target=tower.dispense, args=(1, 3))
        worker.start()
        in_stroke.wait(1)  # the chute is turning
        assert tower.pin(CHUTE).frequency == 50
        entered = threading.Event()
        frequency_while_reading: list[object] = []

        strokes_before_reading: list[int] = []

        def read() -> None:
            with tower.camera_reading():
                entered.set()
                frequency_while_reading.append(tower.pin(CHUTE).frequency)
                strokes_before_reading.append(tower.hoppers[1].strokes)

        reader = threading.Thread(target=read)
        reader.start()
        time.sleep(0.05)
        assert not entered.is_set()  # the reading waits for the move under way
        release.set()
        reader.join(1)
        worker.join(1)
        assert entered.is_set()
        assert frequency_while_reading == [None]  # the chute was detached for the reading
        # The reading went in right after the chute's move, before the first push: a waiting
        # reading goes before the next stroke.
        assert strokes_before_reading == [0]
        assert tower.hoppers[1].strokes == 3
        # The reading left the chute unpowered: it was turned back to seat 1 (-54 degrees,
        # 1.2 ms) before the first push, and detached again at the end.
        chute_pulses = [round(s.state * 20, 4) for s in tower.pin(CHUTE).states]
        assert chute_pulses == [0, 1.2, 0, 1.2, 0]


def test_dispense_inside_a_reading_is_refused(tower: SimulatedTower) -> None:
    with tower.camera_reading(), pytest.raises(RuntimeError, match="inside camera_reading"):
        tower.dispense(1, 1)
    assert tower.dispense(1, 1).ok  # and the gate is open again afterwards


def test_double_drop_is_reported() -> None:
    with SimulatedTower(pot(beam_bounce=0.02), tokens=10) as tower:
        hopper = tower.hoppers[1]
        beam = tower.pin(BEAM)
        original = hopper._set_state

        def two_tokens(value: float) -> None:
            original(value)
            if math.isclose(value, hopper.push_duty) and hopper.strokes == 1:
                # A second token rides right behind the first, the beam clear in between for
                # longer than its debounce: it counts.
                time.sleep(2 * 0.02)
                beam.drive_low()
                beam.drive_high()

        hopper._set_state = two_tokens  # type: ignore[method-assign]
        result = tower.dispense(1, 1)
    assert (result.dispensed, result.strokes) == (2, 1)
    assert "1 extra token" in result.reason


def test_every_servo_is_homed_and_detached_at_start() -> None:
    with SimulatedTower(pot(), tokens=5) as tower:
        # Pusher to the rest angle (-18 degrees: 1.4 ms), the chute to seat 1 (-54: 1.2 ms).
        assert [round(s.state * 20, 4) for s in tower.pin(PUSHER).states] == [0, 1.4, 0]
        assert [round(s.state * 20, 4) for s in tower.pin(CHUTE).states] == [0, 1.2, 0]
        assert tower.hoppers[1].strokes == 0  # homing pushes nothing
    with SimulatedTower(per_seat(), tokens=5) as tower:
        rest = round(1.5 - 30 / 180, 4)
        for bcm in (12, 13, 18):
            assert [round(s.state * 20, 4) for s in tower.pin(bcm).states] == [0, rest, 0]


def left_at_push(pinmap: PinMap, servo: int) -> MockFactory:
    """A factory whose `servo` pin is a hopper arm left at its push angle by an earlier run."""
    factory = mock_factory()
    push_duty = pinmap.servo.duty_for(pinmap.dispenser.push_angle)
    pin = factory.pin(servo, pin_class=HopperServoPin, push_duty=push_duty, tokens=5,
                      beam=None if pinmap.dispenser.beam is None
                      else factory.pin(pinmap.dispenser.beam))
    assert isinstance(pin, HopperServoPin)
    pin.position = push_duty
    return factory


def test_a_pusher_left_at_push_is_homed_before_the_first_stroke() -> None:
    # Without a beam nothing would notice a first stroke that pushes nothing: homing is what
    # makes the first token real.
    with SimulatedTower(per_seat(), factory=left_at_push(per_seat(), 13)) as tower:
        hopper = tower.hoppers[2]
        result = tower.dispense(2, 1)
        assert (result.dispensed, result.verified) == (1, False)
        assert (hopper.strokes, hopper.dropped) == (1, 1)
    with SimulatedTower(pot(), factory=left_at_push(pot(), PUSHER)) as tower:
        result = tower.dispense(1, 2)
        assert result.ok and result.strokes == 2  # no stroke wasted on an arm already out


def test_a_pusher_detached_out_is_brought_back_before_the_stroke(tower: SimulatedTower) -> None:
    pusher = tower.dispensers.servos["pusher"]
    with tower.dispensers.gate.motion():
        pusher.move(tower.pinmap.dispenser.push_angle)  # e.g. a servo sweep cut short
    dropped = tower.hoppers[1].dropped
    with tower.camera_reading():
        assert not pusher.attached  # the reading detached it, out at its push angle
    result = tower.dispense(1, 1)
    assert result.ok and result.strokes == 1
    assert tower.hoppers[1].dropped == dropped + 1


def test_a_noisy_beam_edge_counts_one_token() -> None:
    # Strokes take longer than the debounce; the flicker within a token does not.
    timing = {"beam_bounce": 0.05, "push_time": 0.01, "return_time": 0.06}
    with SimulatedTower(pot(**timing), tokens=10) as tower:
        hopper = tower.hoppers[1]
        beam = tower.pin(BEAM)
        original = hopper._set_state

        def chattering(value: float) -> None:
            original(value)
            if math.isclose(value, hopper.push_duty):
                for _ in range(3):  # the edge flickers as the token leaves the beam
                    beam.drive_low()
                    beam.drive_high()

        hopper._set_state = chattering  # type: ignore[method-assign]
        result = tower.dispense(1, 3)
    assert result.ok and (result.dispensed, result.strokes) == (3, 3)
    assert hopper.dropped == 3


def test_a_token_stuck_in_the_beam_is_a_jam(tower: SimulatedTower) -> None:
    hopper = tower.hoppers[1]
    beam = tower.pin(BEAM)

    class StuckOnSecond:
        """The beam as the hopper sees it: the second token never clears it."""

        def drive_low(self) -> None:
            beam.drive_low()

        def drive_high(self) -> None:
            if hopper.strokes != 2:
                beam.drive_high()

    hopper.beam = StuckOnSecond()  # type: ignore[assignment]
    result = tower.dispense(1, 4)
    assert result.jammed and not result.ok
    assert (result.dispensed, result.strokes) == (1, 2)  # the stuck token is not counted
    assert "stuck in the break-beam" in result.reason
    assert tower.hoppers[1].strokes == 2  # no stroke after the jam
    again = tower.dispense(1, 1)  # still in the beam: nothing is pushed
    assert again.jammed and again.strokes == 0 and "blocked" in again.reason
