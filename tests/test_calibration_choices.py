"""The count's choices (die side, pip polarity), judged by the dice's values
(`calibration.choices`): each kept only when it reads the throws' values better, dropped
when worse or the same.

Rendered trays (`vision.lab.render`, seeded) hold dice of known value and place; the die
sides are set against the dice's drawn side.
"""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
import pytest

from calibration import choices, faces
from calibration.labels import Labelled
from vision import Die, Profile, shipped_readers
from vision.finder import SURE
from vision.lab.render import random_tray, render_tray


def _trays(seeds: tuple[int, ...], **options: object
           ) -> tuple[list[np.ndarray], list[list[Labelled]], float]:
    """Rendered trays, each die's value and place as an installer gives them, and the
    dice's mean side (px)."""
    shots = [render_tray(random_tray(np.random.default_rng(s), 6, **options), s)  # type: ignore[arg-type]
             for s in seeds]
    labels = [[Labelled(t.value, t.center, t.side) for t in shot.truth] for shot in shots]
    mean = float(np.mean([t.side for shot in shots for t in shot.truth]))
    return [shot.image for shot in shots], labels, mean


def keep_side(images: list[np.ndarray], labels: list[list[Labelled]], profile: Profile,
              readers) -> tuple[Profile, choices.Judgement | None]:
    """The profile the values leave, and the die side's judgement (None: not judged)."""
    kept, judged = choices.keep_choices(images, labels, profile, readers)
    return kept, next((j for j in judged if j.choice == "die_side"), None)


def test_a_die_side_that_reads_the_values_worse_is_dropped() -> None:
    """Three times the dice's side: dice are missed; fewer dice right, and the profile comes
    back without a side (the rest of it as it was). (At half the side, the die finder's own
    sizes read every die right.)"""
    images, labels, mean = _trays((0, 2, 3))
    profile = Profile(die_side=3.0 * mean, dice_colors=[(200.0, 128.0, 128.0)])
    kept, judged = keep_side(images, labels, profile, shipped_readers())
    assert judged is not None and not judged.kept
    assert judged.with_it.dice == judged.without.dice == 18
    assert judged.right < 0 and judged.without.correct >= 17
    assert kept.die_side is None and kept.dice_colors == profile.dice_colors
    assert profile.die_side == pytest.approx(3.0 * mean)  # the profile given is left alone


class _DoubtfulFinder:
    """The shipped die finder, unsure of every die it finds: the reader then takes no size
    from it (`vision.finder.SURE`), as with dice unlike those it learnt."""

    def find(self, image: np.ndarray) -> list:
        return [replace(s, score=min(s.score, 0.9 * SURE))
                for s in shipped_readers().finder.find(image)]


def test_a_die_side_that_reads_the_values_better_is_kept() -> None:
    """White dice on a white board, the die finder unsure of them: the reader's own measure
    of the die size misses dice that the dice's side reads right; more right and none more
    wrong, so the side stays. (A finder sure of them sizes these dice and reads them all.)"""
    images, labels, mean = _trays((0, 1), floor="white", palette=["white/black", "ivory/black"],
                                  min_contrast=0.0)
    profile = Profile(die_side=mean)
    readers = replace(shipped_readers(), finder=_DoubtfulFinder())
    kept, judged = keep_side(images, labels, profile, readers)
    assert judged is not None and judged.kept
    assert judged.right > 0 and judged.wrong <= 0
    assert kept is profile
    assert choices.described(judged) == (f"  the die side of {judged.value:.0f} px is kept: it "
                                         f"reads the dice's values better ({judged})")


def test_a_tie_keeps_no_side() -> None:
    """Dice read as well at the dice's own side as by the reader's measure: the simpler
    profile (no side) is kept."""
    images, labels, mean = _trays((0,))
    kept, judged = keep_side(images, labels, Profile(die_side=mean), shipped_readers())
    assert judged is not None and judged.right == 0 and judged.wrong == 0
    assert not judged.kept and kept.die_side is None


def test_the_rule() -> None:
    """At least as many right, no more wrong (a wrong value or a value where no die lies),
    and better on one of them."""
    base = faces.Tally(20, 15, 1, 2, 1, 1)

    def judged(correct: int, wrong: int, extra: int) -> choices.Judgement:
        return choices.Judgement("die_side", 30.0, faces.Tally(20, correct, wrong, 0, 0, extra),
                                 base)

    assert judged(16, 1, 1).kept and judged(15, 0, 1).kept and judged(15, 1, 0).kept
    assert not judged(15, 1, 1).kept  # a tie
    assert not judged(18, 2, 1).kept  # more right, but one more wrong
    assert not judged(14, 0, 0).kept  # fewer wrong, but one fewer right

    def polarity(correct: int, wrong: int, extra: int) -> choices.Judgement:
        return choices.Judgement("pip_polarity", "dark",
                                 faces.Tally(20, correct, wrong, 0, 0, extra), base)

    assert polarity(15, 1, 1).kept and polarity(16, 1, 1).kept  # a tie keeps a polarity
    assert not polarity(14, 1, 1).kept and not polarity(15, 1, 2).kept
    assert choices.choices_notes([judged(16, 1, 1)]) == {"pip_polarity": None, "die_side": {
        "kept": True, "value": 30.0,
        "with": {"dice": 20, "correct": 16, "wrong": 1, "unsure": 0, "missed": 0, "extra": 1},
        "without": {"dice": 20, "correct": 15, "wrong": 1, "unsure": 2, "missed": 1,
                    "extra": 1}}}
    assert choices.choices_notes([]) == {"die_side": None, "pip_polarity": None}


def test_nothing_to_judge_without_values_or_without_a_choice() -> None:
    images, labels, mean = _trays((0,))
    readers = shipped_readers()
    unknown = [[Labelled(0, d.center) for d in labels[0]]]
    profile = Profile(die_side=mean, pip_polarity="dark")
    assert choices.keep_choices(images, unknown, profile, readers) == (profile, [])
    plain = Profile(dice_colors=[(200.0, 128.0, 128.0)])
    assert choices.keep_choices(images, labels, plain, readers) == (plain, [])


@pytest.mark.parametrize("polarity", ["dark", "light"])
def test_a_pip_polarity_that_reads_as_well_is_kept(polarity: str) -> None:
    """Dice with dark pips, which the reader reads alike looking for one polarity or either:
    a tie, and the polarity stays (it only takes marks away), and said so."""
    images, labels, _ = _trays((0, 2), palette=["white/black", "ivory/black"])
    profile = Profile(pip_polarity=polarity)
    kept, judged = choices.keep_choices(images, labels, profile, shipped_readers())
    assert [(j.choice, j.right, j.wrong, j.kept) for j in judged] == [
        ("pip_polarity", 0, 0, True)]
    assert judged[0].with_it.dice == 12 and judged[0].with_it.correct >= 11
    assert kept is profile
    assert choices.described(judged[0]) == (
        f"  {polarity} pips only is kept: it reads the dice's values as well ({judged[0]})")


def test_a_die_of_no_value_given_read_is_no_extra() -> None:
    """The installer's "?" (value 0): a die read there is neither right nor extra."""
    corners = ((90.0, 90.0), (110.0, 90.0), (110.0, 110.0), (90.0, 110.0))
    read = [Die(5, (100.0, 100.0), corners, 0.9, None)]
    assert faces.tally(read, [Labelled(0, (101.0, 100.0))]).row() == (0, 0, 0, 0, 0, 0)
    assert faces.tally(read, [Labelled(0, (200.0, 100.0))]).extra == 1


def test_the_calibration_judges_its_choices_by_the_values_and_says_so() -> None:
    """Five rendered trays of white dice on a white board, with their values: the count
    chooses dark pips (the reader sizes these dice by the die finder: no die side is
    chosen), the values judge the choice (every die of the five throws), the calibration says
    it is kept and why, and the profile and its notes hold it."""
    from calibration.report import Reporter
    from calibration.session import Settings, calibrate_photos
    from calibration.sources import PhotoThrows

    images, labels, _ = _trays(tuple(range(5)), floor="white",
                               palette=["white/black", "ivory/black"], min_contrast=0.0)
    photos = PhotoThrows.split([], images, [6] * 5, [f"t{k}" for k in range(5)], labels)
    ui = Reporter(out=io.StringIO(), bars=False)
    outcome = calibrate_photos(photos, Settings(), ui)
    assert outcome.passed and outcome.findings.profile.pip_polarity == "dark"
    judged = next(j for j in outcome.choices if j.choice == "pip_polarity")
    assert judged.with_it.dice == 30
    said = [line for line in ui.lines if "pips only" in line]
    assert said == [f"  dark pips only is kept: it reads the dice's values as well ({judged})"]
    assert judged.kept and outcome.profile.pip_polarity == "dark"
    assert choices.choices_notes(outcome.choices)["pip_polarity"]["kept"] is True
