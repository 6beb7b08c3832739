"""A close-up: one die larger than the floor model's window, found as the small unsure "dice"
of its pips, read whole.
"""

from __future__ import annotations

import itertools

import cv2
import numpy as np

from vision.detect import MIN_THRESHOLD, Candidate
from vision.layout import fit_layout
from vision.scene_reading import Found, Scene, read_candidate, same_die
from vision.straightening import FACE_PER_PITCH, views

# A close-up: up to MAX_CLOSE_UP_PARTS unsure "dice" may be the pips of one large die, when
# their grid's pitch is within CLOSE_UP_PITCH x the die side found (theirs, as they were taken
# for dice; pips are 0.4..0.8 pitch wide).
MAX_CLOSE_UP_PARTS = 8
CLOSE_UP_PITCH = (1.1, 2.6)


def close_up(kept: list[Found], scene: Scene) -> list[Found]:
    """In a close-up, a die larger than the floor model's window is floor to it, and its pips
    are found as small unsure dice. When no die reads and some of those lie on a face's grid,
    the die they would belong to is read like any other; if it reads, it replaces the unsure
    dice on it."""
    if any(k.die.value is not None for k in kept):
        return kept  # dice that read are of the size found: no close-up
    blank = [k for k in kept if k.die.reason in ("not a pip face", "low contrast")]
    if not blank or len(blank) > MAX_CLOSE_UP_PARTS:
        return kept
    side = scene.side
    # A pip that joins the die's rim in the mask is found as part of a split region, which
    # reads as nothing at all.
    loose = [c.center for c in scene.candidates if c.source == "split"
             and not any(same_die(c.center, k, side) for k in kept)]
    centres = ([k.center for k in blank] + loose)[:MAX_CLOSE_UP_PARTS]
    for count in range(min(6, len(centres)), 1, -1):
        for parts in itertools.combinations(centres, count):
            fit = fit_layout(np.array(parts, dtype=np.float64))
            if fit is None or not CLOSE_UP_PITCH[0] * side <= fit.pitch <= CLOSE_UP_PITCH[1] * side:
                continue
            die_side = FACE_PER_PITCH * fit.pitch
            cand = Candidate(fit.center, (die_side, die_side), float(np.degrees(fit.angle)),
                             False, "body")
            if not _stands_out(scene.look.lab, cand, centres):
                continue
            view = views(scene.source, [(cand, die_side)], scene.readers.face)[0]
            item = read_candidate(scene.look.mask, cand, die_side, scene.polarity, view,
                                  net=scene.readers.face)
            if item is None or item.die.value is None:
                continue
            inside = [k for k in blank if same_die(k.center, item, side)]
            return [k for k in kept if k not in inside] + [item]
    return kept


def _stands_out(lab: np.ndarray, cand: Candidate, pips: list[tuple[float, float]]) -> bool:
    """Whether the face of ``cand`` (less its pips) differs in the Lab image ``lab`` from what
    lies around it: a die, not a patch of floor between smaller dice."""
    h, w = lab.shape[:2]
    side = cand.size[0]

    def square(scale: float) -> np.ndarray:
        mask = np.zeros((h, w), np.uint8)
        box = cv2.boxPoints((cand.center, (scale * side, scale * side), cand.angle))
        cv2.fillConvexPoly(mask, np.round(box).astype(np.int32), 255)
        return mask

    face, ring = square(0.9), cv2.subtract(square(1.4), square(1.15))
    for x, y in pips:
        cv2.circle(face, (round(x), round(y)), round(0.2 * side), 0, -1)
    if not face.any() or not ring.any():
        return False
    inside = np.array(cv2.mean(lab, face)[:3])
    outside = np.array(cv2.mean(lab, ring)[:3])
    return float(np.abs(inside - outside).sum()) >= MIN_THRESHOLD
