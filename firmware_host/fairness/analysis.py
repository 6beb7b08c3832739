"""Are the dice fair? Face counts, a chi-square test against 1/6 each, and the throws it needs.

Pure: lists of faces in, a `Report` out; no file, no clock. The test is Pearson's chi-square
goodness of fit to the uniform law (`scipy.stats.chisquare`, 5 degrees of freedom). How many
dice it must see is not a rule of thumb: it is the smallest sample at which the test, at
significance ``alpha``, catches a stated bias (one face coming up with probability ``loaded``
instead of 1/6, the other five sharing the rest) with probability ``power``. The textbook
answer comes from the noncentral chi-square law (`scipy.stats.ncx2`: the noncentrality grows
as ``n * w2``, Cohen's effect size squared); a seeded simulation of the test itself then
settles the count, as the textbook law is optimistic for a bias this large (see
`_dice_needed`).

Verdicts: *too few throws* (the test cannot yet tell a loaded die from a fair one, and has not
found one), *looks biased* (the counts are too far from 1/6 for chance at ``alpha``: whatever
the sample, this is a test at that level) and *looks fair* (enough dice seen, and nothing
found). "Looks fair" is not a proof: a smaller bias than ``loaded`` may go unseen.

Dice are told apart (one test per die besides the one on all of them, each at ``alpha``
divided by the number of tests, so that together they keep the false alarm rate) only when
every throw says which die showed each face, by colour. Otherwise only the faces of all dice
together are tested, and the report says why.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, stats

FACES = (1, 2, 3, 4, 5, 6)
DEGREES = len(FACES) - 1

TOO_FEW = "too-few"
FAIR = "fair"
BIASED = "biased"
#: How each verdict is said.
VERDICTS = {TOO_FEW: "too few throws", FAIR: "looks fair", BIASED: "looks biased"}

# Below five dice expected on each face the chi-square law is a poor fit to the statistic
# (Cochran's rule), so no p-value is given for fewer dice than that.
MIN_EXPECTED = 5
MIN_DICE = MIN_EXPECTED * len(FACES)

# The simulation that settles the dice needed: its seed (the same count on every machine), and
# enough samples that the power it finds is within half a point (two standard errors).
SEED = 421
SIMULATED = 40_000

NOT_TOLD_APART = ("the dice are not told apart: a throw is kept as its faces only (the camera "
                  "reads no die's colour, and where a die lands does not say which die it is), "
                  "so all the dice are tested together")


@dataclass(frozen=True)
class Question:
    """What the test must catch, and how sure it must be.

    ``alpha``: the false alarm rate (a fair set flagged as biased). ``power``: the chance of
    catching a set with one face at probability ``loaded`` (the others sharing the rest).
    """

    alpha: float = 0.01
    power: float = 0.80
    loaded: float = 0.25

    def __post_init__(self) -> None:
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must be between 0 and 1, not {self.alpha}")
        if not self.alpha < self.power < 1.0:
            raise ValueError(f"power must be between alpha and 1, not {self.power}")
        if not 0.0 <= self.loaded <= 1.0 or math.isclose(self.loaded, 1 / 6):
            raise ValueError(f"loaded must be a probability other than 1/6, not {self.loaded}")

    def loaded_die(self, face: int = 6) -> np.ndarray:
        """The face probabilities of the die this question is about (``face`` loaded)."""
        others = (1.0 - self.loaded) / DEGREES
        return np.array([self.loaded if f == face else others for f in FACES])

    def effect(self) -> float:
        """Cohen's w squared: the noncentrality each die adds under the loaded law."""
        p0 = 1.0 / len(FACES)
        return float(np.sum((self.loaded_die() - p0) ** 2 / p0))

    def power_at(self, dice: int) -> float:
        """The textbook chance that a test on ``dice`` faces of the loaded die flags it: the
        noncentral chi-square law (as G*Power and Cohen's tables give it)."""
        critical = stats.chi2.isf(self.alpha, DEGREES)
        return float(stats.ncx2.sf(critical, DEGREES, dice * self.effect()))

    def simulated_power(self, dice: int, *, samples: int = SIMULATED,
                        seed: int = SEED) -> float:
        """The share of ``samples`` seeded samples of ``dice`` faces of the loaded die that
        the test flags."""
        counts = np.random.default_rng(seed).multinomial(dice, self.loaded_die(), samples)
        return float(np.mean(stats.chisquare(counts, axis=1).pvalue < self.alpha))

    def textbook_dice(self) -> int:
        """The fewest dice at which `power_at` reaches ``power``."""
        critical = stats.chi2.isf(self.alpha, DEGREES)

        def short(noncentrality: float) -> float:
            return float(stats.ncx2.sf(critical, DEGREES, noncentrality)) - self.power

        high = 1.0
        while short(high) < 0:  # the power grows with the noncentrality, without bound
            high *= 2
        noncentrality = optimize.brentq(short, 0.0, high, xtol=1e-10)
        dice = max(1, math.ceil(noncentrality / self.effect()))
        # The root is found to a tolerance: settle the whole number on the power itself.
        while dice > 1 and self.power_at(dice - 1) >= self.power:
            dice -= 1
        while self.power_at(dice) < self.power:
            dice += 1
        return dice

    def dice_needed(self) -> int:
        """The fewest dice at which the test catches the loaded die with ``power``."""
        return _dice_needed(self)

    def to_json(self) -> dict[str, float]:
        return {"alpha": self.alpha, "power": self.power, "loaded": self.loaded}


#: The question asked unless told otherwise: one face at 1/4, caught 80 % of the time, 1 % of
#: fair sets flagged.
DEFAULT_QUESTION = Question()


@functools.cache  # once per question: the page and the command ask the same one again
def _dice_needed(question: Question) -> int:
    """From the textbook count, the fewest dice whose simulated power reaches the target.

    The noncentral law takes the statistic's spread under the bias to be the null's; a bias
    as large as one face at 1/4 spreads it more, so the textbook count falls short (75.6 %
    instead of 80 % at its 358 dice, alpha 1 %). The simulation runs the very test of
    `check_faces` on seeded samples, so the count is computed (and the same on every
    machine), not guessed."""

    def enough(dice: int) -> bool:
        return question.simulated_power(dice) >= question.power

    high = question.textbook_dice()
    while not enough(high):
        high = math.ceil(high * 1.25)
    low = high // 2
    while low > 1 and enough(low):
        low //= 2
    if enough(low):
        return low
    while high - low > 1:  # enough(high), not enough(low)
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


@dataclass(frozen=True)
class FaceTest:
    """The test on one set of faces: all dice together, or one die."""

    label: str
    counts: tuple[int, ...]  # how often each face 1..6 came up
    alpha: float
    needed: int  # dice to see before "looks fair" can be said
    statistic: float | None  # None: too few dice for the chi-square law
    p_value: float | None
    verdict: str  # TOO_FEW, FAIR or BIASED
    face: int | None  # the face furthest from its expected count (None: no dice)

    @property
    def dice(self) -> int:
        return sum(self.counts)

    @property
    def shares(self) -> tuple[float, ...]:
        """Each face's share of the dice (0 with no dice)."""
        total = self.dice
        return tuple(c / total if total else 0.0 for c in self.counts)

    @property
    def said(self) -> str:
        return VERDICTS[self.verdict]

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label, "dice": self.dice, "counts": list(self.counts),
            "shares": [round(s, 4) for s in self.shares], "alpha": self.alpha,
            "needed": self.needed, "statistic": _round(self.statistic),
            "p_value": _round(self.p_value, 6), "verdict": self.verdict, "said": self.said,
            "face": self.face,
            "face_share": None if self.face is None else round(self.shares[self.face - 1], 4),
        }


@dataclass(frozen=True)
class Report:
    """All the dice together, each die where they are told apart, and the question asked."""

    question: Question
    throws: int
    overall: FaceTest
    dice: tuple[FaceTest, ...]  # one per die (colour); empty when not told apart
    note: str | None  # why the dice are not told apart, or None

    @property
    def verdict(self) -> str:
        """Biased if any test says so; fair only when every test can say so."""
        verdicts = {t.verdict for t in (self.overall, *self.dice)}
        if BIASED in verdicts:
            return BIASED
        return FAIR if verdicts == {FAIR} else TOO_FEW

    @property
    def dice_per_throw(self) -> float | None:
        return self.overall.dice / self.throws if self.throws else None

    @property
    def throws_needed(self) -> int | None:
        """Throws of the size seen so far that hold the dice the overall test needs."""
        per_throw = self.dice_per_throw
        return None if not per_throw else math.ceil(self.overall.needed / per_throw)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict, "said": VERDICTS[self.verdict], "throws": self.throws,
            "dice_per_throw": _round(self.dice_per_throw, 3),
            "throws_needed": self.throws_needed, "question": self.question.to_json(),
            "overall": self.overall.to_json(), "dice": [t.to_json() for t in self.dice],
            "note": self.note,
        }


def check_faces(faces: Sequence[int], question: Question = DEFAULT_QUESTION, *,
               label: str = "all dice", alpha: float | None = None) -> FaceTest:
    """The chi-square test of ``faces`` against a fair die (``alpha`` overrides the
    question's, for one die among several)."""
    alpha = question.alpha if alpha is None else alpha
    if alpha != question.alpha:
        question = Question(alpha=alpha, power=question.power, loaded=question.loaded)
    counts = _counts(faces)
    total = int(counts.sum())
    needed = question.dice_needed()
    face = None
    if total:
        # The face whose count is furthest from the expected one, in the statistic's own
        # units (Pearson residuals): the one a worn or chipped die shows most.
        expected = total / len(FACES)
        face = int(np.argmax(np.abs(counts - expected))) + 1
    if total < MIN_DICE:
        return FaceTest(label, tuple(int(c) for c in counts), alpha, needed, None, None,
                        TOO_FEW, face)
    result = stats.chisquare(counts)
    statistic, p_value = float(result.statistic), float(result.pvalue)
    if p_value < alpha:
        verdict = BIASED
    elif total >= needed:
        verdict = FAIR
    else:
        verdict = TOO_FEW
    return FaceTest(label, tuple(int(c) for c in counts), alpha, needed, statistic, p_value,
                    verdict, face)


def analyse(throws: Sequence[Sequence[int]],
            colours: Sequence[Sequence[str] | None] | None = None,
            question: Question = DEFAULT_QUESTION) -> Report:
    """Test the faces of ``throws`` (one list of faces per throw).

    ``colours``, when given, says for each throw the colour of the die behind each face (None
    for a throw whose dice were not told apart). Dice are tested one by one only when every
    throw has them; a colour seen on two dice of one throw names those dice together.
    """
    faces = [face for throw in throws for face in throw]
    by_colour, note = _by_colour(throws, colours)
    # Bonferroni: with the k dice and all of them together each tested at alpha / (k + 1), a
    # fair set raises a false alarm in at most alpha of the cases, whatever the dependence
    # between the tests.
    alpha = question.alpha / (len(by_colour) + 1) if by_colour else question.alpha
    overall = check_faces(faces, question, alpha=alpha)
    dice = tuple(check_faces(found, question, label=colour, alpha=alpha)
                 for colour, found in sorted(by_colour.items()))
    return Report(question, len(throws), overall, dice, note)


def _by_colour(throws: Sequence[Sequence[int]],
               colours: Sequence[Sequence[str] | None] | None
               ) -> tuple[dict[str, list[int]], str | None]:
    if colours is None or not throws or any(c is None for c in colours):
        return {}, NOT_TOLD_APART
    if len(colours) != len(throws):
        raise ValueError(f"{len(colours)} lists of colours for {len(throws)} throws")
    found: dict[str, list[int]] = defaultdict(list)
    for throw, names in zip(throws, colours, strict=True):
        if names is None or len(names) != len(throw):
            raise ValueError(f"colours {names!r} do not match faces {list(throw)!r}")
        for face, colour in zip(throw, names, strict=True):
            found[str(colour)].append(face)
    if len(found) < 2:
        return {}, "every die has the same colour: the dice are not told apart"
    return dict(found), None


def _counts(faces: Sequence[int]) -> np.ndarray:
    values = np.asarray(faces)
    if values.size == 0:
        return np.zeros(len(FACES), dtype=np.int64)
    if values.ndim != 1 or values.dtype.kind not in "iu" or values.min() < 1 or values.max() > 6:
        wrong = next((f for f in faces if isinstance(f, bool) or not isinstance(
            f, (int, np.integer)) or not 1 <= f <= 6), faces)
        raise ValueError(f"a face is a whole number from 1 to 6, not {wrong!r}")
    return np.bincount(values - 1, minlength=len(FACES)).astype(np.int64)


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)
