"""The best 4D move: every legal move and both rotations, looking at the opponent's best reply.

One ply and the reply: for each move the player may make (``legal_results``) and each way to
turn the square after it (``ROTATIONS``), the opponent's reply is the legal move from the new
position scoring most (``best_combination``). Moves are ordered by: winning now, then not
letting the reply win, then points scored minus the reply's points, then points scored, then
the default rotation. Legality and scores are the engine's own functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from firmware_host.advisor.odds421 import AdvisorError
from firmware_host.rules.errors import RuleError
from firmware_host.rules.fourd import (
    DEFAULT_ROTATION,
    ROTATIONS,
    SQUARE,
    best_combination,
    legal_results,
    next_near,
)
from firmware_host.rules.knobs import resolve_knobs


@lru_cache(maxsize=8192)
def _score(faces: tuple[int, ...], pairs_score: bool) -> tuple[str | None, int]:
    # The score depends on the faces showing, not on where they are: one entry per multiset.
    return best_combination(list(faces), pairs_score)


def score(faces: Sequence[int], pairs_score: bool) -> tuple[str | None, int]:
    """``best_combination`` of ``faces``, remembered by the multiset of faces."""
    return _score(tuple(sorted(faces)), pairs_score)


def _reply(faces: list[int], near: int, fifth: bool, pairs: bool) -> dict[str, Any]:
    """The opponent's reply scoring most (the first in the engine's order on equal points)."""
    best: tuple[int, str, list[int], str | None] | None = None
    for move, new in legal_results(faces, near, fifth):
        name, points = score(new, pairs)
        if best is None or points > best[0]:
            best = (points, move, new, name)
    assert best is not None  # a position always has legal moves (44 or more)
    points, move, new, name = best
    return {"move": move, "faces": new, "combination": name, "points": points}


def _checked(faces: Sequence[Any], near: Any, scores: Sequence[Any], knobs: dict[str, Any]
             ) -> tuple[list[int], int, list[int]]:
    size = SQUARE + (1 if knobs["fifth_die"] else 0)
    clean: list[int] = []
    for face in faces:
        if type(face) is not int or not 1 <= face <= 6:
            raise AdvisorError(f"a die shows 1 to 6, not {face!r}")
        clean.append(face)
    if len(clean) != size:
        extra = " (the fifth die last)" if size > SQUARE else ""
        raise AdvisorError(f"{len(clean)} faces given; this game has {size} dice{extra}")
    if type(near) is not int or not 0 <= near < SQUARE:
        raise AdvisorError(f"the near die is a position 0 to {SQUARE - 1}, not {near!r}")
    if len(scores) != 2 or any(type(s) is not int or s < 0 for s in scores):
        raise AdvisorError("scores are two whole numbers from 0 (mover, opponent), not "
                           f"{list(scores)}")
    target = knobs["target"]
    if max(scores) >= target:
        raise AdvisorError(f"a score of {max(scores)} has reached the target {target}: "
                           "the game is over")
    return clean, near, list(scores)


def advise_4d(
    faces: Sequence[int],
    *,
    near: int = 0,
    scores: Sequence[int] = (0, 0),
    knobs: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every (move, rotation) of the player to move, best first, as a plain dict.

    ``faces``: top faces of positions 0 to 3 (then the fifth die); five faces turn the
    ``fifth_die`` knob on unless it is given. ``scores``: (mover, opponent). Raises
    AdvisorError on bad input.
    """
    overrides = dict(knobs or {})
    if "fifth_die" not in overrides and len(faces) == SQUARE + 1:
        overrides["fifth_die"] = True
    try:
        resolved = resolve_knobs("4d", overrides)
    except RuleError as err:
        raise AdvisorError(str(err)) from None
    faces, near, scores = _checked(faces, near, scores, resolved)
    pairs, fifth, target = resolved["pairs_score"], resolved["fifth_die"], resolved["target"]
    options: list[dict[str, Any]] = []
    for move, new in legal_results(faces, near, fifth):
        name, points = score(new, pairs)
        wins = scores[0] + points >= target
        # A winning move ends the game: the square is not turned for anyone.
        for rotate in [DEFAULT_ROTATION] if wins else list(ROTATIONS):
            reply = None if wins else _reply(new, next_near(near, rotate), fifth, pairs)
            if reply is not None:
                reply["wins"] = scores[1] + reply["points"] >= target
            options.append({
                "move": move,
                "faces": new,
                "rotate": rotate,
                "combination": name,
                "points": points,
                "wins": wins,
                "reply": reply,
                "net": points - (reply["points"] if reply else 0),
            })
    options.sort(key=lambda o: (
        not o["wins"],
        bool(o["reply"] and o["reply"]["wins"]),
        -o["net"],
        -o["points"],
        o["rotate"] != DEFAULT_ROTATION,
    ))
    return {
        "game": "4d",
        "faces": faces,
        "near": near,
        "scores": scores,
        "target": target,
        "pairs_score": pairs,
        "fifth_die": fifth,
        "moves": options,
        "best": options[0],
    }
