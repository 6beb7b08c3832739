"""The fairness test on simulated dice: its false alarms, its power, the dice it needs.

Every sample comes from a seeded numpy Generator. Rates are checked over many samples against
binomial bounds computed from the counts: a bound that a correct test breaks with probability
``DELTA`` at most, so the check fails for a test that is wrong, not for an unlucky seed.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from firmware_host.fairness.analysis import (
    BIASED,
    FAIR,
    MIN_DICE,
    NOT_TOLD_APART,
    TOO_FEW,
    Question,
    analyse,
    check_faces,
)

SAMPLES = 200
DELTA = 0.001  # the chance that a correct test falls outside a bound below
QUESTION = Question()  # one face at 1/4, 80 % power, 1 % false alarms


def most_false_alarms(samples: int, alpha: float) -> int:
    """The most false alarms a test at level ``alpha`` raises in ``samples`` fair samples,
    but for a chance of ``DELTA``."""
    return int(stats.binom.ppf(1 - DELTA, samples, alpha))


def fewest_detections(samples: int, power: float) -> int:
    """The fewest detections a test of that ``power`` makes in ``samples`` loaded samples,
    but for a chance of ``DELTA``."""
    return int(stats.binom.ppf(DELTA, samples, power))


def fair_faces(rng: np.random.Generator, dice: int) -> list[int]:
    return rng.integers(1, 7, dice).tolist()


def loaded_faces(rng: np.random.Generator, dice: int, face: int,
                 question: Question = QUESTION) -> list[int]:
    return (rng.choice(6, dice, p=question.loaded_die(face)) + 1).tolist()


# ---------------------------------------------------------------------- the dice it needs


def test_the_dice_needed_are_the_fewest_that_reach_the_power() -> None:
    needed = QUESTION.dice_needed()
    assert QUESTION.simulated_power(needed) >= QUESTION.power
    assert QUESTION.simulated_power(needed - 1) < QUESTION.power
    # The textbook count (noncentral chi-square) is the fewest by its own law...
    textbook = QUESTION.textbook_dice()
    assert QUESTION.power_at(textbook) >= QUESTION.power > QUESTION.power_at(textbook - 1)
    # ...which is optimistic for this bias: the test itself needs more.
    assert QUESTION.simulated_power(textbook) < QUESTION.power
    assert needed > textbook


def test_a_harder_question_needs_more_dice() -> None:
    needed = QUESTION.dice_needed()
    assert Question(alpha=0.001).dice_needed() > needed
    assert Question(power=0.95).dice_needed() > needed
    assert Question(loaded=0.22).dice_needed() > needed
    # One worn die among three shows a third of its bias in the dice taken together.
    diluted = Question(loaded=(QUESTION.loaded + 2 / 6) / 3)
    assert diluted.dice_needed() > 5 * needed


@pytest.mark.parametrize("kwargs", [{"alpha": 0}, {"alpha": 1.5}, {"power": 0.005},
                                    {"power": 1}, {"loaded": 1 / 6}, {"loaded": 1.2}])
def test_a_question_that_means_nothing_is_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Question(**kwargs)


# ---------------------------------------------------------------------- the error rates


def test_fair_dice_raise_false_alarms_at_the_stated_rate_at_most() -> None:
    rng = np.random.default_rng(20240601)
    needed = QUESTION.dice_needed()
    verdicts = [check_faces(fair_faces(rng, needed)).verdict for _ in range(SAMPLES)]
    assert verdicts.count(BIASED) <= most_false_alarms(SAMPLES, QUESTION.alpha)
    # With the dice needed seen, a set not flagged is said to look fair.
    assert set(verdicts) <= {BIASED, FAIR}


def test_loaded_dice_are_caught_at_the_stated_power_at_least() -> None:
    rng = np.random.default_rng(421)
    needed = QUESTION.dice_needed()
    caught = 0
    for _ in range(SAMPLES):
        face = int(rng.integers(1, 7))
        result = check_faces(loaded_faces(rng, needed, face))
        caught += result.verdict == BIASED
    assert caught >= fewest_detections(SAMPLES, QUESTION.power)


def test_a_clearly_loaded_die_is_named_by_its_face() -> None:
    rng = np.random.default_rng(7)
    for face in range(1, 7):
        result = check_faces(loaded_faces(rng, 3 * QUESTION.dice_needed(), face))
        assert (result.verdict, result.face) == (BIASED, face)
        assert result.p_value is not None and result.p_value < QUESTION.alpha
        assert result.shares[face - 1] > 0.2
    # A face that comes up too rarely is named too (a chipped corner can do that).
    rarely = Question(loaded=0.08)
    result = check_faces(loaded_faces(rng, 3 * rarely.dice_needed(), 3, rarely))
    assert (result.verdict, result.face) == (BIASED, 3)


def test_fewer_dice_than_needed_are_too_few_unless_already_off() -> None:
    rng = np.random.default_rng(11)
    needed = QUESTION.dice_needed()
    few = check_faces(fair_faces(rng, needed // 2))
    assert few.verdict == TOO_FEW and few.p_value is not None and few.needed == needed
    tiny = check_faces(fair_faces(rng, MIN_DICE - 1))
    assert (tiny.verdict, tiny.p_value, tiny.statistic) == (TOO_FEW, None, None)
    nothing = check_faces([])
    assert (nothing.verdict, nothing.dice, nothing.face) == (TOO_FEW, 0, None)
    # A die far enough off is caught before the count needed for a bias of 1/4.
    heavy = Question(loaded=0.6)
    early = check_faces(loaded_faces(rng, needed // 2, 6, heavy))
    assert early.verdict == BIASED and early.face == 6


def test_counts_and_shares_are_the_faces_seen() -> None:
    result = check_faces([1, 1, 2, 6, 6, 6])
    assert result.counts == (2, 1, 0, 0, 0, 3)
    assert result.dice == 6
    assert result.shares == pytest.approx((2 / 6, 1 / 6, 0, 0, 0, 3 / 6))
    assert result.face == 6


@pytest.mark.parametrize("faces", [[1, 2, 7], [0, 3], [2.5], ["6"]])
def test_a_face_out_of_range_is_refused(faces: list[object]) -> None:
    with pytest.raises(ValueError, match="a face is a whole number from 1 to 6"):
        check_faces(faces)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- dice told apart


def coloured_throws(rng: np.random.Generator, throws: int, loaded: str | None
                    ) -> tuple[list[list[int]], list[list[str]]]:
    """Throws of a red, a white and a blue die; ``loaded``: the colour of the loaded one."""
    faces, colours = [], []
    for _ in range(throws):
        throw = []
        for colour in ("red", "white", "blue"):
            if colour == loaded:
                throw += loaded_faces(rng, 1, 2)
            else:
                throw += fair_faces(rng, 1)
        faces.append(throw)
        colours.append(["red", "white", "blue"])
    return faces, colours


def test_dice_told_apart_by_colour_are_tested_one_by_one() -> None:
    rng = np.random.default_rng(5)
    # Four tests (all the dice together, and each die) at a quarter of alpha each.
    needed = Question(alpha=QUESTION.alpha / 4).dice_needed()
    faces, colours = coloured_throws(rng, 2 * needed, loaded="red")
    report = analyse(faces, colours)
    assert report.note is None
    by_label = {t.label: t for t in report.dice}
    assert sorted(by_label) == ["blue", "red", "white"]
    assert all(t.needed == needed and t.dice == 2 * needed for t in report.dice)
    assert by_label["red"].verdict == BIASED and by_label["red"].face == 2
    assert by_label["white"].verdict == FAIR and by_label["blue"].verdict == FAIR
    assert report.verdict == BIASED


def test_dice_told_apart_keep_the_false_alarm_rate_together() -> None:
    rng = np.random.default_rng(99)
    needed = Question(alpha=QUESTION.alpha / 4).dice_needed()
    verdicts = [analyse(*coloured_throws(rng, needed, loaded=None)).verdict
                for _ in range(SAMPLES)]
    assert verdicts.count(BIASED) <= most_false_alarms(SAMPLES, QUESTION.alpha)
    assert set(verdicts) <= {BIASED, FAIR}


def test_dice_not_told_apart_are_tested_together_and_the_report_says_why() -> None:
    rng = np.random.default_rng(3)
    throws = [fair_faces(rng, 3) for _ in range(QUESTION.dice_needed())]
    for colours in (None, [None] * len(throws)):
        report = analyse(throws, colours)
        assert report.dice == () and report.note == NOT_TOLD_APART
        assert report.overall.dice == 3 * len(throws)
        assert report.overall.alpha == QUESTION.alpha
    same = analyse(throws, [["ivory"] * 3 for _ in throws])
    assert same.dice == () and "same colour" in (same.note or "")
    with pytest.raises(ValueError, match="do not match"):
        analyse([[1, 2]], [["red"]])


def test_the_report_counts_throws_and_the_throws_still_needed() -> None:
    report = analyse([[1, 2, 3], [4], [5, 6]])
    assert report.throws == 3 and report.overall.dice == 6
    assert report.dice_per_throw == 2.0
    assert report.throws_needed == -(-QUESTION.dice_needed() // 2)
    assert report.verdict == TOO_FEW
    data = report.to_json()
    assert data["verdict"] == TOO_FEW and data["said"] == "too few throws"
    assert data["overall"]["counts"] == [1, 1, 1, 1, 1, 1]
    assert analyse([]).throws_needed is None
