"""The tower's pin map: one TOML file holding every pin and every timing, checked at start-up.

`load_pinmap(path)` reads and validates the file and returns a frozen `PinMap` (its dataclasses
live in `hardware.pinmap_model` and are importable from here too). The file's tables, keys,
types and ranges (an unknown table or key, a missing field, a wrong type, a value out of range,
such as a timing outside `TIMING_BOUNDS`) are the pydantic models of `hardware.pinmap_model`;
what lies between keys (a pin used twice, the fields each dispenser layout takes, seat numbers,
angles within the servo's range) is checked here. Every problem found is raised together as
one `PinMapError`, one line each, naming the file, the key and what to write instead:
``pinmap.toml: [seats.3].red: pin 17 is already used by [buttons].stop``.

Pins are BCM GPIO numbers 0..27. Some choices work but deserve a word, so they earn a warning
(`PinMap.warnings`) rather than a refusal: a servo off the hardware-PWM pins (GPIO 12, 13, 18,
19), since gpiozero's lgpio factory times servo pulses in software on any pin; a servo angle
that the lgpio factory's whole-percent duty cycle cannot reach exactly; GPIO 0 and 1, kept for
HAT ID EEPROMs.

This module is pure: it imports nothing of gpiozero, so the controller and the docs generator
can read a pin map on any machine.
"""

from __future__ import annotations

import contextlib
import copy
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from hardware.pinmap_model import (
    BCM_PINS,
    PIN,
    RGB_KEYS,
    TABLE_MODELS,
    TIMING_BOUNDS,
    ButtonsTable,
    DispenserConfig,
    DispenserTable,
    EffectsConfig,
    LightPins,
    LightTable,
    PinMap,
    PinMapFile,
    RingConfig,
    SeatConfig,
    SeatTable,
    ServoConfig,
    ServoTable,
    Timing,
)

__all__ = ["BCM_PINS", "EXAMPLE_PINMAP", "HARDWARE_PWM_PINS", "TIMING_BOUNDS", "DispenserConfig",
           "EffectsConfig", "LightPins", "PinMap", "PinMapError", "RingConfig", "SeatConfig",
           "ServoConfig", "Timing", "load_pinmap", "parse_pinmap"]

HARDWARE_PWM_PINS = frozenset({12, 13, 18, 19})
ID_EEPROM_PINS = frozenset({0, 1})
MIN_SEATS, MAX_SEATS = 2, 10
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
        raise PinMapError([f"{name}: file not found (copy {EXAMPLE_PINMAP} and edit it)"]
                          ) from None
    except OSError as exc:
        raise PinMapError([f"{name}: cannot read: {exc.strerror}"]) from None
    return parse_pinmap(text, source=name)


def parse_pinmap(text: str, source: str = "pinmap.toml") -> PinMap:
    """Validate pin map TOML `text`; `source` names the file in error messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PinMapError([f"{source}: not valid TOML: {exc}"]) from None
    try:
        checked = PinMapFile.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
    else:
        return _Checker(source).check(checked)
    # Every problem is told at once: what lies between keys is checked on the rest of the
    # file too, when it holds together without the values the schema refused.
    said = [_said(error) for error in errors]
    refused = {key for key, _ in said}
    try:
        rest = PinMapFile.model_validate(_without(data, [error["loc"] for error in errors]))
    except ValidationError:
        rest = None
    if rest is not None:
        checker = _Checker(source)
        with contextlib.suppress(PinMapError):
            checker.check(rest)
        said += [(key, text) for key, text in checker.failed if key not in refused]
    said.sort(key=lambda problem: _place(problem[0]))
    raise PinMapError([f"{source}: {key}: {text}" for key, text in said])


def _without(data: Mapping[str, Any], places: list[tuple[Any, ...]]) -> dict[str, Any]:
    """A copy of ``data`` without the values at ``places`` (pydantic error locations)."""
    kept = copy.deepcopy(dict(data))
    for place in places:
        table: Any = kept
        for part in place[:-1]:
            table = table.get(part) if isinstance(table, dict) else None
        if isinstance(table, dict):
            table.pop(place[-1], None)
    return kept


def _place(key: str) -> tuple[int, int]:
    """Where a key's problem is told: in the file's table order, seats by number."""
    tables = list(PinMapFile.model_fields)
    name, _, seat = key.lstrip("[").split("]")[0].partition(".")
    return (tables.index(name) if name in tables else len(tables),
            int(seat) if seat.isdigit() else 0)


# ----------------------------------------------------------- the schema's errors, in words

def _said(error: Mapping[str, Any]) -> tuple[str, str]:
    """One pydantic error as its key and ``problem and fix``."""
    return _key(error), _problem(error)


def _key(error: Mapping[str, Any]) -> str:
    loc = tuple(str(part) for part in error["loc"])
    if loc[0] == "seats" and len(loc) > 1:
        return f"[seats.{loc[1]}]" + "".join(f".{part}" for part in loc[2:])
    return f"[{loc[0]}]" + "".join(f".{part}" for part in loc[1:])


def _problem(error: Mapping[str, Any]) -> str:
    loc = tuple(str(part) for part in error["loc"])
    inner = loc[2:] if loc[0] == "seats" and len(loc) > 1 else loc[1:]
    kind, value = error["type"], error.get("input")
    model = TABLE_MODELS.get(loc[0])
    field = model.model_fields.get(inner[-1]) if model is not None and inner else None
    is_pin = field is not None and field.description == PIN
    if kind == "missing":
        if not inner:
            return "missing table"
        if loc[-1] == "layout":
            return f"missing field (one of {', '.join(_choices(field))})"
        return "missing field"
    if kind == "extra_forbidden":
        if len(loc) == 1:
            return (f"unknown device table (expected one of: "
                    f"{', '.join(PinMapFile.model_fields)})")
        what = "button" if loc[0] == "buttons" else "key"
        known = sorted(model.model_fields) if model is not None else []
        return f"unknown {what} (expected one of: {', '.join(known)})"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"must be a table, not {_type_name(value)}"
    if kind == "int_type" and is_pin:
        return f"must be a BCM pin number (integer), not {_type_name(value)}"
    if kind == "int_type":
        return f"must be a whole number, not {_type_name(value)}"
    if kind == "float_type":
        return f"must be a number, not {_type_name(value)}"
    if kind == "finite_number":
        return f"must be a finite number, not {value}"
    if kind == "literal_error":
        return f"must be one of {', '.join(_choices(field))}, not {value!r}"
    if is_pin:
        return (f"pin {value} is not a BCM GPIO number "
                f"({BCM_PINS.start}..{BCM_PINS.stop - 1})")
    if kind == "greater_than":
        return f"must be greater than {error['ctx']['gt']:g}, not {value}"
    if kind in ("greater_than_equal", "less_than_equal") and field is not None:
        low, high = _bounds(field)
        unit = " seconds" if loc[0] == "timing" else ""
        return f"must be between {low:g} and {high:g}{unit}, not {value:g}"
    return f"{error['msg']}"


def _choices(field: FieldInfo | None) -> list[str]:
    return [] if field is None else [str(c) for c in getattr(field.annotation, "__args__", ())]


def _bounds(field: FieldInfo) -> tuple[float, float]:
    low = next(c.ge for c in field.metadata if hasattr(c, "ge"))
    high = next(c.le for c in field.metadata if hasattr(c, "le"))
    return low, high


def _type_name(value: object) -> str:
    return {bool: "a boolean", str: "a string", float: "a decimal number", int: "an integer",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)


# ------------------------------------------------------------------ what lies between keys

class _Checker:
    """Checks what the schema cannot see in one key, collecting every problem before giving
    up: pins used twice, seat numbers, the fields each layout takes, angles in the servo's
    range; and the warnings."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.failed: list[tuple[str, str]] = []  # (key, problem)
        self.warnings: list[str] = []
        self.pin_owner: dict[int, str] = {}

    def fail(self, key: str, problem: str) -> None:
        self.failed.append((key, problem))

    def warn(self, key: str, problem: str) -> None:
        self.warnings.append(f"{self.source}: {key}: {problem}")

    def pin(self, value: int | None, key: str) -> int | None:
        """Claim pin ``value`` for ``key`` (None: not given)."""
        if value is None:
            return None
        if value in ID_EEPROM_PINS:
            self.warn(key, f"GPIO {value} is kept for a HAT's ID EEPROM (ID_SD/ID_SC); it "
                      "works, but a HAT plugged on top would clash with it")
        owner = self.pin_owner.get(value)
        if owner is not None:
            self.fail(key, f"pin {value} is already used by {owner}")
        else:
            self.pin_owner[value] = key
        return value

    def light(self, table: LightTable, label: str) -> LightPins | None:
        has_rgb = any(getattr(table, k) is not None for k in RGB_KEYS)
        if table.led is not None and has_rgb:
            self.fail(label, "give either red, green and blue (an RGB LED) or led (a plain "
                      "LED), not both")
            return None
        if table.led is not None:
            return LightPins("led", (self.pin(table.led, f"{label}.led") or 0,))
        if not has_rgb:
            self.fail(f"{label}.led", "missing field (or red, green and blue for an RGB LED)")
            return None
        pins = []
        for colour in RGB_KEYS:
            pin = self.pin(getattr(table, colour), f"{label}.{colour}")
            if pin is None:
                self.fail(f"{label}.{colour}", "missing field")
            pins.append(pin or 0)
        return LightPins("rgb", tuple(pins))

    # -- the whole file --------------------------------------------------------------------
    def check(self, file: PinMapFile) -> PinMap:
        servo = self.check_servo(file.servo)
        # Buttons first: they are the pins most often moved around, so a clash is reported
        # on the other device, whose key the builder is more likely editing.
        buttons = self.check_buttons(file.buttons)
        seats = self.check_seats(file.seats, file.dispenser.layout, servo)
        status = None if file.status is None else self.light(file.status, "[status]")
        ring = RingConfig(self.pin(file.ring.pin, "[ring].pin") or 0, file.ring.frequency,
                          file.ring.level)
        effects = EffectsConfig(buzzer=self.pin(file.effects.buzzer, "[effects].buzzer"),
                                led=self.pin(file.effects.led, "[effects].led"))
        dispenser = self.check_dispenser(file.dispenser, servo)
        if self.failed:
            raise PinMapError([f"{self.source}: {key}: {problem}" for key, problem in
                               sorted(self.failed, key=lambda failed: _place(failed[0]))])
        return PinMap(source=self.source, seats=seats, ring=ring, buttons=buttons,
                      dispenser=dispenser, status=status, effects=effects, servo=servo,
                      timing=Timing(**file.timing.model_dump()), warnings=tuple(self.warnings))

    def check_buttons(self, table: ButtonsTable) -> dict[str, int]:
        return {name: self.pin(pin, f"[buttons].{name}") or 0
                for name, pin in table.model_dump().items()}

    def check_seats(self, table: Mapping[str, SeatTable], layout: str, servo: ServoConfig
                    ) -> tuple[SeatConfig, ...]:
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
            seat = table[str(number)]
            light = self.light(seat, label)
            servo_pin = beam = chute_angle = None
            if layout == "per_seat":
                servo_pin = self.pin(seat.servo, f"{label}.servo")
                if servo_pin is None:
                    self.fail(f"{label}.servo", "missing field")
                beam = self.pin(seat.beam, f"{label}.beam")
                self.servo_pin_warning(servo_pin, f"{label}.servo")
                if seat.chute_angle is not None:
                    self.fail(f"{label}.chute_angle", "only used with [dispenser].layout = "
                              "\"pot\"")
            else:
                chute_angle = seat.chute_angle
                if chute_angle is None:
                    self.fail(f"{label}.chute_angle", "missing field")
                elif self.angle(servo, chute_angle, f"{label}.chute_angle"):
                    self.whole_percent_warning(servo, chute_angle, f"{label}.chute_angle")
                for key in ("servo", "beam"):
                    if getattr(seat, key) is not None:
                        self.fail(f"{label}.{key}", "only used with [dispenser].layout = "
                                  "\"per_seat\" (the pot has one pusher and one beam)")
            if light is not None:
                seats.append(SeatConfig(number, light, servo_pin, beam, chute_angle))
        return tuple(seats)

    def check_dispenser(self, table: DispenserTable, servo: ServoConfig) -> DispenserConfig:
        rest, push = table.rest_angle, table.push_angle
        in_range = (self.angle(servo, rest, "[dispenser].rest_angle")
                    & self.angle(servo, push, "[dispenser].push_angle"))
        if rest == push:
            self.fail("[dispenser].push_angle", "must differ from rest_angle, or the servo "
                      "never pushes")
        elif in_range:
            self.whole_percent_warning(servo, rest, "[dispenser].rest_angle")
            self.whole_percent_warning(servo, push, "[dispenser].push_angle")
            if servo.whole_percent_angle(rest) == servo.whole_percent_angle(push):
                self.warn("[dispenser].push_angle", "rest and push angles are so close that "
                          "the lgpio pin factory drives both with the same pulse: the pusher "
                          "will not move on a Pi")
        pusher = chute = beam = None
        if table.layout == "pot":
            pusher = self.pin(table.pusher, "[dispenser].pusher")
            chute = self.pin(table.chute, "[dispenser].chute")
            beam = self.pin(table.beam, "[dispenser].beam")
            for key, pin in (("pusher", pusher), ("chute", chute)):
                if pin is None:
                    self.fail(f"[dispenser].{key}", "missing field")
                self.servo_pin_warning(pin, f"[dispenser].{key}")
        else:
            for key in ("pusher", "chute", "beam"):
                if getattr(table, key) is not None:
                    self.fail(f"[dispenser].{key}", "only used with layout = \"pot\" (per-seat "
                              "servos and beams go in each [seats.N] table)")
        return DispenserConfig(table.layout, rest, push, pusher, chute, beam)

    def check_servo(self, table: ServoTable) -> ServoConfig:
        config = ServoConfig(**table.model_dump())
        if config.min_angle == config.max_angle:
            self.fail("[servo].max_angle", "must differ from min_angle")
            config = ServoConfig(max_angle=config.min_angle + 1)  # keep checking the rest
        if not config.min_pulse_ms < config.max_pulse_ms < config.frame_ms:
            self.fail("[servo]", "pulse widths must satisfy min_pulse_ms < max_pulse_ms < "
                      f"frame_ms, got {config.min_pulse_ms} < {config.max_pulse_ms} < "
                      f"{config.frame_ms}")
            config = ServoConfig(min_angle=config.min_angle, max_angle=config.max_angle)
        return config

    def angle(self, servo: ServoConfig, value: float, key: str) -> bool:
        """Whether ``value`` lies within the servo's range (a problem when not)."""
        low, high = sorted((servo.min_angle, servo.max_angle))
        if low <= value <= high:
            return True
        self.fail(key, f"must be between {low} and {high}, not {value:g} (the angles [servo] "
                  "gives the servo)")
        return False

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
