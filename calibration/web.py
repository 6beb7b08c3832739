"""The calibration driven from a page instead of a terminal (the game master's page).

`PageReporter` keeps what the terminal would print (the step under way, its progress, each
step's annotated picture as soon as it is made) for whoever asks, and tells ``changed``
after each change; `AskingTable` makes every throw and every clearing of the tray a question
(``ask``) that returns once the person at the tray says they are done, then lets ``hands``
act (the simulated tray's own `SimulatedTable`, so that a simulated tower can be calibrated
from the page too).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from calibration.report import Reporter
from calibration.sources import Table

log = logging.getLogger(__name__)


class PageReporter(Reporter):
    """A `Reporter` for a page: nothing printed, everything kept (and logged)."""

    def __init__(self, changed: Callable[[], None],
                 shown: Callable[[str, Any], None]) -> None:
        super().__init__(out=io.StringIO(), err=io.StringIO(), interactive=False, bars=False)
        self.changed = changed
        self.shown = shown
        self.number = 0  # the step under way, 1..4 (0 before the first)
        self.done = 0
        self.total = 0

    def say(self, text: str) -> None:
        self.lines.append(text)
        log.info("calibration: %s", text.strip())
        self.changed()

    def step(self, number: int, title: str) -> None:
        self.number, self.done, self.total = number, 0, 0
        super().step(number, title)

    def preview(self, name: str, image: Any) -> None:
        self.shown(name, image)

    @property
    def fraction(self) -> float:
        """How far the step under way is, 0..1 (0 while it has nothing to count)."""
        return min(1.0, self.done / self.total) if self.total else 0.0

    @contextmanager
    def progress(self, total: int, what: str) -> Iterator[Any]:
        self.done, self.total = 0, max(1, total)
        self.changed()

        def tick(n: int = 1) -> None:
            self.done += n
            self.changed()

        yield tick


class AskingTable(Table):
    """Throws and clearings asked of a person: ``ask(kind, n)`` ("throw" with the dice
    count, "clear" with 0) returns once they are done (or raises to stop the calibration)."""

    def __init__(self, ask: Callable[[str, int], None], hands: Table | None = None) -> None:
        self.ask = ask
        self.hands = hands
        self.throws = 0  # throws made so far

    def throw(self, n: int) -> None:
        self.ask("throw", n)
        if self.hands is not None:
            self.hands.throw(n)
        self.throws += 1

    def clear(self) -> None:
        self.ask("clear", 0)
        if self.hands is not None:
            self.hands.clear()
