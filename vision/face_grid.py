"""The face reader's geometry (`vision.face`): which face's 3x3 grid the pip candidates sit
on, at any rotation, and whether the grid's empty nodes lie on the die and look like body.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vision.layout import pairs

MAX_RESIDUAL = 0.3  # worst pip distance to its grid node, in pitches
# An empty grid node must look like body: below this x the faintest pip's contrast. A missed pip
# measures about 1; marbled bodies reach 0.6. Around a one the probes are many and a one is
# the cheapest misreading (any face with its outer pips lost), so it is held stricter.
EMPTY_NODE_CONTRAST = 0.7
EMPTY_RING_CONTRAST = 0.33

# Grid nodes of each face at every multiple of 90 degrees (x, y in pitch units).
_CORNERS = frozenset({(-1, -1), (1, 1), (-1, 1), (1, -1)})
_FACES: dict[frozenset[tuple[int, int]], int] = {
    frozenset({(-1, -1), (1, 1)}): 2,
    frozenset({(-1, 1), (1, -1)}): 2,
    frozenset({(-1, -1), (0, 0), (1, 1)}): 3,
    frozenset({(-1, 1), (0, 0), (1, -1)}): 3,
    _CORNERS: 4,
    _CORNERS | {(0, 0)}: 5,
    _CORNERS | {(-1, 0), (1, 0)}: 6,
    _CORNERS | {(0, -1), (0, 1)}: 6,
}

_KNIGHT = math.atan2(1, 2)  # direction of a (2, 1) step on the grid
# Turns from a pair of pips to the grid axes: along an axis, a diagonal, a knight's move.
_PAIR_TURNS = np.array([0.0, math.pi / 4, -_KNIGHT, _KNIGHT])
_FACE_MASKS = {
    sum(1 << ((x + 1) * 3 + (y + 1)) for x, y in nodes): value for nodes, value in _FACES.items()
}


@dataclass(frozen=True)
class Fit:
    """A face whose grid the pips sit on: its centre, rotation (radians, mod 90 degrees),
    pitch and worst pip distance to a node (in pitches), at working scale."""

    value: int
    center: np.ndarray
    angle: float
    pitch: float
    residual: float


def fit_grid(points: np.ndarray) -> Fit | None:
    """The face whose grid nodes the points occupy exactly, or None (2..6 points).

    Every pair of pips lies along a grid axis, a diagonal, or (on a six) a knight's move; each
    pair therefore proposes rotations, and all proposals are scored at once.
    """
    n = len(points)
    center = points.sum(axis=0) / n
    rel = points - center
    i, j = pairs(n)
    d = points[j] - points[i]
    phi = np.arctan2(d[:, 1], d[:, 0])
    angles = ((phi + _PAIR_TURNS[:, None]).ravel() % (math.pi / 2)).round(3)
    angles.sort()
    distinct = np.ones(len(angles), bool)
    np.not_equal(angles[1:], angles[:-1], out=distinct[1:])
    angles = angles[distinct]
    c, s = np.cos(angles)[:, None], np.sin(angles)[:, None]
    u = rel[:, 0] * c + rel[:, 1] * s  # (hypotheses, points) in the grid frame
    v = -rel[:, 0] * s + rel[:, 1] * c
    coords = np.abs(np.concatenate([u, v], axis=1))
    big = coords > 0.5 * coords.max(axis=1, keepdims=True)
    pitch = (coords * big).sum(axis=1) / np.maximum(big.sum(axis=1), 1)
    pitch = np.maximum(pitch, 1e-6)[:, None]
    nu, nv = np.rint(u / pitch), np.rint(v / pitch)
    # Least-squares pitch for the chosen nodes, then the worst distance to a node.
    nn = (nu * nu + nv * nv).sum(axis=1)
    pitch = ((u * nu + v * nv).sum(axis=1) / np.maximum(nn, 1e-6))[:, None]
    residual = np.hypot(u / pitch - nu, v / pitch - nv).max(axis=1)
    on_grid = (np.maximum(np.abs(nu), np.abs(nv)).max(axis=1) <= 1) & (nn > 0)
    ok = np.flatnonzero(on_grid & (residual <= MAX_RESIDUAL))
    # Few hypotheses are left: their nodes are checked one by one.
    for k in ok[np.argsort(residual[ok])]:
        nodes = [int(a) * 3 + int(b) + 4 for a, b in zip(nu[k], nv[k], strict=True)]
        if len(set(nodes)) != n:
            continue
        value = _FACE_MASKS.get(sum(1 << node for node in nodes))
        if value == n:
            return Fit(value, center, float(angles[k]), float(pitch[k, 0]), float(residual[k]))
    return None


def empty_nodes_clear(
    dist: np.ndarray, hull: np.ndarray, fit: Fit, pips: np.ndarray, radius: float, pitch: float
) -> bool:
    """True when every grid node without a pip lies on the die and looks like body.

    A node off the die's region means the face runs under a cover or out of view (an adjacent
    pair of a half-hidden four is a two at 45 degrees); a node unlike the body is a missed pip.
    """
    probe = 0.7 * radius
    pip_level = float(_disc_means(dist, pips, probe).min())
    if fit.value == 1:
        # Rotation unknown: probe all around at the side and corner distances of the grid.
        turns = np.linspace(0, 2 * math.pi, 24, endpoint=False)
        ring = np.concatenate([np.full(24, pitch), np.full(24, pitch * math.sqrt(2))])
        angles = np.concatenate([turns, turns])
        nodes = fit.center + np.stack([ring * np.cos(angles), ring * np.sin(angles)], axis=1)
    else:
        grid = np.array([(i, j) for i in (-1, 0, 1) for j in (-1, 0, 1)], dtype=np.float64)
        c, s = math.cos(fit.angle), math.sin(fit.angle)
        rot = np.array([[c, -s], [s, c]])
        nodes = fit.center + grid @ rot.T * fit.pitch
        taken = np.hypot(*(nodes[:, None, :] - pips[None, :, :]).transpose(2, 0, 1)).min(axis=1)
        nodes = nodes[taken > 0.5 * fit.pitch]
    h, w = hull.shape
    xs, ys = np.rint(nodes[:, 0]).astype(int), np.rint(nodes[:, 1]).astype(int)
    on_patch = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
    if not on_patch.all() or not hull[ys, xs].all():
        return False
    empty_level = float(_disc_means(dist, nodes, probe).max())
    limit = EMPTY_RING_CONTRAST if fit.value == 1 else EMPTY_NODE_CONTRAST
    return empty_level < limit * pip_level


def _disc_means(image: np.ndarray, centers: np.ndarray, radius: float) -> np.ndarray:
    """Mean of ``image`` over a disc around each centre (clipped at the border)."""
    r = max(1, round(radius))
    dy, dx = np.mgrid[-r : r + 1, -r : r + 1]
    inside = dx * dx + dy * dy <= radius * radius + 0.5
    dx, dy = dx[inside], dy[inside]
    h, w = image.shape
    xs = np.clip(np.rint(centers[:, 0])[:, None].astype(int) + dx, 0, w - 1)
    ys = np.clip(np.rint(centers[:, 1])[:, None].astype(int) + dy, 0, h - 1)
    return image[ys, xs].mean(axis=1)


def angle_gap(a: float, b: float) -> float:
    """Distance between two rotations mod 90 degrees, in radians (0..pi/4)."""
    d = (a - b) % (math.pi / 2)
    return min(d, math.pi / 2 - d)
