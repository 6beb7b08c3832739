"""The calibration driven from a page instead of a terminal (the game master's page).

`PageReporter` keeps what the terminal would print (the step under way, its progress, each
step's annotated picture as soon as it is made) for whoever asks, and tells ``changed``
after each change; `AskingTable` makes every throw and every clearing of the tray a question
(``ask``) that returns once the person at the tray says they are done, then lets ``hands``
act (the simulated tray's own `SimulatedTable`, so that a simulated tower can be calibrated
from the page too). `AskingLabeller` is the terminal's labeller (`faces.labelled_reading`) for
a page: each throw's reading, numbered left to right on its picture (`numbered`), is a
question whose answer (every value right, or one value per die, and the dice it missed
added where they lie) returns the dice's values.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import cv2
import numpy as np

from calibration.faces import Added, given_values, left_to_right
from calibration.labels import Labelled
from calibration.report import Reporter
from calibration.sources import Table
from vision import Die, Profile, Readers, read_dice
from vision.annotate import canvas, outline

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


# The question of one throw's values: (its name, its picture, its dice left to right) ->
# (None when every value read is right, else one answer per die; the dice added), as
# `faces.given_values` takes them.
AskValues = Callable[[str, np.ndarray, list[Die]],
                     tuple[list[int | None] | None, list[Added]]]


class AskingLabeller:
    """A labeller (`calibration.session.Labeller`) asking a person on a page: each throw is
    read with the tray's profile by ``readers`` and its dice put to ``ask`` left to right,
    as the terminal shows them; the answer gives the values as the terminal's does."""

    def __init__(self, ask: AskValues, readers: Readers | None = None) -> None:
        self.ask = ask
        self.readers = readers
        self.asked = 0  # throws asked so far

    def __call__(self, name: str, image: np.ndarray, profile: Profile | None
                 ) -> list[Labelled]:
        shown = left_to_right(read_dice(image, profile, readers=self.readers))
        self.asked += 1
        answers, added = self.ask(name, image, shown)
        return given_values(shown, answers, added)


def numbered(image: np.ndarray, dice: list[Die]) -> np.ndarray:
    """A BGR copy of ``image`` with each die outlined (orange: unsure) and numbered from 1
    under it, in the order given; the values are left to the page, which may change them."""
    out, scale, thick = canvas(image)
    for k, die in enumerate(dice, 1):
        outline(out, die, thick)
        text, font, bold = str(k), 0.8 * scale, thick + 1
        (w, h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, font, bold)
        x = round(die.center[0] - w / 2)
        y = min(round(max(p[1] for p in die.corners)) + h + round(6 * scale),
                out.shape[0] - 2)
        for ink, width in (((0, 0, 0), bold + 3), ((255, 255, 255), bold)):
            cv2.putText(out, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, font, ink, width,
                        cv2.LINE_AA)
    return out
