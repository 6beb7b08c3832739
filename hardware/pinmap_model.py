"""What a pin map file holds and what it is read into.

The file's tables, keys, types and ranges are pydantic models (`PinMapFile` and its tables:
unknown keys refused, no value converted to another type, no inf or nan); what a checked pin
map is read into are frozen dataclasses, one per table, and the `PinMap` holding them.
`hardware.pinmap` validates the TOML file against the first, checks what lies between keys
(a pin used twice, the layout's fields, the servo's range) and builds the second; every
dataclass here is also importable from there. Pure: nothing of gpiozero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

RGB_KEYS = ("red", "green", "blue")
BCM_PINS = range(28)
PIN = "a BCM pin number"  # the description that marks a field as a pin


@dataclass(frozen=True)
class LightPins:
    """One light: an RGB LED (three pins) or a plain LED (one pin)."""

    kind: str  # "rgb" or "led"
    pins: tuple[int, ...]


@dataclass(frozen=True)
class SeatConfig:
    """One seat: its light and, depending on the dispenser layout, its servo or chute angle."""

    number: int
    light: LightPins
    servo: int | None = None
    beam: int | None = None
    chute_angle: float | None = None


@dataclass(frozen=True)
class RingConfig:
    """The PWM LED ring over the tray."""

    pin: int
    frequency: int = 400
    level: float = 0.8


@dataclass(frozen=True)
class EffectsConfig:
    """The optional buzzer and flourish LED."""

    buzzer: int | None = None
    led: int | None = None


@dataclass(frozen=True)
class DispenserConfig:
    """Token dispensers: one servo per seat, or one pot pusher with a servo-turned chute."""

    layout: str
    # Both land on whole-percent duty cycles with the default servo calibration (see
    # ServoConfig.whole_percent_angle), so the lgpio pin factory drives them exactly.
    rest_angle: float = -18.0
    push_angle: float = 54.0
    pusher: int | None = None
    chute: int | None = None
    beam: int | None = None


@dataclass(frozen=True)
class ServoConfig:
    """Calibration shared by every servo: angle range and the pulse widths at its ends."""

    min_angle: float = -90.0
    max_angle: float = 90.0
    min_pulse_ms: float = 1.0
    max_pulse_ms: float = 2.0
    frame_ms: float = 20.0

    def duty_for(self, angle: float) -> float:
        """The PWM duty cycle (0..1) that holds the servo at `angle`."""
        fraction = (angle - self.min_angle) / (self.max_angle - self.min_angle)
        pulse = self.min_pulse_ms + fraction * (self.max_pulse_ms - self.min_pulse_ms)
        return pulse / self.frame_ms

    def angle_for(self, duty: float) -> float:
        """The angle a duty cycle (0..1) holds the servo at."""
        pulse = duty * self.frame_ms
        fraction = (pulse - self.min_pulse_ms) / (self.max_pulse_ms - self.min_pulse_ms)
        return self.min_angle + fraction * (self.max_angle - self.min_angle)

    def whole_percent_angle(self, angle: float) -> float:
        """Where the servo really goes when the duty cycle is set in whole percent.

        gpiozero 2.0.1's lgpio pins take the duty cycle in whole percent (gpiozero issue
        #1209): 1 % of a 20 ms frame is 0.2 ms, a fifth of a typical servo's travel.
        `ServoArm` rounds to the nearest percent; this is the angle that comes out.
        """
        return self.angle_for(round(self.duty_for(angle) * 100) / 100)


@dataclass(frozen=True)
class Timing:
    """Every delay, in seconds; `TIMING_BOUNDS` holds what a pin map may set each to."""

    push_time: float = 0.25  # servo travel from rest to push
    return_time: float = 0.25  # servo travel back to rest
    chute_time: float = 0.4  # pot chute turning to a seat
    beam_window: float = 0.5  # how long after a stroke a token may cross and clear the beam
    beam_bounce: float = 0.002  # the beam must be clear this long before a new token counts
    button_bounce: float = 0.03
    long_press: float = 1.5
    blink_fast: float = 0.1
    blink_slow: float = 0.5
    beep: float = 0.08


# Far outside these a value is a typo (push_time = 1e9 would hang every dispense), not a build.
# beam_bounce stays under the shortest stroke (push_time + return_time), so that it can never
# swallow the next stroke's token.
TIMING_BOUNDS: dict[str, tuple[float, float]] = {
    "push_time": (0.05, 5.0), "return_time": (0.05, 5.0), "chute_time": (0.05, 5.0),
    "beam_window": (0.05, 5.0), "beam_bounce": (0.0, 0.05), "button_bounce": (0.001, 0.5),
    "long_press": (0.3, 10.0), "blink_fast": (0.02, 5.0), "blink_slow": (0.02, 5.0),
    "beep": (0.01, 2.0),
}


@dataclass(frozen=True)
class PinMap:
    """A validated pin map."""

    source: str
    seats: tuple[SeatConfig, ...]
    ring: RingConfig
    buttons: Mapping[str, int]
    dispenser: DispenserConfig
    status: LightPins | None = None
    effects: EffectsConfig = field(default_factory=EffectsConfig)
    servo: ServoConfig = field(default_factory=ServoConfig)
    timing: Timing = field(default_factory=Timing)
    warnings: tuple[str, ...] = ()

    @property
    def seat_count(self) -> int:
        return len(self.seats)

    def seat(self, number: int) -> SeatConfig:
        """The seat numbered `number` (1-based); ValueError when there is none."""
        if not 1 <= number <= len(self.seats):
            raise ValueError(f"no seat {number}: this tower has seats 1..{len(self.seats)}")
        return self.seats[number - 1]

    def pin_uses(self) -> list[tuple[int, str, str]]:
        """Every pin in use as (bcm, key, what it drives), in pin map order."""
        uses: list[tuple[int, str, str]] = []
        for seat in self.seats:
            uses += _light_uses(seat.light, f"[seats.{seat.number}]", f"seat {seat.number}")
            if seat.servo is not None:
                uses.append((seat.servo, f"[seats.{seat.number}].servo",
                             f"seat {seat.number} dispenser servo (signal)"))
            if seat.beam is not None:
                uses.append((seat.beam, f"[seats.{seat.number}].beam",
                             f"seat {seat.number} break-beam receiver"))
        if self.status is not None:
            uses += _light_uses(self.status, "[status]", "status")
        uses.append((self.ring.pin, "[ring].pin", "ring light (MOSFET gate)"))
        if self.effects.buzzer is not None:
            uses.append((self.effects.buzzer, "[effects].buzzer", "buzzer"))
        if self.effects.led is not None:
            uses.append((self.effects.led, "[effects].led", "flourish LED"))
        for name, pin in self.buttons.items():
            uses.append((pin, f"[buttons].{name}", f"button {name.replace('_', ' ')}"))
        d = self.dispenser
        if d.pusher is not None:
            uses.append((d.pusher, "[dispenser].pusher", "pot pusher servo (signal)"))
        if d.chute is not None:
            uses.append((d.chute, "[dispenser].chute", "pot chute servo (signal)"))
        if d.beam is not None:
            uses.append((d.beam, "[dispenser].beam", "pot break-beam receiver"))
        return uses


def _light_uses(light: LightPins, table: str, label: str) -> list[tuple[int, str, str]]:
    if light.kind == "led":
        return [(light.pins[0], f"{table}.led", f"{label} LED")]
    return [(pin, f"{table}.{colour}", f"{label} LED {colour}")
            for colour, pin in zip(RGB_KEYS, light.pins, strict=True)]


# ------------------------------------------------------------------- the file, as written

def pin_field(default: Any = ...) -> Any:
    """A BCM GPIO number, 0..27 (required unless a default is given)."""
    return Field(default, ge=BCM_PINS.start, le=BCM_PINS.stop - 1, description=PIN)


class Table(BaseModel):
    """One table of the file: unknown keys refused, no value converted to another type (a
    whole number may stand for a number, as TOML writes 1 for 1.0), no inf or nan."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


class LightTable(Table):
    """A light: red, green and blue (an RGB LED) or led (a plain LED)."""

    red: int | None = pin_field(None)
    green: int | None = pin_field(None)
    blue: int | None = pin_field(None)
    led: int | None = pin_field(None)


class SeatTable(LightTable):
    """``[seats.N]``: its light, and its servo and beam or its chute angle (by layout)."""

    servo: int | None = pin_field(None)
    beam: int | None = pin_field(None)
    chute_angle: float | None = None


class RingTable(Table):
    pin: int = pin_field()
    frequency: int = Field(RingConfig.frequency, ge=10, le=10000)
    level: float = Field(RingConfig.level, ge=0, le=1)


class EffectsTable(Table):
    buzzer: int | None = pin_field(None)
    led: int | None = pin_field(None)


class ButtonsTable(Table):
    stop: int = pin_field()
    undo: int = pin_field()
    new_game: int = pin_field()


class DispenserTable(Table):
    layout: Literal["per_seat", "pot"]
    rest_angle: float = DispenserConfig.rest_angle
    push_angle: float = DispenserConfig.push_angle
    pusher: int | None = pin_field(None)
    chute: int | None = pin_field(None)
    beam: int | None = pin_field(None)


class ServoTable(Table):
    min_angle: float = ServoConfig.min_angle
    max_angle: float = ServoConfig.max_angle
    min_pulse_ms: float = Field(ServoConfig.min_pulse_ms, gt=0)
    max_pulse_ms: float = Field(ServoConfig.max_pulse_ms, gt=0)
    frame_ms: float = Field(ServoConfig.frame_ms, gt=0)


#: ``[timing]``: every delay of `Timing`, within its `TIMING_BOUNDS`.
TimingTable = create_model(
    "TimingTable", __base__=Table,
    **{name: (float, Field(getattr(Timing, name), ge=low, le=high))
       for name, (low, high) in TIMING_BOUNDS.items()},
)


class PinMapFile(Table):
    """The whole file: every table it may hold, in the order the guide gives them."""

    seats: dict[str, SeatTable]
    status: LightTable | None = None
    ring: RingTable
    effects: EffectsTable = EffectsTable()
    buttons: ButtonsTable
    dispenser: DispenserTable
    servo: ServoTable = ServoTable()
    timing: TimingTable = TimingTable()  # type: ignore[valid-type]


#: The model of each table, by its name in the file.
TABLE_MODELS: dict[str, type[Table]] = {
    "seats": SeatTable, "status": LightTable, "ring": RingTable, "effects": EffectsTable,
    "buttons": ButtonsTable, "dispenser": DispenserTable, "servo": ServoTable,
    "timing": TimingTable,
}
