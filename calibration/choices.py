"""The count's choices that change the values read (the die side, the pip polarity), judged
by the dice's values when the installer gave them.

Step 3 chooses a die side and a pip polarity by the count alone (`calibration.dice`): a
side that reads more of the dice thrown on a few close photos may read marks as dice on
photos taken from elsewhere, and a polarity that reads as many dice may read some of them
otherwise. With values (a labels file, the terminal, the game master's page, the simulated
tray's truth), every throw with values is read with each choice and without it, by the
readers the calibration uses, and the choice is kept only if it reads at least as many dice
right and no more dice wrong (a wrong value, or a value where no die lies). On a tie, the
die side goes (the reader measures each picture's die size) and the polarity stays
(`TIE_KEEPS`). The die side is judged first, then the polarity on the profile the side's
judgement left.

The dice colours are not judged so: they only drop dice read unsure (`vision.pipeline`), so
they change no value read. Without values, nothing here runs: the count's choices stand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from calibration.dice import replace_profile
from calibration.faces import Tally, tally
from calibration.labels import Labelled
from vision import Die, Profile, Readers, read_dice

JUDGED = ("die_side", "pip_polarity")  # profile fields, in the order they are judged
# What a tie keeps. A die side replaces the reader's own measure of each picture's die size:
# on a tie that measure, which follows the camera, is the safer. A polarity only takes away
# pips of the other polarity, marks among them: on a tie it is the safer (matteop65, seed 7:
# 9 values where no die lies with the polarity, 13 without).
TIE_KEEPS = {"die_side": False, "pip_polarity": True}


@dataclass(frozen=True)
class Judgement:
    """The throws with values read with one of the profile's choices (``choice``, a field of
    `vision.Profile`, at ``value``) and without it."""

    choice: str
    value: Any
    with_it: Tally
    without: Tally

    @property
    def right(self) -> int:
        """Dice right with the choice, less those right without."""
        return self.with_it.correct - self.without.correct

    @property
    def wrong(self) -> int:
        """Dice wrong (a wrong value or a value where no die lies) with the choice, less
        without."""
        return (self.with_it.wrong + self.with_it.extra) - (
            self.without.wrong + self.without.extra)

    @property
    def kept(self) -> bool:
        """At least as many right and no more wrong, and better on one of them unless a tie
        keeps the choice (`TIE_KEEPS`)."""
        better = self.right > 0 or self.wrong < 0
        return self.right >= 0 and self.wrong <= 0 and (better or TIE_KEEPS[self.choice])

    def __str__(self) -> str:
        w, wo = self.with_it, self.without
        return (f"{w.correct} of {w.dice} right and {w.wrong + w.extra} wrong with it, "
                f"{wo.correct} and {wo.wrong + wo.extra} without")


def judge(images: Sequence[np.ndarray], labelled: Sequence[Sequence[Labelled]],
          profile: Profile, choice: str, readers: Readers,
          readings: Sequence[Sequence[Die]] | None = None
          ) -> tuple[Judgement | None, list[list[Die]]]:
    """``profile``'s ``choice`` judged on the throws with values (``labelled``, one list per
    image), and the throws' readings without it (empty lists for throws with no placed
    value). None when the profile has not made that choice or no throw has a placed value.
    ``readings``: the throws already read with ``profile`` (not read again)."""
    value = getattr(profile, choice)
    if value is None or not any(d.value and d.center for dice in labelled for d in dice):
        return None, []
    plain = replace_profile(profile, **{choice: None})
    with_it, without, plain_readings = Tally(), Tally(), []
    for k, (image, labels) in enumerate(zip(images, labelled, strict=True)):
        if not any(d.value and d.center for d in labels):
            plain_readings.append([])
            continue
        mine = readings[k] if readings is not None else read_dice(image, profile,
                                                                   readers=readers)
        theirs = read_dice(image, plain, readers=readers)
        plain_readings.append(theirs)
        with_it += tally(mine, labels)
        without += tally(theirs, labels)
    return Judgement(choice, value, with_it, without), plain_readings


def keep_choices(images: Sequence[np.ndarray], labelled: Sequence[Sequence[Labelled]],
                 profile: Profile, readers: Readers,
                 readings: Sequence[Sequence[Die]] | None = None
                 ) -> tuple[Profile, list[Judgement]]:
    """``profile`` with each of its choices (`JUDGED`) the throws' values keep (`judge`),
    without the others (sharing its empty tray); and the judgements made, in order (none:
    nothing to judge, ``profile`` as given)."""
    judged = []
    for choice in JUDGED:
        judgement, plain_readings = judge(images, labelled, profile, choice, readers,
                                          readings)
        if judgement is None:
            continue
        judged.append(judgement)
        if not judgement.kept:
            profile = replace_profile(profile, **{choice: None})
            readings = plain_readings
    return profile, judged


def choices_notes(judged: Sequence[Judgement]) -> dict[str, Any]:
    """For a profile's notes, per choice of `JUDGED`: whether it was kept, and how the throws
    with values read with and without it (None: not judged)."""
    names = ("dice", "correct", "wrong", "unsure", "missed", "extra")
    notes: dict[str, Any] = dict.fromkeys(JUDGED)
    for j in judged:
        value = round(j.value, 1) if isinstance(j.value, float) else j.value
        notes[j.choice] = {"kept": j.kept, "value": value,
                           "with": dict(zip(names, j.with_it.row(), strict=True)),
                           "without": dict(zip(names, j.without.row(), strict=True))}
    return notes


def described(judgement: Judgement) -> str:
    """One line for the calibration's report: the choice, kept or not, and why."""
    if judgement.choice == "die_side":
        what, instead = (f"the die side of {judgement.value:.0f} px",
                         "the reader measures each picture's die size")
    else:
        what, instead = (f"{judgement.value} pips only", "pips of either polarity are looked "
                         "for")
    if judgement.kept:
        how = "better" if judgement.right > 0 or judgement.wrong < 0 else "as well"
        return f"  {what} is kept: it reads the dice's values {how} ({judgement})"
    return f"  {what} is not kept: it reads the dice's values no better ({judgement}); {instead}"
