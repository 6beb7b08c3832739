"""Step 4, the check: a few more throws read with the new profile and with none at all.

The profile is saved only when it reads these throws at least as well as no profile (by
their agreement with the number of dice thrown, `calibration.agreement`); otherwise the
check says what to fix, from what went wrong: dice left unread or unsure in dim or glaring
light, things read that are no dice (a dirty tray), dice that hardly stand out from the tray.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.agreement import Agreement, agreement
from calibration.dice import measure
from calibration.tray import lightness
from vision import Die, Profile, Readers, read_dice
from vision.pipeline import as_read

DIM = 70  # mean lightness under which the light is called dim
GLARE_LEVEL = 250  # a channel this bright is clipped
GLARE_SHARE = 0.01  # of the tray's pixels clipped: glare
LOW_CONTRAST = 25.0  # Lab distance between the dice and the floor under which they blend in
LESS_SURE = 0.1  # a drop in mean confidence that makes a profile read worse


@dataclass
class ThrowReport:
    """One check throw: what the profile read, and how sure."""

    expected: int
    dice: list[Die]
    plain: list[Die]

    @property
    def values(self) -> list[int]:
        return sorted(d.value for d in self.dice if d.value is not None)

    @property
    def unsure(self) -> int:
        return sum(d.value is None for d in self.dice)

    @property
    def sure(self) -> float:
        """How sure the reading is: the share of the thrown dice read, times their mean
        confidence (0 when none read)."""
        read = [d.confidence for d in self.dice if d.value is not None]
        if not read or not self.expected:
            return 0.0
        share = min(len(read), self.expected) / self.expected
        penalty = 1.0 if len(read) <= self.expected else self.expected / len(read)
        return share * penalty * float(np.mean(read))


@dataclass
class CheckResult:
    """The verdict of the check."""

    throws: list[ThrowReport]
    with_profile: Agreement
    without: Agreement
    advice: list[str]

    @property
    def passed(self) -> bool:
        """The profile reads at least as well as no profile: a lower cost, or the same and
        not much less sure (the network's confidence moves a little with the size a die is
        read at; a mean over other dice, when more are read, says nothing)."""
        w, wo = self.with_profile, self.without
        if abs(w.cost - wo.cost) > 1e-9:
            return w.cost < wo.cost
        return w.confidence >= wo.confidence - LESS_SURE

    @property
    def sure(self) -> float:
        return float(np.mean([t.sure for t in self.throws])) if self.throws else 0.0


def check(
    images: Sequence[np.ndarray], expects: Sequence[int], profile: Profile,
    floor_colour: tuple[float, float, float] | None = None, *, readers: Readers | None = None,
) -> CheckResult:
    """Read the check throws with ``profile`` and with none (with ``readers``, None: the
    shipped networks); the verdict and the advice."""
    plain = [read_dice(image, None, readers=readers) for image in images]
    mine = [read_dice(image, profile, readers=readers) for image in images]
    with_profile = agreement(mine, expects, plain)
    without = agreement(plain, expects)
    throws = [ThrowReport(n, d, p) for n, d, p in zip(expects, mine, plain, strict=True)]
    advice = advise(images, with_profile, mine, profile, floor_colour)
    outside = sum(1 for dice in plain for d in dice
                  if d.value is not None and profile.zone_of(d.center) is None)
    if outside and with_profile.missing > without.missing:
        advice.insert(0, f"the tray's outline: {outside} dice lie outside the zones (see the "
                      "tray's preview; give the corners with --tray)")
    return CheckResult(throws, with_profile, without, advice)


def glare(image: np.ndarray) -> float:
    """Share of the pixels with a clipped channel."""
    return float(np.count_nonzero(image.max(axis=2) >= GLARE_LEVEL)) / float(
        image.shape[0] * image.shape[1])


def advise(
    images: Sequence[np.ndarray], result: Agreement, readings: Sequence[Sequence[Die]],
    profile: Profile, floor_colour: tuple[float, float, float] | None,
) -> list[str]:
    """What to fix, most likely first: said from the light, the strays and the colours."""
    advice: list[str] = []
    level = float(np.mean([lightness(i) for i in images])) if images else 255.0
    shine = float(np.mean([glare(i) for i in images])) if images else 0.0
    unsure = [d for r in readings for d in r if d.value is None]
    if result.missing or unsure:
        if level < DIM:
            advice.append(f"more light: the tray is dark (lightness {level:.0f} of 255)")
        if shine > GLARE_SHARE:
            advice.append(f"less glare: {shine:.0%} of the picture is blown out; dim the ring "
                          "light or turn the lamp away from the tray")
        if any(d.reason in ("blurred", "low contrast") for d in unsure) and level >= DIM:
            advice.append("more even light: dice are read blurred or with little contrast")
    if result.over or result.stray:
        advice.append("a cleaner tray: things that are no dice are read (crumbs, marks, a "
                      "coaster); wipe it and calibrate again")
    if floor_colour is not None and _blend_in(images, readings, profile, floor_colour):
        advice.append("other dice or another tray: these dice are nearly the colour of the "
                      "tray")
    if result.missing and not advice:
        advice.append("other dice or more light: dice are missed")
    return advice


def _blend_in(images: Sequence[np.ndarray], readings: Sequence[Sequence[Die]],
              profile: Profile, floor: tuple[float, float, float]) -> bool:
    """Whether some dice colour is within LOW_CONTRAST of the tray's ``floor`` colour: the
    profile's colours, or else those of the dice read (a profile checked without its dice's
    part has none, and pale dice on a pale tray are the case to tell)."""
    colours = list(profile.dice_colors)
    if not colours:
        for image, dice in zip(images, readings, strict=True):
            read = [die for die in dice if die.value is not None]
            if read:
                seen = as_read(image, profile)  # once per picture, for all its dice
                colours += [measure(seen, die)[0] for die in read]
    return any(float(np.linalg.norm(np.subtract(c, floor))) < LOW_CONTRAST for c in colours)


def floor_colour(empty: np.ndarray | None) -> tuple[float, float, float] | None:
    """The empty tray's median colour (OpenCV 8-bit Lab), or None without an empty tray."""
    if empty is None:
        return None
    lab = cv2.cvtColor(empty, cv2.COLOR_BGR2Lab).reshape(-1, 3)
    m = np.median(lab, axis=0)
    return float(m[0]), float(m[1]), float(m[2])
