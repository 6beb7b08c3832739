"""The people at a simulated table: players who throw real-looking dice, and a game master.

`VirtualTable` plays on a `SimulatedTray` through the same channels as people at a bar: it
throws dice into the tray (sometimes a die ends cocked, a hand lingers, a die bounces out),
moves kept dice to the keep zone, presses the stop button, turns the 4D square's dice and
the square itself (after the throw, the thrower sometimes turns it to present it to the
opponent, sometimes leaves it as it lies); when the tower pauses on a jam it refills the
hopper and resumes, and when a dispense was cut off it counts the tokens that fell (the
`TokenTray`) and confirms them.
It never tells the controller what the dice are: the controller has to read them.

`TokenTray` is what lies on the table: every token that fell from a hopper, for which dispense,
written to a file the moment it falls (so it outlives a crash of the tower, as real tokens do).
"""

from __future__ import annotations

import math
import os
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from firmware_host.controller.square import faces_by_position, presenting
from firmware_host.rules import legal_results
from firmware_host.rules.fourd import DEFAULT_NEAR, THROWER, next_near
from firmware_host.rules.hands import hand_name, rank_table
from firmware_host.rules.simulation import GOOD_ENOUGH
from firmware_host.simulation.scene import PlacedDie, TrayTruth
from firmware_host.simulation.tray import SimulatedTray


class TokenTray:
    """Tokens on the table, by dispense, kept in an append-only file that survives crashes."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = None if path is None else Path(path)
        self.current: int | None = None  # the dispense whose tokens are falling now
        self.counts: Counter[int] = Counter()
        if self.path is not None and self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                if line.strip().lstrip("-").isdigit():  # -1: a token no dispense asked for
                    self.counts[int(line)] += 1
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)  # beside a journal not made yet
        self._file = None if self.path is None else open(self.path, "a", encoding="utf-8")  # noqa: SIM115

    def drop(self) -> None:
        """A token has just fallen (called by the simulated hopper)."""
        dispense = -1 if self.current is None else self.current
        self.counts[dispense] += 1
        if self._file is not None:
            self._file.write(f"{dispense}\n")
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


@dataclass
class Habits:
    """How often the simulated players do what people do (each a probability per throw), and
    whether they stop on a hand worth keeping."""

    cocked: float = 0.06
    hand: float = 0.04
    outside: float = 0.02
    stop: float = 0.35  # stop after a throw when allowed (else keep the best and go on)
    # Stop on a hand worth keeping (421, 111, the fiches, brelans and suites) whenever
    # allowed, as people at a bar do; False: stop only at random, even holding 421.
    keep_good_hands: bool = True
    present: float = 0.5  # 4D: turn the thrown square to present it (else leave it as it lies)

    @classmethod
    def clean(cls) -> Habits:
        return cls(cocked=0.0, hand=0.0, outside=0.0)


@dataclass
class Throw:
    """What the table last did, to check what the tower accepted against it."""

    kind: str  # "throw", "turn", "square", "present"
    truth: TrayTruth
    clean: bool
    at_game: int
    attempts: int = 1
    faces: list[int] = field(default_factory=list)
    near: int | None = None  # 4D: the position the next player faces once this is taken
    before: tuple[list[int], int] | None = None  # 4D: the faces and near it was made from


class VirtualTable:
    """Players and a game master around a simulated tray."""

    def __init__(self, tray: SimulatedTray, *, seed: int = 0, habits: Habits | None = None,
                 press: Any = None, strategy: Any = None) -> None:
        self.tray = tray
        # How players choose their keeps and moves: a strategy of firmware_host.advisor
        # .strategies (simple, random, advisor); None keeps the table's own habits.
        self.strategy = strategy
        self.rng = random.Random(seed)
        self.habits = habits or Habits()
        self.press = press  # press(button_name): the tower's buttons
        self.last: Throw | None = None
        self._spots: list[PlacedDie] | None = None  # 4D: where each position's die lies
        self._before: list[PlacedDie] | None = None  # 4D: the spots before the last action

    # ------------------------------------------------------------------ 421

    def play_421(self, view: dict[str, Any], retry: bool) -> str:
        """Do the next thing for the player to move; returns a line for the log."""
        name = view["players"][view["to_move"]]["name"]
        opening = view.get("phase") == "opening"
        first = opening or view.get("throw_number", 0) == 0 or (
            view.get("dice_player") != view.get("to_move"))
        if retry and self.last is not None:
            return self._throw_again(name)
        if not first and self.strategy is not None:
            return self._play_strategy(name, view)
        if not first and self._wants_to_stop(view):
            self.press("stop")
            return f"{name} stops"
        if first:
            n = 1 if opening and view["knobs"].get("opener") == "lowest-die" else 3
            keep: list[int] = []
        else:
            keep = self._keep(view.get("dice") or [])
            n = len(view.get("dice") or []) - len(keep)
        return self._throw(name, n, keep)

    def _play_strategy(self, name: str, view: dict[str, Any]) -> str:
        """Keep or stop as the table's strategy says (from the view, as a player sees it)."""
        kept = self.strategy.keep_from_view(view, self.rng)
        if kept is None:
            self.press("stop")
            return f"{name} stops"
        hand = view.get("dice") or []
        return self._throw(name, len(hand) - len(kept), [hand[i] for i in kept])

    def _wants_to_stop(self, view: dict[str, Any]) -> bool:
        if view.get("throws_required", 1) > view.get("throw_number", 0):
            return False  # the exact rule: as many throws as the opener made
        allowed = view.get("throws_allowed") or 3
        if view.get("throw_number", 0) >= allowed:
            return False
        if self.habits.keep_good_hands and worth_keeping(view):
            # Nobody at a bar throws a 421 away: a watcher would take it for a misread.
            return True
        return self.rng.random() < self.habits.stop

    def _keep(self, hand: list[int]) -> list[int]:
        """Keep the 4 and the 2 and the 1 when there, else the pairs, else the best die."""
        counts = Counter(hand)
        keep = [v for v in (4, 2, 1) if v in hand]
        if len(keep) < 2:
            keep = [v for v, c in counts.items() if c >= 2 for _ in range(c)]
        if not keep:
            keep = [max(hand)]
        if len(keep) >= len(hand):
            keep = keep[: len(hand) - 1]
        return keep

    def _throw(self, name: str, n: int, keep: list[int]) -> str:
        faces = [self.rng.randint(1, 6) for _ in range(n)]
        cocked = n >= 2 and self.rng.random() < self.habits.cocked
        hand = self.rng.random() < self.habits.hand
        outside = 1 if n >= 1 and self.rng.random() < self.habits.outside else 0
        truth = self.tray.throw(faces, keep=keep, cocked=cocked, hand=hand, outside=outside)
        self.last = Throw("throw", truth, truth.clean, 0, faces=faces)
        extra = " (one cocked)" if cocked else " (a die out)" if outside else ""
        extra += " (a hand lingers)" if hand else ""
        kept = f", keeps {'-'.join(map(str, keep))}" if keep else ""
        return f"{name} throws {'-'.join(map(str, faces))}{kept}{extra}"

    def _throw_again(self, name: str) -> str:
        """The throw was refused: the same dice are thrown again, cleanly or not."""
        assert self.last is not None
        keep = self.last.truth.faces("keep")
        n = len(self.last.truth.dice) - len(keep)
        attempts = self.last.attempts + 1
        line = self._throw(name, n, keep)
        self.last.attempts = attempts
        return line + " again"

    # ------------------------------------------------------------------ 4D

    def play_4d(self, view: dict[str, Any], retry: bool) -> str:
        name = view["players"][view["to_move"]]["name"]
        if view.get("phase") == "start" or (retry and self.last and self.last.kind == "square"):
            n = 5 if view["knobs"].get("fifth_die") else 4
            faces = [self.rng.randint(1, 6) for _ in range(n)]
            self._spots = self.tray.square(faces)
            truth = self.tray.place(self._spots, frames=4)
            self.last = Throw("square", truth, True, 0, faces=faces, near=DEFAULT_NEAR)
            return f"{name} throws the square {'-'.join(map(str, faces))}"
        if retry and self.last is not None:
            # Refused: put the dice back as the engine has them, the square where it lay
            # (as the tower asks), then play again.
            self._spots = self._before or self._spots
            self.tray.place(self._arranged(view), frames=2)
        near = view["square"]["near"]["pos"]
        faces = faces_by_position(view)
        self._before = list(self._spots) if self._spots else None
        if view.get("phase") == "present" and self.rng.random() < self.habits.present:
            quarters = _readable_presentations(faces)
            if quarters:
                return self.present(view, self.rng.choice(quarters))
        moves = legal_results(faces, near, bool(view["knobs"].get("fifth_die")))
        if self.strategy is not None:
            new, rotate = self.strategy.move_from_view(view, self.rng)
            move = next(m for m, after in moves if after == new)
        else:
            move, new = moves[self.rng.randrange(len(moves))]
            rotate = "cw" if self.rng.random() < 0.7 else "ccw"
        dice = self._arranged(view, new, quarter=1 if rotate == "cw" else 3)
        truth = self.tray.place(dice, frames=3)
        self.last = Throw("turn", truth, True, 0, faces=new, near=next_near(near, rotate),
                          before=(faces, near))
        return f"{name} turns {move} to {'-'.join(map(str, new[:4]))}, square {rotate}"

    def present(self, view: dict[str, Any], quarter: int) -> str:
        """The thrower turns the whole square ``quarter`` quarters clockwise: the opponent, at
        the corner where the near die lay, now faces another die."""
        faces = faces_by_position(view)
        before = view["square"]["near"]["pos"]
        near = (before - quarter) % 4
        self._before = list(self._spots) if self._spots else None
        truth = self.tray.place(self._arranged(view, quarter=quarter), frames=3)
        self.last = Throw("present", truth, True, 0, faces=faces, near=near,
                          before=(faces, before))
        thrower = view["players"][THROWER]["name"]
        opponent = view["players"][view["to_move"]]["name"]
        return (f"{thrower} presents the square to {opponent}: position {near} "
                f"(a {faces[near]}) before them")

    def align(self, view: dict[str, Any]) -> None:
        """Take the engine's numbering of the square once it shows the game the table played.
        Where the picture cannot tell two dice apart (the same faces, the square turned one
        way or the other) the tower may number them otherwise: the same game, the same dice
        before the next player; the players go on from the dice, not from the numbers."""
        if self._spots is None or self.last is None or self.last.near is None:
            return
        shift = (self.last.near - view["square"]["near"]["pos"]) % 4
        self._spots = [self._spots[(p + shift) % 4] for p in range(4)] + self._spots[4:]

    def lay_square(self, view: dict[str, Any]) -> TrayTruth:
        """Put the 4D square's dice as the engine has them (after a restart); before the first
        move, turned so that the die presented to the opponent lies at their corner."""
        quarter = (DEFAULT_NEAR - view["square"]["near"]["pos"]) % 4 if presenting(view) else 0
        truth = self.tray.place(self._arranged(view, quarter=quarter), frames=2)
        self.last = None
        return truth

    def _arranged(self, view: dict[str, Any], faces: list[int] | None = None,
                  quarter: int = 0) -> list[PlacedDie]:
        """The tray's dice showing ``faces`` by position, the square turned ``quarter``: the
        die of position p then lies on the spot of position p + quarter."""
        spots = self._spots or self.tray.square([1] * len(faces or [0] * 4))
        faces = faces or faces_by_position(view)
        dice = []
        side = self.tray.layout.side
        for position, face in enumerate(faces):
            spot = spots[(position + quarter) % 4] if position < 4 else spots[4]
            centre = spot.center
            if quarter:
                # A hand turning the square sets every die down off its spot: a few
                # millimetres (here 15 to 35 % of a die's side), in any direction.
                reach = self.rng.uniform(0.15, 0.35) * side
                angle = self.rng.uniform(0.0, 2 * math.pi)
                centre = (centre[0] + reach * math.cos(angle), centre[1] + reach * math.sin(angle))
            dice.append(PlacedDie(int(face), centre, spot.angle, "roll"))
        self._spots = [spots[(p + quarter) % 4] for p in range(4)] + list(spots[4:])
        return dice


def worth_keeping(view: dict[str, Any]) -> bool:
    """Whether the 421 hand in ``view`` is one the simple players stop on (rank under
    `GOOD_ENOUGH` in the game's ranking: 421, 111, the fiches, brelans and suites)."""
    hand = view.get("dice") or []
    if len(hand) != 3:
        return False
    return rank_table(view["knobs"]["ranking"])[hand_name(hand)] < GOOD_ENOUGH


def _readable_presentations(faces: list[int]) -> list[int]:
    """Quarter turns of the square whose picture no other turn (nor none) shows: those the
    camera can tell. Repeated faces can make two turns look alike; those presentations give
    the opponent the same dice anyway, and the table keeps to what can be checked."""
    pictures = [[faces[(s - q) % 4] for s in range(4)] for q in range(4)]
    return [q for q in (1, 2, 3)
            if all(pictures[q] != pictures[other] for other in range(4) if other != q)]
