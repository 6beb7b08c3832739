"""Pip layouts of a d6 face: which sets of pip centres are a valid face, and which value.

A face's pips sit on the nodes of a 3x3 grid centred on the face. Given pip centres (any
rotation, any scale), `fit_layout` finds the grid rotation and pitch that put every pip on a
node, and accepts a value only when the occupied nodes are exactly one of the six faces.
"""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass

import numpy as np

_CORNERS = {(-1, -1), (1, 1), (-1, 1), (1, -1)}
# Node sets of each face, as seen at every multiple of 90 degrees.
FACES: dict[int, tuple[frozenset[tuple[int, int]], ...]] = {
    1: (frozenset({(0, 0)}),),
    2: (frozenset({(-1, -1), (1, 1)}), frozenset({(-1, 1), (1, -1)})),
    3: (frozenset({(-1, -1), (0, 0), (1, 1)}), frozenset({(-1, 1), (0, 0), (1, -1)})),
    4: (frozenset(_CORNERS),),
    5: (frozenset(_CORNERS | {(0, 0)}),),
    6: (
        frozenset(_CORNERS | {(-1, 0), (1, 0)}),
        frozenset(_CORNERS | {(0, -1), (0, 1)}),
    ),
}
_NODE_SETS = {nodes: value for value, sets in FACES.items() for nodes in sets}


@dataclass(frozen=True)
class LayoutFit:
    """The face value the pip centres form, with how well they fit the grid."""

    value: int
    pitch: float  # grid pitch in input units (distance between neighbouring nodes)
    angle: float  # grid rotation in radians
    residual: float  # worst pip distance to its node, as a fraction of the pitch
    center: tuple[float, float]


@functools.lru_cache(maxsize=16)
def pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (i, j), i < j, of every pair of ``n`` points (``np.triu_indices(n, 1)``,
    cached: readers ask for the same few sizes many times a frame)."""
    return np.triu_indices(n, 1)


def grid_angle(points: np.ndarray) -> float:
    """Grid rotation (mod 45 degrees) from the directions between pips.

    Pairs on a face are along the grid axes or its diagonals, so 8 x their angle is the same
    for all of them; the weighted mean of that vector gives the rotation.
    """
    diffs = points[:, None, :] - points[None, :, :]
    iu = pairs(len(points))
    dx, dy = diffs[..., 0][iu], diffs[..., 1][iu]
    theta = np.arctan2(dy, dx)
    weight = np.hypot(dx, dy)
    vec = np.sum(weight * np.exp(8j * theta))
    return float(np.angle(vec) / 8.0)


def _axis_pitch(coords: np.ndarray) -> float:
    """Grid pitch along one axis: the typical offset of the pips that are off that axis."""
    mags = np.abs(coords)
    top = mags.max()
    # statistics.median: the same value as np.median, without its overhead on a few numbers.
    return float(statistics.median(mags[mags > 0.5 * top].tolist())) if top > 0 else 0.0


def fit_layout(
    points: np.ndarray, max_residual: float = 0.25
) -> LayoutFit | None:
    """The face formed by ``points`` (N x 2 pip centres), or None if they form no face."""
    n = len(points)
    if n < 1 or n > 6:
        return None
    center = points.mean(axis=0)
    if n == 1:
        return LayoutFit(1, 0.0, 0.0, 0.0, (float(center[0]), float(center[1])))
    rel = points - center
    base = grid_angle(points)
    best: LayoutFit | None = None
    for angle in (base, base + math.pi / 4):
        c, s = math.cos(angle), math.sin(angle)
        # Coordinates in the grid frame.
        u = rel[:, 0] * c + rel[:, 1] * s
        v = -rel[:, 0] * s + rel[:, 1] * c
        # Separate pitches along both grid axes: a face seen at a slant is foreshortened, and
        # the columns of a six are often further apart than its pips within a column.
        pu, pv = _axis_pitch(u), _axis_pitch(v)
        if pu <= 0 or pv <= 0:
            continue
        gu, gv = u / pu, v / pv
        nu, nv = np.rint(gu), np.rint(gv)
        if np.any(np.abs(nu) > 1) or np.any(np.abs(nv) > 1):
            continue
        residual = float(np.max(np.hypot(gu - nu, gv - nv)))
        nodes = frozenset(zip(nu.astype(int).tolist(), nv.astype(int).tolist(), strict=True))
        if len(nodes) != n or residual > max_residual:
            continue
        value = _NODE_SETS.get(nodes)
        if value is None:
            continue
        lo, hi = (0.55, 1.8) if value == 6 else (0.75, 1.33)
        if not lo <= pu / pv <= hi:
            continue
        pitch = float(np.sqrt(pu * pv))
        fit = LayoutFit(value, pitch, angle, residual, (float(center[0]), float(center[1])))
        if best is None or fit.residual < best.residual:
            best = fit
    return best
