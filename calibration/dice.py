"""Step 3, the dice: what the game's dice look like on this tray, learnt from a few throws.

Nobody labels the throws; the number of dice thrown is known. So the reader's own readings
of the throws give first measures (the die size from read dice's outlines, their body
colours and whether their pips are darker or lighter), and then the profile's parameters
are chosen by how well the readings agree with the count (`calibration.agreement`): the die
size from a ladder around the measured one (and, where few dice read, across the image's
scale: a close-up's die is far larger than the reader assumes), then the pip polarity and
the dice colours, each kept only when the readings agree better with it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from calibration.agreement import Agreement, agreement, die_side
from calibration.errors import CalibrationError
from vision import Die, Profile, Readers, read_dice
from vision.pipeline import as_read, prepare

# Die sides tried around the measured one, and across the image (x its shorter side) when
# fewer than half the thrown dice read.
SIDE_FACTORS = (0.8, 0.9, 1.0, 1.12, 1.25, 1.4, 1.6)
SCALE_LADDER = (0.05, 0.075, 0.11, 0.16, 0.24, 0.35, 0.5, 0.7)
# Dice of two sizes: two groups of read dice whose median sides differ this much, the
# smaller group holding at least this share of the dice.
TWO_SIZES_RATIO = 1.5
TWO_SIZES_SHARE = 0.25
POLARITY_VOTE = 0.8  # share of the read dice whose pips must agree to try one polarity
COLOUR_MERGE = 25.0  # Lab distance under which two dice bodies are one colour
MAX_COLOURS = 4
SET_COLOURS = 2  # most colours a dice set has, for its colours to go into the profile


@dataclass
class DiceFindings:
    """What the dice step learnt, and the profile it chose."""

    profile: Profile
    agreement: Agreement  # of the chosen profile on the calibration throws
    plain: Agreement  # of the reader with the tray's profile alone (no die knowledge)
    sides: list[float] = field(default_factory=list)  # read dice's sides (px)
    colours: list[tuple[float, float, float]] = field(default_factory=list)
    polarity_votes: tuple[int, int] = (0, 0)  # (dark, light)
    tried: int = 0  # profiles tried
    readings: list[list[Die]] = field(default_factory=list)  # the chosen profile's


def measure(image: np.ndarray, die: Die) -> tuple[tuple[float, float, float], str]:
    """(body colour in OpenCV 8-bit Lab, "dark" or "light" pips) of a read die: the median
    colour of its face is its body (pips cover at most a third of it), and the pips lie on
    the side of the median where the lightness spreads further. ``image`` is the picture as
    the reader saw it (`vision.pipeline.as_read`, at the reading's exposure), which is what a
    profile's dice colours are compared with."""
    mask = np.zeros(image.shape[:2], np.uint8)
    centre = np.array(die.center, np.float32)
    corners = (np.array(die.corners, np.float32) - centre) * 0.85 + centre
    cv2.fillConvexPoly(mask, np.round(corners).astype(np.int32), 255)
    x, y, w, h = cv2.boundingRect(np.round(corners).astype(np.int32))
    x0, y0 = max(0, x), max(0, y)
    part = image[y0:y + h, x0:x + w]
    inside = mask[y0:y + h, x0:x + w] > 0
    lab = cv2.cvtColor(part, cv2.COLOR_BGR2Lab)[inside].astype(np.float32)
    if lab.size == 0:
        return (0.0, 128.0, 128.0), "dark"
    body = np.median(lab, axis=0)
    light = lab[:, 0]
    p5, p50, p95 = np.percentile(light, (5, 50, 95))
    polarity = "dark" if p50 - p5 >= p95 - p50 else "light"
    return (float(body[0]), float(body[1]), float(body[2])), polarity


def two_sizes(sides: Sequence[float]) -> tuple[float, float] | None:
    """The two sizes (px) when the read dice form two groups of clearly different size."""
    if len(sides) < 4:
        return None
    logs = np.sort(np.log(np.asarray(sides, np.float64)))
    best: tuple[float, int] | None = None
    for cut in range(1, len(logs)):  # the split of least spread (1-D k-means, exhaustively)
        a, b = logs[:cut], logs[cut:]
        spread = float(((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum())
        if best is None or spread < best[0]:
            best = (spread, cut)
    assert best is not None
    small, large = logs[:best[1]], logs[best[1]:]
    if min(len(small), len(large)) < TWO_SIZES_SHARE * len(logs):
        return None
    low, high = float(np.exp(np.median(small))), float(np.exp(np.median(large)))
    return (low, high) if high >= TWO_SIZES_RATIO * low else None


def colour_groups(colours: Sequence[tuple[float, float, float]]) -> list[tuple[float, ...]]:
    """The dice bodies' colours merged into at most MAX_COLOURS groups (each a Lab median),
    groups of one die among many left out (a misread speck, a die of another set)."""
    groups: list[list[np.ndarray]] = []
    for colour in colours:
        c = np.asarray(colour, np.float32)
        for group in groups:
            if np.linalg.norm(np.median(group, axis=0) - c) <= COLOUR_MERGE:
                group.append(c)
                break
        else:
            groups.append([c])
    groups.sort(key=len, reverse=True)
    kept = [g for g in groups if len(g) >= 2 or len(colours) <= 3][:MAX_COLOURS]
    return [tuple(round(float(v), 1) for v in np.median(g, axis=0)) for g in kept]


def learn(
    images: Sequence[np.ndarray], expects: Sequence[int], base: Profile,
    progress: Callable[[int], None] | None = None, *, readers: Readers | None = None,
) -> DiceFindings:
    """Choose die size, pip polarity and dice colours for ``base`` (the tray's profile:
    zones, empty tray) from throws ``images`` of ``expects`` dice each, read with
    ``readers`` (None: the shipped networks).

    Raises `CalibrationError` when no die is found at all, or when the read dice are of two
    sizes (two sets in one calibration)."""
    tick = progress or (lambda n: None)
    plain = [read_dice(image, base, readers=readers) for image in images]
    tick(1)
    dice_found = sum(len(r) for r in plain)
    read = [(k, d) for k, r in enumerate(plain) for d in r if d.value is not None]
    if not dice_found and not _any_read_at_scales(images, base, readers):
        raise CalibrationError("no dice found in the throws: are the dice in the tray, in "
                               "view and lit? (check the preview of step 1)")
    # A one has no pip grid: its outline is the patch it was read in, not the die.
    sides = [die_side(d) for _, d in read if d.value != 1]
    pair = two_sizes(sides)
    if pair is not None:
        raise CalibrationError(f"dice of two sizes (about {pair[0]:.0f} and {pair[1]:.0f} px): "
                               "calibrate each set on its own, with --name for each")
    seen = [as_read(image, base) for image in images]
    measures = [measure(seen[k], d) for k, d in read]
    colours = [m[0] for m in measures]
    dark = sum(m[1] == "dark" for m in measures)
    votes = (dark, len(measures) - dark)

    cache: dict[tuple, tuple[Agreement, list[list[Die]]]] = {}

    def judge(profile: Profile) -> Agreement:
        key = (profile.die_side, profile.pip_polarity, tuple(profile.dice_colors))
        if key not in cache:
            readings = [read_dice(image, profile, readers=readers) for image in images]
            cache[key] = (agreement(readings, expects, plain), readings)
            tick(1)
        return cache[key][0]

    start = judge(base)
    best_profile, best = base, start
    # The die size: around the measured one, and across the image's scale when few dice read.
    short = min(min(image.shape[:2]) for image in images)
    trials: list[float] = []
    # Around the size the reader itself measures on these throws: a profile's die side
    # stands in for that measure (`vision.pipeline.prepare`), which takes in what the camera
    # sees of a die, side faces and all; a read die's outline is its top face, or its pips'
    # grid, a half to four fifths of that. Outlines larger than the measure say the reader
    # measured something else (a close-up of one die, read whole): then they set the sizes.
    measured = reader_side(images, base, readers)
    outline = mean_side(sides)
    if measured is None or (outline is not None and outline > measured):
        measured = outline
    if measured is not None:
        trials += [measured * f for f in SIDE_FACTORS]
    if not sides or start.share_read < 0.5:
        trials += [short * f for f in SCALE_LADDER]
    # A die size must help (read the count better, not only a little surer: a size that
    # reads the same dice may still miss others) without hurting any throw: one that reads
    # more dice in some throws and fewer in others fits some of them only (photos from
    # another distance). Of the sizes that read best, the middle one (geometrically) is
    # kept: the farthest from the sizes where readings start to fail on either side.
    good: list[tuple[float, float, Profile, Agreement]] = []
    for side in trials:
        candidate = replace_profile(base, die_side=round(side, 1))
        score = judge(candidate)
        if score.cost < start.cost - 1e-9 and score.nowhere_worse(start):
            good.append((score.cost, side, candidate, score))
    if good:
        least = min(g[0] for g in good)
        plateau = sorted((g for g in good if g[0] <= least + 1e-9), key=lambda g: g[1])
        middle = math.sqrt(plateau[0][1] * plateau[-1][1])
        chosen = min(plateau, key=lambda g: abs(math.log(g[1] / middle)))
        if steady_size(chosen[1], sorted(trials), {g[1] for g in good}):
            _, _, best_profile, best = chosen
    # Pip polarity, when the read dice agree on it: kept if it reads no worse (it is faster:
    # the other polarity is not looked for).
    if measures and max(votes) >= POLARITY_VOTE * len(measures):
        polarity = "dark" if votes[0] >= votes[1] else "light"
        candidate = replace_profile(best_profile, pip_polarity=polarity)
        score = judge(candidate)
        if not best.better_than(score) and score.nowhere_worse(best):
            best_profile, best = candidate, score
    # Dice colours: kept if they read no worse (they drop unsure "dice" of no dice colour),
    # and only for a set of one or two colours: a few throws of a mixed bag show only some of
    # its colours, and an unsure die of the others would be dropped.
    groups = colour_groups(colours)
    if 0 < len(groups) <= SET_COLOURS:
        candidate = replace_profile(best_profile, dice_colors=groups)
        score = judge(candidate)
        if not best.better_than(score) and score.nowhere_worse(best):
            best_profile, best = candidate, score
    key = (best_profile.die_side, best_profile.pip_polarity, tuple(best_profile.dice_colors))
    return DiceFindings(best_profile, best, start, sides, groups, votes, len(cache),
                        cache[key][1])


def reader_side(images: Sequence[np.ndarray], base: Profile,
                readers: Readers | None) -> float | None:
    """The die side (image pixels) the reader measures on ``images`` by itself, median over
    those it measures one on; None when it measures none."""
    sides = []
    for image in images:
        scene = prepare(image, base, readers)
        if scene.sized:
            sides.append(scene.side / scene.scale)
    return float(np.median(sides)) if sides else None


def steady_size(side: float, tried: Sequence[float], good: set[float]) -> bool:
    """Whether the sizes tried next to ``side``, one on each side, read better than the
    reader's own size too. The right size is no knife's edge: a step either way reads nearly
    as well. A size that alone reads better fits these few throws by chance (a die or two
    more on one throw: readings of crowded trays swing that much when the scale moves by a
    few percent), and a profile holding it reads the tray's other pictures no better."""
    k = list(tried).index(side)
    return 0 < k < len(tried) - 1 and tried[k - 1] in good and tried[k + 1] in good


def replace_profile(profile: Profile, **changes: object) -> Profile:
    """A copy of ``profile`` with ``changes``, sharing its empty tray (loaded once)."""
    copy = replace(profile, **changes)  # type: ignore[arg-type]
    tray = profile.background_image()
    if tray is not None and profile.background is None:
        copy.use_empty_tray(tray)
    return copy


def _any_read_at_scales(images: Sequence[np.ndarray], base: Profile,
                        readers: Readers | None) -> bool:
    """Whether any die reads at some die size across the image's scale: a close-up of one
    large die may show no die at all to the reader's own size guess."""
    short = min(min(image.shape[:2]) for image in images)
    for factor in SCALE_LADDER[3:]:
        profile = replace_profile(base, die_side=short * factor)
        if any(d.value is not None for image in images
               for d in read_dice(image, profile, readers=readers)):
            return True
    return False


def describe(findings: DiceFindings) -> str:
    """One line: what was chosen."""
    return describe_profile(findings.profile)


def describe_profile(p: Profile) -> str:
    """One line: the dice's part of a profile."""
    size = f"die side {p.die_side:.0f} px" if p.die_side else "die size left to the reader"
    pips = f"{p.pip_polarity} pips" if p.pip_polarity else "pips of either polarity"
    colours = (f"{len(p.dice_colors)} dice colour(s)" if p.dice_colors
               else "no dice colours")
    faces = ", faces learnt" if p.adaptation is not None else ""
    return f"{size}, {pips}, {colours}{faces}"


def mean_side(sides: Sequence[float]) -> float | None:
    """The median side, or None without sides."""
    return float(np.median(sides)) if sides else None


