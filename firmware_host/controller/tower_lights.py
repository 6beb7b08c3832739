"""The seat lights and flourishes follow the game: whose turn, who owes tokens, who is out.

Derived from the engine's view and the effects of the last input, so after a restart the
lights come back exactly as they were (`show_game` from the view alone).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

log = logging.getLogger(__name__)

FLOURISHES = {"421": "421", "nenette": "nénette"}  # engine name -> tower name


class Lights(Protocol):
    """What this module needs of `hardware.Tower`."""

    def show_turn(self, seat: int) -> None: ...
    def show_owes(self, seat: int) -> None: ...
    def show_out(self, seat: int) -> None: ...
    def clear_seats(self) -> None: ...
    def flourish(self, name: str) -> bool: ...


def show_game(tower: Lights, view: dict[str, Any] | None,
              effects: Sequence[dict[str, Any]] = ()) -> None:
    """Light the seats for ``view`` (seat numbers from 1 on the tower, from 0 in the engine);
    seats that must give or take tokens after ``effects`` blink; flourishes play."""
    try:
        tower.clear_seats()
        if view is None:
            return
        for player in view.get("players", []):
            if player.get("out"):
                tower.show_out(int(player["seat"]) + 1)
        owes: set[int] = set()
        for effect in effects:
            kind = effect.get("kind")
            if kind == "tokens_between":
                owes.update((int(effect["from"]), int(effect["to"])))
            elif kind in ("tokens_to_pot", "tokens_from_pot"):
                owes.add(int(effect["player"]))
            elif kind == "flourish" and effect.get("name") in FLOURISHES:
                tower.flourish(FLOURISHES[effect["name"]])
        for seat in sorted(owes):
            tower.show_owes(seat + 1)
        to_move = view.get("to_move")
        if to_move is not None and view.get("phase") != "over" and to_move not in owes:
            tower.show_turn(int(to_move) + 1)
    except (ValueError, RuntimeError) as exc:
        # A seat the pin map lacks or a closed device must not stop the game: say it once.
        log.warning("seat lights: %s", exc)
