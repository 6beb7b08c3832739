"""The builder's walk-through behind `dicetower hw-test`: every device, one after the other.

Each step drives one device (light each seat red/green/blue, show each status pattern, dim and
brighten the ring, play a flourish, sweep each servo, drop one token through each dispenser,
wait for each button) and returns a `Check`. On real pins a `Probe` asks the builder what
happened ("did seat 3 light up? [y/n]") and waits for button presses with a timeout; on mock
pins a `SimulatedProbe` reads the pins back instead and presses the buttons itself.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from hardware.lights import AMBER, BLUE, GREEN, OFF, RED, Colour, Light
from hardware.simulation import SimulatedTower
from hardware.tower import Tower

WHITE: Colour = (1.0, 1.0, 1.0)

# The patterns documented for the status LED, in the order the walk-through shows them:
# (status, colour, steady?, what an RGB LED shows, what a plain LED shows).
STATUS_PATTERNS = (
    ("ready", GREEN, True, "steady green", "steady light"),
    ("reading", BLUE, False, "blue, blinking fast", "fast blinking"),
    ("reroll", AMBER, False, "amber, blinking slowly", "slow blinking"),
    ("error", RED, False, "red, short flashes", "short flashes"),
)


@dataclass(frozen=True)
class Check:
    """One device's answer."""

    device: str
    ok: bool
    detail: str


class Probe:
    """Asks the builder: the walk-through on real pins."""

    def __init__(self, ask: Callable[[str], str] = input, say: Callable[[str], None] = print,
                 button_timeout: float = 20.0, show_time: float = 1.0) -> None:
        self._ask = ask
        self.say = say
        self.button_timeout = button_timeout
        self.show_time = show_time

    def pause(self) -> None:
        time.sleep(self.show_time)

    def confirm(self, device: str, question: str) -> Check:
        while True:
            try:
                answer = self._ask(f"{question} [y/n] ").strip().lower()
            except EOFError:  # stdin closed or not a terminal: nobody can answer
                return Check(device, False, "no answer (input closed)")
            if answer in ("y", "yes", "o", "oui"):
                return Check(device, True, "confirmed by the builder")
            if answer in ("n", "no", "non"):
                return Check(device, False, f"the builder saw no: {question}")
            self.say("Please answer y or n.")

    def press(self, tower: Tower, name: str, pressed: threading.Event) -> Check:
        label = name.replace("_", " ")
        self.say(f"Press the {label} button (within {self.button_timeout:g} s)...")
        if pressed.wait(self.button_timeout):
            return Check(f"button {label}", True, "press received")
        return Check(f"button {label}", False,
                     f"no press within {self.button_timeout:g} s: check the wiring to GND")


class SimulatedProbe(Probe):
    """Reads the mock pins back and presses the mock buttons: the walk-through on mock pins."""

    def __init__(self, tower: SimulatedTower, say: Callable[[str], None] = print) -> None:
        super().__init__(ask=_no_questions, say=say, button_timeout=1.0, show_time=0.0)
        self.tower = tower

    def pause(self) -> None:
        pass

    def press(self, tower: Tower, name: str, pressed: threading.Event) -> Check:
        self.tower.press(name)
        return super().press(tower, name, pressed)

    def watch(self, pins: tuple[int, ...], seconds: float,
              done: Callable[[list[list[float]]], bool] | None = None) -> list[list[float]]:
        """The values each pin goes through for `seconds`, or until `done(values)`."""
        mocks = [self.tower.pin(bcm) for bcm in pins]
        for mock in mocks:
            mock.clear_states()
        deadline = time.monotonic() + seconds
        while True:
            seen = [[float(s.state) for s in list(mock.states)] for mock in mocks]
            if (done is not None and done(seen)) or time.monotonic() >= deadline:
                return seen
            time.sleep(0.002)

    def light_problems(self, light: Light, colour: Colour, *, steady: bool,
                       period: float = 0.0) -> list[str]:
        """What is wrong with `light` showing `colour` (steady, or blinking with `period`)."""
        expected = colour if light.kind == "rgb" else (max(colour),)

        def problems(seen: list[list[float]]) -> list[str]:
            return _light_problems(light.pins, expected, seen, steady=steady)

        if steady:
            return problems(self.watch(light.pins, 0.01))
        return problems(self.watch(light.pins, 3 * period, lambda seen: not problems(seen)))


def _light_problems(pins: tuple[int, ...], expected: tuple[float, ...],
                    seen: list[list[float]], *, steady: bool) -> list[str]:
    problems = []
    for bcm, want, values in zip(pins, expected, seen, strict=True):
        if steady and not all(math.isclose(v, want, abs_tol=1e-6) for v in values):
            problems.append(f"GPIO {bcm} read {values[-1]:g}, expected a steady {want:g}")
        elif not steady and want > 0 and not _lit_then_dark(values, want):
            problems.append(f"GPIO {bcm} went through {values}, expected blinking {want:g}")
        elif not steady and want == 0 and any(v != 0 for v in values):
            problems.append(f"GPIO {bcm} lit ({values}) but should stay dark")
    return problems


def _lit_then_dark(values: list[float], level: float) -> bool:
    """True if `values` reach `level` and later fall to 0: one blink seen."""
    lit = [i for i, v in enumerate(values) if math.isclose(v, level, abs_tol=1e-6)]
    return bool(lit) and any(v == 0 for v in values[lit[0] + 1:])


def _no_questions(prompt: str) -> str:
    raise RuntimeError(f"the simulated walk-through cannot ask: {prompt}")


def _result(device: str, problems: list[str], fine: str) -> Check:
    return Check(device, not problems, "; ".join(problems) if problems else fine)


def run_walkthrough(tower: Tower, probe: Probe) -> list[Check]:
    """Walk through every device of `tower`, reporting each Check through `probe.say`."""
    checks = []
    for check in _steps(tower, probe):
        mark = "ok  " if check.ok else "FAIL"
        probe.say(f"  [{mark}] {check.device}: {check.detail}")
        checks.append(check)
    return checks


def _steps(tower: Tower, probe: Probe) -> Iterator[Check]:
    yield from _seat_lights(tower, probe)
    yield from _status_light(tower, probe)
    yield _ring_light(tower, probe)
    if tower.effects.present:
        yield _flourish(tower, probe)
    yield from _servos(tower, probe)
    yield from _dispensers(tower, probe)
    yield from _buttons(tower, probe)


def _seat_lights(tower: Tower, probe: Probe) -> Iterator[Check]:
    for seat in range(1, len(tower.seats) + 1):
        light = tower.seats.light(seat)
        device = f"seat {seat} light"
        sequence = (RED, GREEN, BLUE) if light.kind == "rgb" else (WHITE,)
        problems = []
        probe.say(f"Seat {seat}: lighting "
                  f"{'red, green, then blue' if light.kind == 'rgb' else 'its LED'}...")
        for colour in sequence:
            light.steady(colour)
            if isinstance(probe, SimulatedProbe):
                problems += probe.light_problems(light, colour, steady=True)
            probe.pause()
        light.steady(OFF)
        if isinstance(probe, SimulatedProbe):
            yield _result(device, problems, "pins read back every colour")
        else:
            what = "red, then green, then blue" if light.kind == "rgb" else "up"
            yield probe.confirm(device, f"Did seat {seat} light {what}?")
    tower.clear_seats()


def _status_light(tower: Tower, probe: Probe) -> Iterator[Check]:
    light = tower.status.light
    if light is None:
        return
    timing = tower.pinmap.timing
    for status, colour, steady, rgb_looks, led_looks in STATUS_PATTERNS:
        description = rgb_looks if light.kind == "rgb" else led_looks
        tower.set_status(status)
        device = f"status {status}"
        if isinstance(probe, SimulatedProbe):
            period = timing.blink_fast + timing.blink_slow
            yield _result(device, probe.light_problems(light, colour, steady=steady,
                                                       period=period),
                          f"pins read back {description}")
        else:
            yield probe.confirm(device, f"Does the status LED show {description}?")
    tower.set_status("off")


def _ring_light(tower: Tower, probe: Probe) -> Check:
    levels = (0.1, 0.5, 1.0)
    probe.say("Ring light: dim, half, full...")
    problems = []
    for level in levels:
        tower.set_ring(level)
        if isinstance(probe, SimulatedProbe):
            value = probe.tower.pin(tower.pinmap.ring.pin).state
            if not math.isclose(value, level, abs_tol=1e-6):
                problems.append(f"GPIO {tower.pinmap.ring.pin} read {value:g}, "
                                f"expected {level:g}")
        probe.pause()
    tower.set_ring(tower.pinmap.ring.level)
    if isinstance(probe, SimulatedProbe):
        return _result("ring light", problems, "pins read back 10 %, 50 %, 100 %")
    return probe.confirm("ring light", "Did the ring light go dim, then half, then full?")


def _flourish(tower: Tower, probe: Probe) -> Check:
    effects = tower.effects
    what = " and ".join(n for n, d in (("buzzer", effects.buzzer), ("flourish LED", effects.led))
                        if d is not None)
    probe.say(f"Flourish for a 421 on the {what}...")
    if not isinstance(probe, SimulatedProbe):
        tower.flourish("421")
        return probe.confirm("flourish", f"Did the {what} give three short beeps/flashes?")
    config = tower.pinmap.effects
    pins = tuple(bcm for bcm in (config.buzzer, config.led) if bcm is not None)

    def pulses(values: list[float]) -> int:
        return sum(1 for before, after in itertools.pairwise(values) if after and not before)

    def three_beeps(seen: list[list[float]]) -> bool:
        return all(pulses(values) == 3 and values[-1] == 0 for values in seen)

    # Start watching first: the first beep begins the moment the flourish is played.
    timer = threading.Timer(0.005, tower.flourish, args=("421",))
    timer.start()
    seen = probe.watch(pins, 8 * tower.pinmap.timing.beep + 0.05, three_beeps)
    timer.join()
    problems = [f"GPIO {bcm} gave {pulses(values)} pulse(s), expected 3"
                for bcm, values in zip(pins, seen, strict=True)
                if pulses(values) != 3]
    return _result("flourish", problems, "three pulses read back")


def _servos(tower: Tower, probe: Probe) -> Iterator[Check]:
    pinmap = tower.pinmap
    dispensers = tower.dispensers
    config = pinmap.dispenser
    for name, arm in dispensers.servos.items():
        if name == "chute":
            angles = [seat.chute_angle for seat in pinmap.seats if seat.chute_angle is not None]
        else:
            angles = [config.rest_angle, config.push_angle, config.rest_angle]
        probe.say(f"Servo {name}: sweeping through {', '.join(f'{a:g}°' for a in angles)} "
                  "(a token may fall)...")
        problems = []
        for angle in angles:
            with dispensers.gate.motion():
                arm.move(angle)
                if isinstance(probe, SimulatedProbe):
                    expected = pinmap.servo.duty_for(angle) * pinmap.servo.frame_ms / 1000
                    width = arm.device.pulse_width
                    if width is None or not math.isclose(width, expected, abs_tol=1e-7):
                        got = "no pulse" if width is None else f"{width * 1000:.3f} ms"
                        problems.append(f"{angle:g}° gave {got}, expected "
                                        f"{expected * 1000:.3f} ms")
                    probe.pause()
                else:
                    time.sleep(max(probe.show_time, pinmap.timing.push_time))
        arm.detach()
        if isinstance(probe, SimulatedProbe):
            if arm.attached:
                problems.append("still sending pulses after detach")
            yield _result(f"servo {name}", problems, "pulse widths read back for every angle, "
                          "detached after")
        else:
            yield probe.confirm(f"servo {name}", f"Did the {name} servo sweep and stop?")


def _dispensers(tower: Tower, probe: Probe) -> Iterator[Check]:
    pinmap = tower.pinmap
    seats = [1] if pinmap.dispenser.layout == "pot" else [s.number for s in pinmap.seats]
    for seat in seats:
        device = "pot dispenser" if pinmap.dispenser.layout == "pot" else f"seat {seat} dispenser"
        probe.say(f"{device}: dispensing one token to seat {seat}...")
        before = (probe.tower.hoppers[seat].dropped if isinstance(probe, SimulatedProbe)
                  else 0)
        result = tower.dispense(seat, 1)
        if result.verified:
            yield Check(device, result.ok, result.describe())
        elif isinstance(probe, SimulatedProbe):
            dropped = probe.tower.hoppers[seat].dropped - before
            yield Check(device, dropped == 1, f"{dropped} token(s) left the mock hopper "
                        "(no beam to count them)")
        else:
            yield probe.confirm(device, f"Did exactly one token fall for seat {seat}?")


def _buttons(tower: Tower, probe: Probe) -> Iterator[Check]:
    events = {name: threading.Event() for name in tower.buttons.names}
    for name, event in events.items():
        tower.on_button(name, event.set)
    for name, event in events.items():
        event.clear()  # a stray earlier press of this button must not count
        yield probe.press(tower, name, event)
