"""The face reader's first steps (`vision.face`): how each pixel of a patch differs from the
die's body, and the body itself.

Patches are brought to a working scale where the die side is WORK_SIDE pixels, so every
threshold of the face reader is in die-side units. The body colour is the median Lab colour
of a ring around the patch centre; the die is the body-coloured region holding the centre,
its convex hull is where pips may be, and its rectangle and edges give the face's centre,
side and rotation.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.components import components

WORK_SIDE = 48.0  # die side in working pixels; pips are then 5-15 px across
MIN_CONTRAST = 9.0  # Lab distance below which a blob is noise, not a pip
# A body outline gives the die's rotation when this much of it (x side) lies off the patch
# border and its edges agree this well (1 = all parallel or square to each other).
OUTLINE_MIN_LENGTH = 0.8
OUTLINE_COHERENCE = 0.6

# Wider than the biggest pip (a one's: up to 0.44 x side).
_HAT_KERNEL = np.ones((int(0.5 * WORK_SIDE) | 1,) * 2, np.uint8)
# 8-bit L spans 0..255 for 0..100; chroma counts a little more than in plain Delta-E, since
# coloured pips differ mostly in hue.
_LAB_WEIGHTS = np.array([100.0 / 255.0, math.sqrt(1.5), math.sqrt(1.5)], np.float32)
_ONES_3 = np.ones((1, 3), np.float32)


@dataclass(frozen=True)
class Maps:
    """Per-pixel measures of the working image."""

    dist: np.ndarray  # colour distance to the body colour
    pipness: np.ndarray  # colour distance to the body right around (small spots only)
    lightness: np.ndarray  # lightness difference to the body colour (+ lighter, - darker)
    diff: np.ndarray  # (h, w, 3) weighted Lab difference to the body colour
    radius: np.ndarray  # distance to the image centre


@dataclass(frozen=True)
class Body:
    """The die's body-coloured region at working scale."""

    center: np.ndarray  # centre of its bounding rectangle
    side: float  # side of a square of the rectangle's area
    angle: float  # rectangle rotation, radians, mod 90 degrees
    reliable: bool  # the rectangle is square-ish and clear of the patch border
    aspect: float
    outline: float | None  # direction of the region's own edges (mod 90 degrees) if clear


def measure(work: np.ndarray) -> Maps:
    lab8 = cv2.cvtColor(cv2.GaussianBlur(work, (3, 3), 0), cv2.COLOR_BGR2Lab)
    h, w = work.shape[:2]
    r = _center_distance(h, w)
    # A ring, not a disc: the big single pip of a one must not pull the body colour.
    ring = (r > 0.12 * WORK_SIDE) & (r < 0.38 * WORK_SIDE)
    body = median(lab8[ring]).astype(np.float32)
    diff = (lab8.astype(np.float32) - body) * _LAB_WEIGHTS
    # cv2 for the per-pixel norm: several times faster than numpy on these small images.
    dist = cv2.sqrt(cv2.transform(cv2.multiply(diff, diff), _ONES_3))
    # A top-hat wider than any pip measures each spot against the body right around it, so
    # slow shading and large-scale marbling do not count as contrast.
    pipness = cv2.morphologyEx(dist, cv2.MORPH_TOPHAT, _HAT_KERNEL)
    return Maps(dist, pipness, diff[..., 0], diff, r)


def body_threshold(dist: np.ndarray) -> float:
    scaled = np.clip(dist * 2.0, 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(scaled, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    return float(np.clip(otsu / 2.0, 6.0, 40.0))


def pip_threshold(dist: np.ndarray, hull: np.ndarray) -> float:
    """Split pips from body inside the die: Otsu there, but never down into the body's noise."""
    inside = dist[hull > 0]
    scaled = np.clip(inside * 4.0, 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(scaled, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    noise = float(median(inside))
    return float(max(otsu / 4.0, MIN_CONTRAST, 2.5 * noise + 3.0))


def find_body(
    dist: np.ndarray, thr: float, r: np.ndarray
) -> tuple[np.ndarray | None, Body | None]:
    """The convex hull mask of the body region at the centre, and its rectangle."""
    body = (dist < thr).astype(np.uint8)
    body = cv2.morphologyEx(body, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    count, labels, stats, _ = components(body, 4)
    if count < 2:
        return None, None
    central = labels[r < 0.25 * WORK_SIDE]
    central = central[central > 0]
    if central.size == 0:
        return None, None
    label = int(np.bincount(central).argmax())
    comp = (labels == label).astype(np.uint8)
    contours, _ = cv2.findContours(comp, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    points = np.concatenate(contours).reshape(-1, 2)
    hull = cv2.convexHull(points)
    mask = np.zeros_like(comp)
    cv2.fillConvexPoly(mask, hull, 1)
    (cx, cy), (rw, rh), angle = cv2.minAreaRect(hull)
    h, w = dist.shape
    x, y, bw, bh = stats[label, :4]
    touches = x <= 0 or y <= 0 or x + bw >= w or y + bh >= h
    aspect = max(rw, rh) / max(1.0, min(rw, rh))
    info = Body(
        center=np.array([cx, cy]),
        side=float(math.sqrt(max(1.0, rw * rh))),
        angle=math.radians(angle) % (math.pi / 2),
        reliable=not touches and aspect < 1.35,
        aspect=aspect,
        outline=_outline_angle(hull.reshape(-1, 2).astype(np.float64), w, h),
    )
    return mask, info


def _outline_angle(hull: np.ndarray, w: int, h: int) -> float | None:
    """The direction (mod 90 degrees) of the die edges seen on a region's hull, if clear.

    Edges along the patch border are the crop's, not the die's; when the body runs into the
    floor or out of the patch, what is left may still show one or two of its sides.
    """
    if len(hull) < 3:
        return None
    a, b = hull, np.roll(hull, -1, axis=0)
    d = b - a
    length = np.hypot(d[:, 0], d[:, 1])
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    on_border = (hi[:, 0] <= 1) | (lo[:, 0] >= w - 2) | (hi[:, 1] <= 1) | (lo[:, 1] >= h - 2)
    length = np.where(on_border, 0.0, length)
    total = float(length.sum())
    if total < OUTLINE_MIN_LENGTH * WORK_SIDE:
        return None
    vec = np.sum(length * np.exp(4j * np.arctan2(d[:, 1], d[:, 0])))
    if abs(vec) < OUTLINE_COHERENCE * total:
        return None
    return float(np.angle(vec) / 4.0) % (math.pi / 2)


def quantile(values: np.ndarray, q: float) -> np.ndarray:
    """The q-quantile along the first axis (nearest rank; np.percentile is slow on small data)."""
    k = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return np.partition(values, k, axis=0)[k]


def median(values: np.ndarray) -> np.ndarray:
    return quantile(values, 0.5)


@functools.lru_cache(maxsize=64)
def _center_distance(h: int, w: int) -> np.ndarray:
    yy, xx = np.ogrid[:h, :w]
    return np.hypot(xx - (w - 1) / 2, yy - (h - 1) / 2).astype(np.float32)
