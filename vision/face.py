"""Read the top face of one die from a patch around it: find its pips, accept only a true layout.

`read_face` works on a patch roughly centred on one die (about 1.2-1.6 x the die side, any
rotation, neighbours may intrude at the border). The steps, all at a fixed working scale where
the die side is `WORK_SIDE` pixels so that every threshold below is in die-side units:

1. The body colour is the median Lab colour of a ring around the patch centre (a ring, so that a
   big centre pip does not pull it). Every pixel gets its colour distance to the body; Otsu on
   that distance splits "body" from "something else" (pips, background, other dice).
2. The die is the body-coloured region holding the patch centre; its convex hull is where pips
   may be, its bounding rectangle gives the face centre, side and rotation, and the hull's edges
   off the patch border give the die's rotation even when the region runs into the floor.
3. Pip candidates are the non-body blobs inside the hull, of either polarity (dark, light or
   only coloured); their size, roundness, contrast and colour are measured, and only those of
   the pips' common colour are kept (shadows and marbling differ in hue or polarity).
4. The candidates must sit on the nodes of a 3x3 grid (at any rotation) in exactly one of the six
   face patterns, with consistent size and contrast, a pitch that fits the die side, the pattern
   centred on the face, a two or three along the die's diagonal, every empty node on the die and
   body-like, and no other pip-like blob of the pips' colour left on the face. Anything else
   gives no value (a reason and plausible alternatives instead): a wrong value costs a player,
   an unsure one only a re-throw.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.components import components
from vision.image_io import as_bgr
from vision.layout import pairs
from vision.types import REASONS

WORK_SIDE = 48.0  # die side in working pixels; pips are then 5-15 px across
PATCH_TO_SIDE = 1.4  # assumed patch side / die side when the die side is not given
MIN_PATCH_SIDES = 0.8  # a patch narrower than this x die side cannot show the top face
MAX_PATCH_SIDES = 3.0  # beyond this x die side around the centre, a patch is cut down
PITCH = 0.21  # grid pitch / visible top-face side, as measured on real dice (0.17-0.24)
PITCH_TOL = (0.6, 1.4)  # accepted pitch / expected pitch when the die side is given
PITCH_TOL_GUESSED = (0.5, 1.6)  # ... when the die side is only estimated from the body
MAX_RESIDUAL = 0.3  # worst pip distance to its grid node, in pitches
MIN_CONTRAST = 9.0  # Lab distance below which a blob is noise, not a pip
MIN_PIP_RADIUS = 0.035  # pip radius / die side
MAX_PIP_RADIUS = 0.22
# Pattern centre to face centre, x side: a whole-die view puts the top face off the die's centre
# by up to about a quarter side; with the scale only guessed, that margin would admit partial
# faces, so it is narrower.
MAX_CENTER_OFFSET = (0.28, 0.2)  # side known, side guessed
ONE_CENTER_OFFSET = (0.2, 0.15)  # side known, side guessed
MIN_ONE_RADIUS = 0.06  # the single pip of a one is never a speck
# Around a one, nothing pip-like within this x side: the far corner of a two is at ~0.6.
ONE_CLEAR_RADIUS = 0.68
# Around other faces, nothing pip-like within this many pitches of the centre (the face edge
# is at about 2.4; side-face pips lie beyond it).
FACE_CLEAR_PITCHES = 1.9
FACE_CLEAR_SIDES = 0.45  # ... and at least this x side (a face's edge is at about 0.5)
LEFTOVER_RADIUS = 0.5  # x smallest pip radius: smaller specks are texture, not pips
MAX_ELONGATION = 1.8  # principal-axis ratio of a pip seen face-on or slightly blurred
MAX_ONE_ELONGATION = 1.4  # the single pip of a one: a merged pair must not pass for it
MAX_RADIUS_RATIO = 1.7  # largest / smallest pip radius on one face
MIN_CONTRAST_RATIO = 0.5  # weakest / strongest pip contrast on one face
# A body outline gives the die's rotation when this much of it (x side) lies off the patch
# border and its edges agree this well (1 = all parallel or square to each other).
OUTLINE_MIN_LENGTH = 0.8
OUTLINE_COHERENCE = 0.6
SAME_COLOR = 0.8  # cosine between colour differences of blobs of one pip colour
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


# Wider than the biggest pip (a one's: up to 0.44 x side).
_HAT_KERNEL = np.ones((int(0.5 * WORK_SIDE) | 1,) * 2, np.uint8)
_CROSS = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))
# 8-bit L spans 0..255 for 0..100; chroma counts a little more than in plain Delta-E, since
# coloured pips differ mostly in hue.
_LAB_WEIGHTS = np.array([100.0 / 255.0, math.sqrt(1.5), math.sqrt(1.5)], np.float32)
_ONES_3 = np.ones((1, 3), np.float32)


_KNIGHT = math.atan2(1, 2)  # direction of a (2, 1) step on the grid
# Turns from a pair of pips to the grid axes: along an axis, a diagonal, a knight's move.
_PAIR_TURNS = np.array([0.0, math.pi / 4, -_KNIGHT, _KNIGHT])
_FACE_MASKS = {
    sum(1 << ((x + 1) * 3 + (y + 1)) for x, y in nodes): value for nodes, value in _FACES.items()
}


@dataclass(frozen=True)
class FaceReading:
    """What was read on one die: a value 1..6, or None with a reason from `REASONS`.

    ``pips`` are (x, y, radius) in patch pixels; ``alternatives`` are other plausible values,
    likeliest first; ``polarity`` is "dark" or "light" (pips against the body) when known.
    """

    value: int | None
    confidence: float
    reason: str | None
    pips: tuple[tuple[float, float, float], ...] = ()
    polarity: str | None = None
    alternatives: tuple[int, ...] = ()


@dataclass(frozen=True)
class _Blobs:
    """Pip candidates at working scale, one entry per blob."""

    xy: np.ndarray  # (n, 2) centroids
    radius: np.ndarray  # equivalent-disc radius
    contrast: np.ndarray  # mean colour distance to the body
    lightness: np.ndarray  # mean lightness difference to the body (sign = polarity)
    color: np.ndarray  # (n, 3) mean weighted Lab difference to the body (its norm ~ contrast)
    elongation: np.ndarray  # principal-axis ratio
    plausible: np.ndarray  # bool: pip-sized and round enough


@dataclass(frozen=True)
class _Body:
    """The die's body-coloured region at working scale."""

    center: np.ndarray  # centre of its bounding rectangle
    side: float  # side of a square of the rectangle's area
    angle: float  # rectangle rotation, radians, mod 90 degrees
    reliable: bool  # the rectangle is square-ish and clear of the patch border
    aspect: float
    outline: float | None  # direction of the region's own edges (mod 90 degrees) if clear


@dataclass(frozen=True)
class _Fit:
    value: int
    center: np.ndarray
    angle: float
    pitch: float
    residual: float


def read_face(
    patch: np.ndarray, die_side: float | None = None, polarity: str | None = None
) -> FaceReading:
    """Read the top face of the die at the centre of ``patch`` (BGR uint8; gray and BGRA too).

    ``die_side`` is the top face's side in patch pixels if known; ``polarity`` is "dark" or
    "light" pips if known. The value is None (with a reason) unless the pips fit a face layout.
    """
    bgr = as_bgr(patch, "patch", min_side=8)
    if polarity not in (None, "dark", "light"):
        raise ValueError(f"polarity must be 'dark', 'light' or None, got {polarity!r}")
    if die_side is not None and not (math.isfinite(die_side) and die_side > 0):
        raise ValueError(f"die_side must be a positive number of pixels, got {die_side!r}")
    if die_side is not None:
        return _read_at(bgr, float(die_side), True, polarity)[0]
    first: FaceReading | None = None
    # Side unknown: assume the usual patch, then a die well inside a larger crop.
    for ratio in (PATCH_TO_SIDE, 2.6):
        side = min(bgr.shape[:2]) / ratio
        reading, body_side = _read_at(bgr, side, False, polarity)
        if body_side is not None and not 0.75 < body_side / side < 1.33:
            # The die is much smaller or larger than assumed: read again at its own scale.
            reading, body_side = _read_at(bgr, body_side, False, polarity)
        if reading.value is not None or body_side is not None:
            return reading
        first = first or reading
    return first


def _read_at(
    bgr: np.ndarray, side: float, known: bool, polarity: str | None
) -> tuple[FaceReading, float | None]:
    """Read at the scale where ``side`` patch pixels become WORK_SIDE; also the body's side."""
    scale = WORK_SIDE / side
    h, w = bgr.shape[:2]
    if min(h, w) < MIN_PATCH_SIDES * side:
        # The patch cannot hold the die's top face: nothing to read, and no scale to trust.
        return _unsure("occluded"), None
    # Only the die at the centre matters: a patch much larger than it is cut down first, so
    # that the working image stays small whatever the caller passes.
    half = MAX_PATCH_SIDES * side / 2
    x0, y0 = max(0, int(w / 2 - half)), max(0, int(h / 2 - half))
    bgr = bgr[y0 : min(h, math.ceil(h / 2 + half)), x0 : min(w, math.ceil(w / 2 + half))]
    h, w = bgr.shape[:2]
    size = (max(8, round(w * scale)), max(8, round(h * scale)))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    work = cv2.resize(bgr, size, interpolation=interp)
    reading, body = _read_work(work, known, polarity)
    sx, sy = w / size[0], h / size[1]
    pips = tuple(
        (round(x * sx + x0, 2), round(y * sy + y0, 2), round(r * (sx + sy) / 2, 2))
        for x, y, r in reading.pips
    )
    body_side = body.side * (sx + sy) / 2 if body is not None and body.reliable else None
    return _replace_pips(reading, pips), body_side


def _replace_pips(r: FaceReading, pips: tuple[tuple[float, float, float], ...]) -> FaceReading:
    return FaceReading(r.value, r.confidence, r.reason, pips, r.polarity, r.alternatives)


def _unsure(
    reason: str, alternatives: tuple[int, ...] = (), confidence: float = 0.0, pips=(), polarity=None
) -> FaceReading:
    assert reason in REASONS
    alts = tuple(dict.fromkeys(v for v in alternatives if 1 <= v <= 6))
    return FaceReading(None, round(float(confidence), 3), reason, tuple(pips), polarity, alts)


@dataclass(frozen=True)
class _Maps:
    """Per-pixel measures of the working image."""

    dist: np.ndarray  # colour distance to the body colour
    pipness: np.ndarray  # colour distance to the body right around (small spots only)
    lightness: np.ndarray  # lightness difference to the body colour (+ lighter, - darker)
    diff: np.ndarray  # (h, w, 3) weighted Lab difference to the body colour
    radius: np.ndarray  # distance to the image centre


def _quantile(values: np.ndarray, q: float) -> np.ndarray:
    """The q-quantile along the first axis (nearest rank; np.percentile is slow on small data)."""
    k = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return np.partition(values, k, axis=0)[k]


def _median(values: np.ndarray) -> np.ndarray:
    return _quantile(values, 0.5)


@functools.lru_cache(maxsize=64)
def _center_distance(h: int, w: int) -> np.ndarray:
    yy, xx = np.ogrid[:h, :w]
    return np.hypot(xx - (w - 1) / 2, yy - (h - 1) / 2).astype(np.float32)


def _measure(work: np.ndarray) -> _Maps:
    lab8 = cv2.cvtColor(cv2.GaussianBlur(work, (3, 3), 0), cv2.COLOR_BGR2Lab)
    h, w = work.shape[:2]
    r = _center_distance(h, w)
    # A ring, not a disc: the big single pip of a one must not pull the body colour.
    ring = (r > 0.12 * WORK_SIDE) & (r < 0.38 * WORK_SIDE)
    body = _median(lab8[ring]).astype(np.float32)
    diff = (lab8.astype(np.float32) - body) * _LAB_WEIGHTS
    # cv2 for the per-pixel norm: several times faster than numpy on these small images.
    dist = cv2.sqrt(cv2.transform(cv2.multiply(diff, diff), _ONES_3))
    # A top-hat wider than any pip measures each spot against the body right around it, so
    # slow shading and large-scale marbling do not count as contrast.
    pipness = cv2.morphologyEx(dist, cv2.MORPH_TOPHAT, _HAT_KERNEL)
    return _Maps(dist, pipness, diff[..., 0], diff, r)


def _body_threshold(dist: np.ndarray) -> float:
    scaled = np.clip(dist * 2.0, 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(scaled, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    return float(np.clip(otsu / 2.0, 6.0, 40.0))


def _pip_threshold(dist: np.ndarray, hull: np.ndarray) -> float:
    """Split pips from body inside the die: Otsu there, but never down into the body's noise."""
    inside = dist[hull > 0]
    scaled = np.clip(inside * 4.0, 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(scaled, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    noise = float(_median(inside))
    return float(max(otsu / 4.0, MIN_CONTRAST, 2.5 * noise + 3.0))


def _find_body(
    dist: np.ndarray, thr: float, r: np.ndarray
) -> tuple[np.ndarray | None, _Body | None]:
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
    info = _Body(
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


def _find_blobs(dist: np.ndarray, diff: np.ndarray, thr: float, hull: np.ndarray) -> _Blobs:
    inner = cv2.erode(hull, np.ones((5, 5), np.uint8))
    cand = ((dist >= thr) & (inner > 0)).astype(np.uint8)
    # Opening cuts the thin bridges that join pips to the die's shaded edges.
    cand = cv2.morphologyEx(cand, cv2.MORPH_OPEN, _CROSS)
    count, labels, stats, cents = components(cand, 4)
    if count < 2:
        empty = np.zeros(0)
        return _Blobs(
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
    return _Blobs(
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


def _fit_grid(points: np.ndarray) -> _Fit | None:
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
            return _Fit(value, center, float(angles[k]), float(pitch[k, 0]), float(residual[k]))
    return None


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


def _empty_nodes_clear(
    dist: np.ndarray, hull: np.ndarray, fit: _Fit, pips: np.ndarray, radius: float, pitch: float
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


def _same_color(colors: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Which blob colours (differences to the body) are close to the pips' colour ``ref``."""
    # By direction, not distance: a faint pip (shaded, half lost) is a weaker pip colour.
    norms = np.linalg.norm(colors, axis=1) * max(float(np.linalg.norm(ref)), 1e-6)
    return colors @ ref > SAME_COLOR * np.maximum(norms, 1e-6)


def _angle_gap(a: float, b: float) -> float:
    """Distance between two rotations mod 90 degrees, in radians (0..pi/4)."""
    d = (a - b) % (math.pi / 2)
    return min(d, math.pi / 2 - d)


def _read_work(
    work: np.ndarray, known: bool, polarity: str | None
) -> tuple[FaceReading, _Body | None]:
    maps = _measure(work)
    hull, body = _find_body(maps.dist, _body_threshold(maps.dist), maps.radius)
    if hull is None or body is None:
        return _unsure("not a pip face"), None
    low = _pip_threshold(maps.pipness, hull)
    first: FaceReading | None = None
    # Blurred neighbours merge at the first threshold; higher ones split them at the saddle.
    # With the scale only guessed, the highest is left out: the specks it splits off texture
    # cannot be told from pips by their size.
    span = max(0.0, float(_quantile(maps.pipness[hull > 0], 0.97)) - low)
    steps = (0.0, 0.5, 0.75) if known else (0.0, 0.5)
    witnesses: _Blobs | None = None
    for thr in (low + step * span for step in steps):
        reading, blobs = _read_blobs(maps, hull, body, thr, known, polarity, witnesses)
        witnesses = witnesses or blobs
        if reading.value is not None:
            return reading, body
        first = first or reading
    return first, body


def _read_blobs(
    maps: _Maps,
    hull: np.ndarray,
    body: _Body,
    thr: float,
    known: bool,
    polarity: str | None,
    witnesses: _Blobs | None,
) -> tuple[FaceReading, _Blobs]:
    """Read the face from the pip candidates above ``thr`` (pip-ness) inside the die's hull.

    ``witnesses`` are candidates found at a lower threshold: a pip too faint to be read at this
    one still forbids a value if it lies on the face.
    """
    dist = maps.pipness
    blobs = _find_blobs(dist, maps.diff, thr, hull)
    reading = _read_found(blobs, dist, hull, body, known, polarity, witnesses)
    return reading, blobs


def _read_found(
    blobs: _Blobs,
    dist: np.ndarray,
    hull: np.ndarray,
    body: _Body,
    known: bool,
    polarity: str | None,
    witnesses: _Blobs | None,
) -> FaceReading:
    pips_all = tuple(
        (float(x), float(y), float(rr)) for (x, y), rr in zip(blobs.xy, blobs.radius, strict=True)
    )
    if not blobs.plausible.any():
        return _unsure("low contrast" if blobs.contrast.size else "not a pip face", pips=pips_all)
    h, w = dist.shape
    patch_center = np.array([(w - 1) / 2, (h - 1) / 2])
    face_center = body.center if body.reliable else patch_center
    side = WORK_SIDE if known or not body.reliable else body.side
    idx = np.flatnonzero(blobs.plausible)
    # Top-face pips are seen face-on: side-face pips are foreshortened, hence smaller.
    big = blobs.radius[idx].max()
    near = np.hypot(*(blobs.xy[idx] - face_center).T) < 0.62 * side
    top = idx[(blobs.radius[idx] >= 0.55 * big) & near]
    top = top[np.argsort(-blobs.radius[top])]
    # The pips of a face share one colour: drop candidates of another (shadows, marbling).
    if len(top) > 1:
        ref = _median(blobs.color[top])
        top = top[_same_color(blobs.color[top], ref)]
    top = top[:7]
    count = len(top)
    alternatives = (count, count + 1, count - 1)
    if count == 0:
        return _unsure("not a pip face", pips=pips_all)
    fit, top = _fit_subsets(blobs, top, face_center, side, known, body)
    if isinstance(fit, str):
        reason = fit
        if reason == "not a pip face" and body.aspect > 1.35:
            reason = "cocked"
        return _unsure(reason, alternatives, 0.2, pips_all)
    count = len(top)
    alternatives = (count, count + 1, count - 1)
    if fit.value == 2 and not known and not body.reliable and body.outline is None:
        # With neither the scale nor the die's rotation known, a pair is as likely a part of a
        # face whose other pips are lost (an adjacent pair of a four reads as a two).
        return _unsure("not a pip face", (count, 4, 3), 0.3, pips_all)
    pips_xy = blobs.xy[top]
    # Anything pip-like left on the face means the layout is not what it seems.
    mean_contrast = float(blobs.contrast[top].mean())
    pool = witnesses if witnesses is not None else blobs
    gap = np.hypot(*(pool.xy[:, None, :] - pips_xy[None, :, :]).transpose(2, 0, 1))
    # A witness overlapping a read pip is that pip (or two merged), not something left over.
    unused = gap.min(axis=1) > pool.radius + blobs.radius[top].max()
    strong = unused & (pool.contrast >= 0.5 * mean_contrast)
    strong &= _same_color(pool.color, blobs.color[top].mean(axis=0))
    strong &= pool.radius >= LEFTOVER_RADIUS * blobs.radius[top].min()
    if strong.any():
        rel = pool.xy[strong] - fit.center
        if fit.value == 1:
            # Near: anything. Farther out, where side-face pips show (foreshortened, so
            # smaller), only what could be the other pip of a two counts.
            far = np.hypot(rel[:, 0], rel[:, 1])
            twin = pool.radius[strong] >= 0.7 * blobs.radius[top[0]]
            inside = (far < 0.45 * side) | ((far < ONE_CLEAR_RADIUS * side) & twin)
        else:
            c, s = math.cos(fit.angle), math.sin(fit.angle)
            u = np.abs(rel[:, 0] * c + rel[:, 1] * s)
            v = np.abs(-rel[:, 0] * s + rel[:, 1] * c)
            inside = np.maximum(u, v) < max(FACE_CLEAR_PITCHES * fit.pitch, FACE_CLEAR_SIDES * side)
        if inside.any():
            return _unsure("not a pip face", alternatives, 0.2, pips_all)
    pitch = fit.pitch if fit.value > 1 else PITCH * side
    radius = float(_median(blobs.radius[top]))
    if not _empty_nodes_clear(dist, hull, fit, pips_xy, radius, pitch):
        return _unsure("occluded" if count < 6 else "not a pip face", alternatives, 0.2, pips_all)
    signs = np.sign(blobs.lightness[top])
    pip_polarity = "dark" if signs.sum() < 0 else "light"
    strong_l = np.abs(blobs.lightness[top]) > 0.5 * blobs.contrast[top]
    if strong_l.all() and abs(signs.sum()) != count:
        return _unsure("not a pip face", alternatives, 0.2, pips_all)
    if polarity is not None and strong_l.any() and pip_polarity != polarity:
        return _unsure("not a pip face", alternatives, 0.2, pips_all)
    radii = blobs.radius[top]
    q_res = 1.0 - fit.residual / MAX_RESIDUAL
    q_size = float(radii.min() / radii.max()) if count > 1 else 1.0
    q_contrast = float(np.clip((blobs.contrast[top].min() - MIN_CONTRAST) / 30.0, 0.0, 1.0))
    confidence = 0.5 + 0.5 * q_res * q_size * (0.5 + 0.5 * q_contrast)
    pips = tuple((float(x), float(y), float(rr)) for (x, y), rr in zip(pips_xy, radii, strict=True))
    return FaceReading(fit.value, round(confidence, 3), None, pips, pip_polarity, ())


def _fit_subsets(
    blobs: _Blobs, top: np.ndarray, face_center: np.ndarray, side: float, known: bool, body: _Body
) -> tuple[_Fit | str, np.ndarray]:
    """Fit all candidates, else every set with one left out (a side-face pip, a neighbour's).

    What is left out is checked afterwards: if it lies on the face, the reading is refused.
    """
    first = (
        _fit_top(blobs, top, face_center, side, known, body) if len(top) <= 6 else "not a pip face"
    )
    if not isinstance(first, str) or len(top) < 2:
        return first, top
    best: tuple[_Fit, np.ndarray] | None = None
    for k in range(len(top)):
        subset = np.delete(top, k)
        if len(subset) > 6:
            continue
        fit = _fit_top(blobs, subset, face_center, side, known, body)
        if not isinstance(fit, str) and (best is None or fit.residual < best[0].residual):
            best = (fit, subset)
    # Side-face pips are foreshortened: the top face's are the biggest few (top is sorted).
    for k in range(min(len(top) - 2, 6), 1, -1):
        if best is not None:
            break
        fit = _fit_top(blobs, top[:k], face_center, side, known, body)
        if not isinstance(fit, str):
            best = (fit, top[:k])
    return best if best is not None else (first, top)


def _fit_top(
    blobs: _Blobs, top: np.ndarray, face_center: np.ndarray, side: float, known: bool, body: _Body
) -> _Fit | str:
    """Fit the top-face candidates to a face, or say why they do not fit."""
    points = blobs.xy[top]
    count = len(top)
    radii = blobs.radius[top]
    contrast = blobs.contrast[top]
    if count == 1:
        if radii[0] < MIN_ONE_RADIUS * side or blobs.elongation[top[0]] > MAX_ONE_ELONGATION:
            return "not a pip face"
        # A corner pip of a two whose twin is lost sits ~0.3 side off: a one is held closer.
        if np.hypot(*(points[0] - face_center)) > ONE_CENTER_OFFSET[not known] * side:
            return "occluded"
        return _Fit(1, points[0], body.angle, 0.0, 0.0)
    if (
        radii.max() > MAX_RADIUS_RATIO * radii.min()
        or contrast.min() < MIN_CONTRAST_RATIO * contrast.max()
    ):
        return "not a pip face"
    elongation = blobs.elongation[top]
    # Motion blur stretches all pips alike; a side-face pip is stretched on its own.
    if elongation.max() - elongation.min() > 0.45:
        return "not a pip face"
    fit = _fit_grid(points)
    if fit is None:
        return "not a pip face"
    if not 0.15 <= float(_median(radii)) / fit.pitch <= 0.75:
        return "not a pip face"
    low, high = PITCH_TOL if known else PITCH_TOL_GUESSED
    if not low * PITCH * side <= fit.pitch <= high * PITCH * side:
        return "not a pip face"
    if np.hypot(*(fit.center - face_center)) > MAX_CENTER_OFFSET[not known] * side:
        return "occluded"
    # A two or three lies along the die's diagonal (an adjacent pair at 45 degrees would fit
    # too): check against the die's outline when it is seen.
    outline = body.outline if body.outline is not None or not body.reliable else body.angle
    if (
        outline is not None
        and fit.value in (2, 3)
        and _angle_gap(fit.angle, outline) > math.radians(25)
    ):
        return "occluded"
    return fit
