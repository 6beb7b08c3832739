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


def _grid_angle(pts: list[tuple[float, float]]) -> float:
    """Grid rotation (mod 45 degrees) from the directions between pips.

    Pairs on a face are along the grid axes or its diagonals, so 8 x their angle is the same
    for all of them; the weighted mean of that vector gives the rotation. Plain floats: on six
    points or fewer, numpy's per-call cost outweighs the arithmetic.
    """
    vx = vy = 0.0
    for k, (xi, yi) in enumerate(pts):
        for xj, yj in pts[k + 1 :]:
            dx, dy = xi - xj, yi - yj
            weight, theta = math.hypot(dx, dy), 8.0 * math.atan2(dy, dx)
            vx += weight * math.cos(theta)
            vy += weight * math.sin(theta)
    return math.atan2(vy, vx) / 8.0


def _axis_pitch(mags: list[float]) -> float:
    """Grid pitch along one axis: the typical offset (``mags``: absolute offsets) of the pips
    that are off that axis."""
    top = max(mags)
    return statistics.median([m for m in mags if m > 0.5 * top]) if top > 0 else 0.0


def fit_layout(
    points: np.ndarray, max_residual: float = 0.25
) -> LayoutFit | None:
    """The face formed by ``points`` (N x 2 pip centres), or None if they form no face."""
    n = len(points)
    if n < 1 or n > 6:
        return None
    pts = [(float(x), float(y)) for x, y in points]
    cx, cy = sum(p[0] for p in pts) / n, sum(p[1] for p in pts) / n
    if n == 1:
        return LayoutFit(1, 0.0, 0.0, 0.0, (cx, cy))
    rel = [(x - cx, y - cy) for x, y in pts]
    base = _grid_angle(pts)
    best: LayoutFit | None = None
    for angle in (base, base + math.pi / 4):
        c, s = math.cos(angle), math.sin(angle)
        # Coordinates in the grid frame.
        u = [x * c + y * s for x, y in rel]
        v = [-x * s + y * c for x, y in rel]
        # Separate pitches along both grid axes: a face seen at a slant is foreshortened, and
        # the columns of a six are often further apart than its pips within a column.
        pu, pv = _axis_pitch([abs(t) for t in u]), _axis_pitch([abs(t) for t in v])
        if pu <= 0 or pv <= 0:
            continue
        gu, gv = [t / pu for t in u], [t / pv for t in v]
        nu, nv = [round(t) for t in gu], [round(t) for t in gv]
        if any(abs(t) > 1 for t in nu) or any(abs(t) > 1 for t in nv):
            continue
        residual = max(math.hypot(a - i, b - j) for a, i, b, j in zip(gu, nu, gv, nv, strict=True))
        nodes = frozenset(zip(nu, nv, strict=True))
        if len(nodes) != n or residual > max_residual:
            continue
        value = _NODE_SETS.get(nodes)
        if value is None:
            continue
        lo, hi = (0.55, 1.8) if value == 6 else (0.75, 1.33)
        if not lo <= pu / pv <= hi:
            continue
        fit = LayoutFit(value, math.sqrt(pu * pv), angle, residual, (cx, cy))
        if best is None or fit.residual < best.residual:
            best = fit
    return best
