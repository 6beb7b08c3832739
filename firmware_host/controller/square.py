"""Following the 4D square in the tray: which die is which position, and how the square turned.

The engine numbers the square's dice 0..3 clockwise seen from above (the fifth die is 4) and
needs each move as the faces in that order. The camera sees dice at places. `SquareTracker`
remembers the spot of each position; each still reading is matched spot by spot (the dice
nearest each spot), so the value now at each spot is known.

A square turned a quarter looks like the same square: only the faces tell a turn. So each
reading is tried as the square left as it was, turned a quarter clockwise on the picture (seen
from above: the engine's ``"cw"``), or a quarter the other way, and:

- the same faces at the same spots: nothing happened;
- the same faces, turned: the rotation after the last move, when only one turn fits (repeated
  faces can fit both; then the rotation stays as given by the button or the scoreboard);
- other faces: a move, if a way of reading it is legal for the engine (`check_move`), with
  the turn it implies; when it is legal both as left and as turned, the dice tell which: a
  move leaves the dice it did not touch exactly in place, a turn sets every die down
  elsewhere; none legal: refused with the engine's reason.

The first throw numbers the positions clockwise on the picture from the die nearest the
bottom-left (the fifth die is the one farthest from the others). Before the first move, dice
rearranged into a square with the same faces re-number them (a correction of the throw).
After a restart the positions are found again from the engine's faces, the square turned any
number of quarters since. An empty tray is nothing to do; a finished game refuses.

Pure: readings and the engine's view in, `Call`s out.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from firmware_host.controller.referee import Call, JSONDict, unsure_refusal
from firmware_host.rules import check_move
from firmware_host.rules.fourd import ROTATIONS
from vision import Die

Point = tuple[float, float]
IN_PLACE = 0.05  # displacement (in square sides) of a die nobody touched: reading jitter
# Quarter turns clockwise on the picture for each of the engine's rotations, and back.
QUARTERS = {name: step % 4 for name, step in ROTATIONS.items()}
ROTATION_OF = {quarter: name for name, quarter in QUARTERS.items()}
LOST = 0.6  # mean displacement (in square sides) past which the dice are not the same square


def clockwise_order(points: Sequence[Point]) -> list[int]:
    """Indices of ``points`` clockwise on the picture (y down), from the bottom-left one."""
    cx = sum(p[0] for p in points) / len(points)
    cy = sum(p[1] for p in points) / len(points)
    # atan2 with y pointing down grows clockwise on screen. Counted from straight down (90
    # degrees), the bottom-left die (about 135) comes first with 45 degrees to spare either
    # way: counted from 135 itself, a die read a pixel off would come first or last by chance.
    angles = [(math.degrees(math.atan2(p[1] - cy, p[0] - cx)) - 90.0) % 360.0 for p in points]
    return sorted(range(len(points)), key=lambda i: angles[i])


def split_fifth(points: Sequence[Point]) -> tuple[list[int], int | None]:
    """(the four square dice, the fifth die or None) among 4 or 5 points."""
    if len(points) <= 4:
        return list(range(len(points))), None
    cx = float(np.median([p[0] for p in points]))
    cy = float(np.median([p[1] for p in points]))
    fifth = max(range(len(points)), key=lambda i: math.dist(points[i], (cx, cy)))
    return [i for i in range(len(points)) if i != fifth], fifth


class SquareTracker:
    """Where the positions of the 4D square lie on the picture, between readings."""

    def __init__(self) -> None:
        self.places: list[Point] | None = None  # positions 0..3 (and 4: the fifth die)

    def reset(self) -> None:
        self.places = None

    def judge(self, dice: Sequence[Die], view: JSONDict) -> Call:
        """The input (throw, turn, correction or rotation) these dice make, or a refusal."""
        if view.get("phase") == "over" or view.get("to_move") is None:
            return Call.refuse("game_over")
        if not dice:
            return Call()  # an empty tray: nothing thrown yet, or the dice put away
        unsure = unsure_refusal(dice)
        if unsure is not None:
            return unsure
        fifth_die = bool(view.get("knobs", {}).get("fifth_die"))
        expected = 5 if fifth_die else 4
        if len(dice) != expected:
            return Call.refuse("dice_count", expected=expected, seen=len(dice))
        points = [d.center for d in dice]
        values = [int(d.value) for d in dice if d.value is not None]
        if view.get("phase") == "start":
            return Call(event={"type": "throw", "faces": self._number(points, values)})
        faces = faces_by_position(view)
        if self.places is None or len(self.places) != len(points):
            # Resumed after a restart: the picture's order, turned as the square may have been
            # since the throw, if it shows the engine's faces.
            order = self._order(points)
            for quarter in range(4):
                turned = [order[(p + quarter) % 4] for p in range(4)] + order[4:]
                if [values[i] for i in turned] == faces:
                    self.places = [points[i] for i in turned]
                    return Call()
            return Call.refuse("square_lost")
        at_spot, cost = self._at_spots(points)
        if cost / len(points) > LOST * _square_side(self.places):
            if Counter(values) == Counter(faces) and view.get("moves", 1) == 0:
                return Call(correction={"faces": self._number(points, values)})
            return Call.refuse("square_lost")
        seen = [values[i] for i in at_spot]
        if seen == faces:
            return Call()
        readings = {q: _turned(seen, q) for q in (0, 1, 3)}
        turns = [q for q in (1, 3) if readings[q] == faces]
        if turns:
            rotation = ROTATION_OF[turns[0]] if len(turns) == 1 else None
            return Call(rotation=rotation)
        near = int((view.get("square") or {}).get("near", {}).get("pos", 0))
        legal = [q for q in (0, 1, 3) if check_move(faces, readings[q], near, fifth_die) is None]
        if not legal:
            reason = check_move(faces, readings[0], near, fifth_die) or ""
            return Call.refuse("illegal_move", reason=reason)
        quarter = legal[0]
        if len(legal) > 1 and 0 in legal:
            # The faces fit a move on the square as it lay and a move with the square turned.
            # The dice tell: a turn lifts and sets down every die, so none lies where it lay;
            # a move leaves the dice it did not touch exactly in place.
            quarter = 0 if self._left_in_place(points, at_spot) >= 2 else legal[1]
        event: JSONDict = {"type": "turn", "faces": readings[quarter]}
        if quarter:
            event["rotate"] = ROTATION_OF[quarter]
        return Call(event=event)

    def _left_in_place(self, points: Sequence[Point], at_spot: Sequence[int]) -> int:
        """How many square dice lie where they lay at the last reading (within `IN_PLACE`
        of the square's side: the reading's own jitter, far less than a hand's)."""
        assert self.places is not None
        reach = IN_PLACE * _square_side(self.places)
        return sum(math.dist(self.places[p], points[at_spot[p]]) <= reach for p in range(4))

    def accept_call(self, dice: Sequence[Die], call: Call) -> None:
        """The engine took ``call`` (a throw, move, correction or rotation) for ``dice``."""
        event = call.event or call.correction
        self.accept(dice, event, QUARTERS.get((call.event or {}).get("rotate")
                                              or call.rotation or "", 0))

    def accept(self, dice: Sequence[Die], event: JSONDict | None = None,
               quarter: int = 0) -> None:
        """The engine took the reading (throw, move, rotation): remember the spots now."""
        points = [d.center for d in dice]
        if self.places is None or len(self.places) != len(points) or (
                event is not None and event.get("type") == "throw"):
            self.places = [points[i] for i in self._order(points)]
            return
        at_spot, _ = self._at_spots(points)
        spots = [points[i] for i in at_spot]
        # Turned q quarters: the die of position p now lies on the spot of position p + q.
        self.places = [spots[(p + quarter) % 4] for p in range(4)] + spots[4:]

    def _number(self, points: Sequence[Point], values: Sequence[int]) -> list[int]:
        order = self._order(points)
        self.places = [points[i] for i in order]
        return [values[i] for i in order]

    @staticmethod
    def _order(points: Sequence[Point]) -> list[int]:
        square, fifth = split_fifth(points)
        order = [square[i] for i in clockwise_order([points[i] for i in square])]
        return order + ([fifth] if fifth is not None else [])

    def _at_spots(self, points: Sequence[Point]) -> tuple[list[int], float]:
        """(index of the die nearest each spot, total distance), as one assignment."""
        assert self.places is not None
        best: tuple[list[int], float] = (list(range(len(points))), math.inf)
        for perm in itertools.permutations(range(len(points))):
            cost = sum(math.dist(self.places[p], points[perm[p]]) for p in range(len(points)))
            if cost < best[1]:
                best = (list(perm), cost)
        return best


def _turned(seen: Sequence[int], quarter: int) -> list[int]:
    """The faces by position if the square was turned ``quarter`` quarters clockwise: the die of
    position p then lies on the spot of position p + quarter."""
    square = [seen[(p + quarter) % 4] for p in range(4)]
    return square + list(seen[4:])


def faces_by_position(view: JSONDict) -> list[int]:
    """The engine's faces by position (0..3, then the fifth die)."""
    square = view.get("square") or {}
    faces = [0, 0, 0, 0]
    for role in ("near", "left", "right", "far"):
        spot = square.get(role)
        if spot:
            faces[int(spot["pos"])] = int(spot["face"])
    if view.get("fifth") is not None:
        faces.append(int(view["fifth"]))
    return faces


def _square_side(places: Sequence[Point]) -> float:
    square = places[:4]
    sides = [math.dist(square[i], square[(i + 1) % 4]) for i in range(len(square))]
    return max(1.0, float(np.median(sides)))
