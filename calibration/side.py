"""The die side the dice step chose, judged by the dice's values when the installer gave them.

Step 3 chooses a die side by the count alone (`calibration.dice`): a side that reads more of
the dice thrown on a few close photos may read marks as dice on photos taken from elsewhere.
With values (a labels file, the terminal, the game master's page, the simulated tray's
truth), every throw with values is read with the side and without it, by the readers the
calibration uses, and the side is kept only if it reads at least as many dice right and no
more dice wrong (a wrong value, or a value where no die lies), and is not the same on both
counts: a tie keeps the simpler profile, the reader measuring each picture's size itself.

The dice colours are not judged so: they only drop dice read unsure (`vision.pipeline`), so
they change no value read. Without values, nothing here runs: the count's choice stands.
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


@dataclass(frozen=True)
class SideJudgement:
    """The throws with values read with the die side (``side`` px) and without it."""

    side: float
    with_it: Tally
    without: Tally

    @property
    def right(self) -> int:
        """Dice right with the side, less those right without."""
        return self.with_it.correct - self.without.correct

    @property
    def wrong(self) -> int:
        """Dice wrong (a wrong value or a value where no die lies) with the side, less
        without."""
        return (self.with_it.wrong + self.with_it.extra) - (
            self.without.wrong + self.without.extra)

    @property
    def kept(self) -> bool:
        """At least as many right, no more wrong, and better on one of them (a tie keeps no
        side: the simpler profile)."""
        return self.right >= 0 and self.wrong <= 0 and (self.right > 0 or self.wrong < 0)

    def __str__(self) -> str:
        w, wo = self.with_it, self.without
        return (f"{w.correct} of {w.dice} right and {w.wrong + w.extra} wrong with it, "
                f"{wo.correct} and {wo.wrong + wo.extra} without")


def judge(images: Sequence[np.ndarray], labelled: Sequence[Sequence[Labelled]],
          profile: Profile, readers: Readers,
          readings: Sequence[Sequence[Die]] | None = None) -> SideJudgement | None:
    """``profile``'s die side judged on the throws with values (``labelled``, one list per
    image): None when it has no side or no throw has a placed value. ``readings``: the
    throws already read with ``profile`` (not read again)."""
    if profile.die_side is None or not any(d.value and d.center for dice in labelled
                                           for d in dice):
        return None
    plain = replace_profile(profile, die_side=None)
    with_it, without = Tally(), Tally()
    for k, (image, labels) in enumerate(zip(images, labelled, strict=True)):
        if not any(d.value and d.center for d in labels):
            continue
        mine = readings[k] if readings is not None else read_dice(image, profile,
                                                                   readers=readers)
        with_it += tally(mine, labels)
        without += tally(read_dice(image, plain, readers=readers), labels)
    return SideJudgement(profile.die_side, with_it, without)


def keep_side(images: Sequence[np.ndarray], labelled: Sequence[Sequence[Labelled]],
              profile: Profile, readers: Readers,
              readings: Sequence[Sequence[Die]] | None = None
              ) -> tuple[Profile, SideJudgement | None]:
    """``profile`` with its die side if the throws' values keep it (`judge`), else without
    (sharing its empty tray); and the judgement (None: nothing to judge, ``profile`` as
    given)."""
    judged = judge(images, labelled, profile, readers, readings)
    if judged is None or judged.kept:
        return profile, judged
    return replace_profile(profile, die_side=None), judged


def side_notes(judged: SideJudgement | None) -> dict[str, Any] | None:
    """For a profile's notes: whether the die side chosen was kept, and how the throws with
    values read with and without it (None: nothing judged)."""
    if judged is None:
        return None
    names = ("dice", "correct", "wrong", "unsure", "missed", "extra")
    return {"kept": judged.kept, "side": round(judged.side, 1),
            "with": dict(zip(names, judged.with_it.row(), strict=True)),
            "without": dict(zip(names, judged.without.row(), strict=True))}
