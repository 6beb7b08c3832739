"""Following the 4D square in the tray: which die is which position, and how the square turned.

The engine numbers the square's dice 0..3 clockwise seen from above (the fifth die is 4) and
needs each move as the faces in that order. The camera sees dice at places. `SquareTracker`
remembers the spot of each position; each still reading is matched spot by spot (the dice
nearest each spot), so the value now at each spot is known.

A square turned a quarter looks like the same square: only the faces tell a turn. So each
reading is tried as the square left as it was, turned a quarter clockwise on the picture (seen
from above: the engine's ``"cw"``), or a quarter the other way, and:

- the same faces at the same spots: nothing happened;
- a legal move (`check_move`) with the square as it lay, every die it did not turn lying
  exactly where it lay (within `IN_PLACE`): that move, the square's turn still to come. This
  comes first because repeated faces can make such a move look like the square turned
  (1-1-1-2 -> 2-1-1-1) or like another move with the square turned; a turn sets every die
  down elsewhere, and one die landing where another lay proves nothing, so *all* the dice the
  move would leave alone must be in place;
- the same faces, turned, after a move: the rotation after it. When a quarter either way fits
  (1-2-1-2) the next player faces the same dice either way: the rotation stays as the engine
  has it (the default, the stop button's or the scoreboard's) and the spots follow the dice
  that way;
- other faces: a move with the square turned, if a reading is legal. Both ways legal number
  the dice otherwise but make the same game (the same dice before the next player, the same
  one locked, the same score): the engine's default way is taken. Only as the square lay is
  legal: that move, whatever the dice did. None legal: refused with the engine's reason.

The first throw numbers the positions clockwise on the picture from the die nearest the
bottom-left (the fifth die is the one farthest from the others). Before the first move, dice
rearranged into a square with the same faces re-number them (a correction of the throw); so
does the thrown square turned when the thrower moves first (no move to turn it after, nobody
to present it to).

Between the throw and the first move the thrower may turn the whole square to present it to
the opponent, who sits at the corner of position 0 (the engine's default). The same faces,
turned one, two or three quarters since the throw, are that presentation (a ``present``
naming the position now at the opponent's corner); turned again, a newer presentation. When
the faces repeat, two turns can fit the picture (a quarter either way of 1-2-1-2): both
present the opponent the very same dice, so the clockwise reading is taken; a presentation
the camera cannot see at all (the half turn of 1-2-1-2, any turn of four equal faces) changes
nothing the opponent faces, and the game master can still enter one on the scoreboard.
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
from firmware_host.rules.fourd import DEFAULT_NEAR, DEFAULT_ROTATION, ROTATIONS
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
        # Quarter turns (clockwise on the picture) since the throw: the die of position p
        # lies on the throw's spot of position p + turned. Before the first move it tells
        # which die faces the opponent's corner, whoever (camera or game master) said so.
        self.turned = 0

    def reset(self) -> None:
        self.places = None
        self.turned = 0

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
                    self.turned = quarter
                    return Call()
            return Call.refuse("square_lost")
        at_spot, cost = self._at_spots(points)
        if cost / len(points) > LOST * _square_side(self.places):
            if Counter(values) == Counter(faces) and _throw_is_last(view):
                return Call(correction={"faces": self._number(points, values)})
            return Call.refuse("square_lost")
        seen = [values[i] for i in at_spot]
        if seen == faces:
            return Call()
        near = int((view.get("square") or {}).get("near", {}).get("pos", 0))
        before_first_move = presenting(view)
        # Repeated faces can make a move look like the square turned (1-1-1-2 -> 2-1-1-1),
        # or a move with the square turned look like another one without. The dice tell: a
        # move leaves every die it did not turn exactly where it lay, while turning the square
        # sets every die down elsewhere (one may land where another lay, by chance; all those
        # such a move would leave alone, hardly ever).
        still = self._still(points, at_spot)
        as_it_lay = check_move(faces, seen, near, fifth_die) is None and all(
            p in still for p in range(4) if seen[p] == faces[p])
        if before_first_move and not as_it_lay:
            presented = self._presentation(seen, faces, points, at_spot, view)
            if presented is not None:
                return presented
        if as_it_lay:
            return Call(event={"type": "turn", "faces": list(seen)})
        readings = {q: _turned(seen, q) for q in (0, 1, 3)}
        if not view.get("last_move") and _throw_is_last(view) and any(
                _turned(seen, q) == faces for q in (1, 2, 3)):
            # The thrown square turned, with no move to turn it after and nobody to present
            # it to (the thrower moves first): the throw lies otherwise, numbered again from
            # the bottom-left as when the dice are set down elsewhere.
            return Call(correction={"faces": self._number(points, values)})
        turns = [q for q in (1, 3) if readings[q] == faces] if view.get("last_move") else []
        if turns:
            if len(turns) == 1:
                return Call(rotation=ROTATION_OF[turns[0]])
            # A quarter either way shows these faces (1-2-1-2): either way the next player
            # faces the same dice, so the rotation stays as the engine has it (the default,
            # the stop button's or the scoreboard's), and the spots follow the dice that way.
            return Call(rotation=_last_rotation(view))
        # Turned readings first: the dice say the square did not lie as it was. When both ways
        # are legal the engine's default comes first; the other would number the dice
        # otherwise but put the very same dice before the next player and lock the same one
        # (the square turned a quarter one way, then a half turn: the picture does not say).
        order = [*sorted((1, 3), key=lambda q: ROTATION_OF[q] != DEFAULT_ROTATION), 0]
        legal = [q for q in order if check_move(faces, readings[q], near, fifth_die) is None]
        if not legal:
            reason = check_move(faces, readings[0], near, fifth_die) or ""
            return Call.refuse("illegal_move", reason=reason)
        quarter = legal[0]
        event: JSONDict = {"type": "turn", "faces": readings[quarter]}
        if quarter:
            event["rotate"] = ROTATION_OF[quarter]
        return Call(event=event)

    def _presentation(self, seen: Sequence[int], faces: Sequence[int],
                      points: Sequence[Point], at_spot: Sequence[int],
                      view: JSONDict) -> Call | None:
        """The square turned whole before the first move: the position now at the opponent's
        corner, as a ``present`` (None when no turn of the square shows these faces)."""
        fits = [q for q in (1, 3, 2) if _turned(seen, q) == faces]
        if not fits:
            return None
        nears = [(DEFAULT_NEAR - self.turned - q) % 4 for q in fits]
        near = int((view.get("square") or {}).get("near", {}).get("pos", DEFAULT_NEAR))
        if near in nears:
            # Already so in the engine (the game master entered it): follow the dice only.
            quarter = fits[nears.index(near)]
            spots = [points[i] for i in at_spot]
            self.places = [spots[(p + quarter) % 4] for p in range(4)] + spots[4:]
            self.turned = (self.turned + quarter) % 4
            return Call()
        return Call(event={"type": "present", "near": nears[0]})

    def _still(self, points: Sequence[Point], at_spot: Sequence[int]) -> set[int]:
        """The positions whose spot holds a die exactly where the die lay at the last reading
        (within `IN_PLACE` of the square's side: the reading's own jitter, far less than a
        hand's)."""
        assert self.places is not None
        reach = IN_PLACE * _square_side(self.places)
        return {p for p in range(4) if math.dist(self.places[p], points[at_spot[p]]) <= reach}

    def renumber(self, old: str, new: str) -> None:
        """The last move's rotation became ``new`` instead of ``old`` (the stop button, the
        scoreboard), the dice untouched: number their spots as the engine now does."""
        if self.places is None:
            return
        shift = (QUARTERS[new] - QUARTERS[old]) % 4
        # Turned q quarters, position p lies on the spot of p + q (see `accept`).
        square = self.places[:4]
        self.places = [square[(p + shift) % 4] for p in range(4)] + self.places[4:]
        self.turned = (self.turned + shift) % 4

    def accept_call(self, dice: Sequence[Die], call: Call) -> None:
        """The engine took ``call`` (a throw, move, correction or rotation) for ``dice``."""
        event = call.event or call.correction
        if event is not None and event.get("type") == "present":
            quarter = (DEFAULT_NEAR - event["near"] - self.turned) % 4
        else:
            quarter = QUARTERS.get((call.event or {}).get("rotate") or call.rotation or "", 0)
        self.accept(dice, event, quarter)
        if call.correction is not None:
            self.turned = 0  # the throw renumbered where the dice lie now

    def accept(self, dice: Sequence[Die], event: JSONDict | None = None,
               quarter: int = 0) -> None:
        """The engine took the reading (throw, move, rotation): remember the spots now."""
        points = [d.center for d in dice]
        if self.places is None or len(self.places) != len(points) or (
                event is not None and event.get("type") == "throw"):
            self.places = [points[i] for i in self._order(points)]
            self.turned = 0
            return
        at_spot, _ = self._at_spots(points)
        spots = [points[i] for i in at_spot]
        # Turned q quarters: the die of position p now lies on the spot of position p + q.
        self.places = [spots[(p + quarter) % 4] for p in range(4)] + spots[4:]
        self.turned = (self.turned + quarter) % 4

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


def _last_rotation(view: JSONDict) -> str:
    """How the engine has the square turned after the last move."""
    return str((view.get("last_move") or {}).get("rotate") or DEFAULT_ROTATION)


def presenting(view: JSONDict) -> bool:
    """Whether the square may still be presented to the opponent: after the throw, before the
    first move, when the opponent moves first (the engine's ``first_move`` knob)."""
    if (view.get("knobs") or {}).get("first_move") != "opponent":
        return False
    return view.get("phase") == "present" or (
        view.get("phase") == "play" and view.get("moves") == 0)


def _throw_is_last(view: JSONDict) -> bool:
    """Whether the engine's last input is the throw (so a correction may renumber it)."""
    if view.get("moves", 1) != 0:
        return False
    return view.get("phase") == "present" or not presenting(view)


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


def facing(faces: Sequence[int], near: int) -> list[int]:
    """The square as the player facing position ``near`` sees it: the near die, the left, the
    far (locked) and the right, then the fifth die. Two numberings of the same dice lying the
    same way give the same list: what the game is, whatever the numbers."""
    return [faces[(near + k) % 4] for k in range(4)] + list(faces[4:])


def _square_side(places: Sequence[Point]) -> float:
    square = places[:4]
    sides = [math.dist(square[i], square[(i + 1) % 4]) for i in range(len(square))]
    return max(1.0, float(np.median(sides)))
