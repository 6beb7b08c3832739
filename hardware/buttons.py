"""The tower's buttons (stop, undo, new game): debounced, with an optional long press.

Each button is a gpiozero `Button` to GND with the internal pull-up, `bounce_time` from the pin
map's `[timing].button_bounce` and `hold_time` from `[timing].long_press`. Callbacks take no
arguments; one that raises is logged and does not stop the others.

Each press fires one action, never both. A button with a long-press callback tells the two
apart: its long action fires once it has been held for `long_press`, and its short action on
release when it was let go sooner. A button without one fires its short action as it goes
down, whatever the press's length (nothing to wait for).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping

from gpiozero import Button
from gpiozero.pins import Factory

from hardware.pinmap import Timing

log = logging.getLogger(__name__)

Callback = Callable[[], object]


class Buttons:
    """The named buttons and the callbacks registered on their presses and long presses."""

    def __init__(self, pins: Mapping[str, int], timing: Timing, factory: Factory) -> None:
        self._devices: dict[str, Button] = {}
        self._callbacks: dict[tuple[str, bool], list[Callback]] = {}
        self._lock = threading.Lock()
        # When the press under way began (factory ticks), until its action is decided.
        self._down_since: dict[str, float] = {}
        try:
            for name, pin in pins.items():
                button = Button(pin, pull_up=True, bounce_time=timing.button_bounce,
                                hold_time=timing.long_press, pin_factory=factory)
                self._devices[name] = button
                button.when_pressed = lambda name=name: self._pressed(name)
                button.when_held = lambda name=name: self._held(name)
                button.when_released = lambda name=name: self._released(name)
        except Exception:
            self.close()
            raise

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._devices)

    def device(self, name: str) -> Button:
        try:
            return self._devices[name]
        except KeyError:
            raise ValueError(f"unknown button {name!r} (expected one of: "
                             f"{', '.join(self._devices)})") from None

    def on(self, name: str, callback: Callback, *, long_press: bool = False) -> None:
        """Call `callback()` on every press of `name` (or every long press)."""
        self.device(name)  # refuse unknown names now, not at the first press
        with self._lock:
            self._callbacks.setdefault((name, long_press), []).append(callback)

    # gpiozero calls these three on its own threads (the pin's and the hold timer's): the lock
    # makes exactly one of them decide each press.
    def _pressed(self, name: str) -> None:
        button = self._devices[name]
        with self._lock:
            if self._callbacks.get((name, True)):
                self._down_since[name] = button.pin_factory.ticks()
                return
            self._down_since.pop(name, None)
        self._fire(name, long_press=False)

    def _held(self, name: str) -> None:
        with self._lock:
            if self._down_since.pop(name, None) is None:
                return  # already released, or no long action to wait for
        self._fire(name, long_press=True)

    def _released(self, name: str) -> None:
        button = self._devices[name]
        with self._lock:
            since = self._down_since.pop(name, None)
            if since is None:
                return  # decided already: fired on press, or held
        # The hold timer may lose the race to a release just past hold_time: the press's
        # length decides, not which thread got here first.
        held = button.pin_factory.ticks_diff(button.pin_factory.ticks(), since)
        self._fire(name, long_press=held >= button.hold_time)

    def _fire(self, name: str, *, long_press: bool) -> None:
        with self._lock:
            callbacks = list(self._callbacks.get((name, long_press), ()))
        for callback in callbacks:
            try:
                callback()
            except Exception:
                # gpiozero calls us on its own thread: an exception here would kill it silently.
                log.exception("button %s callback %r failed", name, callback)

    def close(self) -> None:
        # Each Button's hold thread takes up to 0.1 s to notice it must stop: close them
        # side by side rather than one after the other.
        closers = [threading.Thread(target=b.close) for b in self._devices.values()]
        for closer in closers:
            closer.start()
        for closer in closers:
            closer.join()
        self._devices.clear()
