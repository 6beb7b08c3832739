"""`read_dice`: one colour image of the tray in, the dice it shows out.

Stages: normalise the input (dtype, channels, working size), find die candidates
(`vision.detect`), straighten each one into a patch, read its face, and keep a value only when
the pips fit a face layout; everything else is reported unsure with a reason.
"""

from __future__ import annotations

import collections
import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

import cv2
import numpy as np

from vision.detect import (
    MIN_THRESHOLD,
    Candidate,
    Look,
    find_candidates,
    look_at,
    quick_die_side,
    quick_size,
)
from vision.face import FaceReading, read_face
from vision.face_net import default_net
from vision.image_io import as_bgr
from vision.layout import LayoutFit, fit_layout
from vision.lean_net import default_lean_net, distance_from_centre, lean_patch
from vision.pips import PipReading, read_one, read_pip_colour, read_pips
from vision.profile import Profile
from vision.types import Die

# Larger inputs are read at this size (longer side) and mapped back.
MAX_WORKING_SIDE = 1024
MIN_WORKING_SIDE = 160  # ... but never smaller than this
WORK_DIE_SIDE = 32.0  # die side (px) at the working size
# Each die is straightened into a patch where its top face is PATCH_SIDE pixels.
PATCH_SIDE = 48
PATCH_SCALE = 1.5  # patch size / face side
FACE_PER_PITCH = 3.4  # top-face side / pip grid pitch
SAME_DIE = 0.8  # x die side: closer readings are of the same die
MIN_BODY_COVER = 0.6  # of a die's square, for dice found from their pips
MIN_ONE_DEPTH = 0.3  # x die side: how deep inside its body the pip of a one lies, at least
# Pips of one face are seen alike; a pip of a side face is foreshortened. A face of up to
# SHAPE_CHECKED pips whose pips differ this much in elongation (or one of them this elongated)
# mixes faces.
SHAPE_CHECKED = 3
MAX_PIP_ELONGATION = 2.2
MAX_ELONGATION_SPREAD = 1.6
MAX_RADIUS_SPREAD = 1.4  # ... or differ this much in size (a side face's pip is foreshortened)
PIP_LEVEL = 0.65  # where a pip's outline is drawn, from the body's level (0) to its own (1)
# How sure the face network must be of a value to read a die the built-in reader leaves open
# (its pips must still fit that face), and to vouch for a die with no body in the mask.
NET_READ = 0.8
NET_SURE = 0.9
# An unsure "die" the network is this sure shows no die face is none: a fingertip, a speck,
# a mark on the tray. (Real dice left unsure are faces it cannot settle, not blanks to it.)
NET_NO_FACE = 0.9
# ... and how sure it must be of a value the face reader finds too (two readers agreeing).
NET_AGREE = 0.5
# A value the network gives at least this much is only doubted, not contradicted: the two pip
# readers may settle it.
NET_DOUBT = 0.2
LIKELY = 0.05
# Sizes (x the one used) at which a die left unsure is read again, and the fewest pips a value
# read only at one of them may have.
RESIZE_TRIALS = (0.8, 1.25, 1.5)
MIN_RESIZED_VALUE = 3
# Die sides tried (x the one assumed) when no die body in the image gives the size.
TRIAL_SIDES = (0.6, 0.75, 0.9, 1.0, 1.15, 1.3, 1.5)
# A close-up: up to MAX_CLOSE_UP_PARTS unsure "dice" may be the pips of one large die, when
# their grid's pitch is within CLOSE_UP_PITCH x the die side found (theirs, as they were taken
# for dice; pips are 0.4..0.8 pitch wide).
MAX_CLOSE_UP_PARTS = 8
CLOSE_UP_PITCH = (1.1, 2.6)
# With a profile: how near (Lab distance) a pixel must be to one of its dice colours to be of
# a die (shading across a tray changes a die's lightness by up to about a fifth), and the share
# of an unsure die's body that must be (the rest: pips, a side face in shade).
DIE_COLOUR_MATCH = 40.0
DIE_COLOUR_SHARE = 0.3
# A read die with another die found within LEAN_REACH x its side may lean on it; it is
# reported cocked when the lean check (`vision.lean_net`) is LEAN_SURE sure it leans. (A die
# leaning on another lies 1.3-1.8 sides from it.)
LEAN_REACH = 1.9
LEAN_SURE = 0.9


def straighten(
    image: np.ndarray, center, angle: float, side: float, zoom: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """A patch with the die (``side`` px, turned by ``angle`` degrees) axis-aligned at its
    centre and scaled to PATCH_SIDE; returns (patch, 2x3 patch-to-image transform).

    ``center`` and ``side`` are in pixels of an image ``zoom`` times smaller than ``image``
    (the working copy, when ``image`` is the sharper source), and so is the transform."""
    size = round(PATCH_SIDE * PATCH_SCALE)
    cx, cy = float(center[0]) * zoom, float(center[1]) * zoom
    m = cv2.getRotationMatrix2D((cx, cy), angle, PATCH_SIDE / (side * zoom))
    m[0, 2] += size / 2.0 - cx
    m[1, 2] += size / 2.0 - cy
    patch = cv2.warpAffine(
        image, m, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return patch, cv2.invertAffineTransform(m) / zoom


def _to_image(back: np.ndarray, pts: np.ndarray) -> np.ndarray:
    return pts @ back[:, :2].T + back[:, 2]


@dataclass
class _Found:
    die: Die
    rank: tuple  # lower is kept first
    center: tuple[float, float]  # working pixels
    cand: Candidate  # what was read
    no_face: float = 0.0  # the face network's belief that no die face is there


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


@dataclass
class _View:
    """One candidate straightened: its die side, patch, patch-to-image transform and the face
    network's class probabilities."""

    side: float
    patch: np.ndarray
    back: np.ndarray
    probs: np.ndarray | None = None


class Source(NamedTuple):
    """The image patches are cut from, ``zoom`` times the working size: the input itself (or
    reduced by a whole factor), so a die is straightened from its sharpest pixels while the
    working copy only finds it."""

    image: np.ndarray
    zoom: float


def _views(source: Source, placements: list[tuple[Candidate, float]]) -> list[_View]:
    """Each candidate straightened at its die side, with the face network's probabilities (one
    pass of the network for all: cheaper than one per candidate)."""
    views = [_View(side, *straighten(source.image, cand.center, cand.angle, side, source.zoom))
             for cand, side in placements]
    for view, probs in zip(views, default_net().probabilities([v.patch for v in views]),
                           strict=True):
        view.probs = probs
    return views


def _read_candidate(
    mask: np.ndarray, cand: Candidate, side: float, polarity: str | None, view: _View,
) -> _Found | None:
    die_side, patch, back = view.side, view.patch, view.back
    use_own = die_side != side
    reading = combined_reading(patch, polarity, view.probs)
    h, w = mask.shape
    if reading.value is not None and reading.fit is not None:
        fit = reading.fit
        centre = _to_image(back, np.array([fit.center], dtype=np.float64))[0]
        # Pips found without a die body around them are a speck on the floor, unless the
        # network is sure it sees a die (a white die on a light floor has no body in the mask).
        if (cand.source != "body" and _body_cover(mask, centre, die_side) < MIN_BODY_COVER
                and not net_vouches(view.probs)):
            return None
        # The pip of a one is in the middle of its die; a pip near a body's edge is one pip of
        # a two or three whose other pips were not seen, unless the network, which sees the
        # whole die around the pip, is sure of a one.
        if (fit.value == 1 and cand.source != "body"
                and _depth(mask, centre, die_side) < MIN_ONE_DEPTH * die_side
                and view.probs[1] < NET_SURE):
            return None
        face = PATCH_SIDE if fit.value == 1 else min(PATCH_SIDE, FACE_PER_PITCH * fit.pitch)
        angle = np.degrees(fit.angle)
        square = cv2.boxPoints(((fit.center[0], fit.center[1]), (face, face), -angle))
        corners = _to_image(back, square.astype(np.float64))
        die = Die(reading.value, (float(centre[0]), float(centre[1])),
                  tuple((float(x), float(y)) for x, y in corners),
                  float(np.clip(reading.confidence, 0.0, 1.0)))
        return _Found(die, (0, -reading.confidence), (float(centre[0]), float(centre[1])), cand)
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
              float(np.clip(reading.confidence, 0.0, 1.0)), reason, likely_values(view.probs))
    return _Found(die, (1 if cand.source == "body" else 2, 0.0), die.center, cand,
                  float(view.probs[0]))


def likely_values(probs: np.ndarray) -> tuple[int, ...]:
    """Values the face network gives at least LIKELY of its belief, likeliest first: what the
    scoreboard offers first when a person corrects an unsure die."""
    order = np.argsort(-probs[1:], kind="stable")
    return tuple(int(k) + 1 for k in order if probs[k + 1] >= LIKELY)


def net_vouches(probs: np.ndarray) -> bool:
    """Whether the face network is NET_SURE sure that a patch shows a die face (any value)."""
    return int(np.argmax(probs)) > 0 and float(np.max(probs)) >= NET_SURE


def possible_values(probs: np.ndarray) -> set[int]:
    """The values `combined_reading` can give a patch with the network's ``probs``: its
    likeliest value, and any it gives at least NET_DOUBT (a value needs the network's support
    in every case)."""
    values = {v for v in range(1, len(probs)) if probs[v] >= NET_DOUBT}
    likeliest = int(np.argmax(probs))
    return values | {likeliest} if likeliest else values


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
    # The blob is cut at PIP_LEVEL of the way from the body to the pip's own extreme: a glint
    # on the die's edge beside a light pip stays out of it, a foreshortened pip keeps its shape.
    body = float(np.median(window))
    cx, cy = min(window.shape[1] - 1, round(x) - x0), min(window.shape[0] - 1, round(y) - y0)
    core = window[max(0, cy - 1) : cy + 2, max(0, cx - 1) : cx + 2]
    peak = float(core.min() if polarity == "dark" else core.max())
    level = body + PIP_LEVEL * (peak - body)
    blob = (window < level) if polarity == "dark" else (window > level)
    _, labels = cv2.connectedComponents(blob.astype(np.uint8))
    label = labels[cy, cx]
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
    radii = [p[2] for p in reading.pips]
    if max(radii) > MAX_RADIUS_SPREAD * min(radii):
        return False
    polarity = reading.polarity or "dark"
    shapes = [pip_elongation(patch, p, polarity) for p in reading.pips]
    if max(shapes) > MAX_PIP_ELONGATION:
        return False
    return len(shapes) < 2 or max(shapes) / min(shapes) <= MAX_ELONGATION_SPREAD


def combined_reading(
    patch: np.ndarray, polarity: str | None, probs: np.ndarray | None = None
) -> PipReading:
    """Read a straightened patch with independent readers and keep only what they support.

    The built-in reader (`vision.pips`) and the face network (`vision.face_net`, whose class
    probabilities ``probs`` may be given) read every patch: a value both give is taken; when
    they differ, the built-in reader's value stands only if the network gives it at least
    NET_DOUBT and the face reader (`vision.face`) finds it too; otherwise it is set aside. A
    die the built-in reader leaves open (or whose value is set aside) takes the network's value
    when the face reader or the pips of one colour (`vision.pips.read_pip_colour`: marbled
    dice) give it too and the network is at least NET_AGREE sure of it, or when the network
    is at least NET_AGREE sure of a one and the built-in reader finds a one's pip alone in the
    middle of a clean face (a die seen at a slant shows a side face's pips beside it), or
    when the network is at least NET_READ sure of it and pips found by either pip reader sit
    on that face's grid. The pips of a face of few pips must look alike, unless
    the network is NET_SURE sure of the value and the face reader finds it too.
    """
    if probs is None:
        probs = default_net().probabilities([patch])[0]
    # The face reader runs only where the rule asks for it, and at most once.
    face = functools.cache(lambda: read_face(patch, float(PATCH_SIDE), polarity))
    reading = _opinions(patch, polarity, probs, face)
    # Unlike pips mean a side face's pip joined the top face's, unless every reader, the
    # network NET_SURE sure, sees that face (blurred or marbled pips look uneven too).
    if not pips_alike(patch, reading) and not (
            probs[reading.value] >= NET_SURE and face().value == reading.value):
        return replace(reading, value=None, reason="cocked", fit=None,
                       confidence=min(0.3, reading.confidence))
    return reading


def _opinions(
    patch: np.ndarray, polarity: str | None, probs: np.ndarray,
    face: Callable[[], FaceReading],
) -> PipReading:
    net = int(np.argmax(probs))
    sure = float(probs[net])
    mine = read_pips(patch, float(PATCH_SIDE), polarity)
    if mine.value is not None and net == mine.value:
        return replace(mine, confidence=max(mine.confidence, sure))
    outvoted = mine.value is not None
    if outvoted:
        # A network that hesitates (a neighbour in the patch) leaves the two pip readers to
        # agree between themselves.
        if probs[mine.value] >= NET_DOUBT and face().value == mine.value:
            return replace(mine, confidence=min(mine.confidence, float(probs[mine.value])))
        # Otherwise the built-in reader's face is set aside (on a die seen at a slant, its pips
        # may include a side face's) and the others may still agree on another.
        mine = replace(mine, value=None, reason="not a pip face", fit=None,
                       confidence=min(0.3, mine.confidence))
    if net == 0 or sure < NET_AGREE:
        return replace(mine, reason=mine.reason or "not a pip face")
    seen = face()
    if seen.value == net:
        # Outvoting the built-in reader takes both other readers' confidence.
        return replace(_from_face(seen, mine),
                       confidence=min(sure, seen.confidence) if outvoted else sure)
    coloured = read_pip_colour(patch, float(PATCH_SIDE), polarity)
    if coloured.value == net:
        return replace(coloured, confidence=min(sure, coloured.confidence))
    if net == 1:
        # A one seen at a slant beside a side face's pips: the one's pip must pass alone.
        one = read_one(patch, float(PATCH_SIDE), polarity)
        if one.value == 1:
            return replace(one, confidence=min(one.confidence, sure))
    if sure < NET_READ:
        return replace(mine, reason=mine.reason or "not a pip face")
    # The network's value stands when pips that either reader found sit on that face's grid.
    for pips in (mine.pips, seen.pips):
        fit = fit_layout(np.array([(q[0], q[1]) for q in pips], dtype=np.float64)) if pips else None
        if fit is not None and fit.value == net:
            return replace(mine, value=net, confidence=sure, reason=None, fit=fit,
                           pips=tuple((float(x), float(y), float(r)) for x, y, r in pips))
    reason = seen.reason if seen.value is None and seen.reason else "not a pip face"
    return replace(mine, reason=mine.reason or reason, confidence=min(0.3, sure))


def _placed(die: Die, scale: float, offset: tuple[int, int]) -> Die:
    """A die read at the working size, in the input image's pixels (``offset``: where the
    part that was read begins in it)."""
    if scale == 1.0 and offset == (0, 0):
        return die
    ox, oy = offset
    return replace(
        die,
        center=(die.center[0] / scale + ox, die.center[1] / scale + oy),
        corners=tuple((x / scale + ox, y / scale + oy) for x, y in die.corners),
    )


@dataclass(frozen=True)
class Scene:
    """An image prepared for reading: the working copy, its die candidates and their context."""

    look: Look  # the working copy (BGR, Lab, foreground mask), where dice are found
    source: Source  # what dice are straightened from
    scale: float  # working size / input size
    side: float  # typical die side, working pixels
    candidates: list[Candidate]
    polarity: str | None  # the profile's pip polarity, if any
    sized: bool = True  # False: no die body gave the die size; ``side`` is a guess
    offset: tuple[int, int] = (0, 0)  # where the working copy begins in the input (zones)
    input_size: tuple[int, int] | None = None  # (w, h) of the whole input, zones or not

    @property
    def centre(self) -> tuple[float, float] | None:
        """The input's centre (under the camera), in working pixels."""
        if self.input_size is None:
            return None
        w, h = self.input_size
        return ((w / 2.0 - self.offset[0]) * self.scale, (h / 2.0 - self.offset[1]) * self.scale)

    @property
    def image_side(self) -> float | None:
        """The input's larger side, in working pixels."""
        return None if self.input_size is None else max(self.input_size) * self.scale


def prepare(image: np.ndarray, profile: Profile | None = None) -> Scene:
    """Normalise an image, bring it to the working size and find its die candidates.

    A profile's zones limit the work to the part of the image around them, and its empty
    tray replaces the modelled floor."""
    bgr = as_bgr(image)
    shape = bgr.shape[:2]
    box = profile.zone_box(shape) if profile else (0, 0, shape[1], shape[0])
    x0, y0, x1, y1 = box
    bgr = bgr[y0:y1, x0:x1]
    h, w = bgr.shape[:2]
    if profile and profile.die_side:
        side = profile.die_side
    else:
        side = quick_die_side(bgr, profile.floor(shape, box, quick_size((h, w)))
                              if profile else None)
    # Work at a size where a die is about WORK_DIE_SIDE pixels (never enlarged): the same
    # pixel sizes then fit every camera, and large images cost no more than small ones.
    scale = min(1.0, MAX_WORKING_SIDE / max(h, w))
    if side is not None:
        scale = min(scale, WORK_DIE_SIDE / side)
    scale = max(scale, MIN_WORKING_SIDE / max(h, w), 1e-3)
    scale = min(scale, 1.0)
    source = patch_source(bgr, scale, side)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    seen = look_at(working_copy(source.image, size),
                   profile.floor(shape, box, size) if profile else None)
    side_hint = side * scale if side is not None else None
    candidates, side_found = find_candidates(seen, side_hint)
    return Scene(seen, source, scale, side_found, candidates,
                 profile.pip_polarity if profile else None, sized=side is not None,
                 offset=(x0, y0), input_size=(shape[1], shape[0]))


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


def _size_seen_best(source: Source, candidates: list[Candidate], side: float) -> float:
    """Of the die sides ``side`` x TRIAL_SIDES, the one at which the face network is sure of
    a face on the most pip clusters (then: the surest on them overall)."""
    clusters = [c for c in candidates if c.source == "pips"]
    if not clusters:
        return side
    net = default_net()
    best, best_score = side, (-1, 0.0)
    for factor in TRIAL_SIDES:
        trial = factor * side
        probs = net.probabilities([straighten(source.image, c.center, 0.0, trial, source.zoom)[0]
                                   for c in clusters])
        values = probs[:, 1:].max(axis=1)
        score = (int(np.count_nonzero(values >= NET_SURE)), float(values.sum()))
        if score > best_score:
            best, best_score = trial, score
    return best


def candidate_side(cand: Candidate, side: float) -> float:
    """The die side to straighten a candidate with: its own when its region is one die (dice
    of several sizes may share a tray: down to half the typical side)."""
    own = cand.side
    return own if cand.source == "body" and 0.5 * side <= own <= 1.4 * side else side


def _read_already(cand: Candidate, found: list[_Found], side: float) -> bool:
    """Whether a pip cluster lies on a die read already (the same die again). A region split
    into dice is read whatever lies near: the split found another die there, and a die
    touching one read already may be nearer to it than a typical die side."""
    return cand.source == "pips" and any(
        f.die.value is not None and _same_die(cand.center, f, side)
        for f in found
    )


def read_dice(
    image: np.ndarray, profile: Profile | None = None, *, lean_check: bool = True
) -> list[Die]:
    """Every die in a BGR (or gray / BGRA) image of the tray, read or marked unsure.

    A die whose face reads but that the lean check (`vision.lean_net`) finds leaning on
    another die is reported cocked; ``lean_check=False`` leaves that out (the check's own
    training cuts the dice it reads). What the face network is sure shows no die face is
    not reported at all, not even as unsure (a fingertip, a speck).

    With a profile: its die size and pip polarity are taken as known, dice outside its zones
    are left out (and the image around them is not read), its empty tray replaces the
    modelled floor, and an unsure "die" whose body matches none of its dice colours (a hand,
    a coaster) is no die."""
    scene = prepare(image, profile)
    kept = _read_scene(scene)
    if not scene.sized:
        # No die body gave the die size (white dice on a light floor): the size at which the
        # network sees dice best in the pip clusters is tried as well, and kept if more dice
        # read at it.
        trial = _size_seen_best(scene.source, scene.candidates, scene.side)
        if trial != scene.side:
            candidates, side = find_candidates(scene.look, trial)
            other = _read_scene(replace(scene, side=side, candidates=candidates))
            if _values(other) > _values(kept):
                kept = other
    if profile and profile.dice_colors:
        kept = [k for k in kept if k.die.value is not None or _die_coloured(
            scene.look.image, scene.look.mask, k.center, scene.side, profile.dice_colors)]
    if lean_check:
        _check_lean(kept, scene)
    dice = [_placed(k.die, scene.scale, scene.offset) for k in kept]
    if profile and profile.zones:
        dice = [d for d in dice if profile.in_zones(d.center)]
    return dice


def _check_lean(kept: list[_Found], scene: Scene) -> None:
    """Report cocked each read die that leans on another: one within LEAN_REACH of its side
    from another die found, that the lean check is LEAN_SURE sure leans. Its top face is
    whole and fits a face, but the game asks for a re-throw. A die with no other near it has
    nothing to lean on (and a camera at a slant shows every die the way a top-down camera
    shows a leaning one: only its neighbours tell the two apart)."""
    centre, image_side = scene.centre, scene.image_side
    if centre is None or image_side is None:
        return
    # A die's side is its pips' grid's; a one has none (its outline is the side it was
    # straightened at, which for a leaning die takes in its side face): it takes the other
    # dice's, dice of a tray being of a size.
    read = [(k, math.dist(*k.die.corners[:2])) for k in kept if k.die.value is not None]
    sides = [side for k, side in read if k.die.value >= 2]
    typical = float(np.median(sides)) if sides else None
    near = []
    for k, side in read:
        if k.die.value == 1 and typical is not None:
            side = typical
        if any(o is not k and math.dist(k.center, o.center) <= LEAN_REACH * side
               for o in kept):
            near.append((k, side))
    if not near:
        return
    # The working copy shows a die about twice as wide as the check looks at it: enough.
    patches = [lean_patch(scene.look.image, k.center, side, centre) for k, side in near]
    distances = [distance_from_centre(k.center, centre, image_side) for k, _ in near]
    for (k, _), leaning in zip(near, default_lean_net().leaning(patches, distances),
                               strict=True):
        if leaning >= LEAN_SURE:
            k.die = replace(k.die, value=None, reason="cocked",
                            confidence=float(min(k.die.confidence, 1.0 - leaning)),
                            alternatives=(k.die.value,))


def _die_coloured(
    work: np.ndarray, mask: np.ndarray, center: tuple[float, float], side: float,
    colours: list[tuple[float, float, float]],
) -> bool:
    """Whether at least DIE_COLOUR_SHARE of what stands out from the floor within a die's
    square around ``center`` is within DIE_COLOUR_MATCH (Lab) of one of ``colours``: a die's
    body, or two dice's, less their pips. Where nothing stands out (white dice on a white
    floor), there is nothing to judge: it may be a die."""
    h, w = mask.shape
    r = max(1, round(side / 2))
    cx, cy = round(center[0]), round(center[1])
    x0, y0, x1, y1 = max(0, cx - r), max(0, cy - r), min(w, cx + r + 1), min(h, cy + r + 1)
    body = mask[y0:y1, x0:x1] > 0
    if not body.any():
        return True
    lab = cv2.cvtColor(work[y0:y1, x0:x1], cv2.COLOR_BGR2Lab)[body].astype(np.float32)
    gaps = lab[:, None, :] - np.asarray(colours, np.float32)[None, :, :]
    near = np.sqrt((gaps * gaps).sum(axis=2)).min(axis=1) <= DIE_COLOUR_MATCH
    return float(near.mean()) >= DIE_COLOUR_SHARE


def _values(found: list[_Found]) -> int:
    return sum(f.die.value is not None for f in found)


def _read_scene(scene: Scene) -> list[_Found]:
    """One reading per die of a prepared scene (working pixels)."""
    mask, side, polarity = scene.look.mask, scene.side, scene.polarity
    found: list[_Found] = []
    usable = [c for c in scene.candidates if math.isfinite(c.side) and c.side >= 4]
    # Regions and split regions first, then pip clusters, each phase in one pass of the
    # network (cheaper than one pass per candidate); a pip cluster on a die read already is
    # not looked at.
    for sources in (("body", "split"), ("pips",)):
        phase = [c for source in sources for c in usable
                 if c.source == source and not _read_already(c, found, side)]
        views = _views(scene.source, [(c, candidate_side(c, side)) for c in phase])
        for cand, view in zip(phase, views, strict=True):
            if _read_already(cand, found, side):
                continue
            # A pip cluster yields a die only with a value; none can stand against a network
            # this sure of no face (see `combined_reading`), so it is not read at all.
            if cand.source == "pips" and (not possible_values(view.probs) or (
                    _body_cover(mask, np.array(cand.center), side) < 0.5
                    and not net_vouches(view.probs))):
                continue
            if _blank_part(cand, view.probs):
                continue
            item = _read_candidate(mask, cand, side, polarity, view)
            # An unsure die the network sees a face on may be of another size than assumed.
            if item is not None and item.die.value is None and int(np.argmax(view.probs)) > 0:
                item = _read_resized(scene.source, mask, cand, side, polarity, view) or item
            if item is not None:
                found.append(item)
    # A region read whole and split is two dice when two of its parts read: its reading as
    # one die is then of a face made of both dice's pips.
    pairs = collections.Counter(f.cand.region for f in found
                                if f.cand.source == "split" and f.die.value is not None)
    found = [f for f in found if not (f.cand.source == "body" and f.cand.region >= 0
                                      and pairs[f.cand.region] >= 2)]
    # One reading per die: read dice first (surest first), then unsure ones. Two readings of
    # one die that disagree make it unsure: one of them is of a side face or a neighbour.
    kept: list[_Found] = []
    for item in sorted(found, key=lambda f: f.rank):
        same = [k for k in kept if _same_die(item.center, k, side)]
        if not same:
            kept.append(item)
            continue
        first = same[0]
        if item.die.value is not None and first.die.value not in (None, item.die.value):
            first.die = replace(first.die, value=None, reason="not a pip face",
                                confidence=0.3)
    # Blanks stay until here: in a close-up, they are the pips of one large die.
    return [k for k in _close_up(kept, scene)
            if k.die.value is not None or k.no_face < NET_NO_FACE]


def _blank_part(cand: Candidate, probs: np.ndarray) -> bool:
    """Whether a candidate is a part of a split region that could only be read as an unsure
    die the network is NET_NO_FACE sure shows no face: a blank, dropped in the end (most are
    halves of one die tried as two), so it is not read at all."""
    return cand.source == "split" and not possible_values(probs) and probs[0] >= NET_NO_FACE


def _same_die(point: tuple[float, float], found: _Found, side: float) -> bool:
    """Whether a reading at ``point`` is of the die of ``found``: nearer than SAME_DIE x the
    typical ``side``, or x its own side when it is larger (a close-up's pips, a large die's
    rim)."""
    return math.dist(point, found.center) < SAME_DIE * max(side, math.dist(*found.die.corners[:2]))


def _read_resized(
    source: Source, mask: np.ndarray, cand: Candidate, side: float, polarity: str | None,
    view: _View,
) -> _Found | None:
    """A die left unsure at the size it was straightened with, read at RESIZE_TRIALS x that
    size: a region's outline or the typical side misjudges a die next to another, or one much
    larger than the rest, and pips fit their grid only at the die's own scale. The value must
    be the same at every trial size that reads one, and of at least MIN_RESIZED_VALUE pips:
    a face of one or two pips needs little to form at a wrong scale (zoomed in, two corners of
    a three fill the patch as a two)."""
    trials = _views(source, [(cand, view.side * f) for f in RESIZE_TRIALS])
    # The network bounds what each trial can read: no value of enough pips, none at all.
    possible = [possible_values(t.probs) for t in trials]
    if not any(max(values, default=0) >= MIN_RESIZED_VALUE for values in possible):
        return None
    first: _Found | None = None
    for trial, values in zip(trials, possible, strict=True):
        if not values:
            continue
        found = _read_candidate(mask, cand, side, polarity, trial)
        if found is None or found.die.value is None:
            continue
        if found.die.value < MIN_RESIZED_VALUE or (first and found.die.value != first.die.value):
            return None  # the sizes disagree, or a face of few pips formed
        first = first or found
    return first


def _stands_out(lab: np.ndarray, cand: Candidate, pips: list[tuple[float, float]]) -> bool:
    """Whether the face of ``cand`` (less its pips) differs in the Lab image ``lab`` from what
    lies around it: a die, not a patch of floor between smaller dice."""
    h, w = lab.shape[:2]
    side = cand.size[0]

    def square(scale: float) -> np.ndarray:
        mask = np.zeros((h, w), np.uint8)
        box = cv2.boxPoints((cand.center, (scale * side, scale * side), cand.angle))
        cv2.fillConvexPoly(mask, np.round(box).astype(np.int32), 255)
        return mask

    face, ring = square(0.9), cv2.subtract(square(1.4), square(1.15))
    for x, y in pips:
        cv2.circle(face, (round(x), round(y)), round(0.2 * side), 0, -1)
    if not face.any() or not ring.any():
        return False
    inside = np.array(cv2.mean(lab, face)[:3])
    outside = np.array(cv2.mean(lab, ring)[:3])
    return float(np.abs(inside - outside).sum()) >= MIN_THRESHOLD


def _close_up(kept: list[_Found], scene: Scene) -> list[_Found]:
    """In a close-up, a die larger than the floor model's window is floor to it, and its pips
    are found as small unsure dice. When no die reads and some of those lie on a face's grid,
    the die they would belong to is read like any other; if it reads, it replaces the unsure
    dice on it."""
    if any(k.die.value is not None for k in kept):
        return kept  # dice that read are of the size found: no close-up
    blank = [k for k in kept if k.die.reason in ("not a pip face", "low contrast")]
    if not blank:
        return kept
    side = scene.side
    # A pip that joins the die's rim in the mask is found as part of a split region, which
    # reads as nothing at all.
    loose = [c.center for c in scene.candidates if c.source == "split"
             and not any(_same_die(c.center, k, side) for k in kept)]
    centres = ([k.center for k in blank] + loose)[:MAX_CLOSE_UP_PARTS]
    for count in range(min(6, len(centres)), 1, -1):
        for parts in itertools.combinations(centres, count):
            fit = fit_layout(np.array(parts, dtype=np.float64))
            if fit is None or not CLOSE_UP_PITCH[0] * side <= fit.pitch <= CLOSE_UP_PITCH[1] * side:
                continue
            die_side = FACE_PER_PITCH * fit.pitch
            cand = Candidate(fit.center, (die_side, die_side), float(np.degrees(fit.angle)),
                             False, "body")
            if not _stands_out(scene.look.lab, cand, centres):
                continue
            view = _views(scene.source, [(cand, die_side)])[0]
            item = _read_candidate(scene.look.mask, cand, die_side, scene.polarity, view)
            if item is None or item.die.value is None:
                continue
            inside = [k for k in blank if _same_die(k.center, item, side)]
            return [k for k in kept if k not in inside] + [item]
    return kept
