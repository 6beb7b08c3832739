"""Step 2, the light: sweep the ring light and the camera's exposure and gain, keep the best.

With dice lying in the tray, each setting is judged on one frame: the dice the reader gives
a value (of those thrown), the contrast between pips and faces on them (the spread of
lightness across each read die's face), and the glare (clipped pixels). When no setting
reads a die but some find dice (a bar's dice unlike any the reader learnt: what the dice
step will teach it), the dice cannot judge the light: the setting kept is the one whose
picture is exposed nearest mid-grey, without glare, among those finding the most dice.
The knobs are swept
one after the other (ring light, exposure, gain), each at the best value of those before:
a few frames, not the product of every value. The value in use is always among those tried,
so the sweep never leaves the light worse than it found it, by its own measure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.check import glare
from calibration.controls import Knob
from calibration.errors import CalibrationError
from calibration.tray import TOO_DIM, lightness
from vision import Die

GLARE_WEIGHT = 20.0  # a setting with 5 % of the picture clipped scores nothing
MID_GREY = 128.0  # lightness of a well exposed picture, when no die is read to judge by


@dataclass(frozen=True)
class LightScore:
    """How one setting shows the dice."""

    settings: tuple[tuple[str, float], ...]
    read: int
    contrast: float  # median lightness spread across a read die's face (0..255)
    glare: float  # share of clipped pixels
    level: float  # mean lightness
    found: int = 0  # dice found, read or not

    @property
    def value(self) -> float:
        return self.read * self.contrast * max(0.0, 1.0 - GLARE_WEIGHT * self.glare)


def face_contrast(image: np.ndarray, die: Die) -> float:
    """Spread of lightness (5th to 95th percentile) across a die's face: pips against body."""
    mask = np.zeros(image.shape[:2], np.uint8)
    centre = np.array(die.center, np.float32)
    corners = (np.array(die.corners, np.float32) - centre) * 0.85 + centre
    cv2.fillConvexPoly(mask, np.round(corners).astype(np.int32), 255)
    light = cv2.cvtColor(image, cv2.COLOR_BGR2Lab)[:, :, 0][mask > 0]
    if light.size < 4:
        return 0.0
    low, high = np.percentile(light, (5, 95))
    return float(high - low)


def judge(image: np.ndarray, dice: Sequence[Die], expected: int,
          settings: tuple[tuple[str, float], ...]) -> LightScore:
    read = [d for d in dice if d.value is not None]
    contrast = float(np.median([face_contrast(image, d) for d in read])) if read else 0.0
    return LightScore(settings, min(len(read), expected), contrast, glare(image),
                      lightness(image), min(len(dice), expected))


def sweep(
    knobs: Sequence[Knob], grab: Callable[[], np.ndarray],
    read: Callable[[np.ndarray], list[Die]], expected: int,
    tick: Callable[[int], None] | None = None,
) -> tuple[LightScore, np.ndarray, list[LightScore]]:
    """Sweep ``knobs`` (each left at its best value); (best score, its frame, every score).

    ``grab`` gives a frame taken after the last change. Raises `CalibrationError` when no
    setting shows a die (too dim, or no dice in the tray)."""
    step = tick or (lambda n: None)
    scores: list[LightScore] = []
    frames: list[np.ndarray] = []

    def settings() -> tuple[tuple[str, float], ...]:
        return tuple((k.name, float(k.current)) for k in knobs)

    image = grab()
    best = judge(image, read(image), expected, settings())
    best_image = image
    scores.append(best)
    frames.append(image)
    step(1)
    for knob in knobs:
        keep = knob.current
        for value in knob.values:
            if value == keep:
                continue
            knob.set(value)
            image = grab()
            score = judge(image, read(image), expected, settings())
            scores.append(score)
            frames.append(image)
            step(1)
            if score.value > best.value:
                best, best_image, keep = score, image, value
        knob.set(keep)
    if best.read == 0 and not any(s.found for s in scores):
        if max(s.level for s in scores) < 2 * TOO_DIM:
            raise CalibrationError(f"light too dim to read: no setting shows the dice (the "
                                   f"brightest picture has lightness "
                                   f"{max(s.level for s in scores):.0f} of 255); add light "
                                   "over the tray")
        raise CalibrationError("no dice found while tuning the light: throw the dice into "
                               "the tray and leave them there during this step")
    if best.read == 0:  # dice found, none read: the exposure is all there is to judge
        k = min(range(len(scores)), key=lambda i: (
            -scores[i].found, abs(scores[i].level - MID_GREY) + 255 * GLARE_WEIGHT
            * scores[i].glare))
        best, best_image = scores[k], frames[k]
        chosen = dict(best.settings)
        for knob in knobs:
            knob.set(chosen[knob.name])
    return best, best_image, scores


def describe(score: LightScore) -> str:
    """One line: the settings chosen and what they show."""
    parts = [f"{name} {value:g}" for name, value in score.settings]
    if score.read == 0:  # dice found, none read yet: what the dice step may teach
        return (f"{', '.join(parts) or 'as it is'}: {score.found} dice found, none read yet "
                f"(the exposure judged alone), glare {score.glare:.1%}, lightness "
                f"{score.level:.0f}")
    return (f"{', '.join(parts) or 'as it is'}: {score.read} dice read, pip contrast "
            f"{score.contrast:.0f}, glare {score.glare:.1%}, lightness {score.level:.0f}")
