"""The tower's lights: one light per seat, the status LED, the ring light and the flourishes.

Blinking runs on gpiozero's own background threads (`blink`), and any new state given to a
light stops its previous pattern first, so each light always shows exactly one thing.
"""

from __future__ import annotations

import threading
import unicodedata
from enum import Enum

from gpiozero import LED, PWMLED, RGBLED, Buzzer
from gpiozero.pins import Factory

from hardware.pinmap import EffectsConfig, LightPins, RingConfig, Timing

Colour = tuple[float, float, float]

OFF: Colour = (0.0, 0.0, 0.0)
GREEN: Colour = (0.0, 1.0, 0.0)
BLUE: Colour = (0.0, 0.0, 1.0)
AMBER: Colour = (1.0, 0.5, 0.0)
RED: Colour = (1.0, 0.0, 0.0)
DIM_RED: Colour = (0.15, 0.0, 0.0)


class SeatState(Enum):
    """What a seat light shows."""

    IDLE = "idle"  # dark
    TURN = "turn"  # green, steady: this seat rolls now
    OWES = "owes"  # amber, slow blink: this seat must take or give tokens
    OUT = "out"  # dim red, steady: this seat is out of the game


STATUSES = ("off", "ready", "reading", "reroll", "error")


class Light:
    """An RGB LED or a plain (dimmable) LED behind one interface: steady or blinking colour."""

    def __init__(self, pins: LightPins, factory: Factory) -> None:
        # gpiozero's devices take one state change at a time: a blink stopped by a change made
        # from another thread may be stopped before its thread has started ("cannot join
        # thread before it is started"). The controller's loop and the game master's page
        # both change the lights.
        self._lock = threading.Lock()
        self.kind = pins.kind
        self.pins = pins.pins
        self.device: RGBLED | PWMLED
        if pins.kind == "rgb":
            red, green, blue = pins.pins
            self.device = RGBLED(red, green, blue, pwm=True, pin_factory=factory)
        else:
            self.device = PWMLED(pins.pins[0], pin_factory=factory)

    def _level(self, colour: Colour) -> float:
        # A plain LED shows a colour's brightness: full for any bright colour, dim for dim.
        return max(colour)

    def steady(self, colour: Colour) -> None:
        with self._lock:
            if isinstance(self.device, RGBLED):
                self.device.color = colour
            else:
                self.device.value = self._level(colour)

    def blink(self, colour: Colour, on_time: float, off_time: float) -> None:
        with self._lock:
            if isinstance(self.device, RGBLED):
                self.device.blink(on_time=on_time, off_time=off_time, on_color=colour,
                                  off_color=OFF, background=True)
            else:
                # PWMLED.blink always lights fully; a plain LED's patterns differ in timing.
                self.device.blink(on_time=on_time, off_time=off_time, background=True)

    def close(self) -> None:
        with self._lock:
            self.device.close()


class SeatLights:
    """One light per seat, numbered from 1."""

    def __init__(self, lights: list[Light], timing: Timing) -> None:
        self._lights = lights
        self._timing = timing
        self._states = [SeatState.IDLE] * len(lights)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._lights)

    def _index(self, seat: int) -> int:
        if not 1 <= seat <= len(self._lights):
            raise ValueError(f"no seat {seat}: this tower has seats 1..{len(self._lights)}")
        return seat - 1

    def state(self, seat: int) -> SeatState:
        return self._states[self._index(seat)]

    def show(self, seat: int, state: SeatState) -> None:
        """Show `state` on `seat`; a new turn puts the previous turn's seat back to idle."""
        index = self._index(seat)
        with self._lock:
            if state is SeatState.TURN:
                for other, current in enumerate(self._states):
                    if other != index and current is SeatState.TURN:
                        self._apply(other, SeatState.IDLE)
            self._apply(index, state)

    def clear(self) -> None:
        with self._lock:
            for index in range(len(self._lights)):
                self._apply(index, SeatState.IDLE)

    def _apply(self, index: int, state: SeatState) -> None:
        light = self._lights[index]
        self._states[index] = state
        if state is SeatState.TURN:
            light.steady(GREEN)
        elif state is SeatState.OWES:
            light.blink(AMBER, self._timing.blink_slow, self._timing.blink_slow)
        elif state is SeatState.OUT:
            light.steady(DIM_RED)
        else:
            light.steady(OFF)

    def light(self, seat: int) -> Light:
        return self._lights[self._index(seat)]

    def close(self) -> None:
        for light in self._lights:
            light.close()


class StatusLight:
    """The status LED: ready / reading / re-roll / error, each its own pattern."""

    def __init__(self, light: Light | None, timing: Timing) -> None:
        self.light = light
        self._timing = timing
        self.status = "off"

    def set(self, status: str) -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r} (expected one of: "
                             f"{', '.join(STATUSES)})")
        self.status = status
        if self.light is None:
            return
        fast, slow = self._timing.blink_fast, self._timing.blink_slow
        if status == "ready":
            self.light.steady(GREEN)
        elif status == "reading":
            self.light.blink(BLUE, fast, fast)
        elif status == "reroll":
            self.light.blink(AMBER, slow, slow)
        elif status == "error":
            self.light.blink(RED, fast, slow)
        else:
            self.light.steady(OFF)

    def close(self) -> None:
        if self.light is not None:
            self.light.close()


class RingLight:
    """The PWM ring light over the tray; `hold_steady()` defers changes while the camera reads."""

    def __init__(self, config: RingConfig, factory: Factory) -> None:
        self.device = PWMLED(config.pin, frequency=config.frequency,
                             initial_value=config.level, pin_factory=factory)
        self._lock = threading.Lock()
        self._holds = 0
        self._pending: float | None = None

    @property
    def level(self) -> float:
        return float(self.device.value)

    def set_level(self, level: float) -> None:
        if not 0.0 <= level <= 1.0:
            raise ValueError(f"ring level must be between 0 and 1, not {level}")
        with self._lock:
            if self._holds:
                # A frame must not change exposure halfway: apply once the reading is over.
                self._pending = level
            else:
                self.device.value = level

    def hold(self) -> None:
        with self._lock:
            self._holds += 1

    def release(self) -> None:
        with self._lock:
            self._holds -= 1
            if self._holds == 0 and self._pending is not None:
                self.device.value = self._pending
                self._pending = None

    def close(self) -> None:
        self.device.close()


def normalise_flourish(name: str) -> str:
    """'nénette', 'Nenette' and 'nenette' are one flourish; so are '421' and ' 421 '."""
    stripped = unicodedata.normalize("NFKD", name.strip().lower())
    return "".join(c for c in stripped if not unicodedata.combining(c))


FLOURISHES = ("421", "nenette")


class Effects:
    """The optional buzzer and flourish LED, played together."""

    def __init__(self, config: EffectsConfig, timing: Timing, factory: Factory) -> None:
        self._timing = timing
        self._lock = threading.Lock()  # one blink change at a time, as for `Light`
        self.buzzer = None if config.buzzer is None else Buzzer(config.buzzer,
                                                                 pin_factory=factory)
        try:
            self.led = None if config.led is None else LED(config.led, pin_factory=factory)
        except Exception:
            self.close()
            raise

    @property
    def present(self) -> bool:
        return self.buzzer is not None or self.led is not None

    def play(self, name: str) -> bool:
        """Play flourish `name` ("421" or "nénette"); False if there is nothing to play it on."""
        key = normalise_flourish(name)
        beep = self._timing.beep
        if key == "421":
            on_time, off_time, n = beep, beep, 3  # three quick beeps: a win
        elif key == "nenette":
            on_time, off_time, n = 6 * beep, beep, 1  # one long low moan: the worst hand
        else:
            raise ValueError(f"unknown flourish {name!r} (expected one of: 421, nénette)")
        with self._lock:
            for device in (self.buzzer, self.led):
                if device is not None:
                    device.blink(on_time=on_time, off_time=off_time, n=n, background=True)
        return self.present

    def close(self) -> None:
        for device in (self.buzzer, getattr(self, "led", None)):
            if device is not None:
                device.close()
