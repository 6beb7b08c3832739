"""Finding dice before reading them: floor model, foreground, die size, touching-dice split.

The floor is what is left after a median blur wider than any die on a reduced image; a die is
a region that differs from it in colour or brightness. The typical die side is the median size
of the compact regions; regions much larger than one die (touching dice, dice against the tray
wall) are split at the peaks of their distance transform, one peak per die.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from vision.components import components
from vision.exposure import channel_noise
from vision.histogram import median_u8

# Floor model: a median over FLOOR_KERNEL pixels of the image reduced FLOOR_SCALE times, i.e.
# a window of about a ninth of a 640 px image, wider than any die the camera should see.
FLOOR_SCALE = 8
FLOOR_KERNEL = 9
# A pixel belongs to a die when its L1 Lab distance to the floor exceeds this many times the
# image's typical distance (the floor's own texture and noise), and at least MIN_THRESHOLD.
NOISE_FACTOR = 3.0
MIN_THRESHOLD = 18.0
# The most pixel noise (levels of L, `exposure.channel_noise`) the foreground is measured
# with: the working copies of the development photos of trays carry up to 1.8 (close-ups of
# one die, with fine texture counted as noise, more).
QUIET_NOISE = 2.0
# Shade on the floor: lightness between these fractions of the floor's, with its hue (the sum
# of the a, b differences, after scaling the floor's chroma alike, below SHADOW_CHROMA).
SHADOW_RANGE = (0.45, 0.97)
SHADOW_CHROMA = 8.0
# An image whose a and b (8-bit Lab) stay within this of neutral (128) everywhere carries no
# hue (a grey camera, a grey frame saved as colour): hue cannot tell shade there.
NO_HUE = 2
# Holes up to this fraction of the image's shorter side (squared) are inside a die.
MAX_HOLE = 0.15
# Plausible die side as a fraction of the image's shorter side.
SIDE_RANGE = (0.025, 0.75)
DEFAULT_SIDE = 0.1  # x shorter side, when no region looks like a die
# A die-shaped region larger than this (in die areas) may be two touching dice.
TWO_DICE_AREA = 1.3
# Two dice of a split region are at least this far apart (x die side): touching dice are one
# side apart, but the typical side, measured on regions with their shadows, may be a fifth too
# large, and a pair's distance-transform peaks lie a little inwards.
SPLIT_APART = 0.6
MIN_DIE_AREA = 0.25  # x die area: smaller regions are no die (a die half the typical side is one)
QUICK_SIDE = 320  # longer side of the image used to estimate the die size
# Top-hat / black-hat response (Lab lightness) of a pip seed.
PIP_THRESHOLD = 40
MAX_PIP_SEEDS = 120  # pips kept as seeds (6 per die for 20 dice)
FACE_REACH = 0.8  # x die side: how far apart two pips of one face may lie


@dataclass(frozen=True)
class Candidate:
    """A region that may be one die: its rotated rectangle and how it was found."""

    center: tuple[float, float]
    size: tuple[float, float]
    angle: float  # degrees, as cv2.minAreaRect gives it
    touches_border: bool
    source: str  # "found" (by the die finder), "body" (a die-shaped region), "split" (part
    # of a larger one), "pips" (a pip cluster)
    # A die-shaped region large enough for two dice is read whole and split: the whole and
    # its parts share this number (-1: no such region).
    region: int = -1
    score: float = 1.0  # the die finder's belief that a die's top face is centred here

    @property
    def side(self) -> float:
        return float(np.sqrt(self.size[0] * self.size[1]))

    @property
    def aspect(self) -> float:
        return max(self.size) / max(1e-6, min(self.size))

    def corners(self) -> np.ndarray:
        return cv2.boxPoints((self.center, self.size, self.angle))


def foreground(lab: np.ndarray, floor: np.ndarray | None = None,
               hue: bool | None = None) -> np.ndarray:
    """Mask (uint8 0/255) of the pixels of a Lab image that differ from the local floor, with
    small holes filled. ``floor`` is the empty tray (Lab, the same size) when it is known;
    otherwise the floor is modelled as a median wider than any die. ``hue``: `has_hue` of
    ``lab``, when the caller has it already."""
    h, w = lab.shape[:2]
    return fill_small_holes(die_pixels(lab, floor, hue), (MAX_HOLE * min(h, w)) ** 2)


def die_pixels(lab: np.ndarray, floor: np.ndarray | None = None,
               hue: bool | None = None) -> np.ndarray:
    """`foreground` before its holes are filled: enough for the regions' outer outlines."""
    # Lightness is taken out once: for the noise and the ceiling alike.
    level = cv2.extractChannel(lab, 0)
    quiet = quieted(lab, level)
    if quiet is not lab:
        lab, level = quiet, cv2.extractChannel(quiet, 0)
    h, w = lab.shape[:2]
    if floor is None:
        sw, sh = max(1, w // FLOOR_SCALE), max(1, h // FLOOR_SCALE)
        small = cv2.resize(lab, (sw, sh), interpolation=cv2.INTER_AREA)
        k = min(FLOOR_KERNEL, (min(sw, sh) // 2) * 2 - 1)
        floor = cv2.medianBlur(small, k) if k >= 3 else small
        floor = cv2.resize(floor, (w, h), interpolation=cv2.INTER_LINEAR)
    elif floor.shape != lab.shape:
        raise ValueError(f"the empty tray is {floor.shape[1]}x{floor.shape[0]} px, the image "
                         f"{w}x{h}")
    # The L1 distance, saturated at 255: two saturating additions give the same sum (no
    # addend is negative) at a third of the cost of a per-pixel transform.
    lightness, a, b = cv2.split(cv2.absdiff(lab, floor))
    dist = cv2.add(cv2.add(lightness, a), b)
    noise = float(median_u8(dist[::4, ::4])[0])  # the floor's own texture
    threshold = max(MIN_THRESHOLD, NOISE_FACTOR * noise)
    mask = cv2.threshold(dist, threshold, 255, cv2.THRESH_BINARY)[1]
    # Shade is told from a die by its hue (the floor's own): an image with no hue at all (a
    # grey camera) has none to tell it by, and every die darker than the floor would pass for
    # shade; there, nothing is removed as shade (a shadow widens a die's outline a little,
    # which the readers bear, where a lost die is lost).
    if has_hue(lab) if hue is None else hue:
        where = np.flatnonzero(mask > 0)  # numpy finds the set entries of a boolean array faster
        mask.reshape(-1)[where[_shadow(lab, floor, where)]] = 0
    above = _above_the_ceiling(level, floor, noise)
    if above is not None:
        mask[above] = 255
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))


def quieted(lab: np.ndarray, lightness: np.ndarray | None = None) -> np.ndarray:
    """``lab``, or when its noise is above QUIET_NOISE, a copy smoothed by the least Gaussian
    that brings it there (a sigma of noise / (2 sqrt(pi) QUIET_NOISE) pixels: white noise
    falls by that factor).

    The foreground's threshold is three times the image's typical distance to its floor,
    and independent pixel noise enters that distance whole: in a noisy picture the threshold
    rises, the dice's own pixels fall under it here and there, and dice break up into
    fragments or vanish. Noise is independent from pixel to pixel, a die's difference from
    its floor is not, so a little smoothing removes the one and keeps the other. Only the
    foreground is measured on it: the pips are read from the pixels as they are.
    ``lightness``: ``lab``'s L channel, when the caller has it already."""
    noise = channel_noise(cv2.extractChannel(lab, 0) if lightness is None else lightness)
    if noise <= QUIET_NOISE:
        return lab
    return cv2.GaussianBlur(lab, (0, 0), noise / (2.0 * np.sqrt(np.pi) * QUIET_NOISE))


def _above_the_ceiling(lightness: np.ndarray, floor: np.ndarray,
                       noise: float) -> np.ndarray | None:
    """Where (boolean) the white pixels at the ceiling of lightness (8-bit L of 255) lie
    whose floor is further below it than the image's typical distance to its floor; None
    when no pixel is at the ceiling (most frames: one pass of OpenCV tells).

    A pixel at the ceiling says only that the scene was at least that bright there: its
    distance to the floor is cut short, and in an overexposed picture a white die on a light
    floor (wood at 240) measures less than the threshold and melts into it. A floor further
    below the ceiling than its own texture and noise (``noise``) does not reach the ceiling
    by itself, so such a pixel is brighter than its floor by more than it shows: a die, or
    glare, which the reader tells apart later. A floor at the ceiling itself tells nothing."""
    if cv2.minMaxLoc(lightness)[1] < 255:
        return None
    # numpy's comparisons, not OpenCV's: OpenCV takes a 1x1 image for a scalar.
    return (lightness == 255) & (floor[..., 0] < 255.0 - noise)


def has_hue(lab: np.ndarray) -> bool:
    """Whether an 8-bit Lab image shows any colour: some pixel's chroma beyond NO_HUE (every
    fourth pixel looked at: a colour scene has large coloured areas; OpenCV's sampling and
    ranges cost a third of numpy's strided ones)."""
    h, w = lab.shape[:2]
    small = cv2.resize(lab, (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_NEAREST)
    for channel in (1, 2):
        low, high = cv2.minMaxLoc(cv2.extractChannel(small, channel))[:2]
        if high - 128 > NO_HUE or 128 - low > NO_HUE:
            return True
    return False


def _shadow(lab: np.ndarray, floor: np.ndarray, where: np.ndarray) -> np.ndarray:
    """Which of the pixels at flat indices ``where`` look like the floor in shade: darker by a
    factor within SHADOW_RANGE, with the floor's hue (chroma scaled alike). Shadows would
    otherwise inflate every die's outline. Returns a boolean array over ``where``."""
    first = where * 3  # each pixel's lightness, in the interleaved L, a, b
    light = lab.reshape(-1)[first]
    ground = floor.reshape(-1)[first]
    shade = _shaded_levels[light, ground]
    # The hue is compared only where the lightness fits: most die pixels are not in shade.
    inside = np.flatnonzero(shade)
    at = where[inside]
    ratio = _level_ratios[light[inside], ground[inside], None]
    hue = lab.reshape(-1, 3)[at, 1:].astype(np.float32) - 128.0
    hue -= ratio * (floor.reshape(-1, 3)[at, 1:].astype(np.float32) - 128.0)
    shade[inside] = np.abs(hue).sum(axis=1) < SHADOW_CHROMA
    return shade


def _lightness_ratios() -> np.ndarray:
    """(pixel + 1) / (floor + 1) for every pair of 8-bit lightness levels (float32)."""
    levels = np.arange(1, 257, dtype=np.float32)
    return levels[:, None] / levels[None, :]


# A lightness ratio depends on two 8-bit levels only: tabulated once, looked up per pixel.
_level_ratios = _lightness_ratios()
_shaded_levels = (_level_ratios >= SHADOW_RANGE[0]) & (_level_ratios <= SHADOW_RANGE[1])


def fill_small_holes(mask: np.ndarray, max_area: float) -> np.ndarray:
    """Fill the holes (pips, glare) of the mask smaller than ``max_area``; keep large ones (the
    floor inside a ring of tray wall is a hole too)."""
    contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    if hierarchy is None:
        return mask
    holes = [
        c for c, link in zip(contours, hierarchy[0], strict=True)
        if link[3] >= 0 and cv2.contourArea(c) <= max_area
    ]
    filled = mask.copy()
    cv2.drawContours(filled, holes, -1, 255, thickness=cv2.FILLED)
    return filled


def _compact(contour: np.ndarray) -> tuple[float, tuple] | None:
    """(area, minAreaRect) of a contour shaped like one die seen from above, else None."""
    area = cv2.contourArea(contour)
    rect = cv2.minAreaRect(contour)
    (rw, rh) = rect[1]
    if rw < 2 or rh < 2:
        return None
    if max(rw, rh) / min(rw, rh) > 1.6 or area < 0.65 * rw * rh:
        return None
    return area, rect


def estimate_side(contours: list[np.ndarray], shape: tuple[int, int]) -> float | None:
    """Typical die side: median size of the compact, die-sized regions."""
    short = min(shape)
    lo, hi = SIDE_RANGE[0] * short, SIDE_RANGE[1] * short
    sides, weights = [], []
    for c in contours:
        found = _compact(c)
        if found is None:
            continue
        side = float(np.sqrt(found[1][1][0] * found[1][1][1]))
        if lo <= side <= hi:
            sides.append(side)
            weights.append(found[0])
    if not sides:
        return None
    # Area-weighted median: a few dice outweigh many specks of floor texture.
    order = np.argsort(sides)
    cum = np.cumsum(np.array(weights)[order])
    return float(np.array(sides)[order][np.searchsorted(cum, cum[-1] / 2.0)])


def _split(region: np.ndarray, offset: tuple[int, int], side: float) -> list[tuple]:
    """Rotated rectangles of the dice in one large region, one per distance-transform peak."""
    opened = cv2.morphologyEx(
        region,
        cv2.MORPH_OPEN,
        cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (max(3, int(0.5 * side)) | 1,) * 2),
    )
    dt = cv2.distanceTransform(opened, cv2.DIST_L2, 3)
    radius = max(2, int(0.3 * side))
    peaks = (dt >= cv2.dilate(dt, np.ones((2 * radius + 1,) * 2, np.uint8))) & (
        dt >= 0.3 * side
    )
    ys, xs = np.nonzero(peaks)
    order = np.argsort(-dt[ys, xs])
    chosen: list[tuple[int, int]] = []
    for i in order:
        x, y = int(xs[i]), int(ys[i])
        if all((x - cx) ** 2 + (y - cy) ** 2 >= (SPLIT_APART * side) ** 2 for cx, cy in chosen):
            chosen.append((x, y))
    # The region's shape around a peak is no guide to the die's turn: the reader finds it
    # from the pips, so each die is an upright square here.
    return [((x + offset[0], y + offset[1]), (side, side), 0.0) for x, y in chosen]


def _round_spots(
    spots: np.ndarray, side: float, offset: tuple[int, int], split: tuple[np.ndarray, ...] = ()
) -> list[tuple[float, float]]:
    """Centres of the pip-sized round components of ``spots``. A component too large for a
    pip may be pips joined by a die's dark edge: it is thresholded again at half the strongest
    response of each polarity in ``split`` and the parts are checked in turn."""
    _, _, stats, cents = components(spots, 8)
    lo, hi = np.pi * (0.04 * side) ** 2, np.pi * (0.2 * side) ** 2
    # Judged on all components at once: a textured floor gives thousands of specks.
    w, h, area = (stats[1:, k].astype(np.float64) for k in (2, 3, 4))
    round_ = (area >= lo) & (area <= hi) & (np.maximum(w, h) <= 2 * np.minimum(w, h)) & (
        area >= 0.4 * w * h)
    found = {
        int(i): [(float(cents[i][0]) + offset[0], float(cents[i][1]) + offset[1])]
        for i in np.flatnonzero(round_) + 1
    }
    if split:
        for i in np.flatnonzero(~round_ & (area > hi) & (area <= 9 * hi)) + 1:
            x, y, bw, bh = (int(t) for t in stats[i, :4])
            parts = found.setdefault(int(i), [])
            for response in split:
                part = response[y : y + bh, x : x + bw]
                top = float(part.max())
                if top > PIP_THRESHOLD:
                    strong = (part > 0.5 * top).astype(np.uint8)
                    parts.extend(_round_spots(strong, side, (offset[0] + x, offset[1] + y)))
    # In component order, as the seeds' order decides ties later.
    return [p for i in sorted(found) for p in found[i]]


_CROSS = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))


def _octagon(op: Callable[..., np.ndarray], image: np.ndarray, radius: int) -> np.ndarray:
    """``op`` (cv2.erode or cv2.dilate) over an octagon of ``radius``, nearly a disk: a square
    then a diamond, both of which OpenCV does fast, where a disk-shaped kernel costs three
    times as much."""
    square = radius - round(radius / (1.0 + 1.0 / np.sqrt(2.0)))  # a regular octagon
    out = op(image, np.ones((2 * square + 1,) * 2, np.uint8))
    return op(out, _CROSS, iterations=radius - square)


def pip_seeds(lab: np.ndarray, side: float) -> list[tuple[float, float]]:
    """Centres of pip clusters: small round spots much darker or lighter than their
    surroundings, grouped when closer than a die's pip spacing, and again when closer than
    FACE_REACH (groups that differ from the first ones only)."""
    lightness = cv2.extractChannel(lab, 0)  # contiguous: morphology runs faster on it
    radius = max(5, int(0.4 * side)) // 2
    dark = cv2.subtract(_octagon(cv2.erode, _octagon(cv2.dilate, lightness, radius), radius),
                        lightness)
    light = cv2.subtract(lightness,
                         _octagon(cv2.dilate, _octagon(cv2.erode, lightness, radius), radius))
    response = cv2.max(dark, light)
    spots = (response > PIP_THRESHOLD).astype(np.uint8)
    pips = _round_spots(spots, side, (0, 0), (dark, light))
    if len(pips) > MAX_PIP_SEEDS:
        # A textured floor: keep the strongest spots only.
        strength = [response[round(y), round(x)] for x, y in pips]
        keep = np.argsort(strength)[::-1][:MAX_PIP_SEEDS]
        pips = [pips[i] for i in keep]
    if not pips:
        return []
    # Neighbouring pips of a face join; the corners of a two or a four are further apart
    # than that, so the pips are grouped again at a face's full reach, as further seeds.
    near = _groups(pips, max(1, int(0.2 * side)))
    wide = _groups(pips, max(1, int(FACE_REACH / 2.0 * side)))
    return [_centre(g) for g in near] + [_centre(g) for g in wide if g not in near]


def _groups(pips: list[tuple[float, float]], radius: int) -> list[list[tuple[float, float]]]:
    """The pips grouped where discs of ``radius`` drawn around them (at their pixels) touch,
    in order of first pip."""
    xy = np.array([(round(x), round(y)) for x, y in pips], dtype=np.int64).reshape(-1, 2)
    # Two drawn discs touch (8-connected) exactly when their centres' offset is in `reach`.
    reach = _disc_reach(radius)
    r = reach.shape[0] // 2
    d = xy[None, :, :] - xy[:, None, :]
    near = (np.abs(d) <= r).all(axis=2)
    i, j = np.nonzero(near)
    near[i, j] = reach[d[i, j, 1] + r, d[i, j, 0] + r]
    # Each pip takes the lowest index it is linked to, until no label changes.
    label = np.arange(len(pips))
    while True:
        linked = np.where(near, label[None, :], len(pips)).min(axis=1)
        if np.array_equal(linked, label):
            break
        label = linked
    groups: dict[int, list[tuple[float, float]]] = {}
    for k, pip in zip(label.tolist(), pips, strict=True):
        groups.setdefault(k, []).append(pip)
    return list(groups.values())


@functools.lru_cache(maxsize=16)
def _disc_reach(radius: int) -> np.ndarray:
    """Offsets (dy, dx, centred) at which two filled discs of ``radius``, as cv2.circle draws
    them, overlap or touch (8-connected): their difference set, grown by one pixel."""
    size = 2 * radius + 1
    disc = np.zeros((size, size), np.uint8)
    cv2.circle(disc, (radius, radius), radius, 1, -1)
    overlap = cv2.filter2D(np.pad(disc, size), -1, disc.astype(np.float32),
                           borderType=cv2.BORDER_CONSTANT)  # a disc is its own mirror image
    return cv2.dilate((overlap > 0).astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)


def _centre(group: list[tuple[float, float]]) -> tuple[float, float]:
    xs, ys = np.array(group, dtype=np.float64).T
    return (float(xs.mean()), float(ys.mean()))


def _quick_factor(shape: tuple[int, ...]) -> float:
    """How much `quick_die_side` reduces an image of ``shape`` (h, w, ...)."""
    return min(1.0, QUICK_SIDE / max(shape[0], shape[1]))


def quick_size(shape: tuple[int, int]) -> tuple[int, int]:
    """The reduced size (w, h) at which `quick_die_side` looks at an image of ``shape``."""
    h, w = shape
    factor = _quick_factor(shape)
    return max(1, round(w * factor)), max(1, round(h * factor))


@dataclass(frozen=True)
class Look:
    """An image looked at for dice: BGR, its Lab conversion and its foreground mask; ``hue``:
    whether it shows any colour (`has_hue`), which both the mask and the reading ask."""

    image: np.ndarray
    lab: np.ndarray
    mask: np.ndarray
    hue: bool = True


def look_at(image: np.ndarray, floor: np.ndarray | None = None) -> Look:
    """A BGR image with its Lab conversion and foreground; ``floor``: the empty tray (Lab, the
    image's size), if known."""
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2Lab)
    hue = has_hue(lab)
    return Look(image, lab, foreground(lab, floor, hue), hue)


def quick_die_side(image: np.ndarray, floor: np.ndarray | None = None) -> float | None:
    """Typical die side of a BGR image, from its foreground at a reduced size (fast);
    ``floor``: the empty tray at that size (Lab, `quick_size`), if known."""
    factor = _quick_factor(image.shape)
    small = image if factor == 1.0 else cv2.resize(image, quick_size(image.shape[:2]),
                                                   interpolation=cv2.INTER_AREA)
    # Only the regions' outer outlines count here, which filling holes inside them leaves as
    # they are.
    mask = die_pixels(cv2.cvtColor(small, cv2.COLOR_BGR2Lab), floor)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    side = estimate_side(list(contours), small.shape[:2])
    return None if side is None else side / factor


def find_candidates(
    seen: Look, side_hint: float | None = None
) -> tuple[list[Candidate], float]:
    """Die candidates in an image looked at, and the die side used.

    Candidates may overlap (a die found both as a region and as a pip cluster); the reader
    keeps one reading per die.
    """
    h, w = seen.mask.shape
    lab, mask = seen.lab, seen.mask
    count, labels, stats, _ = components(mask, 8)
    short = min(h, w)
    min_area = (SIDE_RANGE[0] * short) ** 2 * 0.35
    regions = []
    for k in range(1, count):
        x, y, bw, bh, area = stats[k]
        if area < min_area:
            continue
        region = (labels[y : y + bh, x : x + bw] == k).astype(np.uint8) * 255
        contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        contour = max(contours, key=cv2.contourArea) + np.array([x, y])
        regions.append((contour, region, (int(x), int(y), int(bw), int(bh)), int(area)))
    side = side_hint or estimate_side([r[0] for r in regions], (h, w))
    if side is None:
        side = DEFAULT_SIDE * short
    out: list[Candidate] = []
    split: list[tuple[tuple, bool, int]] = []
    for k, (contour, region, (x, y, bw, bh), area) in enumerate(regions):
        if area < MIN_DIE_AREA * side * side:
            continue
        border = x <= 1 or y <= 1 or x + bw >= w - 1 or y + bh >= h - 1
        found = _compact(contour)
        if found is not None and area <= 1.8 * side * side:
            center, size, angle = found[1]
            # Two touching dice of one colour can make one compact region: try it as
            # two as well; the reader keeps whichever reads.
            twins = area > TWO_DICE_AREA * side * side
            out.append(Candidate(center, size, angle, border, "body", k if twins else -1))
            if twins:
                split.extend((c, border, k) for c in _split(region, (x, y), side))
            continue
        split.extend((c, border, -1) for c in _split(region, (x, y), side))
    seeds = pip_seeds(lab, side)
    for (center, size, angle), border, k in split:
        out.append(Candidate(center, size, angle, border, "split", k))
    out.extend(Candidate(center, (side, side), 0.0, False, "pips") for center in seeds)
    return out, side
