"""How well readings of calibration throws agree with what the installer knows: the count.

At the bar nobody labels dice, but the number thrown is known (`--expect N`). A reading that
gives fewer dice a value than were thrown missed some; one that gives more read something
that is no die (a certain error); unsure dice beyond the count are strays. Two readings of
the same die that disagree in value (the profile under test and the plain reader) mean one
of them is wrong: without labels, the profile is charged for it. The lower the cost, the
better; confidence breaks ties ("be sure").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from vision import Die

MISS_COST = 1.0  # a thrown die not given a value
OVER_COST = 3.0  # a value beyond the dice thrown: surely wrong, and a wrong value costs tokens
STRAY_COST = 0.5  # an unsure "die" beyond the dice thrown
# A thrown die not even found unsure: an unsure die asks for a look or a re-throw, a die not
# seen at all leaves the throw short, so dropping an unsure die that was a die costs a little.
UNSEEN_COST = 0.25
CONTRADICTION_COST = 2.0  # a die read with another value than the plain reader gives it
SAME_PLACE = 0.5  # x die side: two readings this close are of one die
# Confidence that breaks a tie of cost only when it differs this much (the face network's
# confidence moves by a few thousandths between sizes that read the same).
SURER = 0.01


@dataclass(frozen=True)
class Agreement:
    """Totals over a set of throws: the cost, and what it is made of."""

    cost: float
    expected: int
    read: int
    missing: int
    over: int
    stray: int
    contradictions: int
    confidence: float  # mean confidence of the dice read with a value (0 when none)
    costs: tuple[float, ...] = ()  # per throw

    def nowhere_worse(self, other: Agreement) -> bool:
        """Whether no throw costs more than with ``other``: a profile that helps some throws
        and hurts others fits only some of them (a die size that fits some photos)."""
        return all(a <= b + 1e-9 for a, b in zip(self.costs, other.costs, strict=True))

    @property
    def share_read(self) -> float:
        """Dice given a value, of those thrown (at most 1)."""
        return min(self.read, self.expected) / self.expected if self.expected else 0.0

    def better_than(self, other: Agreement) -> bool:
        """Strictly better: lower cost, or the same cost and clearly surer (by SURER)."""
        if not math.isclose(self.cost, other.cost):
            return self.cost < other.cost
        return self.confidence > other.confidence + SURER


def die_side(die: Die) -> float:
    """A die's side in image pixels: the mean edge of its outline."""
    c = die.corners
    return sum(math.dist(c[k], c[(k + 1) % 4]) for k in range(4)) / 4.0


def contradictions(dice: Sequence[Die], plain: Sequence[Die]) -> int:
    """Dice that both readings give a value to, at one place, with different values."""
    count = 0
    for die in dice:
        if die.value is None:
            continue
        reach = SAME_PLACE * die_side(die)
        for other in plain:
            if other.value is not None and math.dist(die.center, other.center) <= reach:
                count += other.value != die.value
                break
    return count


def agreement(
    readings: Sequence[Sequence[Die]], expects: Sequence[int],
    plain: Sequence[Sequence[Die]] | None = None,
) -> Agreement:
    """The agreement of ``readings`` (one list of dice per throw) with the dice thrown
    (``expects``, one count per throw); ``plain``: the plain reader's readings of the same
    throws, to count contradictions against (None: not counted)."""
    missing = over = stray = read_total = contra = 0
    sure: list[float] = []
    costs: list[float] = []
    for k, (dice, expected) in enumerate(zip(readings, expects, strict=True)):
        read = [d for d in dice if d.value is not None]
        unsure = len(dice) - len(read)
        read_total += len(read)
        m = max(0, expected - len(read))
        o = max(0, len(read) - expected)
        s = max(0, len(read) + unsure - expected) - o
        c = contradictions(dice, plain[k]) if plain is not None else 0
        unseen = max(0, expected - len(dice))
        missing, over, stray, contra = missing + m, over + o, stray + s, contra + c
        costs.append(MISS_COST * m + OVER_COST * o + STRAY_COST * s + CONTRADICTION_COST * c
                     + UNSEEN_COST * unseen)
        sure.extend(d.confidence for d in read)
    return Agreement(sum(costs), int(sum(expects)), read_total, missing, over, stray, contra,
                     sum(sure) / len(sure) if sure else 0.0, tuple(costs))
