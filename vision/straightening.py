"""The copies of the input a reading works on, and each die straightened into a patch.

Dice are found in a small working copy (`working_copy`) and straightened from the sharpest
copy that is cheap to make (`patch_source`): a die is a PATCH_SIDE-pixel square in the middle
of its patch, whatever its size in the camera's image. The face network looks at the patches
of many candidates in one pass (`views`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import cv2
import numpy as np

from vision.detect import Candidate
from vision.face_net import FaceReader

# Each die is straightened into a patch where its top face is PATCH_SIDE pixels.
PATCH_SIDE = 48
PATCH_SCALE = 1.5  # patch size / face side
FACE_PER_PITCH = 3.4  # top-face side / pip grid pitch
# A finder's spot is straightened at its own side when the finder is SURE_SIZE sure of it,
# or when its side is within FOUND_SIDES x the typical one; else at the typical side.
SURE_SIZE = 0.8
FOUND_SIDES = (0.7, 1.4)


class Source(NamedTuple):
    """The image patches are cut from, ``zoom`` times the working size: the input itself (or
    reduced by a whole factor), so a die is straightened from its sharpest pixels while the
    working copy only finds it."""

    image: np.ndarray
    zoom: float


def patch_source(bgr: np.ndarray, scale: float, side: float | None) -> Source:
    """What the dice of ``bgr`` (typical ``side``, if known) are straightened from when they
    are found in a copy ``scale`` times its size: ``bgr`` itself, or reduced by the largest
    whole factor that leaves a die at least PATCH_SIDE wide and the copy at least the working
    size (OpenCV reduces by whole factors fast): a patch keeps the pips as sharp as the
    camera saw them."""
    h, w = bgr.shape[:2]
    # Never past the short side: a long thin image must still reduce to at least one pixel.
    k = max(1, min(int(1.0 / scale), h, w))
    if side is not None:
        k = max(1, min(k, int(side / PATCH_SIDE)))
    if k > 1:
        bgr = cv2.resize(bgr[: h - h % k, : w - w % k], (w // k, h // k),
                         interpolation=cv2.INTER_AREA)
    return Source(bgr, 1.0 / (k * scale))


def working_copy(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``image`` brought to ``size`` (w, h) to find dice in: bilinearly down to half its size,
    as dice are read from the source, not from this copy (OpenCV's area reduction is several
    times slower at factors that are no whole number); by area below that, where bilinear
    sampling would skip pixels."""
    if image.shape[:2] == (size[1], size[0]):
        return image
    bilinear = size[0] >= 0.5 * image.shape[1]
    return cv2.resize(image, size,
                      interpolation=cv2.INTER_LINEAR if bilinear else cv2.INTER_AREA)


def straightening(center, angle: float, side: float, zoom: float = 1.0) -> np.ndarray:
    """The 2x3 image-to-patch transform that `straighten` warps by: the die (``side`` px,
    turned by ``angle`` degrees, at ``center``, all in pixels of an image ``zoom`` times
    smaller than the one warped) axis-aligned at the patch's centre and scaled to PATCH_SIDE.
    Apart from `straighten` so training can compose more (a slant) and still warp once."""
    size = round(PATCH_SIDE * PATCH_SCALE)
    cx, cy = float(center[0]) * zoom, float(center[1]) * zoom
    m = cv2.getRotationMatrix2D((cx, cy), angle, PATCH_SIDE / (side * zoom))
    m[0, 2] += size / 2.0 - cx
    m[1, 2] += size / 2.0 - cy
    return m


def warped(image: np.ndarray, forward: np.ndarray) -> np.ndarray:
    """``image`` warped into a patch by the image-to-patch transform ``forward``."""
    size = round(PATCH_SIDE * PATCH_SCALE)
    return cv2.warpAffine(
        image, forward, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )


def straighten(
    image: np.ndarray, center, angle: float, side: float, zoom: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """A patch with the die (``side`` px, turned by ``angle`` degrees) axis-aligned at its
    centre and scaled to PATCH_SIDE; returns (patch, 2x3 patch-to-image transform).

    ``center`` and ``side`` are in pixels of an image ``zoom`` times smaller than ``image``
    (the working copy, when ``image`` is the sharper source), and so is the transform."""
    m = straightening(center, angle, side, zoom)
    return warped(image, m), cv2.invertAffineTransform(m) / zoom


def to_image(back: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Patch points (n, 2) mapped through a patch-to-image transform ``back``."""
    return pts @ back[:, :2].T + back[:, 2]


@dataclass
class View:
    """One candidate straightened: its die side, patch, patch-to-image transform and the face
    network's class probabilities."""

    side: float
    patch: np.ndarray
    back: np.ndarray
    probs: np.ndarray | None = None


def views(source: Source, placements: list[tuple[Candidate, float]], net: FaceReader
          ) -> list[View]:
    """Each candidate straightened at its die side, with the face network ``net``'s
    probabilities (one pass of the network for all: cheaper than one per candidate)."""
    seen = [View(side, *straighten(source.image, cand.center, cand.angle, side, source.zoom))
            for cand, side in placements]
    for view, probs in zip(seen, net.probabilities([v.patch for v in seen]),
                           strict=True):
        view.probs = probs
    return seen


def candidate_side(cand: Candidate, side: float) -> float:
    """The die side to straighten a candidate with: the die finder's, which measures each die
    on its own, unless the finder was unsure of the spot and its side is far from the
    typical one; a region's own when it is one die (dice of several sizes may share a tray:
    down to half the typical side)."""
    own = cand.side
    if cand.source == "found":
        lo, hi = FOUND_SIDES
        return own if cand.score >= SURE_SIZE or lo * side <= own <= hi * side else side
    return own if cand.source == "body" and 0.5 * side <= own <= 1.4 * side else side
