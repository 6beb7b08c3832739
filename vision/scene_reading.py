"""Reading the die candidates of a prepared image: each into a die or nothing, then one
reading per die.

A `Scene` is an image prepared for reading (`vision.pipeline.prepare`). `read_scene` reads
its candidates in two passes of the face network (regions and split regions, then pip
clusters on no die read by then); `read_candidate` turns one straightened candidate into a
die, read or unsure, by the rule of `vision.combined`, and `read_resized` reads a die left
unsure again at other sizes.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from vision.combined import (
    NET_SURE,
    combined_reading,
    likely_values,
    net_vouches,
    possible_values,
)
from vision.detect import Candidate, Look
from vision.face_net import FaceReader
from vision.readers import Readers, shipped
from vision.straightening import (
    FACE_PER_PITCH,
    PATCH_SIDE,
    Source,
    View,
    candidate_side,
    to_image,
    views,
)
from vision.types import Die

SAME_DIE = 0.8  # x die side: closer readings are of the same die
# x die side: a one read from a pip cluster this far from the centre of a die found there is
# a pip of another face (`one_reading_per_die`). The pips of a two or three lie 0.38 sides
# from its centre; a true one's pip lies up to 0.37 from a region that takes in a side face.
OFF_CENTRE = 0.45
MIN_BODY_COVER = 0.6  # of a die's square, for dice found from their pips
MIN_ONE_DEPTH = 0.3  # x die side: how deep inside its body the pip of a one lies, at least
# x the typical die side: the finder's spot of a one with no die body around it, in a frame
# whose dice bodies gave that side, is at least this large (a speck of the floor is found as
# a small die: docs/lab/vision-finder.md).
LONE_PIP_SIDE = 0.75
# An unsure "die" the network is this sure shows no die face is none: a fingertip, a speck,
# a mark on the tray. (Real dice left unsure are faces it cannot settle, not blanks to it.)
NET_NO_FACE = 0.9
# Sizes (x the one used) at which a die left unsure is read again, and the fewest pips a value
# read only at one of them may have.
RESIZE_TRIALS = (0.8, 1.25, 1.5)
MIN_RESIZED_VALUE = 3
MIN_CANDIDATE_SIDE = 4  # working pixels: a smaller candidate has nothing to read
#: A face of this many pips or fewer, read on a spot of the die finder, needs a die body in
#: the foreground (or the face network's word on a spot the finder is SURE_FOUND of) like
#: any pip cluster; so does any face on a spot it is less sure of.
FEW_PIPS_FOUND = 2
SURE_FOUND = 0.5
#: x the die side: a face of few pips read on a finder's spot is looked at this much wider
#: too (`_part_of_larger`); at the edge of the sizes the network learnt a die at.
WIDER = 1.15
#: Candidates that stand for a whole die (a die is there, read or not): the die finder's, and
#: die-shaped regions.
WHOLE = ("found", "body")


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
    # The part (x0, y0, x1, y1) of the input read (around a profile's zones); None: all of it.
    box: tuple[int, int, int, int] | None = None
    input_size: tuple[int, int] | None = None  # (w, h) of the whole input, zones or not
    # The networks the scene is read with, a profile's adaptation in (`vision.readers`).
    readers: Readers = field(default_factory=shipped, kw_only=True)

    @property
    def offset(self) -> tuple[int, int]:
        """Where the working copy begins in the input."""
        return (0, 0) if self.box is None else (self.box[0], self.box[1])

    @property
    def centre(self) -> tuple[float, float] | None:
        """The input's centre (under the camera), in working pixels."""
        if self.input_size is None:
            return None
        w, h = self.input_size
        return ((w / 2.0 - self.offset[0]) * self.scale, (h / 2.0 - self.offset[1]) * self.scale)

    @property
    def readable(self) -> list[Candidate]:
        """The candidates large enough to straighten and read (a finite side of at least
        MIN_CANDIDATE_SIDE working pixels)."""
        return [c for c in self.candidates
                if math.isfinite(c.side) and c.side >= MIN_CANDIDATE_SIDE]

    def from_edge(self, point: tuple[float, float]) -> float:
        """How far ``point`` (working pixels) lies from the input frame's nearest edge, in
        working pixels: where a tower's tray has its walls (infinite when the input's size is
        unknown)."""
        if self.input_size is None:
            return math.inf
        w, h = self.input_size
        x, y = point[0] / self.scale + self.offset[0], point[1] / self.scale + self.offset[1]
        return min(x, y, w - x, h - y) * self.scale

    @property
    def image_side(self) -> float | None:
        """The input's larger side, in working pixels."""
        return None if self.input_size is None else max(self.input_size) * self.scale

    def placed(self, die: Die) -> Die:
        """A die read at the working size, in the input image's pixels."""
        if self.scale == 1.0 and self.offset == (0, 0):
            return die
        ox, oy = self.offset
        return replace(
            die,
            center=(die.center[0] / self.scale + ox, die.center[1] / self.scale + oy),
            corners=tuple((x / self.scale + ox, y / self.scale + oy) for x, y in die.corners),
        )


@dataclass
class Found:
    """A candidate read: its die (working pixels), the order in which readings of one die are
    kept, and the face network's belief that it shows no face."""

    die: Die
    rank: tuple  # lower is kept first
    center: tuple[float, float]  # working pixels
    cand: Candidate  # what was read
    no_face: float = 0.0  # the face network's belief that no die face is there, as cut
    patch: np.ndarray | None = None  # the straightened patch read
    probs: np.ndarray | None = None  # the face network's beliefs on the patch as cut
    # The face network sees another face on another cut of this die (`_network_differs`):
    # its word on this cut settles nothing (`vision.every_way.read_every_way`).
    contested: bool = False


def read_scene(scene: Scene) -> list[Found]:
    """One reading per die of a prepared scene (working pixels), blanks included."""
    mask, side, polarity = scene.look.mask, scene.side, scene.polarity
    net = scene.readers.face
    found: list[Found] = []
    usable = scene.readable
    # Regions and split regions first, then pip clusters, each phase in one pass of the
    # network (cheaper than one pass per candidate); a pip cluster on a die read already is
    # not looked at.
    for sources in (("found", "body", "split"), ("pips",)):
        phase = [c for source in sources for c in usable
                 if c.source == source and not _read_already(c, found, side)]
        seen = views(scene.source, [(c, candidate_side(c, side)) for c in phase], net)
        for cand, view in zip(phase, seen, strict=True):
            if _read_already(cand, found, side):
                continue
            # A pip cluster yields a die only with a value; none can stand against a network
            # this sure of no face (see `combined_reading`), so it is not read at all.
            if cand.source == "pips" and (not possible_values(view.probs) or (
                    body_cover(mask, np.array(cand.center), side) < 0.5
                    and not net_vouches(view.probs))):
                continue
            if _blank_part(cand, view.probs):
                continue
            item = read_candidate(mask, cand, side, polarity, view, net=net,
                                  sized=scene.sized)
            # An unsure die the network sees a face on may be of another size than assumed.
            if item is not None and item.die.value is None and int(np.argmax(view.probs)) > 0:
                item = (read_resized(scene.source, mask, cand, side, polarity, view, net=net)
                        or item)
            elif (item is not None and not scene.sized
                  and _part_of_larger(scene.source, item, view, net)):
                item.die = doubted(item.die)
            if item is not None:
                found.append(item)
    # A region read whole and split is two dice when two of its parts read: its reading as
    # one die is then of a face made of both dice's pips.
    pairs = collections.Counter(f.cand.region for f in found
                                if f.cand.source == "split" and f.die.value is not None)
    found = [f for f in found if not (f.cand.source == "body" and f.cand.region >= 0
                                      and pairs[f.cand.region] >= 2)]
    # Blanks stay: in a close-up, they are the pips of one large die (`vision.close_up`).
    return one_reading_per_die(found, side)


def one_reading_per_die(found: list[Found], side: float) -> list[Found]:
    """The readings of a scene, one per die: read dice first (surest first), then unsure ones.

    Two readings of one die that disagree make it unsure: one of them is of a side face or a
    neighbour. So does the face network seeing another face on the die cut whole than on one
    of its pip clusters (`_network_differs`; the die is then `Found.contested`), and a one
    read from a pip cluster that lies off the centre of a die the finder found there and
    could not read (by more than OFF_CENTRE of a die ``side``): a one's pip lies in the
    middle of its die, so this pip is one of another face's (a two's or a three's, which the
    readers could not settle as a whole)."""
    kept: list[Found] = []
    for item in sorted(found, key=lambda f: f.rank):
        same = [k for k in kept if same_die(item.center, k, side)]
        if not same:
            kept.append(item)
            continue
        first = same[0]
        if _network_differs(first, item):
            first.contested = True
            if first.die.value is not None:
                first.die = doubted(first.die)
        elif first.die.value is not None and _contradicts(first, item, side):
            first.die = doubted(first.die)
    return kept


def _network_differs(part: Found, whole: Found) -> bool:
    """Whether the face network, NET_SURE sure, sees another face on a whole cut of a die
    (its finder's spot, its region) than on the cut around one of its pip clusters. A pip
    cluster may be part of a face: a column of a six's pips, the rest lost in glare, is a
    three to the network cut around it, and a six cut whole."""
    if part.cand.source != "pips" or whole.cand.source == "pips" or part.probs is None \
            or whole.probs is None:
        return False
    seen, other = int(np.argmax(part.probs)), int(np.argmax(whole.probs))
    return 0 not in (seen, other) and seen != other and whole.probs[other] >= NET_SURE


def _contradicts(read: Found, other: Found, side: float) -> bool:
    """Whether ``other``, a later reading of the die ``read`` gave a value, leaves that value
    in doubt: it reads another value, or it is a finder's spot that did not read, OFF_CENTRE
    sides from a one read on a pip cluster."""
    if other.die.value is not None:
        return other.die.value != read.die.value
    return (read.die.value == 1 and read.cand.source == "pips" and other.cand.source == "found"
            and math.dist(read.center, other.center) > OFF_CENTRE * side)


def _read_already(cand: Candidate, found: list[Found], side: float) -> bool:
    """Whether a pip cluster lies on a die read already (the same die again). A region split
    into dice is read whatever lies near: the split found another die there, and a die
    touching one read already may be nearer to it than a typical die side. A face of few pips
    read on a finder's spot is read again from its pip clusters: a spot off its die shows
    part of a face, and the two readings must agree (`read_scene`)."""
    return cand.source == "pips" and any(
        f.die.value is not None and same_die(cand.center, f, side)
        and not (f.cand.source == "found" and f.die.value <= FEW_PIPS_FOUND)
        for f in found
    )


def doubted(die: Die, alternatives: tuple[int, ...] = ()) -> Die:
    """``die``, read, left unsure instead: another look at it put its value in doubt."""
    return replace(die, value=None, reason="not a pip face", confidence=0.3,
                   alternatives=alternatives or die.alternatives)


def _part_of_larger(source: Source, item: Found, view: View, net: FaceReader) -> bool:
    """Whether a face of few pips read on a finder's spot is part of a larger face: a spot
    the finder sized too small shows two pips of a five as a two. Looked at WIDER, the
    network then sees another face of more pips; a true two stays a two there, or no face.
    Asked only where no die body sized the frame, whose size the finder's spots then set
    alone: a wider look also takes in a neighbour's pips, a cost worth paying only there."""
    if item.cand.source != "found" or item.die.value is None or item.die.value > FEW_PIPS_FOUND:
        return False
    wider = views(source, [(item.cand, view.side * WIDER)], net)[0].probs
    return int(np.argmax(wider)) > item.die.value


def _blank_part(cand: Candidate, probs: np.ndarray) -> bool:
    """Whether a candidate is a part of a split region that could only be read as an unsure
    die the network is NET_NO_FACE sure shows no face: a blank, dropped in the end (most are
    halves of one die tried as two), so it is not read at all."""
    return cand.source == "split" and not possible_values(probs) and probs[0] >= NET_NO_FACE


def same_die(point: tuple[float, float], found: Found, side: float) -> bool:
    """Whether a reading at ``point`` is of the die of ``found``: nearer than SAME_DIE x the
    typical ``side``, or x its own side when it is larger (a close-up's pips, a large die's
    rim)."""
    return math.dist(point, found.center) < SAME_DIE * max(side, math.dist(*found.die.corners[:2]))


def read_candidate(
    mask: np.ndarray, cand: Candidate, side: float, polarity: str | None, view: View,
    *, net: FaceReader, sized: bool = False,
) -> Found | None:
    """One straightened candidate as a die: read when the readers agree on a value whose pips
    lie on a die, unsure with a reason when it is a die they do not settle, None when it is
    no die (pips with no die body, a pip cluster that does not read). ``net``: the face
    network; ``sized``: whether dice bodies gave the typical ``side`` (the dice stand out
    from the floor)."""
    die_side, patch, back = view.side, view.patch, view.back
    use_own = die_side != side
    reading = combined_reading(patch, polarity, view.probs, net=net)
    h, w = mask.shape
    if reading.value is not None and reading.fit is not None:
        fit = reading.fit
        centre = to_image(back, np.array([fit.center], dtype=np.float64))[0]
        # Pips found without a die body around them are a speck on the floor, unless the
        # network is sure it sees a die (a white die on a light floor has no body in the mask).
        # A lone pip is the exception: a dark dot on a plain floor is a one to the network, so
        # without a body it takes the die finder, which sees the whole frame, sure of a die
        # there. The finder's spots are dice, but a speck it takes for one reads as a face of
        # few pips, and a spot it is unsure of needs a body or a network sure of a face.
        doubted = cand.source == "found" and (fit.value <= FEW_PIPS_FOUND
                                              or cand.score < SURE_FOUND)
        # A speck of the floor that the finder took for a small die is a one's pip in a
        # blank face to the network: where the dice stand out from the floor, a lone pip with
        # no body needs a spot of a die's size. (Where they do not, white dice on a light
        # floor, the finder sizes a one by little more than its pip.)
        speck = (sized and fit.value == 1 and cand.source == "found"
                 and cand.side < LONE_PIP_SIDE * side)
        if ((cand.source not in WHOLE or doubted)
                and body_cover(mask, centre, die_side) < MIN_BODY_COVER
                and (speck or not (net_vouches(view.probs) and cand.score >= SURE_FOUND
                                   and (fit.value > 1 or cand.source == "found")))):
            return None
        # The pip of a one is in the middle of its die; a pip near a body's edge is one pip of
        # a two or three whose other pips were not seen, unless the network, which sees the
        # whole die around the pip, is sure of a one.
        if (fit.value == 1 and cand.source not in WHOLE
                and _depth(mask, centre, die_side) < MIN_ONE_DEPTH * die_side
                and view.probs[1] < NET_SURE):
            return None
        face = PATCH_SIDE if fit.value == 1 else min(PATCH_SIDE, FACE_PER_PITCH * fit.pitch)
        angle = np.degrees(fit.angle)
        square = cv2.boxPoints(((fit.center[0], fit.center[1]), (face, face), -angle))
        corners = to_image(back, square.astype(np.float64))
        die = Die(reading.value, (float(centre[0]), float(centre[1])),
                  tuple((float(x), float(y)) for x, y in corners),
                  float(np.clip(reading.confidence, 0.0, 1.0)))
        return Found(die, (0, -reading.confidence), (float(centre[0]), float(centre[1])), cand,
                     patch=patch, probs=view.probs)
    if cand.source not in WHOLE and not reading.pips:
        return None
    # A spot of the finder that reads as no face, where nothing stands out from the floor (or
    # from the empty tray), is a mark, a shadow or a pattern: no die.
    if cand.source == "found" and (cand.score < SURE_FOUND or body_cover(
            mask, np.array(cand.center), die_side) < MIN_BODY_COVER):
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
    return Found(die, (1 if cand.source in WHOLE else 2, 0.0), die.center, cand,
                 float(view.probs[0]), patch, view.probs)


def read_resized(
    source: Source, mask: np.ndarray, cand: Candidate, side: float, polarity: str | None,
    view: View, *, net: FaceReader,
) -> Found | None:
    """A die left unsure at the size it was straightened with, read at RESIZE_TRIALS x that
    size: a region's outline or the typical side misjudges a die next to another, or one much
    larger than the rest, and pips fit their grid only at the die's own scale. The value must
    be the same at every trial size that reads one, and of at least MIN_RESIZED_VALUE pips:
    a face of one or two pips needs little to form at a wrong scale (zoomed in, two corners of
    a three fill the patch as a two)."""
    trials = views(source, [(cand, view.side * f) for f in RESIZE_TRIALS], net)
    # The network bounds what each trial can read: no value of enough pips, none at all.
    possible = [possible_values(t.probs) for t in trials]
    if not any(max(values, default=0) >= MIN_RESIZED_VALUE for values in possible):
        return None
    first: Found | None = None
    for trial, values in zip(trials, possible, strict=True):
        if not values:
            continue
        # Only a read trial counts: the network alone is never asked of a patch cut larger
        # (`vision.every_way` reads the die as first cut), which takes in a neighbour's face
        # and may read it surely every way (a die leaning on this one).
        found = read_candidate(mask, cand, side, polarity, trial, net=net)
        if found is None or found.die.value is None:
            continue
        if found.die.value < MIN_RESIZED_VALUE or (first and found.die.value != first.die.value):
            return None  # the sizes disagree, or a face of few pips formed
        first = first or found
    return first


def body_cover(mask: np.ndarray, center: np.ndarray, side: float) -> float:
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
