"""The 4D square as the tower keeps it between threads.

One `SquareTracker` knows which die is which position. The camera loop judges each reading
by it and moves it as the dice move; the stop button and the scoreboard, on their own
threads, may change the last move's rotation while the dice lie untouched, and then only
the dice's numbering follows the engine (or the next move would be read a half turn off).
`SquareKeeper` holds the tracker, the lock that keeps a renumbering out of a reading's
judgement, and the one way to change a move's rotation.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from firmware_host.controller.referee import Call, JSONDict
from firmware_host.controller.square import SquareTracker
from firmware_host.hub import GameHub
from firmware_host.rules.fourd import DEFAULT_ROTATION, ROTATIONS
from vision import Die


class SquareKeeper:
    """The tower's square tracker over ``hub``'s game: judge and accept readings under
    `lock`; `follow` every correction of the game, from whichever thread made it."""

    def __init__(self, hub: GameHub) -> None:
        self.hub = hub
        self.tracker = SquareTracker()
        # Held by the camera loop while it judges a reading and moves the tracker, and by a
        # renumbering from another thread.
        self.lock = threading.RLock()
        self._seen = threading.local()  # .turned: this thread's correction is the camera's

    def judge(self, dice: Sequence[Die], view: JSONDict) -> Call:
        return self.tracker.judge(dice, view)

    def accept(self, dice: Sequence[Die], call: Call) -> None:
        """The engine took ``call`` for ``dice``: the tracker follows the dice."""
        self.tracker.accept_call(dice, call)

    def reset(self) -> None:
        self.tracker.reset()

    def rotate_last(self, rotation: str, *, seen: bool = False) -> None:
        """Make the last move's rotation ``rotation`` (if the last input is a move turned the
        other way). ``seen``: the camera saw the square turned, and the tracker follows it
        from the dice (`accept`) rather than by renumbering them."""
        last = self.hub.state().last_input or {}
        if last.get("type") != "turn" or last.get("rotate", DEFAULT_ROTATION) == rotation:
            return
        self._seen.turned = seen
        try:
            self.hub.correct_last(list(last["faces"]), rotate=rotation)
        finally:
            self._seen.turned = False

    def turn_back(self) -> None:
        """The stop button: the last move's square turned the other way."""
        last = self.hub.state().last_input or {}
        turned = last.get("rotate", DEFAULT_ROTATION)
        self.rotate_last(next(r for r in ROTATIONS if r != turned))

    def follow(self, action: dict[str, Any]) -> None:
        """After a correction of the game (the hub's journaled ``action``): a move's
        rotation changed by hand, the dice untouched, renumbers them."""
        if getattr(self._seen, "turned", False):
            return
        replaced = action.get("replaced") or {}
        new = action.get("rotate")
        if replaced.get("type") != "turn" or new is None:
            return
        old = replaced.get("rotate", DEFAULT_ROTATION)
        if old != new:
            with self.lock:
                self.tracker.renumber(old, new)
