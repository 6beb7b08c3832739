"""The tower's pin map: one TOML file holding every pin and every timing, checked at start-up.

`load_pinmap(path)` reads and validates the file and returns a frozen `PinMap` (its dataclasses
live in `hardware.pinmap_model` and are importable from here too). Every problem found (a pin
used twice, an unknown table or key, a missing field, a wrong type, a value out of range, such
as a timing outside `TIMING_BOUNDS`) is collected and raised together as one `PinMapError`
whose lines read like ``pinmap.toml: [seats.3].red: pin 17 is already used by [buttons].stop``.

Pins are BCM GPIO numbers 0..27. Some choices work but deserve a word, so they earn a warning
(`PinMap.warnings`) rather than a refusal: a servo off the hardware-PWM pins (GPIO 12, 13, 18,
19), since gpiozero's lgpio factory times servo pulses in software on any pin; a servo angle
that the lgpio factory's whole-percent duty cycle cannot reach exactly; GPIO 0 and 1, kept for
HAT ID EEPROMs.

This module is pure: it imports nothing of gpiozero, so the controller and the docs generator
can read a pin map on any machine.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hardware.pinmap_model import (
    RGB_KEYS,
    TIMING_BOUNDS,
    DispenserConfig,
    EffectsConfig,
    LightPins,
    PinMap,
    RingConfig,
    SeatConfig,
    ServoConfig,
    Timing,
)

BCM_PINS = range(28)
HARDWARE_PWM_PINS = frozenset({12, 13, 18, 19})
ID_EEPROM_PINS = frozenset({0, 1})
MIN_SEATS, MAX_SEATS = 2, 10
BUTTON_NAMES = ("stop", "undo", "new_game")
LAYOUTS = ("per_seat", "pot")
WHOLE_PERCENT_TOLERANCE = 2.0  # degrees a servo may land off its angle before we warn
EXAMPLE_PINMAP = Path(__file__).with_name("pinmap.example.toml")


class PinMapError(ValueError):
    """The pin map file is unusable; `problems` holds one line per fault found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def load_pinmap(path: str | Path) -> PinMap:
    """Read and validate the pin map at `path`; PinMapError names the file, key and problem."""
    path = Path(path)
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PinMapError([f"{name}: file not found"]) from None
    except OSError as exc:
        raise PinMapError([f"{name}: cannot read: {exc.strerror}"]) from None
    return parse_pinmap(text, source=name)


def parse_pinmap(text: str, source: str = "pinmap.toml") -> PinMap:
    """Validate pin map TOML `text`; `source` names the file in error messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PinMapError([f"{source}: not valid TOML: {exc}"]) from None
    return _Checker(source).check(data)


class _Checker:
    """Walks the parsed TOML once, collecting every problem before giving up."""

    TABLES = ("seats", "status", "ring", "effects", "buttons", "dispenser", "servo", "timing")

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[str] = []
        self.warnings: list[str] = []
        self.pin_owner: dict[int, str] = {}

    # -- reporting -------------------------------------------------------------------------
    def fail(self, key: str, problem: str) -> None:
        self.problems.append(f"{self.source}: {key}: {problem}")

    def warn(self, key: str, problem: str) -> None:
        self.warnings.append(f"{self.source}: {key}: {problem}")

    # -- typed field readers ---------------------------------------------------------------
    def table(self, data: Mapping[str, Any], name: str, label: str, *, required: bool
              ) -> dict[str, Any] | None:
        if name not in data:
            if required:
                self.fail(label, "missing table")
            return None
        value = data[name]
        if not isinstance(value, dict):
            self.fail(label, f"must be a table, not {_type_name(value)}")
            return None
        return value

    def unknown_keys(self, table: Mapping[str, Any], label: str, known: tuple[str, ...],
                     what: str = "key") -> None:
        for key in table:
            if key not in known:
                self.fail(f"{label}.{key}", f"unknown {what} (expected one of: "
                          f"{', '.join(sorted(known))})")

    def pin(self, table: Mapping[str, Any], key: str, label: str, *, required: bool
            ) -> int | None:
        full = f"{label}.{key}"
        if key not in table:
            if required:
                self.fail(full, "missing field")
            return None
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(full, f"must be a BCM pin number (integer), not {_type_name(value)}")
            return None
        if value not in BCM_PINS:
            self.fail(full, f"pin {value} is not a BCM GPIO number (0..27)")
            return None
        if value in ID_EEPROM_PINS:
            self.warn(full, f"GPIO {value} is kept for a HAT's ID EEPROM (ID_SD/ID_SC); it "
                      "works, but a HAT plugged on top would clash with it")
        owner = self.pin_owner.get(value)
        if owner is not None:
            self.fail(full, f"pin {value} is already used by {owner}")
            return None
        self.pin_owner[value] = full
        return value

    def number(self, table: Mapping[str, Any], key: str, label: str, default: float | None,
               *, low: float | None = None, high: float | None = None,
               positive: bool = False, unit: str = "") -> float | None:
        full = f"{label}.{key}"
        if key not in table:
            if default is None:
                self.fail(full, "missing field")
            return default
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(full, f"must be a number, not {_type_name(value)}")
            return default
        if not math.isfinite(value):
            # TOML has inf and nan; nan would slip through every comparison below.
            self.fail(full, f"must be a finite number, not {value}")
            return default
        if unit and low is not None and high is not None and not low <= value <= high:
            self.fail(full, f"must be between {low:g} and {high:g} {unit}, not {value:g}")
            return default
        if positive and value <= 0:
            self.fail(full, f"must be greater than 0, not {value}")
            return default
        if (low is not None and value < low) or (high is not None and value > high):
            self.fail(full, f"must be between {low} and {high}, not {value}")
            return default
        return float(value)

    def light(self, table: Mapping[str, Any], label: str) -> LightPins | None:
        has_rgb = any(k in table for k in RGB_KEYS)
        if "led" in table and has_rgb:
            self.fail(label, "give either red, green and blue (an RGB LED) or led (a plain "
                      "LED), not both")
            return None
        if "led" in table:
            pin = self.pin(table, "led", label, required=True)
            return None if pin is None else LightPins("led", (pin,))
        if not has_rgb:
            self.fail(f"{label}.led", "missing field (or red, green and blue for an RGB LED)")
            return None
        pins = [self.pin(table, k, label, required=True) for k in RGB_KEYS]
        if any(p is None for p in pins):
            return None
        return LightPins("rgb", tuple(p for p in pins if p is not None))

    # -- the whole file --------------------------------------------------------------------
    def check(self, data: Mapping[str, Any]) -> PinMap:
        for key in data:
            if key not in self.TABLES:
                self.fail(f"[{key}]", "unknown device table (expected one of: "
                          f"{', '.join(self.TABLES)})")
        layout = self.check_layout(data)
        servo = self.check_servo(data)
        timing = self.check_timing(data)
        # Buttons first: they are the pins most often moved around, so a clash is reported
        # on the other device, whose key the builder is more likely editing.
        buttons = self.check_buttons(data)
        seats = self.check_seats(data, layout, servo)
        status = self.check_status(data)
        ring = self.check_ring(data)
        effects = self.check_effects(data)
        dispenser = self.check_dispenser(data, layout, servo)
        if self.problems or None in (ring, buttons, dispenser, seats):
            raise PinMapError(self.problems or [f"{self.source}: invalid pin map"])
        assert ring is not None and buttons is not None and dispenser is not None
        assert seats is not None
        return PinMap(source=self.source, seats=seats, ring=ring, buttons=buttons,
                      dispenser=dispenser, status=status, effects=effects, servo=servo,
                      timing=timing, warnings=tuple(self.warnings))

    def check_layout(self, data: Mapping[str, Any]) -> str | None:
        table = data.get("dispenser")
        if not isinstance(table, dict) or "layout" not in table:
            return None  # reported by check_dispenser
        layout = table["layout"]
        if layout not in LAYOUTS:
            self.fail("[dispenser].layout", f"must be one of {', '.join(LAYOUTS)}, "
                      f"not {layout!r}")
            return None
        return str(layout)

    def check_seats(self, data: Mapping[str, Any], layout: str | None, servo: ServoConfig
                    ) -> tuple[SeatConfig, ...] | None:
        table = self.table(data, "seats", "[seats]", required=True)
        if table is None:
            return None
        numbers: list[int] = []
        for key in table:
            if not key.isdigit() or not 1 <= int(key) <= MAX_SEATS:
                self.fail(f"[seats.{key}]", f"seat tables are numbered 1..{MAX_SEATS}")
            else:
                numbers.append(int(key))
        numbers.sort()
        if numbers and numbers != list(range(1, len(numbers) + 1)):
            self.fail("[seats]", f"seats must be numbered 1..N without gaps, found "
                      f"{', '.join(map(str, numbers))}")
        if len(numbers) < MIN_SEATS:
            self.fail("[seats]", f"a tower needs {MIN_SEATS} to {MAX_SEATS} seats, found "
                      f"{len(numbers)}")
        seats = []
        for number in numbers:
            label = f"[seats.{number}]"
            seat = self.table(table, str(number), label, required=True)
            if seat is None:
                continue
            known = ("red", "green", "blue", "led", "servo", "beam", "chute_angle")
            self.unknown_keys(seat, label, known)
            light = self.light(seat, label)
            servo_pin = beam = chute_angle = None
            if layout == "per_seat":
                servo_pin = self.pin(seat, "servo", label, required=True)
                beam = self.pin(seat, "beam", label, required=False)
                self.servo_pin_warning(servo_pin, f"{label}.servo")
                if "chute_angle" in seat:
                    self.fail(f"{label}.chute_angle", "only used with [dispenser].layout = "
                              "\"pot\"")
            elif layout == "pot":
                chute_angle = self.number(seat, "chute_angle", label, None,
                                          low=min(servo.min_angle, servo.max_angle),
                                          high=max(servo.min_angle, servo.max_angle))
                if chute_angle is not None:
                    self.whole_percent_warning(servo, chute_angle, f"{label}.chute_angle")
                for key in ("servo", "beam"):
                    if key in seat:
                        self.fail(f"{label}.{key}", "only used with [dispenser].layout = "
                                  "\"per_seat\" (the pot has one pusher and one beam)")
            if light is not None:
                seats.append(SeatConfig(number, light, servo_pin, beam, chute_angle))
        return tuple(seats)

    def check_status(self, data: Mapping[str, Any]) -> LightPins | None:
        table = self.table(data, "status", "[status]", required=False)
        if table is None:
            return None
        self.unknown_keys(table, "[status]", ("red", "green", "blue", "led"))
        return self.light(table, "[status]")

    def check_ring(self, data: Mapping[str, Any]) -> RingConfig | None:
        table = self.table(data, "ring", "[ring]", required=True)
        if table is None:
            return None
        self.unknown_keys(table, "[ring]", ("pin", "frequency", "level"))
        pin = self.pin(table, "pin", "[ring]", required=True)
        frequency = self.number(table, "frequency", "[ring]", 400, low=10, high=10000)
        level = self.number(table, "level", "[ring]", 0.8, low=0, high=1)
        if pin is None or frequency is None or level is None:
            return None
        if frequency != int(frequency):
            self.fail("[ring].frequency", f"must be a whole number of hertz, not {frequency}")
        return RingConfig(pin, int(frequency), level)

    def check_effects(self, data: Mapping[str, Any]) -> EffectsConfig:
        table = self.table(data, "effects", "[effects]", required=False)
        if table is None:
            return EffectsConfig()
        self.unknown_keys(table, "[effects]", ("buzzer", "led"))
        return EffectsConfig(buzzer=self.pin(table, "buzzer", "[effects]", required=False),
                             led=self.pin(table, "led", "[effects]", required=False))

    def check_buttons(self, data: Mapping[str, Any]) -> dict[str, int] | None:
        table = self.table(data, "buttons", "[buttons]", required=True)
        if table is None:
            return None
        self.unknown_keys(table, "[buttons]", BUTTON_NAMES, what="button")
        pins = {name: self.pin(table, name, "[buttons]", required=True) for name in BUTTON_NAMES}
        if any(p is None for p in pins.values()):
            return None
        return {name: pin for name, pin in pins.items() if pin is not None}

    def check_dispenser(self, data: Mapping[str, Any], layout: str | None,
                        servo: ServoConfig) -> DispenserConfig | None:
        table = self.table(data, "dispenser", "[dispenser]", required=True)
        if table is None:
            return None
        known = ("layout", "rest_angle", "push_angle", "pusher", "chute", "beam")
        self.unknown_keys(table, "[dispenser]", known)
        if "layout" not in table:
            self.fail("[dispenser].layout", f"missing field (one of {', '.join(LAYOUTS)})")
        low, high = sorted((servo.min_angle, servo.max_angle))
        defaults = DispenserConfig(layout="pot")
        rest = self.number(table, "rest_angle", "[dispenser]", defaults.rest_angle,
                           low=low, high=high)
        push = self.number(table, "push_angle", "[dispenser]", defaults.push_angle,
                           low=low, high=high)
        if rest is not None and rest == push:
            self.fail("[dispenser].push_angle", "must differ from rest_angle, or the servo "
                      "never pushes")
        elif rest is not None and push is not None:
            self.whole_percent_warning(servo, rest, "[dispenser].rest_angle")
            self.whole_percent_warning(servo, push, "[dispenser].push_angle")
            if servo.whole_percent_angle(rest) == servo.whole_percent_angle(push):
                self.warn("[dispenser].push_angle", "rest and push angles are so close that "
                          "the lgpio pin factory drives both with the same pulse: the pusher "
                          "will not move on a Pi")
        pusher = chute = beam = None
        if layout == "pot":
            pusher = self.pin(table, "pusher", "[dispenser]", required=True)
            chute = self.pin(table, "chute", "[dispenser]", required=True)
            beam = self.pin(table, "beam", "[dispenser]", required=False)
            self.servo_pin_warning(pusher, "[dispenser].pusher")
            self.servo_pin_warning(chute, "[dispenser].chute")
        elif layout == "per_seat":
            for key in ("pusher", "chute", "beam"):
                if key in table:
                    self.fail(f"[dispenser].{key}", "only used with layout = \"pot\" (per-seat "
                              "servos and beams go in each [seats.N] table)")
        if layout is None or rest is None or push is None:
            return None
        return DispenserConfig(layout, rest, push, pusher, chute, beam)

    def check_servo(self, data: Mapping[str, Any]) -> ServoConfig:
        table = self.table(data, "servo", "[servo]", required=False)
        if table is None:
            return ServoConfig()
        defaults = ServoConfig()
        self.unknown_keys(table, "[servo]", tuple(defaults.__dataclass_fields__))
        values = {
            key: self.number(table, key, "[servo]", getattr(defaults, key),
                             positive=key.endswith("_ms"))
            for key in defaults.__dataclass_fields__
        }
        config = ServoConfig(**values)  # type: ignore[arg-type]
        if config.min_angle == config.max_angle:
            self.fail("[servo].max_angle", "must differ from min_angle")
            config = ServoConfig(max_angle=config.min_angle + 1)  # keep checking the rest
        if not config.min_pulse_ms < config.max_pulse_ms < config.frame_ms:
            self.fail("[servo]", "pulse widths must satisfy min_pulse_ms < max_pulse_ms < "
                      f"frame_ms, got {config.min_pulse_ms} < {config.max_pulse_ms} < "
                      f"{config.frame_ms}")
            config = ServoConfig(min_angle=config.min_angle, max_angle=config.max_angle)
        return config

    def check_timing(self, data: Mapping[str, Any]) -> Timing:
        table = self.table(data, "timing", "[timing]", required=False)
        defaults = Timing()
        if table is None:
            return defaults
        self.unknown_keys(table, "[timing]", tuple(defaults.__dataclass_fields__))
        values = {key: self.number(table, key, "[timing]", getattr(defaults, key),
                                   low=TIMING_BOUNDS[key][0], high=TIMING_BOUNDS[key][1],
                                   unit="seconds")
                  for key in defaults.__dataclass_fields__}
        return Timing(**values)  # type: ignore[arg-type]

    def whole_percent_warning(self, servo: ServoConfig, angle: float, key: str) -> None:
        driven = servo.whole_percent_angle(angle)
        if abs(driven - angle) > WHOLE_PERCENT_TOLERANCE:
            step = servo.frame_ms / 100
            self.warn(key, f"{angle:g}° will be driven as {driven:.0f}° on a Pi: the lgpio pin "
                      f"factory sets servo pulses in steps of 1 % of the frame ({step:g} ms); "
                      "pick an angle on a step or a shorter [servo].frame_ms")

    def servo_pin_warning(self, pin: int | None, key: str) -> None:
        if pin is not None and pin not in HARDWARE_PWM_PINS:
            self.warn(key, f"servo on GPIO {pin}, not a hardware-PWM pin (12, 13, 18, 19): "
                      "it works with software-timed pulses but may jitter more")


def _type_name(value: object) -> str:
    return {bool: "a boolean", str: "a string", float: "a decimal number", int: "an integer",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)
