"""A whole tower on gpiozero's mock pins: hoppers that drop tokens, buttons you can press.

`SimulatedTower` is a `Tower` built on a `MockFactory` (every pin a `MockPWMPin`) whose pusher
servo pins are `HopperServoPin`s: each time the servo reaches its push angle from elsewhere,
the hopper drops one token, if it holds any, by driving the mock break-beam pin low then high,
just as a token falling through a real beam would. The demo, `dicetower hw-test --simulate` and
the tests all use it, so a test can say "the hopper holds 3 tokens" and dispense 5.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import replace

from gpiozero.pins.mock import MockFactory, MockPin, MockPWMPin

from hardware.dispenser import Sleep
from hardware.factory import mock_factory
from hardware.pinmap import PinMap, Timing
from hardware.tower import Tower


def simulation_timing() -> Timing:
    """Short timings so that the simulated walk-through takes about a second."""
    # No beam debounce: mock tokens fall as instantly as the hw-test's mock servo sweep or an
    # injected sleep make strokes, far closer together than real tokens ever are.
    return Timing(push_time=0.005, return_time=0.005, chute_time=0.005, beam_window=0.05,
                  beam_bounce=0.0, button_bounce=0.001, long_press=0.05, blink_fast=0.02,
                  blink_slow=0.04, beep=0.01)


def simulated_pinmap(pinmap: PinMap) -> PinMap:
    """`pinmap` with `simulation_timing()`: same pins, millisecond delays."""
    return replace(pinmap, timing=simulation_timing())


class HopperServoPin(MockPWMPin):
    """A mock servo pin pushing tokens out of a hopper through an optional mock break-beam."""

    def __init__(self, factory: MockFactory, info: object, *, push_duty: float, tokens: int,
                 beam: MockPin | None = None, empty_strokes: Iterable[int] = (),
                 on_drop: Callable[[], None] | None = None) -> None:
        super().__init__(factory, info)
        # Told of every token at the moment it falls (a demo's table keeps its own count).
        self.on_drop = on_drop
        self.push_duty = push_duty
        self.tokens = tokens
        self.beam = beam
        self.strokes = 0
        self.dropped = 0
        # The duty cycle the arm last went to: it stays there when detached (no pulses), as a
        # real servo does. None: wherever it was left, not at the push angle.
        self.position: float | None = None
        # Stroke numbers (from 1) that drop nothing although tokens remain: a token caught on
        # the lip, which the retry is there to shake loose.
        self.empty_strokes = set(empty_strokes)

    def _set_state(self, value: float) -> None:
        before = self.position
        super()._set_state(value)
        if value == 0:
            return  # detached: no pulse, and the arm does not move
        self.position = value
        reached_push = math.isclose(value, self.push_duty, abs_tol=1e-9)
        if reached_push and (before is None
                             or not math.isclose(before, self.push_duty, abs_tol=1e-9)):
            self.strokes += 1
            if self.tokens > 0 and self.strokes not in self.empty_strokes:
                self.tokens -= 1
                self.dropped += 1
                if self.on_drop is not None:
                    self.on_drop()
                if self.beam is not None:
                    self.beam.drive_low()  # the token breaks the beam...
                    self.beam.drive_high()  # ...and has fallen through


class SimulatedTower(Tower):
    """A Tower on mock pins with hoppers holding `tokens` each and buttons to press."""

    def __init__(self, pinmap: PinMap, *, tokens: int = 100, sleep: Sleep = time.sleep,
                 factory: MockFactory | None = None,
                 on_drop: Callable[[], None] | None = None) -> None:
        factory = factory or mock_factory()
        self.hoppers: dict[int, HopperServoPin] = {}
        push_duty = pinmap.servo.duty_for(pinmap.dispenser.push_angle)
        if pinmap.dispenser.layout == "pot":
            pot = self._hopper(factory, pinmap.dispenser.pusher, pinmap.dispenser.beam,
                               push_duty, tokens, on_drop)
            self.hoppers = {seat.number: pot for seat in pinmap.seats}
        else:
            for seat in pinmap.seats:
                self.hoppers[seat.number] = self._hopper(factory, seat.servo, seat.beam,
                                                         push_duty, tokens, on_drop)
        super().__init__(pinmap, factory, sleep=sleep)

    @staticmethod
    def _hopper(factory: MockFactory, servo_pin: int | None, beam_pin: int | None,
                push_duty: float, tokens: int,
                on_drop: Callable[[], None] | None = None) -> HopperServoPin:
        assert servo_pin is not None
        beam = None if beam_pin is None else factory.pin(beam_pin)
        pin = factory.pin(servo_pin, pin_class=HopperServoPin, push_duty=push_duty,
                          tokens=tokens, beam=beam, on_drop=on_drop)
        assert isinstance(pin, HopperServoPin)
        return pin

    def pin(self, bcm: int) -> MockPWMPin:
        """The mock pin for BCM GPIO `bcm`, to read back or drive."""
        pin = self.factory.pin(bcm)
        assert isinstance(pin, MockPWMPin)
        return pin

    def press(self, name: str, *, hold: bool = False) -> None:
        """Press and release button `name`; `hold` keeps it down past the long-press time."""
        pin = self.pin(self.pinmap.buttons[name])
        held_for = self.buttons.device(name)
        pin.drive_low()
        if hold:
            # gpiozero times the hold on its own thread with the real clock.
            deadline = time.monotonic() + self.pinmap.timing.long_press * 4 + 0.5
            while not held_for.is_held and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(0.01)  # let the held callback run before the release
        pin.drive_high()

    def close(self) -> None:
        super().close()
        # MockFactory keeps its pins until reset(): without it the next Tower on this
        # factory would find them reserved.
        self.factory.reset()
