"""Drive a 421 game by hand names ("554", "221") instead of raw dice events.

For tests, demos and the scoreboard's fixtures: ``open_with(game, 1)`` settles the opening
so seat 1 opens, ``play_turn(game, "542", "421")`` throws 542, keeps 4 and 2, throws 1.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from firmware_host.rules.game421 import Game421

Effects = list[dict[str, Any]]


def faces_of(hand: str) -> list[int]:
    """The dice of a hand name, in the order written ("652" -> [6, 5, 2])."""
    return [int(c) for c in hand]


def open_with(game: Game421, opener: int) -> Effects:
    """Play the opening so that ``opener`` opens the first round."""
    effects: Effects = []
    while game.phase == "opening":
        player = game.to_move
        if game.opening_dice == 1:
            faces = [1] if player == opener else [6]
        else:
            faces = faces_of("221" if player == opener else "421")
        effects += game.apply({"type": "throw", "faces": faces})
    return effects


def play_turn(game: Game421, *hands: str, stop: bool = True) -> Effects:
    """The player to move makes ``hands`` in successive throws, then stops if still on."""
    effects: Effects = []
    player = game.to_move
    for number, hand in enumerate(hands):
        target = faces_of(hand)
        if number == 0:
            effects += game.apply({"type": "throw", "faces": target})
            continue
        current = list(game.hand)
        common = Counter(current) & Counter(target)
        if sum(common.values()) == 3:
            # Same hand again: one die is thrown and lands on the same face.
            common[current[0]] -= 1
        keep: list[int] = []
        wanted = Counter(common)
        for i, face in enumerate(current):
            if wanted[face] > 0:
                keep.append(i)
                wanted[face] -= 1
        rest = Counter(target) - Counter(current[i] for i in keep)
        effects += game.apply({"type": "throw", "faces": sorted(rest.elements()), "keep": keep})
    if stop and game.to_move == player and game.throw_number:
        effects += game.apply({"type": "stop"})
    return effects


def play_round(game: Game421, *turns: str | tuple[str, ...]) -> Effects:
    """One turn per entry: a hand name, or a tuple of hands for a turn of several throws."""
    effects: Effects = []
    for turn in turns:
        hands = (turn,) if isinstance(turn, str) else turn
        effects += play_turn(game, *hands)
    return effects


def of_kind(effects: Effects, kind: str) -> list[dict[str, Any]]:
    """The effects of one kind, in order."""
    return [e for e in effects if e["kind"] == kind]
