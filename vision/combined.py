"""Four readers, one rule: the value of a straightened die, or why it has none.

`combined_reading` asks the built-in reader (`vision.pips.read_pips`), the face network
(`vision.face_net`), the face reader (`vision.face.read_face`) and the pips of one colour
(`vision.pips.read_pip_colour`) about one patch, and keeps a value only where they agree as
its rule says. `possible_values`, `net_vouches` and `likely_values` are what the network's
probabilities allow on their own: the pipeline skips patches and sizes on them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np

from vision.face import FaceReading, read_face
from vision.face_net import FaceReader
from vision.layout import LayoutFit, fit_layout
from vision.pips import PipReading, read_one, read_pip_colour, read_pips
from vision.straightening import FACE_PER_PITCH, PATCH_SCALE, PATCH_SIDE

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
# ... and how sure it must be of a value the face reader finds too (two readers agreeing).
NET_AGREE = 0.5
# A value the network gives at least this much is only doubted, not contradicted: the two pip
# readers may settle it.
NET_DOUBT = 0.2
LIKELY = 0.05
# A face of this many pips or fewer stands only when the reading, and the network's belief in
# it, are at least NET_READ sure (or both pip readers find it).
FEW_PIPS = 2


def combined_reading(
    patch: np.ndarray, polarity: str | None, probs: np.ndarray | None = None,
    *, net: FaceReader,
) -> PipReading:
    """Read a straightened patch with independent readers and keep only what they support.

    The built-in reader (`vision.pips`) and the face network ``net`` (`vision.face_net`, whose
    class probabilities ``probs`` may be given) read every patch: a value both give is taken;
    when they differ, the built-in reader's value stands only if the network gives it at least
    NET_DOUBT and the face reader (`vision.face`) finds it too; otherwise it is set aside. A die
    the built-in reader leaves open (or whose value is set aside) takes the network's value when
    the face reader or the pips of one colour (`vision.pips.read_pip_colour`: marbled dice) give
    it too and the network is at least NET_AGREE sure of it, or when the network is at least
    NET_AGREE sure of a one and the built-in reader finds a one's pip alone in the middle of a
    clean face (a die seen at a slant shows a side face's pips beside it), or when the network
    is at least NET_READ sure of it and pips found by either pip reader sit on that face's grid.
    A die no pip reader reads is left unsure here: the network's word alone is judged over every
    view of the patch, later (`vision.every_way.read_every_way`). The pips of a face of few pips
    must look alike, unless the network is NET_SURE sure of the value and the face reader finds
    it too. A face of FEW_PIPS pips or fewer read with a confidence under NET_READ, or that the
    network gives less than NET_READ, is left unsure, unless both pip readers find it.
    """
    if probs is None:
        probs = net.probabilities([patch])[0]
    # Each pip reader runs at most once, the face reader only where the rule asks for it.
    builtin = functools.cache(lambda: read_pips(patch, float(PATCH_SIDE), polarity))
    face = functools.cache(lambda: read_face(patch, float(PATCH_SIDE), polarity))
    reading = _opinions(patch, polarity, probs, builtin, face)
    # Unlike pips mean a side face's pip joined the top face's, unless every reader, the
    # network NET_SURE sure, sees that face (blurred or marbled pips look uneven too).
    if not pips_alike(patch, reading) and not (
            probs[reading.value] >= NET_SURE and face().value == reading.value):
        return replace(reading, value=None, reason="cocked", fit=None,
                       confidence=min(0.3, reading.confidence))
    # A face of one or two pips needs little to form: a pip lost to blur, compression or
    # shade turns a two into a one and a four into a two, a lone blob is a one, and a
    # leaning die's top pip and a pip of its side face make a two. Read only half surely
    # (the network in doubt, whatever the built-in reader's own fit says) and by one pip
    # reader, such a face is left unsure; both pip readers finding it settle it (a
    # neighbour in the patch is what makes the network doubt a clear face).
    if (reading.value is not None and reading.value <= FEW_PIPS
            and min(reading.confidence, float(probs[reading.value])) < NET_READ
            and not (face().value == reading.value and builtin().value == reading.value)):
        return replace(reading, value=None, reason="not a pip face", fit=None,
                       confidence=min(0.3, reading.confidence))
    return reading


def _opinions(
    patch: np.ndarray, polarity: str | None, probs: np.ndarray,
    builtin: Callable[[], PipReading], face: Callable[[], FaceReading],
) -> PipReading:
    net = int(np.argmax(probs))
    sure = float(probs[net])
    mine = builtin()
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


# A patch and its seven turned and mirrored copies (`other_views`).
EVERY_WAY = 8


def other_views(patch: np.ndarray) -> list[np.ndarray]:
    """The patch turned by a quarter, a half and three quarters, mirrored, and mirrored and
    turned: with the patch itself, every way a turned or mirrored photo can show the die."""
    views = [np.rot90(patch, k) for k in (1, 2, 3)]
    mirrored = patch[:, ::-1]
    views += [mirrored] + [np.rot90(mirrored, k) for k in (1, 2, 3)]
    return [np.ascontiguousarray(v) for v in views]


def no_face_every_way(patches: list[np.ndarray], no_faces: list[float], net: FaceReader
                      ) -> np.ndarray:
    """The face network ``net``'s belief that each patch shows no die face (``no_faces``: as
    cut), averaged over the patch and its seven `other_views`.

    Whether an unsure "die" is dropped as a blank is decided on this: the same patch turned
    by a quarter gives the network another belief by a few points, and a decision made on
    one view came and went with the photo's turns. The mean over all eight is the same
    however the photo is turned or mirrored. Every patch's views go through the network in
    one call of the network."""
    if not patches:
        return np.zeros(0)
    views = [view for patch in patches for view in other_views(patch)]
    others = net.probabilities(views)[:, 0].reshape(len(patches), EVERY_WAY - 1)
    return (np.asarray(no_faces, np.float64) + others.sum(axis=1)) / EVERY_WAY


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


def possible_values(probs: np.ndarray) -> set[int]:
    """The values `combined_reading` can give a patch with the network's ``probs``: its
    likeliest value, and any it gives at least NET_DOUBT (a value needs the network's support
    in every case)."""
    values = {v for v in range(1, len(probs)) if probs[v] >= NET_DOUBT}
    likeliest = int(np.argmax(probs))
    return values | {likeliest} if likeliest else values


def net_vouches(probs: np.ndarray) -> bool:
    """Whether the face network is NET_SURE sure that a patch shows a die face (any value)."""
    return int(np.argmax(probs)) > 0 and float(np.max(probs)) >= NET_SURE


def likely_values(probs: np.ndarray) -> tuple[int, ...]:
    """Values the face network gives at least LIKELY of its belief, likeliest first: what the
    scoreboard offers first when a person corrects an unsure die."""
    order = np.argsort(-probs[1:], kind="stable")
    return tuple(int(k) + 1 for k in order if probs[k + 1] >= LIKELY)
