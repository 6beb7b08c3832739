"""The dice's faces, learnt and checked: the part of steps 3 and 4 that needs the dice's values.

With values (a labels file, the installer at the terminal, the simulated tray's truth), step 3
tunes the face network to these dice (`calibration.adapt`), and step 4 reads every throw with
values with and without it, each throw with a network tuned on other throws (`cross_judge`):
the network tuned on every throw is kept only where they read better (more dice right, a
wrong value weighing as three, and none more wrong); the run says so.

The installer gives values at the terminal (`ask_values`): the reading is shown die by die,
left to right, and Enter confirms it, or the values are typed in that order (``-`` for what
is no die, ``?`` for a die not to learn from). The game master's page asks the same question
(`calibration.web.AskingLabeller`), where a die the reading missed may also be added where it
lies on the throw's picture; both answers become values through `given_values`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from calibration import adapt
from calibration.agreement import MISS_COST, OVER_COST, die_side
from calibration.labels import Labelled
from vision import Die, Profile, Readers, read_dice

MATCH = 0.6  # x die side: a read die this near a labelled one is that die
# A wrong value costs as much as this many dice left unread, as in the count's agreement
# (`calibration.agreement`: a value beyond the dice thrown 3, a die missed 1). A few throws
# hold a few dozen dice: asking that not one more be wrong would refuse on one die's chance.
WRONG_COST = OVER_COST / MISS_COST
# The check's folds: each tunes the face network once (about 13 s on one core), so a
# calibration tunes it this many times to judge it, and once more on every throw.
FOLDS = 2
ANSWERS = (0, 1, 2, 3, 4, 5, 6)  # a die's value given: 1-6, or 0 for one not to learn from
# A die the reading missed, added by the installer on the throw's picture: its centre (image
# pixels) and its value (one of ANSWERS).
Added = tuple[float, float, int]


@dataclass(frozen=True)
class Tally:
    """Readings against the values given: dice right, wrong, unsure, not found, and dice
    given a value where none was labelled."""

    dice: int = 0
    correct: int = 0
    wrong: int = 0
    unsure: int = 0
    missed: int = 0
    extra: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(*(a + b for a, b in zip(self.row(), other.row(), strict=True)))

    def row(self) -> tuple[int, ...]:
        return (self.dice, self.correct, self.wrong, self.unsure, self.missed, self.extra)

    @property
    def score(self) -> float:
        """Dice right, less WRONG_COST for each value wrong or given where no die was."""
        return self.correct - WRONG_COST * (self.wrong + self.extra)

    def __str__(self) -> str:
        return (f"{self.correct} of {self.dice} right, {self.wrong + self.extra} wrong, "
                f"{self.unsure} unsure, {self.missed} not found")


def tally(dice: Sequence[Die], labelled: Sequence[Labelled]) -> Tally:
    """One throw's reading against its values: each placed labelled die matched to the
    nearest read die within MATCH of its side, once; a die read on a die of no value given
    is neither right nor extra."""
    placed = [d for d in labelled if d.center is not None and d.value]
    left = list(dice)
    counts = dict.fromkeys(("correct", "wrong", "unsure", "missed"), 0)
    for die in placed:
        near = [d for d in left
                if math.dist(d.center, die.center) <= MATCH * max(die_side(d), die.side or 0)]
        if not near:
            counts["missed"] += 1
            continue
        match = min(near, key=lambda d: math.dist(d.center, die.center))
        left.remove(match)
        key = ("unsure" if match.value is None
               else "correct" if match.value == die.value else "wrong")
        counts[key] += 1
    # A die whose value was not given (the installer's "?") is no extra when read.
    unknown = [d for d in labelled if d.center is not None and not d.value]
    extra = sum(d.value is not None and not any(
        math.dist(d.center, u.center) <= MATCH * max(die_side(d), u.side or 0)
        for u in unknown) for d in left)
    return Tally(len(placed), extra=extra, **counts)


@dataclass(frozen=True)
class Judgement:
    """The check throws read with the adaptation and without it."""

    with_it: Tally
    without: Tally

    @property
    def kept(self) -> bool:
        """Only what helps is kept: more dice right, a wrong value (or one where no die is)
        weighing as WRONG_COST dice left unread, and not one value more wrong."""
        worse = self.with_it.wrong + self.with_it.extra > self.without.wrong + self.without.extra
        return self.with_it.score > self.without.score and not worse


def cross_judge(images: Sequence[np.ndarray], labelled: Sequence[Sequence[Labelled]],
                parts: Sequence[adapt.Patches], profile: Profile, readers: Readers,
                tick: Callable[[int], None] = lambda n: None) -> Judgement:
    """Each labelled throw read with ``profile`` and with the faces learnt from the other
    throws' patches (``parts``, one per throw): the throws dealt into FOLDS groups (fewer
    when fewer throws), each group judging faces learnt from the others, so every throw
    judges faces not learnt from it and every throw counts (a few check throws alone hold a
    dozen dice: too few to tell)."""
    valued = [k for k, labels in enumerate(labelled) if any(d.value and d.center for d in labels)]
    with_it, without = Tally(), Tally()
    for fold in range(min(FOLDS, len(valued))):
        judged = valued[fold::FOLDS]
        learnt = adapt.learn(adapt.merged([p for j, p in enumerate(parts) if j not in judged]),
                             readers.base_face)
        if learnt.adaptation is not None:
            one = judge([images[k] for k in judged], [labelled[k] for k in judged],
                        replace(profile, adaptation=learnt.adaptation), readers)
            with_it, without = with_it + one.with_it, without + one.without
        tick(len(judged))
    return Judgement(with_it, without)


def judge(images: Sequence[np.ndarray], labelled: Sequence[Sequence[Labelled]],
          profile: Profile, readers: Readers) -> Judgement:
    """``profile`` (holding an adaptation) against itself without it, on labelled throws,
    read by ``readers``."""
    plain = replace(profile, adaptation=None)
    tray = profile.background_image()
    if tray is not None and profile.background is None:
        plain.use_empty_tray(tray)
    with_it, without = Tally(), Tally()
    for image, labels in zip(images, labelled, strict=True):
        with_it += tally(read_dice(image, profile, readers=readers), labels)
        without += tally(read_dice(image, plain, readers=readers), labels)
    return Judgement(with_it, without)


def left_to_right(dice: Sequence[Die]) -> list[Die]:
    """A throw's dice in the order they are shown to the installer: left to right."""
    return sorted(dice, key=lambda d: (d.center[0], d.center[1]))


def given_values(shown: Sequence[Die], answers: Sequence[int | None] | None,
                 added: Sequence[Added] = ()) -> list[Labelled]:
    """The values of ``shown`` (a throw's reading, `left_to_right`) as the installer gave
    them: ``answers`` None confirms the reading, else one answer per die: 1-6 its value, 0 a
    die not to learn from, None no die (left out). ``added``: dice the reading missed, each
    (x, y, value): its centre in image pixels and 1-6 or 0, labelled there. ValueError when
    not one answer per die, or an added die is not so."""
    if answers is None:  # an unsure die confirmed is a die of a value not given
        values = [Labelled(d.value or 0, d.center) for d in shown]
    elif len(answers) != len(shown) or any(a not in (None, *ANSWERS) for a in answers):
        raise ValueError(f"{len(shown)} answers, each 1-6, 0 or None")
    else:
        values = [Labelled(a, d.center) for a, d in zip(answers, shown, strict=True)
                  if a is not None]
    for die in added:
        if (len(die) != 3 or not all(isinstance(v, int | float) and math.isfinite(v)
                                     for v in die[:2]) or die[2] not in ANSWERS):
            raise ValueError("each die added is (x, y, value): its centre, and 1-6 or 0")
        values.append(Labelled(int(die[2]), (float(die[0]), float(die[1]))))
    return values


def faces_notes(learnt: adapt.Learnt | None, judged: Judgement | None
                ) -> dict[str, Any] | None:
    """For a profile's notes: whether the dice's faces learnt were kept (from how many dice,
    the slips set aside), and how the throws read with and without (None: nothing judged)."""
    if judged is None:
        return None
    names = ("dice", "correct", "wrong", "unsure", "missed", "extra")
    return {"kept": learnt is not None, "dice": learnt.dice if learnt else None,
            "set_aside": list(learnt.doubted) if learnt else [],
            "with": dict(zip(names, judged.with_it.row(), strict=True)),
            "without": dict(zip(names, judged.without.row(), strict=True))}


def ask_values(ask: Callable[[str], str], say: Callable[[str], None], name: str,
               dice: Sequence[Die]) -> list[Labelled]:
    """The values of one throw from the installer: ``dice`` (its reading) shown left to right,
    Enter confirms the values read, or the values are typed in that order."""
    shown = left_to_right(dice)
    say(f"  {name}: " + ("  ".join(
        f"{k}) {d.value if d.value is not None else '?'} at {d.center[0]:.0f},{d.center[1]:.0f}"
        for k, d in enumerate(shown, 1)) or "no die read"))
    while True:
        answer = ask("  Enter if every value is right, else the values in this order "
                     "(1-6, - for no die, ? to skip): ").strip()
        if not answer:
            return given_values(shown, None)
        words = answer.replace(",", " ").split()
        if len(words) == len(shown) and all(w in ("-", "?", *"123456") for w in words):
            return given_values(shown, [None if w == "-" else 0 if w == "?" else int(w)
                                        for w in words])
        say(f"  {len(shown)} answers, each 1-6, - or ?: try again")


def labelled_reading(ask: Callable[[str], str], say: Callable[[str], None]
                     ) -> Callable[[str, np.ndarray, Profile | None], list[Labelled]]:
    """A labeller asking the installer (`ask_values`) about each throw's plain reading."""
    def label(name: str, image: np.ndarray, profile: Profile | None) -> list[Labelled]:
        return ask_values(ask, say, name, read_dice(image, profile))
    return label
