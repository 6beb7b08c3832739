"""`Tower`: the one object the controller talks to about lights, buttons and dispensers.

The rest of dicetower never imports gpiozero; it builds a Tower and calls:

    tower = open_tower("pinmap.toml")            # real pins (lgpio on a Pi; hardware.opening)
    tower = open_tower(EXAMPLE_PINMAP, simulate=True)   # mock pins, same behaviour

    tower.show_turn(seat)        # this seat rolls now (the previous turn's seat goes dark)
    tower.show_owes(seat)        # this seat must take or give tokens
    tower.show_out(seat)         # this seat is out of the game
    tower.clear_seat(seat)       # dark again; tower.clear_seats() for all
    tower.set_status(status)     # "ready", "reading", "reroll", "error" or "off"
    tower.flourish(name)         # "421" or "nénette"; False if no buzzer or LED is fitted
    tower.set_ring(level)        # ring light brightness 0..1 (deferred during a reading)
    tower.on_button(name, callback, long_press=False)   # "stop", "undo", "new_game"
    tower.dispense(seat, n) -> DispenseResult           # blocks until done
    with tower.camera_reading(): ...   # servos frozen and detached, ring light steady
    tower.close()                # or use the Tower as a context manager

Seats are numbered from 1; an unknown seat, status, flourish or button is a ValueError.

`DispenseResult` has `requested`, `dispensed` (what really went out), `strokes`, `verified`
(a break-beam counted the tokens), `jammed`, `reason`, `ok` and `describe()`. Calling
`dispense` inside `camera_reading()` on the same thread is a RuntimeError (it would wait for
itself); from another thread it waits until the reading is over.

Button callbacks run on gpiozero's own threads: keep them short (e.g. put an event on the
controller's queue). A callback that raises is logged and the others still run.

Every delay comes from the pin map's `[timing]` table; `sleep` can be injected, and
`hardware.simulation.simulated_pinmap()` shortens every delay, so that tests and the demo run
in milliseconds. Changing the dispenser or light layout is a pin map edit: the calls above
stay the same.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Protocol, TypeVar

from gpiozero.pins import Factory

from hardware.buttons import Buttons
from hardware.dispenser import DispenseResult, Dispensers, Sleep
from hardware.lights import Effects, Light, RingLight, SeatLights, SeatState, StatusLight
from hardware.pinmap import PinMap


class _Closable(Protocol):
    def close(self) -> None: ...


_Part = TypeVar("_Part", bound=_Closable)


class Tower:
    """The tower's devices on the pins of `pinmap`, built with gpiozero pin factory `factory`."""

    def __init__(self, pinmap: PinMap, factory: Factory, *, sleep: Sleep = time.sleep) -> None:
        self.pinmap = pinmap
        self.factory = factory
        self._closers: list[Callable[[], None]] = []
        try:
            timing = pinmap.timing
            self.seats = SeatLights([self._keep(Light(seat.light, factory))
                                     for seat in pinmap.seats], timing)
            status = None if pinmap.status is None else self._keep(Light(pinmap.status, factory))
            self.status = StatusLight(status, timing)
            self.ring = self._keep(RingLight(pinmap.ring, factory))
            self.effects = self._keep(Effects(pinmap.effects, timing, factory))
            self.buttons = self._keep(Buttons(pinmap.buttons, timing, factory))
            self.dispensers = self._keep(Dispensers(pinmap, factory, sleep=sleep))
        except Exception:
            # Release the pins claimed so far: a retry (or the next Tower) must find them free.
            self.close()
            raise

    def _keep(self, part: _Part) -> _Part:
        self._closers.append(part.close)
        return part

    # -- seat lights ----------------------------------------------------------------------
    def show_turn(self, seat: int) -> None:
        self.seats.show(seat, SeatState.TURN)

    def show_owes(self, seat: int) -> None:
        self.seats.show(seat, SeatState.OWES)

    def show_out(self, seat: int) -> None:
        self.seats.show(seat, SeatState.OUT)

    def clear_seat(self, seat: int) -> None:
        self.seats.show(seat, SeatState.IDLE)

    def clear_seats(self) -> None:
        self.seats.clear()

    def seat_state(self, seat: int) -> SeatState:
        return self.seats.state(seat)

    # -- status, effects, ring ---------------------------------------------------------------
    def set_status(self, status: str) -> None:
        self.status.set(status)

    def flourish(self, name: str) -> bool:
        return self.effects.play(name)

    def set_ring(self, level: float) -> None:
        self.ring.set_level(level)

    @property
    def ring_level(self) -> float:
        return self.ring.level

    # -- buttons -----------------------------------------------------------------------------
    def on_button(self, name: str, callback: Callable[[], object], *,
                  long_press: bool = False) -> None:
        self.buttons.on(name, callback, long_press=long_press)

    # -- dispensers and the camera -----------------------------------------------------------
    def dispense(self, seat: int, n: int) -> DispenseResult:
        return self.dispensers.dispense(seat, n)

    @contextmanager
    def camera_reading(self) -> Iterator[None]:
        """While inside: no servo moves (all detached) and the ring light keeps its level."""
        with self.dispensers.gate.camera_reading():
            self.ring.hold()
            try:
                yield
            finally:
                self.ring.release()

    # -- life cycle --------------------------------------------------------------------------
    def close(self) -> None:
        while self._closers:
            self._closers.pop()()

    def __enter__(self) -> Tower:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
