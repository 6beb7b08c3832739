"""Token dispensers: servo pushers, an optional pot chute, optional IR break-beams.

`Dispensers.dispense(seat, n)` pushes exactly `n` tokens, one servo stroke each (rest angle ->
push angle -> rest angle). With a break-beam under the hopper every token is counted as it
falls: a stroke that drops nothing is tried once more, and two empty strokes in a row stop the
dispense as a jam (an empty hopper looks the same). A token must also clear the beam: one that
stays in it is not counted and stops the dispense as a jam. The beam is debounced: it must have
been clear for `[timing].beam_bounce` before a break counts as a new token, so a noisy edge
counts once. The `DispenseResult` always says how many tokens really went out. Without a beam
each stroke is trusted to drop one token and the result says it was not verified.

Every servo is homed when the dispensers are built (pushers to the rest angle, the pot chute
to the first seat's angle), since a pusher left at its push angle would push nothing on its
first stroke. Servos are detached (no pulses, so no jitter or hum) whenever a dispense is over,
and a `MotionGate` keeps them still while the camera reads: a reading waits for the stroke
under way to finish, detaches every servo, and strokes wait for the reading to end; a dispense
that a reading interrupted turns the chute back to its seat (and a pusher back to rest) before
its next stroke.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from gpiozero import AngularServo, DigitalInputDevice
from gpiozero.pins import Factory

from hardware.pinmap import PinMap, ServoConfig

Sleep = Callable[[float], None]
MISSES_BEFORE_JAM = 2  # a stroke that drops nothing is retried once


@dataclass(frozen=True)
class DispenseResult:
    """What a dispense did: `dispensed` is what went out, as far as anyone can know."""

    seat: int
    requested: int
    dispensed: int
    strokes: int
    verified: bool  # True when a break-beam counted the tokens
    jammed: bool = False
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.dispensed == self.requested and not self.jammed

    @property
    def missing(self) -> int:
        return max(0, self.requested - self.dispensed)

    def describe(self) -> str:
        counted = "counted" if self.verified else "not counted (no beam)"
        text = (f"seat {self.seat}: {self.dispensed} of {self.requested} token(s) dispensed "
                f"in {self.strokes} stroke(s), {counted}")
        return f"{text}; {self.reason}" if self.reason else text


class ServoArm:
    """One servo, moved by angle and detached when idle.

    `whole_percent_duty` (default: when `factory` is gpiozero's LGPIOFactory) compensates for
    lgpio pins truncating the duty cycle to a whole percent: the pulse sent is the nearest
    whole percent to the one asked for, never the one below it.
    """

    def __init__(self, pin: int, config: ServoConfig, factory: Factory, *,
                 whole_percent_duty: bool | None = None) -> None:
        self.config = config
        # The last angle asked for, kept when detached (an idle servo stays where it was);
        # None until the first move: nobody knows where the arm was left.
        self.position: float | None = None
        if whole_percent_duty is None:
            # By name: importing gpiozero.pins.lgpio needs the lgpio library itself.
            whole_percent_duty = type(factory).__name__ == "LGPIOFactory"
        self.whole_percent_duty = whole_percent_duty
        self.device = AngularServo(
            pin, initial_angle=None,  # start detached: no twitch at power-up
            min_angle=config.min_angle, max_angle=config.max_angle,
            min_pulse_width=config.min_pulse_ms / 1000,
            max_pulse_width=config.max_pulse_ms / 1000,
            frame_width=config.frame_ms / 1000, pin_factory=factory)

    @property
    def angle(self) -> float | None:
        return self.device.angle

    @property
    def attached(self) -> bool:
        return self.device.value is not None

    def move(self, angle: float) -> None:
        self.device.angle = angle  # attaches (starts the pulses) and checks the range
        self.position = angle
        if self.whole_percent_duty:
            percent = round(self.config.duty_for(angle) * 100)
            # Half a percent above the step, so that truncation lands on the step itself
            # whatever the floating-point error of duty * 100.
            self.device.pulse_width = (percent + 0.5) / 100 * self.config.frame_ms / 1000

    def detach(self) -> None:
        self.device.detach()

    def close(self) -> None:
        self.device.close()


class BreakBeam:
    """An IR break-beam receiver (pulled up, low while a token breaks the beam) and its count.

    A break counts as a token only when the beam had been clear for `bounce` seconds before
    it: the flicker of a noisy edge (broken, clear, broken within a millisecond) is one token.
    """

    def __init__(self, pin: int, factory: Factory, *, bounce: float = 0.0) -> None:
        self.bounce = bounce
        self._ticks, self._ticks_diff = factory.ticks, factory.ticks_diff
        self.device = DigitalInputDevice(pin, pull_up=True, pin_factory=factory)
        self._count = 0
        self._broken = bool(self.device.is_active)
        self._cleared_at: float | None = None  # ticks of the last clear edge
        self._changed = threading.Condition()
        self.device.when_activated = self._beam_broken
        self.device.when_deactivated = self._beam_cleared

    def _beam_broken(self) -> None:
        now = self._ticks()
        with self._changed:
            self._broken = True
            if (self._cleared_at is None
                    or self._ticks_diff(now, self._cleared_at) >= self.bounce):
                self._count += 1
            self._changed.notify_all()

    def _beam_cleared(self) -> None:
        now = self._ticks()
        with self._changed:
            self._broken = False
            self._cleared_at = now
            self._changed.notify_all()

    @property
    def count(self) -> int:
        with self._changed:
            return self._count

    @property
    def blocked(self) -> bool:
        return bool(self.device.is_active)

    def wait_passed(self, count: int, timeout: float) -> int:
        """Wait up to `timeout` s for a token beyond `count` to cross and clear the beam.

        Returns the count then; `blocked` afterwards means a token is still in the beam.
        """
        with self._changed:
            self._changed.wait_for(lambda: self._count > count and not self._broken,
                                   timeout=timeout)
            return self._count

    def close(self) -> None:
        self.device.close()


class MotionGate:
    """Servos and the camera take turns: no stroke starts during a reading, and vice versa."""

    def __init__(self, on_freeze: Callable[[], None]) -> None:
        self._on_freeze = on_freeze
        self._cond = threading.Condition()
        self._readers: dict[int, int] = {}
        self._waiting = 0  # readings waiting for the stroke under way
        self._moving = False

    @property
    def reading(self) -> bool:
        with self._cond:
            return bool(self._readers)

    @contextmanager
    def camera_reading(self) -> Iterator[None]:
        me = threading.get_ident()
        with self._cond:
            # A waiting reading goes before the next stroke, so a long dispense cannot keep
            # the camera waiting for more than the stroke under way.
            self._waiting += 1
            try:
                self._cond.wait_for(lambda: not self._moving)
            finally:
                self._waiting -= 1
            first = not self._readers
            self._readers[me] = self._readers.get(me, 0) + 1
        try:
            if first:
                self._on_freeze()
            yield
        finally:
            with self._cond:
                self._readers[me] -= 1
                if not self._readers[me]:
                    del self._readers[me]
                self._cond.notify_all()

    @contextmanager
    def motion(self) -> Iterator[None]:
        with self._cond:
            if threading.get_ident() in self._readers:
                # Waiting here would wait for ourselves forever.
                raise RuntimeError("servos cannot move inside camera_reading(): dispense "
                                   "after the reading is over")
            self._cond.wait_for(lambda: not self._readers and not self._waiting)
            self._moving = True
        try:
            yield
        finally:
            with self._cond:
                self._moving = False
                self._cond.notify_all()


@dataclass
class _Unit:
    """What serves one seat: a pusher, maybe a beam, maybe a chute angle."""

    pusher: ServoArm
    beam: BreakBeam | None
    chute_angle: float | None


class Dispensers:
    """Every dispenser of the tower, in either layout, behind `dispense(seat, n)`."""

    def __init__(self, pinmap: PinMap, factory: Factory, *, sleep: Sleep = time.sleep) -> None:
        self._config = pinmap.dispenser
        self._timing = pinmap.timing
        self._sleep = sleep
        self._busy = threading.Lock()
        self.servos: dict[str, ServoArm] = {}
        self.beams: dict[str, BreakBeam] = {}
        self.chute: ServoArm | None = None
        self._units: dict[int, _Unit] = {}
        self.gate = MotionGate(on_freeze=self.detach_all)
        try:
            self._build(pinmap, factory)
            self.home()
        except Exception:
            self.close()
            raise

    def _build(self, pinmap: PinMap, factory: Factory) -> None:
        servo = pinmap.servo
        if self._config.layout == "pot":
            assert self._config.pusher is not None and self._config.chute is not None
            pusher = self.servos["pusher"] = ServoArm(self._config.pusher, servo, factory)
            self.chute = self.servos["chute"] = ServoArm(self._config.chute, servo, factory)
            beam = None
            if self._config.beam is not None:
                beam = self.beams["pot"] = BreakBeam(self._config.beam, factory,
                                                     bounce=self._timing.beam_bounce)
            for seat in pinmap.seats:
                self._units[seat.number] = _Unit(pusher, beam, seat.chute_angle)
            return
        for seat in pinmap.seats:
            assert seat.servo is not None
            arm = self.servos[f"seat {seat.number}"] = ServoArm(seat.servo, servo, factory)
            beam = None
            if seat.beam is not None:
                beam = self.beams[f"seat {seat.number}"] = BreakBeam(
                    seat.beam, factory, bounce=self._timing.beam_bounce)
            self._units[seat.number] = _Unit(arm, beam, None)

    def _unit(self, seat: int) -> _Unit:
        try:
            return self._units[seat]
        except KeyError:
            raise ValueError(f"no seat {seat}: this tower has seats 1..{len(self._units)}"
                             ) from None

    def homes(self) -> dict[str, float]:
        """Where each servo rests: pushers at the rest angle, the chute at the first seat."""
        homes = {name: self._config.rest_angle for name in self.servos}
        chute_angles = [unit.chute_angle for unit in self._units.values()
                        if unit.chute_angle is not None]
        if "chute" in homes and chute_angles:
            homes["chute"] = chute_angles[0]
        return homes

    def home(self) -> None:
        """Move every servo to its home, give them the time to get there, and detach them."""
        timing = self._timing
        with self._busy:
            try:
                with self.gate.motion():
                    for name, angle in self.homes().items():
                        self.servos[name].move(angle)
                    # From an unknown position: allow the longest of the known travels.
                    self._sleep(max(timing.push_time, timing.return_time,
                                    timing.chute_time if self.chute is not None else 0.0))
            finally:
                self.detach_all()

    def has_beam(self, seat: int) -> bool:
        return self._unit(seat).beam is not None

    def dispense(self, seat: int, n: int) -> DispenseResult:
        """Push `n` tokens to `seat`; the result says how many really went out."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"token count must be a whole number >= 0, not {n!r}")
        unit = self._unit(seat)
        with self._busy:
            try:
                return self._dispense(seat, n, unit)
            finally:
                self.detach_all()

    def _dispense(self, seat: int, n: int, unit: _Unit) -> DispenseResult:
        beam, timing = unit.beam, self._timing
        verified = beam is not None
        if n == 0:
            return DispenseResult(seat, 0, 0, 0, verified)
        if beam is not None and beam.blocked:
            return DispenseResult(seat, n, 0, 0, True, jammed=True,
                                  reason="the break-beam is blocked before the first stroke "
                                  "(a token stuck in the chute, or the beam is misaligned)")
        if unit.chute_angle is not None and self.chute is not None:
            with self.gate.motion():
                self.chute.move(unit.chute_angle)
                self._sleep(timing.chute_time)
        start = beam.count if beam is not None else 0
        dispensed = strokes = misses = 0
        while dispensed < n:
            before = beam.count if beam is not None else 0
            with self.gate.motion():
                self._back_in_place(unit)
                unit.pusher.move(self._config.push_angle)
                self._sleep(timing.push_time)
                unit.pusher.move(self._config.rest_angle)
                self._sleep(timing.return_time)
            strokes += 1
            if beam is None:
                dispensed += 1
                continue
            after = beam.wait_passed(before, timing.beam_window)
            if beam.blocked:
                # Counted as it broke the beam, but it has not gone through: the player has
                # not got it, and the beam cannot see the next one.
                stuck = 1 if after > before else 0  # else its break fell within the bounce
                return DispenseResult(seat, n, after - start - stuck, strokes, True,
                                      jammed=True, reason="a token is stuck in the "
                                      "break-beam (clear the chute)")
            dispensed = after - start
            misses = 0 if after > before else misses + 1
            if misses >= MISSES_BEFORE_JAM:
                return DispenseResult(seat, n, dispensed, strokes, True, jammed=True,
                                      reason=f"no token fell in {MISSES_BEFORE_JAM} strokes "
                                      "in a row: the hopper is empty or jammed")
        reason = ""
        if dispensed > n:
            reason = f"{dispensed - n} extra token(s) fell (two in one stroke)"
        return DispenseResult(seat, n, dispensed, strokes, verified, reason=reason)

    def _back_in_place(self, unit: _Unit) -> None:
        """Undo what a camera reading's detach may have left: chute off its seat, pusher out."""
        timing, rest = self._timing, self._config.rest_angle
        if unit.chute_angle is not None and self.chute is not None and not self.chute.attached:
            # Detached by a reading since it turned: unpowered, a knock may have moved it.
            self.chute.move(unit.chute_angle)
            self._sleep(timing.chute_time)
        if unit.pusher.position != rest:
            unit.pusher.move(rest)
            self._sleep(timing.return_time)

    def detach_all(self) -> None:
        for arm in self.servos.values():
            arm.detach()

    def close(self) -> None:
        for device in (*self.servos.values(), *self.beams.values()):
            device.close()
        self.servos.clear()
        self.beams.clear()
