"""`read_dice`: one colour image of the tray in, the dice it shows out.

Stages: normalise the input (dtype, channels, working size), find die candidates
(`vision.detect`), straighten each one into a patch, read its face, and keep a value only when
the pips fit a face layout; everything else is reported unsure with a reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np

from vision.detect import Candidate, find_candidates, quick_die_side
from vision.face import FaceReading, read_face
from vision.image_io import as_bgr
from vision.layout import LayoutFit, fit_layout
from vision.pips import PipReading, read_pips
from vision.profile import Profile
from vision.types import Die

# Larger inputs are read at this size (longer side) and mapped back.
MAX_WORKING_SIDE = 1024
MIN_WORKING_SIDE = 160  # ... but never smaller than this
WORK_DIE_SIDE = 40.0  # die side (px) at the working size
# Each die is straightened into a patch where its top face is PATCH_SIDE pixels.
PATCH_SIDE = 48
PATCH_SCALE = 1.5  # patch size / face side
FACE_PER_PITCH = 3.4  # top-face side / pip grid pitch
SAME_DIE = 0.8  # x die side: closer readings are of the same die
MIN_BODY_COVER = 0.6  # of a die's square, for dice found from their pips
MIN_ONE_DEPTH = 0.3  # x die side: how deep inside its body the pip of a one lies, at least
# Faces of up to FEW_PIPS pips are easy to fake (a one's pip plus a side face's pip is a "two";
# a column of a six is a "three"; a speck is a "one"): they need both readers to agree, or the
# face reader to be SURE_FEW_PIPS sure of a die that the image border does not cut.
FEW_PIPS = 3
SURE_FEW_PIPS = 0.85
# Pips of one face are seen alike; a pip of a side face is foreshortened. A face of up to
# SHAPE_CHECKED pips whose pips differ this much in elongation (or one of them this elongated)
# mixes faces.
SHAPE_CHECKED = 3
MAX_PIP_ELONGATION = 2.2
MAX_ELONGATION_SPREAD = 1.6


def straighten(
    image: np.ndarray, center, angle: float, side: float
) -> tuple[np.ndarray, np.ndarray]:
    """A patch with the die (``side`` px, turned by ``angle`` degrees) axis-aligned at its
    centre and scaled to PATCH_SIDE; returns (patch, 2x3 patch-to-image transform)."""
    size = round(PATCH_SIDE * PATCH_SCALE)
    m = cv2.getRotationMatrix2D((float(center[0]), float(center[1])), angle, PATCH_SIDE / side)
    m[0, 2] += size / 2.0 - center[0]
    m[1, 2] += size / 2.0 - center[1]
    patch = cv2.warpAffine(
        image, m, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return patch, cv2.invertAffineTransform(m)


def _to_image(back: np.ndarray, pts: np.ndarray) -> np.ndarray:
    return pts @ back[:, :2].T + back[:, 2]


@dataclass
class _Found:
    die: Die
    rank: tuple  # lower is kept first
    center: tuple[float, float]  # working pixels


def _body_cover(mask: np.ndarray, center: np.ndarray, side: float) -> float:
    """Fraction of the die-sized square at ``center`` that the foreground mask covers."""
    h, w = mask.shape
    half = 0.4 * side
    x0, x1 = max(0, int(center[0] - half)), min(w, int(center[0] + half) + 1)
    y0, y1 = max(0, int(center[1] - half)), min(h, int(center[1] + half) + 1)
    if x1 <= x0 or y1 <= y0:
        return 0.0
    return float(np.count_nonzero(mask[y0:y1, x0:x1])) / float((2 * half + 1) ** 2)


def _depth(mask: np.ndarray, center: np.ndarray, side: float) -> float:
    """Distance from ``center`` to the nearest pixel outside the foreground, looking no further
    than one die side."""
    h, w = mask.shape
    r = max(2, round(side))
    cx, cy = round(float(center[0])), round(float(center[1]))
    x0, y0 = max(0, cx - r), max(0, cy - r)
    window = mask[y0 : min(h, cy + r + 1), x0 : min(w, cx + r + 1)]
    if window.size == 0 or not window[min(cy - y0, window.shape[0] - 1),
                                      min(cx - x0, window.shape[1] - 1)]:
        return 0.0
    # The window's own edge is no die edge: pad it as foreground.
    padded = cv2.copyMakeBorder(window, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=255)
    dist = cv2.distanceTransform(padded, cv2.DIST_L2, 3)
    return float(dist[cy - y0 + 1, cx - x0 + 1]) if 0 <= cy - y0 < window.shape[0] and (
        0 <= cx - x0 < window.shape[1]) else 0.0


def _read_candidate(
    work: np.ndarray, mask: np.ndarray, cand: Candidate, side: float, polarity: str | None
) -> _Found | None:
    own = cand.side
    use_own = cand.source == "body" and 0.7 * side <= own <= 1.4 * side
    die_side = own if use_own else side
    patch, back = straighten(work, cand.center, cand.angle, die_side)
    reading = combined_reading(patch, polarity, near_border(cand.center, die_side, work.shape))
    h, w = work.shape[:2]
    if reading.value is not None and reading.fit is not None:
        fit = reading.fit
        centre = _to_image(back, np.array([fit.center], dtype=np.float64))[0]
        # Pips found without a die body around them (a speck on the floor) are not a die.
        if cand.source != "body" and _body_cover(mask, centre, die_side) < MIN_BODY_COVER:
            return None
        # The pip of a one is in the middle of its die; a pip near a body's edge is one pip of
        # a two or three whose other pips were not seen.
        if (fit.value == 1 and cand.source != "body"
                and _depth(mask, centre, die_side) < MIN_ONE_DEPTH * die_side):
            return None
        face = PATCH_SIDE if fit.value == 1 else min(PATCH_SIDE, FACE_PER_PITCH * fit.pitch)
        angle = np.degrees(fit.angle)
        square = cv2.boxPoints(((fit.center[0], fit.center[1]), (face, face), -angle))
        corners = _to_image(back, square.astype(np.float64))
        die = Die(reading.value, (float(centre[0]), float(centre[1])),
                  tuple((float(x), float(y)) for x, y in corners),
                  float(np.clip(reading.confidence, 0.0, 1.0)))
        return _Found(die, (0, -reading.confidence), (float(centre[0]), float(centre[1])))
    if cand.source != "body" and not reading.pips:
        return None
    if cand.source == "pips":
        return None
    reason = reading.reason or "not a pip face"
    corners = cand.corners() if use_own else cv2.boxPoints((cand.center, (side, side), 0.0))
    outside = 0.05 * side
    if np.any(corners < -outside) or np.any(corners[:, 0] > w + outside) or np.any(
        corners[:, 1] > h + outside
    ):
        reason = "occluded"
    elif use_own and cand.aspect > 1.35 and reason == "not a pip face":
        reason = "cocked"
    die = Die(None, (float(cand.center[0]), float(cand.center[1])),
              tuple((float(x), float(y)) for x, y in corners),
              float(np.clip(reading.confidence, 0.0, 1.0)), reason)
    return _Found(die, (1 if cand.source == "body" else 2, 0.0), die.center)


def near_border(center, side: float, shape: tuple[int, ...]) -> bool:
    """Whether a die of ``side`` at ``center`` comes within half a side of the image border."""
    h, w = shape[:2]
    x, y = center
    margin = 0.5 * side
    return x < margin or y < margin or x > w - margin or y > h - margin


def _from_face(face: FaceReading, mine: PipReading) -> PipReading:
    """The face reader's value in the built-in reader's terms (with a layout fit)."""
    pts = np.array([(p[0], p[1]) for p in face.pips], dtype=np.float64)
    fit = fit_layout(pts) if len(pts) else None
    if fit is None or fit.value != face.value:
        c = pts.mean(axis=0) if len(pts) else np.array([PATCH_SIDE * PATCH_SCALE / 2.0] * 2)
        fit = LayoutFit(int(face.value), PATCH_SIDE / FACE_PER_PITCH, 0.0, 0.0,
                        (float(c[0]), float(c[1])))
    pips = tuple((float(x), float(y), float(r)) for x, y, r in face.pips)
    return replace(mine, value=face.value, confidence=face.confidence, reason=None, pips=pips,
                   polarity=face.polarity or mine.polarity, fit=fit)


def pip_elongation(patch: np.ndarray, pip: tuple[float, float, float], polarity: str) -> float:
    """Ratio of the principal axes of the pip blob at ``pip`` (x, y, r) in a BGR patch."""
    x, y, r = pip
    half = max(3, round(2.0 * r + 2))
    x0, y0 = max(0, round(x) - half), max(0, round(y) - half)
    window = cv2.cvtColor(patch[y0 : round(y) + half + 1, x0 : round(x) + half + 1],
                          cv2.COLOR_BGR2GRAY)
    if window.size == 0:
        return 1.0
    mode = cv2.THRESH_BINARY_INV if polarity == "dark" else cv2.THRESH_BINARY
    _, blob = cv2.threshold(window, 0, 255, mode | cv2.THRESH_OTSU)
    _, labels = cv2.connectedComponents(blob)
    label = labels[min(labels.shape[0] - 1, round(y) - y0), min(labels.shape[1] - 1, round(x) - x0)]
    if label == 0:
        return 1.0
    m = cv2.moments((labels == label).astype(np.uint8), binaryImage=True)
    if m["m00"] < 3:
        return 1.0
    a, b, c = m["mu20"] / m["m00"], m["mu11"] / m["m00"], m["mu02"] / m["m00"]
    spread = np.sqrt(max(0.0, (a - c) ** 2 + 4 * b * b))
    low = max(1e-6, (a + c - spread) / 2.0)
    return float(np.sqrt(((a + c + spread) / 2.0) / low))


def pips_alike(patch: np.ndarray, reading: PipReading) -> bool:
    """Whether the pips of a face with few pips all look like pips of one face."""
    if reading.value is None or reading.value > SHAPE_CHECKED or not reading.pips:
        return True
    polarity = reading.polarity or "dark"
    shapes = [pip_elongation(patch, p, polarity) for p in reading.pips]
    if max(shapes) > MAX_PIP_ELONGATION:
        return False
    return len(shapes) < 2 or max(shapes) / min(shapes) <= MAX_ELONGATION_SPREAD


def combined_reading(patch: np.ndarray, polarity: str | None, at_border: bool) -> PipReading:
    """Read a straightened patch with two independent readers and keep only what they support.

    The built-in reader (`vision.pips`) goes first; a face of four or more pips it fits is
    taken as read. Otherwise the face reader (`vision.face`) gives a second opinion: two values
    that differ make the die unsure, and a face of one to three pips needs both readers (or a
    sure face reading away from the image border).
    """
    reading = _two_opinions(patch, polarity, at_border)
    if not pips_alike(patch, reading):
        return replace(reading, value=None, reason="cocked", fit=None,
                       confidence=min(0.3, reading.confidence))
    return reading


def _two_opinions(patch: np.ndarray, polarity: str | None, at_border: bool) -> PipReading:
    mine = read_pips(patch, float(PATCH_SIDE), polarity)
    if mine.value is not None and mine.value > FEW_PIPS:
        return mine
    face = read_face(patch, float(PATCH_SIDE), polarity)
    if mine.value is not None:
        if face.value == mine.value:
            return replace(mine, confidence=max(mine.confidence, face.confidence))
        reason = "not a pip face" if face.value is not None else face.reason or "not a pip face"
        return replace(mine, value=None, reason=reason, fit=None,
                       confidence=min(0.3, mine.confidence))
    if face.value is None:
        if mine.reason == "not a pip face" and face.reason in ("blurred", "low contrast"):
            return replace(mine, reason=face.reason)
        return mine
    if face.value > FEW_PIPS or (face.confidence >= SURE_FEW_PIPS and not at_border):
        return _from_face(face, mine)
    return replace(mine, reason=mine.reason or "not a pip face")


def _scaled(die: Die, scale: float) -> Die:
    if scale == 1.0:
        return die
    return replace(
        die,
        center=(die.center[0] / scale, die.center[1] / scale),
        corners=tuple((x / scale, y / scale) for x, y in die.corners),
    )


def read_dice(image: np.ndarray, profile: Profile | None = None) -> list[Die]:
    """Every die in a BGR (or gray / BGRA) image of the tray, read or marked unsure."""
    bgr = as_bgr(image)
    h, w = bgr.shape[:2]
    side = profile.die_side if profile and profile.die_side else quick_die_side(bgr)
    # Work at a size where a die is about WORK_DIE_SIDE pixels (never enlarged): the same
    # pixel sizes then fit every camera, and large images cost no more than small ones.
    scale = min(1.0, MAX_WORKING_SIDE / max(h, w))
    if side is not None:
        scale = min(scale, WORK_DIE_SIDE / side)
    scale = max(scale, MIN_WORKING_SIDE / max(h, w), 1e-3)
    scale = min(scale, 1.0)
    work = bgr if scale == 1.0 else cv2.resize(
        bgr, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA
    )
    side_hint = side * scale if side is not None else None
    polarity = profile.pip_polarity if profile else None
    candidates, side, mask = find_candidates(work, side_hint)
    found: list[_Found] = []
    # Regions shaped like a die first; a split region or a pip cluster where a die has been
    # read already is the same die again.
    order = {"body": 0, "split": 1, "pips": 2}
    for cand in sorted(candidates, key=lambda c: order[c.source]):
        if not math.isfinite(cand.side) or cand.side < 4:
            continue
        if cand.source != "body" and any(
            f.die.value is not None and math.dist(cand.center, f.center) < SAME_DIE * side
            for f in found
        ):
            continue
        if cand.source == "pips" and _body_cover(mask, np.array(cand.center), side) < 0.5:
            continue
        item = _read_candidate(work, mask, cand, side, polarity)
        if item is not None:
            found.append(item)
    # One reading per die: read dice first (surest first), then unsure ones. Two readings of
    # one die that disagree make it unsure: one of them is of a side face or a neighbour.
    kept: list[_Found] = []
    for item in sorted(found, key=lambda f: f.rank):
        same = [k for k in kept if math.dist(item.center, k.center) < SAME_DIE * side]
        if not same:
            kept.append(item)
            continue
        first = same[0]
        if item.die.value is not None and first.die.value not in (None, item.die.value):
            first.die = replace(first.die, value=None, reason="not a pip face",
                                confidence=0.3)
    return [_scaled(k.die, scale) for k in kept]
