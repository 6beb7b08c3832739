"""Built-in pip reader: pip blobs of either polarity on one die, fitted to a face layout.

It works on a patch centred on a die whose side (in patch pixels) is known roughly; the die
may be at any rotation and part of its side faces may show. Pips are blobs that differ from
the die body in lightness or colour; the top face's pips are the round ones grouped around
the die centre. A value is accepted only when those pips are of consistent size, lie on the
3x3 grid of a face with a pitch that fits the die side, and no other pip-like blob sits on
that face.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np

from vision.components import components
from vision.histogram import median_u8
from vision.layout import LayoutFit, fit_layout

# Grid pitch / die side on real dice is about 0.27..0.33; the side estimate may include part
# of a side face or miss a dark edge, so allow some slack.
PITCH_RANGE = (0.13, 0.45)
# Pip radius / die side: small pips of a six up to the big single pip of a one.
RADIUS_RANGE = (0.035, 0.2)
ONE_RADIUS_RANGE = (0.06, 0.22)
MIN_CONTRAST = 10.0  # weakest pip-to-body Lab difference worth reading (dark dice: faint pips)
MAX_CLUTTER = 0.04  # fraction of the face off the pips that may differ from the body
MAX_UNEVEN = 0.15  # ... and that may differ a little (UNEVEN_DELTA) from it
UNEVEN_DELTA = 12.0
# Half-side of a face around its pips: no other pip within FACE_EXTENT x grid pitch (a side
# face's pips start beyond it), and an even body within CLEAN_EXTENT x pitch. For a one, in
# die sides.
FACE_EXTENT = 1.8
CLEAN_EXTENT = 1.45
ONE_FACE_EXTENT = 0.33
ONE_CLEAN_EXTENT = 0.3
# Pips of one colour (`read_pip_colour`): colour groups near the die centre, and the largest
# share of it a group of pips may cover (more is the body).
COLOUR_CLUSTERS = 6
MAX_PIP_SHARE = 0.4

Blob = tuple[float, float, float, float]  # x, y, radius, roundness


@dataclass(frozen=True)
class PipReading:
    """What the built-in reader saw on one face (coordinates in patch pixels)."""

    value: int | None
    confidence: float
    reason: str | None
    pips: tuple[tuple[float, float, float], ...]
    polarity: str | None
    contrast: float
    fit: LayoutFit | None = None


def _blobs(mask: np.ndarray, side: float) -> list[Blob]:
    """Round blobs of pip size in a binary mask."""
    _, _, stats, cents = components(mask, 8)
    # Judged on all components at once: a patch may hold dozens of specks.
    w, h, area = (stats[1:, k].astype(np.float64) for k in (2, 3, 4))
    r = np.sqrt(area / np.pi)
    long, short = np.maximum(w, h), np.minimum(w, h)
    roundness = area / (np.pi * (long / 2.0) ** 2 + 1e-6)
    keep = ((r >= RADIUS_RANGE[0] * side) & (r <= ONE_RADIUS_RANGE[1] * side)
            & (roundness >= 0.5) & (long <= 2.0 * np.maximum(1.0, short)))
    return [(float(cents[k + 1][0]), float(cents[k + 1][1]), float(r[k]), float(roundness[k]))
            for k in np.flatnonzero(keep)]


def _top_face_group(blobs: list[Blob], center: tuple[float, float], side: float) -> list[Blob]:
    """The blobs of the top face: those gathered around the die centre, re-centred twice."""
    cx, cy = center
    group = [b for b in blobs if math.hypot(b[0] - cx, b[1] - cy) <= 0.55 * side]
    for _ in range(2):
        if not group:
            return []
        weight = sum(b[2] ** 2 for b in group)
        gx = sum(b[0] * b[2] ** 2 for b in group) / weight
        gy = sum(b[1] * b[2] ** 2 for b in group) / weight
        group = [b for b in blobs if math.hypot(b[0] - gx, b[1] - gy) <= 0.5 * side]
    return group


@lru_cache(maxsize=8)
def _grid_cached(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    return yy, xx


def _grid(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Row and column coordinates of every pixel of an image of ``shape`` (cached)."""
    return _grid_cached(int(shape[0]), int(shape[1]))


@lru_cache(maxsize=8)
def _core(h: int, w: int, side: float) -> np.ndarray:
    """Mask of the disc of 0.4 die sides around the patch centre (cached: patches share it)."""
    yy, xx = _grid((h, w))
    return np.hypot(xx - w / 2.0, yy - h / 2.0) <= 0.4 * side


def _off_pip_face(
    shape: tuple[int, ...], fit: LayoutFit, group: list[Blob], extent: float
) -> tuple[tuple[slice, slice], np.ndarray]:
    """The face (within ``extent`` of its centre) away from the group's pips: the window of
    the patch that holds the face, and the face's mask within it. Only that window is
    computed: the face is a small part of the patch."""
    reach = extent * math.sqrt(2.0) + 1.0  # the turned square lies within this of its centre
    h, w = shape[:2]
    x0, x1 = max(0, math.floor(fit.center[0] - reach)), min(w, math.ceil(fit.center[0] + reach))
    y0, y1 = max(0, math.floor(fit.center[1] - reach)), min(h, math.ceil(fit.center[1] + reach))
    window = (slice(y0, max(y0, y1)), slice(x0, max(x0, x1)))
    yy, xx = (g[window] for g in _grid(shape))
    dx, dy = xx - fit.center[0], yy - fit.center[1]
    c, s = np.cos(fit.angle), np.sin(fit.angle)
    face = np.maximum(np.abs(dx * c + dy * s), np.abs(-dx * s + dy * c)) < extent
    for x, y, r, _ in group:
        face &= (xx - x) ** 2 + (yy - y) ** 2 > (1.5 * r + 1.0) ** 2
    return window, face


def _clutter(
    changed: np.ndarray, face: tuple[tuple[slice, slice], np.ndarray], extent: float
) -> float:
    """Fraction of the face (``face``, from `_off_pip_face`) that differs from the body
    without being one of the pips: text, edges, a neighbour's pips."""
    window, mask = face
    return float(np.count_nonzero(changed[window] & mask)) / float(4 * extent * extent)


def _check(
    group: list[Blob], others: list[Blob], side: float, strong: np.ndarray, weak: np.ndarray
) -> LayoutFit | None:
    """The layout the group forms if it is a believable face, else None."""
    if not 1 <= len(group) <= 6:
        return None
    fit = fit_layout(np.array([(b[0], b[1]) for b in group], dtype=np.float64))
    if fit is None:
        return None
    radii = np.array([b[2] for b in group])
    if fit.value == 1:
        if not ONE_RADIUS_RANGE[0] * side <= radii[0] <= ONE_RADIUS_RANGE[1] * side:
            return None
        h, w = strong.shape
        # A single pip must sit in the middle of the die.
        if np.hypot(fit.center[0] - w / 2.0, fit.center[1] - h / 2.0) > 0.22 * side:
            return None
        extent = ONE_FACE_EXTENT * side
        face = ONE_CLEAN_EXTENT * side
    else:
        if not PITCH_RANGE[0] * side <= fit.pitch <= PITCH_RANGE[1] * side:
            return None
        if radii.max() > 1.6 * radii.min():
            return None
        if not 0.15 <= statistics.median(radii.tolist()) / fit.pitch <= 0.6:
            return None
        extent = FACE_EXTENT * fit.pitch
        face = CLEAN_EXTENT * fit.pitch
    # Another pip-sized blob on the same face means the layout is incomplete or wrong.
    c, s = np.cos(fit.angle), np.sin(fit.angle)
    small = 0.7 * statistics.median(radii.tolist())
    for b in others:
        if b in group or b[2] < small:
            continue
        dx, dy = b[0] - fit.center[0], b[1] - fit.center[1]
        if max(abs(dx * c + dy * s), abs(-dx * s + dy * c)) < extent:
            return None
    region = _off_pip_face(strong.shape, fit, group, face)
    if _clutter(strong, region, face) > MAX_CLUTTER:
        return None
    # The face around the pips is one even colour: a die edge, the floor or a side face
    # in that square means the pips are not a top face.
    if _clutter(weak, region, face) > MAX_UNEVEN:
        return None
    return fit


@dataclass(frozen=True)
class _Contrast:
    """A patch measured against its die body: Lab difference, its 99th percentile near the
    centre (``core``), and the pixels that differ strongly and weakly."""

    diff: np.ndarray
    core: np.ndarray
    high: float
    strong: np.ndarray
    weak: np.ndarray


def percentile(values: np.ndarray, q: float) -> float:
    """``np.percentile(values, q)`` of a 1-D array, to the last bit, at a tenth of its cost on
    the few thousand values of a patch (numpy's own spends its time in Python)."""
    n = values.size
    pos = q / 100.0 * (n - 1)
    lo = int(pos)
    hi, t = min(lo + 1, n - 1), pos - lo
    part = np.partition(values, [lo, hi] if hi != lo else lo)
    a, b = part[lo], part[hi]
    # numpy's linear interpolation, from the nearer end.
    return float(b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t)


def _contrast(patch: np.ndarray, side: float) -> _Contrast:
    h, w = patch.shape[:2]
    lab8 = cv2.cvtColor(patch, cv2.COLOR_BGR2Lab)
    core = _core(h, w, float(side))
    body = median_u8(lab8, core)
    lab = lab8.astype(np.float32)
    diff = cv2.subtract(lab, (*body.tolist(), 0.0))  # numpy's own broadcast is slower
    # Lightness counts fully; chroma helps coloured pips on coloured dice.
    delta = np.sqrt(diff[..., 0] ** 2 + 0.5 * (diff[..., 1] ** 2 + diff[..., 2] ** 2))
    high = percentile(delta[core], 99)
    return _Contrast(diff, core, high, delta > max(10.0, 0.45 * high),
                     delta > max(UNEVEN_DELTA, 0.2 * high))


def _polar_blobs(seen: _Contrast, side: float, polarity: str) -> list[Blob]:
    """Pip-like blobs of one polarity ("dark" or "light")."""
    sign = seen.diff[..., 0] < 0 if polarity == "dark" else seen.diff[..., 0] > 0
    return _blobs((seen.strong & sign).astype(np.uint8), side)


def _hue_contrast(seen: _Contrast) -> _Contrast | None:
    """The patch measured along the pips' hue alone: coloured pips (red on dark blue) differ
    from a marbled body less in lightness than in colour, and the marbling's own swirls are of
    another hue. The hue is that of the most colourful pixels near the centre."""
    core, chroma = seen.core, seen.diff[..., 1:]
    colourful = np.hypot(chroma[..., 0], chroma[..., 1])
    hue = chroma[core & (colourful >= percentile(colourful[core], 98))].mean(axis=0)
    strength = float(np.hypot(*hue))
    if strength < MIN_CONTRAST:
        return None
    along = chroma @ (hue / strength).astype(np.float32)
    high = percentile(along[core], 99)
    if high < MIN_CONTRAST:
        return None
    return _Contrast(seen.diff, core, high, along > max(10.0, 0.45 * high),
                     along > max(UNEVEN_DELTA, 0.2 * high))


def _read_polarity(
    seen: _Contrast, blobs: list[Blob], side: float, center: tuple[float, float], pol: str
) -> PipReading | None:
    """The face the blobs of one polarity form around the die centre, if any (None: no blob
    there)."""
    group = _top_face_group(blobs, center, side)
    if not group:
        return None
    pips = tuple((b[0], b[1], b[2]) for b in group)
    fit = _check(group, blobs, side, seen.strong, seen.weak)
    # Pips of a side face or a neighbouring die may join the group: peel off the least
    # pip-like (small, squashed, far out) ones; the check still refuses a face with a
    # pip-sized blob left on it.
    while fit is None and len(group) > 2 and len(pips) - len(group) < 3:
        gx = sum(b[0] for b in group) / len(group)
        gy = sum(b[1] for b in group) / len(group)
        top = max(b[2] * b[3] for b in group)
        group.remove(max(group, key=lambda b: np.hypot(b[0] - gx, b[1] - gy) / side
                         + 1.0 - b[2] * b[3] / top))
        fit = _check(group, blobs, side, seen.strong, seen.weak)
    if fit is None:
        return PipReading(None, 0.2, "not a pip face", pips, pol, seen.high)
    return PipReading(fit.value, _confidence(fit, seen.high), None,
                      tuple((b[0], b[1], b[2]) for b in group), pol, seen.high, fit)


def _confidence(fit: LayoutFit, high: float) -> float:
    """How sure a reading is: the grid fit, discounted for faint pips."""
    return float(np.clip(1.0 - fit.residual, 0.0, 1.0)) * (0.5 + 0.5 * min(1.0, high / 40.0))


def _shade(seen: _Contrast, pips: tuple[tuple[float, float, float], ...]) -> str:
    """The polarity of pips found by colour: still lighter or darker than the body, if only a
    little, and that names it."""
    shade = np.mean([seen.diff[round(y), round(x), 0] for x, y, _ in pips])
    return "dark" if shade < 0 else "light"


def read_pips(patch: np.ndarray, side: float, polarity: str | None = None) -> PipReading:
    """Read the face of the die centred in ``patch`` whose side is about ``side`` pixels.

    Pips darker or lighter than the body are looked for first (only ``polarity`` if given);
    when neither forms a face, pips of another hue than the body.
    """
    h, w = patch.shape[:2]
    center = (w / 2.0, h / 2.0)
    seen = _contrast(patch, side)
    high = seen.high
    if high < MIN_CONTRAST:
        return PipReading(None, 0.1, "low contrast", (), None, high)
    candidates: list[PipReading] = []
    for pol in ("dark", "light") if polarity is None else (polarity,):
        found = _read_polarity(seen, _polar_blobs(seen, side, pol), side, center, pol)
        if found is not None:
            candidates.append(found)
    valued = [c for c in candidates if c.value is not None]
    if len(valued) == 1:
        return valued[0]
    if len(valued) > 1:
        # Both polarities form a face: ambiguous, refuse to guess.
        return PipReading(None, 0.2, "not a pip face", valued[0].pips, None, high)
    hued = _hue_contrast(seen)
    if hued is not None:
        found = _read_polarity(hued, _blobs(hued.strong.astype(np.uint8), side), side, center,
                               "light")
        if found is not None and found.value is not None:
            pol = _shade(seen, found.pips)
            if polarity in (None, pol):
                return replace(found, polarity=pol)
    if candidates:
        return max(candidates, key=lambda c: len(c.pips))
    return PipReading(None, 0.1, "not a pip face", (), None, high)


def read_pip_colour(
    patch: np.ndarray, side: float, polarity: str | None = None
) -> PipReading:
    """Read the face of the die centred in ``patch`` from pips of one colour.

    A marbled body (swirls of black, blue and white around red pips) differs from itself as
    much as from its pips in lightness and in any one hue, so neither contrast `read_pips`
    measures isolates the pips. But pips are painted in one colour: the colours near the die
    centre are split into COLOUR_CLUSTERS groups (k-means in Lab, started from lightness ranks
    so that the same patch always gives the same groups), and the pixels of each group that
    is not the body (more than MAX_PIP_SHARE of the centre) and differs from it in colour, not
    only in lightness, are read as pips with the checks of `read_pips`. A value is given only
    when the groups that form a face agree on it (and, if ``polarity`` is given, are of that
    polarity), and never a one: a single blob of some colour is too little to go on.

    Pips that differ from the body in lightness alone are `read_pips`'s to find: grouped by
    lightness, the pips of an even die's side face join its top face's.
    """
    h, w = patch.shape[:2]
    seen = _contrast(patch, side)
    if seen.high < MIN_CONTRAST:
        return PipReading(None, 0.1, "low contrast", (), None, seen.high)
    lab = seen.diff  # Lab less the body colour: the same groups as Lab itself
    pixels = np.ascontiguousarray(lab[seen.core])
    order = np.argsort(pixels[:, 0], kind="stable")
    start = np.empty((len(pixels), 1), np.int32)
    start[order, 0] = (np.arange(len(pixels)) * COLOUR_CLUSTERS) // len(pixels)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 10, 1.0)
    _, labels, centres = cv2.kmeans(pixels, COLOUR_CLUSTERS, start, criteria, 1,
                                    cv2.KMEANS_USE_INITIAL_LABELS)
    share = np.bincount(labels.ravel(), minlength=COLOUR_CLUSTERS) / float(len(pixels))
    chroma = np.hypot(centres[:, 1], centres[:, 2])  # colour difference from the body
    # Nearest group of every pixel: |x - c|^2 less the |x|^2 all groups share.
    flat = lab.reshape(-1, 3)
    nearest = ((centres * centres).sum(axis=1) - 2.0 * flat @ centres.T).argmin(axis=1)
    nearest = nearest.reshape(h, w)
    readings: list[PipReading] = []
    for k in np.flatnonzero((share <= MAX_PIP_SHARE) & (chroma >= MIN_CONTRAST)):
        group = nearest == k
        # A marbled body is uneven by nature: only the pips' own colour off the pips is
        # clutter on their face. (The polarity passed is a placeholder, set from the shade.)
        one = _Contrast(seen.diff, seen.core, seen.high, group, group)
        found = _read_polarity(one, _blobs(group.astype(np.uint8), side), side,
                               (w / 2.0, h / 2.0), "light")
        if found is not None and found.value not in (None, 1):
            pol = _shade(seen, found.pips)
            if polarity in (None, pol):
                readings.append(replace(found, polarity=pol))
    if readings and len({r.value for r in readings}) == 1:
        return max(readings, key=lambda r: r.confidence)
    return PipReading(None, 0.2, "not a pip face", (), None, seen.high)


def read_one(patch: np.ndarray, side: float, polarity: str | None = None) -> PipReading:
    """Whether the die centred in ``patch`` shows a one, whatever else the patch holds.

    `read_pips` takes the pips gathered around the die's centre as its top face, so the pips
    of a side face seen at a slant spoil a one. Here each pip is tried alone: a one is read
    when exactly one pip of a one's size lies in the middle of the die with a clean face
    around it (the check `read_pips` makes of a one).
    """
    seen = _contrast(patch, side)
    if seen.high < MIN_CONTRAST:
        return PipReading(None, 0.1, "low contrast", (), None, seen.high)
    ones: list[PipReading] = []
    for pol in ("dark", "light") if polarity is None else (polarity,):
        blobs = _polar_blobs(seen, side, pol)
        for blob in blobs:
            fit = _check([blob], blobs, side, seen.strong, seen.weak)
            if fit is not None:
                ones.append(PipReading(1, _confidence(fit, seen.high), None,
                                       ((blob[0], blob[1], blob[2]),), pol, seen.high, fit))
    if len(ones) == 1:
        return ones[0]
    return PipReading(None, 0.2, "not a pip face", (), None, seen.high)
