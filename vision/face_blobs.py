"""The face reader's pip candidates (`vision.face`): the blobs inside the die's hull that
differ from the body, of either polarity (dark, light or only coloured), with their size,
roundness, contrast and colour.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.components import components
from vision.face_body import MIN_CONTRAST, WORK_SIDE

MIN_PIP_RADIUS = 0.035  # pip radius / die side
MAX_PIP_RADIUS = 0.22
MAX_ELONGATION = 1.8  # principal-axis ratio of a pip seen face-on or slightly blurred
SAME_COLOR = 0.8  # cosine between colour differences of blobs of one pip colour

_CROSS = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))


@dataclass(frozen=True)
class Blobs:
    """Pip candidates at working scale, one entry per blob."""

    xy: np.ndarray  # (n, 2) centroids
    radius: np.ndarray  # equivalent-disc radius
    contrast: np.ndarray  # mean colour distance to the body
    lightness: np.ndarray  # mean lightness difference to the body (sign = polarity)
    color: np.ndarray  # (n, 3) mean weighted Lab difference to the body (its norm ~ contrast)
    elongation: np.ndarray  # principal-axis ratio
    plausible: np.ndarray  # bool: pip-sized and round enough


def find_blobs(dist: np.ndarray, diff: np.ndarray, thr: float, hull: np.ndarray) -> Blobs:
    inner = cv2.erode(hull, np.ones((5, 5), np.uint8))
    cand = ((dist >= thr) & (inner > 0)).astype(np.uint8)
    # Opening cuts the thin bridges that join pips to the die's shaded edges.
    cand = cv2.morphologyEx(cand, cv2.MORPH_OPEN, _CROSS)
    count, labels, stats, cents = components(cand, 4)
    if count < 2:
        empty = np.zeros(0)
        return Blobs(
            np.zeros((0, 2)), empty, empty, empty, np.zeros((0, 3)), empty, np.zeros(0, bool)
        )
    # Blobs reaching the hull's rim are background or side faces seen between pips and edge.
    rim = (hull > 0) & (cv2.erode(inner, np.ones((3, 3), np.uint8)) == 0)
    on_rim = np.zeros(count, bool)
    on_rim[labels[rim]] = True
    # Per-blob sums over the blob pixels only (a few hundred, not the whole patch).
    ys, xs = np.nonzero(labels)
    flat = labels[ys, xs]
    area = stats[:, cv2.CC_STAT_AREA].astype(np.float64)
    n = np.maximum(area, 1)
    contrast = np.bincount(flat, dist[ys, xs], count) / n
    pixels = diff[ys, xs]
    color = np.stack([np.bincount(flat, pixels[:, k], count) / n for k in range(3)], axis=1)
    radius = np.sqrt(area / math.pi)
    elong = _elongation(xs.astype(np.float64), ys.astype(np.float64), flat, count, n)
    plausible = (
        (radius >= MIN_PIP_RADIUS * WORK_SIDE)
        & (radius <= MAX_PIP_RADIUS * WORK_SIDE)
        & (elong <= MAX_ELONGATION)
        & (contrast >= MIN_CONTRAST)
        & ~on_rim
    )
    keep = np.arange(1, count)
    keep = keep[~on_rim[keep] | plausible[keep]]
    return Blobs(
        cents[keep],
        radius[keep],
        contrast[keep],
        color[keep, 0],
        color[keep],
        elong[keep],
        plausible[keep],
    )


def _elongation(
    x: np.ndarray, y: np.ndarray, label: np.ndarray, count: int, n: np.ndarray
) -> np.ndarray:
    """Ratio of the principal axes of each labelled blob (1 = round; two merged pips ~ 2)."""
    mx, my = np.bincount(label, x, count) / n, np.bincount(label, y, count) / n
    # 1/12 is the variance of one pixel: keeps a 1-2 px blob from looking infinitely thin.
    sxx = np.bincount(label, x * x, count) / n - mx * mx + 1 / 12
    syy = np.bincount(label, y * y, count) / n - my * my + 1 / 12
    sxy = np.bincount(label, x * y, count) / n - mx * my
    half_sum, root = (sxx + syy) / 2, np.sqrt(((sxx - syy) / 2) ** 2 + sxy**2)
    return np.sqrt((half_sum + root) / np.maximum(half_sum - root, 1e-6))


def same_color(colors: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Which blob colours (differences to the body) are close to the pips' colour ``ref``."""
    # By direction, not distance: a faint pip (shaded, half lost) is a weaker pip colour.
    norms = np.linalg.norm(colors, axis=1) * max(float(np.linalg.norm(ref)), 1e-6)
    return colors @ ref > SAME_COLOR * np.maximum(norms, 1e-6)
