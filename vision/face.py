"""Read the top face of one die from a patch around it: find its pips, accept only a true layout.

`read_face` works on a patch roughly centred on one die (about 1.2-1.6 x the die side, any
rotation, neighbours may intrude at the border). The steps, all at a fixed working scale where
the die side is `WORK_SIDE` pixels so that every threshold below is in die-side units:

1. The body colour is the median Lab colour of a ring around the patch centre (a ring, so that a
   big centre pip does not pull it). Every pixel gets its colour distance to the body; Otsu on
   that distance splits "body" from "something else" (pips, background, other dice)
   (`vision.face_body`).
2. The die is the body-coloured region holding the patch centre; its convex hull is where pips
   may be, its bounding rectangle gives the face centre, side and rotation, and the hull's edges
   off the patch border give the die's rotation even when the region runs into the floor
   (`vision.face_body`).
3. Pip candidates are the non-body blobs inside the hull, of either polarity (dark, light or
   only coloured); their size, roundness, contrast and colour are measured, and only those of
   the pips' common colour are kept (shadows and marbling differ in hue or polarity)
   (`vision.face_blobs`).
4. The candidates must sit on the nodes of a 3x3 grid (at any rotation) in exactly one of the six
   face patterns (`vision.face_grid`), with consistent size and contrast, a pitch that fits the
   die side, the pattern centred on the face, a two or three along the die's diagonal, every
   empty node on the die and body-like, and no other pip-like blob of the pips' colour left on
   the face (this module). Anything else gives no value (a reason and plausible alternatives
   instead): a wrong value costs a player, an unsure one only a re-throw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.face_blobs import Blobs, find_blobs, same_color
from vision.face_body import (
    MIN_CONTRAST,
    WORK_SIDE,
    Body,
    Maps,
    body_threshold,
    find_body,
    measure,
    median,
    pip_threshold,
    quantile,
)
from vision.face_grid import MAX_RESIDUAL, Fit, angle_gap, empty_nodes_clear, fit_grid
from vision.image_io import as_bgr
from vision.types import REASONS

PATCH_TO_SIDE = 1.4  # assumed patch side / die side when the die side is not given
MIN_PATCH_SIDES = 0.8  # a patch narrower than this x die side cannot show the top face
MAX_PATCH_SIDES = 3.0  # beyond this x die side around the centre, a patch is cut down
PITCH = 0.21  # grid pitch / visible top-face side, as measured on real dice (0.17-0.24)
PITCH_TOL = (0.6, 1.4)  # accepted pitch / expected pitch when the die side is given
PITCH_TOL_GUESSED = (0.5, 1.6)  # ... when the die side is only estimated from the body
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
MAX_ONE_ELONGATION = 1.4  # the single pip of a one: a merged pair must not pass for it
MAX_RADIUS_RATIO = 1.7  # largest / smallest pip radius on one face
MIN_CONTRAST_RATIO = 0.5  # weakest / strongest pip contrast on one face


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


def _read_work(
    work: np.ndarray, known: bool, polarity: str | None
) -> tuple[FaceReading, Body | None]:
    maps = measure(work)
    hull, body = find_body(maps.dist, body_threshold(maps.dist), maps.radius)
    if hull is None or body is None:
        return _unsure("not a pip face"), None
    low = pip_threshold(maps.pipness, hull)
    first: FaceReading | None = None
    # Blurred neighbours merge at the first threshold; higher ones split them at the saddle.
    # With the scale only guessed, the highest is left out: the specks it splits off texture
    # cannot be told from pips by their size.
    span = max(0.0, float(quantile(maps.pipness[hull > 0], 0.97)) - low)
    steps = (0.0, 0.5, 0.75) if known else (0.0, 0.5)
    witnesses: Blobs | None = None
    for thr in (low + step * span for step in steps):
        reading, blobs = _read_blobs(maps, hull, body, thr, known, polarity, witnesses)
        witnesses = witnesses or blobs
        if reading.value is not None:
            return reading, body
        first = first or reading
    return first, body


def _read_blobs(
    maps: Maps,
    hull: np.ndarray,
    body: Body,
    thr: float,
    known: bool,
    polarity: str | None,
    witnesses: Blobs | None,
) -> tuple[FaceReading, Blobs]:
    """Read the face from the pip candidates above ``thr`` (pip-ness) inside the die's hull.

    ``witnesses`` are candidates found at a lower threshold: a pip too faint to be read at this
    one still forbids a value if it lies on the face.
    """
    dist = maps.pipness
    blobs = find_blobs(dist, maps.diff, thr, hull)
    reading = _read_found(blobs, dist, hull, body, known, polarity, witnesses)
    return reading, blobs


def _read_found(
    blobs: Blobs,
    dist: np.ndarray,
    hull: np.ndarray,
    body: Body,
    known: bool,
    polarity: str | None,
    witnesses: Blobs | None,
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
        ref = median(blobs.color[top])
        top = top[same_color(blobs.color[top], ref)]
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
    strong &= same_color(pool.color, blobs.color[top].mean(axis=0))
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
    radius = float(median(blobs.radius[top]))
    if not empty_nodes_clear(dist, hull, fit, pips_xy, radius, pitch):
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
    blobs: Blobs, top: np.ndarray, face_center: np.ndarray, side: float, known: bool, body: Body
) -> tuple[Fit | str, np.ndarray]:
    """Fit all candidates, else every set with one left out (a side-face pip, a neighbour's).

    What is left out is checked afterwards: if it lies on the face, the reading is refused.
    """
    first = (
        _fit_top(blobs, top, face_center, side, known, body) if len(top) <= 6 else "not a pip face"
    )
    if not isinstance(first, str) or len(top) < 2:
        return first, top
    best: tuple[Fit, np.ndarray] | None = None
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
    blobs: Blobs, top: np.ndarray, face_center: np.ndarray, side: float, known: bool, body: Body
) -> Fit | str:
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
        return Fit(1, points[0], body.angle, 0.0, 0.0)
    if (
        radii.max() > MAX_RADIUS_RATIO * radii.min()
        or contrast.min() < MIN_CONTRAST_RATIO * contrast.max()
    ):
        return "not a pip face"
    elongation = blobs.elongation[top]
    # Motion blur stretches all pips alike; a side-face pip is stretched on its own.
    if elongation.max() - elongation.min() > 0.45:
        return "not a pip face"
    fit = fit_grid(points)
    if fit is None:
        return "not a pip face"
    if not 0.15 <= float(median(radii)) / fit.pitch <= 0.75:
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
        and angle_gap(fit.angle, outline) > math.radians(25)
    ):
        return "occluded"
    return fit
