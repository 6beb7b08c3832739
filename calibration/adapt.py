"""Learning the bar's own dice: patches of them with their values, and the face network tuned
on them (`calibration.tuning`, `vision.adaptation`).

Patches are cut as the reader cuts them (`vision.pipeline.prepare`): every candidate the reader
would straighten near a labelled die takes its value, one far from every labelled die is "no
face" (a side face, a mark on the tray), and every labelled die is also cut at its labelled
centre, at its size and a little smaller and larger. Each patch is shown turned and mirrored
too (a die has no upright). What the installer typed may be wrong: a label that the plain
reader (its four readers under one rule, with the shipped network) reads as another value, or
that the tuned network still contradicts, surely and every way the patch is turned, as the
shipped one does, is set aside as a likely slip (`Learnt.doubted`) and the network is tuned
without it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from calibration import tuning
from calibration.labels import Labelled
from vision import Profile, Readers
from vision.adaptation import Adaptation
from vision.combined import EVERY_WAY, combined_reading, other_views
from vision.face_net import CLASSES, FaceNet, to_input
from vision.onnx_model import load_model
from vision.pipeline import prepare
from vision.straightening import candidate_side, straighten

NEAR = 0.3  # x die side: a candidate this near a labelled die is that die
FAR = 0.9  # x die side: one farther than this from every labelled die is no die
SIZES = (0.9, 1.0, 1.12)  # a labelled die is cut at these times its side
# A label is doubted when the tuned network, over the patch's eight views, gives it less
# than DOUBT_LABEL and another value more than DOUBT_OTHER, and the shipped network too reads
# that other value (a slip of the installer's, not a die the network has to learn).
DOUBT_LABEL = 0.1
DOUBT_OTHER = 0.6


@dataclass
class Patches:
    """Straightened patches of the calibration photos, their classes (0: no face, k: value k)
    and which labelled die each came from (-1: a candidate on no labelled die)."""

    patches: list[np.ndarray] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    die: list[int] = field(default_factory=list)
    described: list[str] = field(default_factory=list)  # per labelled die: photo and place

    def add(self, patch: np.ndarray, label: int, die: int) -> None:
        self.patches.append(patch)
        self.labels.append(label)
        self.die.append(die)

    def __add__(self, other: Patches) -> Patches:
        shift = len(self.described)
        return Patches([*self.patches, *other.patches], [*self.labels, *other.labels],
                       [*self.die, *(d + shift if d >= 0 else d for d in other.die)],
                       [*self.described, *other.described])


def merged(parts: Sequence[Patches]) -> Patches:
    """Several throws' patches as one."""
    out = Patches()
    for part in parts:
        out = out + part
    return out


@dataclass
class Learnt:
    """The adaptation learnt (None: no patch to learn from), from how many dice, and the
    labels set aside as slips (described: photo, place, value given, value read)."""

    adaptation: Adaptation | None
    dice: int
    doubted: list[str] = field(default_factory=list)


def cut(images: Sequence[np.ndarray], labelled: Sequence[Sequence[Labelled]],
        base: Profile | None, names: Sequence[str] = (), *, readers: Readers) -> Patches:
    """The patches of ``images`` whose dice are ``labelled`` (one list per image, every die
    of the photo, placed), found by ``readers`` with the profile ``base`` (zones, empty
    tray)."""
    out = Patches()
    for k, (image, dice) in enumerate(zip(images, labelled, strict=True)):
        # A die placed with value 0 is a die whose value is not known: not learnt from, and
        # no candidate near it is "no face".
        placed = [d for d in dice if d.center is not None]
        if not any(d.value for d in placed):
            continue
        scene = prepare(image, base, readers)
        (x0, y0), scale = scene.offset, scene.scale
        centres = [((d.center[0] - x0) * scale, (d.center[1] - y0) * scale) for d in placed]
        side = scene.side
        first = len(out.described)
        name = names[k] if k < len(names) else f"photo {k + 1}"
        out.described += [f"{name} at {d.center[0]:.0f},{d.center[1]:.0f}" for d in placed]
        complete = len(placed) == len(dice)  # only then is a candidate far from all no die
        for cand in scene.readable:
            dists = [math.dist(cand.center, c) / side for c in centres]
            nearest = int(np.argmin(dists))
            if dists[nearest] <= NEAR and placed[nearest].value:
                label, die = placed[nearest].value, first + nearest
            elif complete and dists[nearest] > FAR:
                label, die = 0, -1
            else:
                continue
            patch, _ = straighten(scene.source.image, cand.center, cand.angle,
                                  candidate_side(cand, side), scene.source.zoom)
            out.add(patch, label, die)
        for j, (d, centre) in enumerate(zip(placed, centres, strict=True)):
            if not d.value:
                continue
            own = d.side * scale if d.side else None
            die_side = own if own and 0.7 * side <= own <= 1.4 * side else side
            for factor in SIZES:
                patch, _ = straighten(scene.source.image, centre, 0.0, die_side * factor,
                                      scene.source.zoom)
                out.add(patch, d.value, first + j)
    return out


def learn(patches: Patches, net: FaceNet, *, steps: int = tuning.STEPS) -> Learnt:
    """The face network ``net`` tuned on ``patches`` (every view of each), without the
    labels that look like slips: those the plain reader reads as another value, then those
    the tuned network still surely contradicts, every way the patch is turned, as the shipped
    one does (the network is then tuned again without them)."""
    die = np.asarray(patches.die, np.int64)
    labels = np.asarray(patches.labels, np.int64)
    known = sorted(set(die[die >= 0].tolist()))
    if not patches.patches or not isinstance(net, FaceNet):
        return Learnt(None, 0)  # a stand-in for the network has nothing to tune
    shipped = net.probabilities(patches.patches)
    doubted, keep = [], np.ones(len(labels), bool)
    for d in known:
        rows = die == d
        value = int(labels[rows][0])
        read = _plain_reading([patches.patches[k] for k in np.flatnonzero(rows)],
                              shipped[rows], net)
        if read not in (None, value):
            doubted.append(f"{patches.described[d]}: given {value}, reads {read}")
            keep &= ~rows
    if not keep.any():
        return Learnt(None, 0, doubted)
    model = load_model(net.path, "face network")

    def tuned_on(kept: np.ndarray) -> tuple[bytes, list[np.ndarray]]:
        """The network tuned on the patches ``kept`` (its ONNX file's bytes), and their
        views."""
        views = [v for k in np.flatnonzero(kept)
                 for v in (patches.patches[k], *other_views(patches.patches[k]))]
        tuned = tuning.tune(model, to_input(views), np.repeat(labels[kept], EVERY_WAY),
                            steps=steps)
        return tuned.SerializeToString(), views

    network, views = tuned_on(keep)
    mine = FaceNet.from_bytes(network, "the tuned face network").probabilities(views)
    first_doubts = len(doubted)
    for d in known:
        rows = (die == d)[keep]
        if not rows.any():
            continue
        value = int(labels[keep][rows][0])
        believed = mine[np.repeat(rows, EVERY_WAY)].mean(axis=0)
        other = int(np.argmax(np.where(np.arange(len(believed)) == value, -1.0, believed)))
        if (believed[value] < DOUBT_LABEL and believed[other] > DOUBT_OTHER and other > 0
                and int(np.argmax(shipped[die == d].mean(axis=0))) == other):
            doubted.append(f"{patches.described[d]}: given {value}, reads {other}")
            keep &= die != d
    if len(doubted) > first_doubts:
        network, _ = tuned_on(keep)
    counts = np.bincount(labels[keep], minlength=len(CLASSES))
    return Learnt(Adaptation(net.digest, network, tuple(int(n) for n in counts)),
                  len(known) - len(doubted), doubted)


def _plain_reading(patches: Sequence[np.ndarray], probabilities: np.ndarray, net: FaceNet
                   ) -> int | None:
    """The value the plain reader gives a die's patches (by `vision.combined`'s rule, with
    the network ``net``'s ``probabilities`` of them) when at least two of them read it and
    none reads another; else None."""
    values = [combined_reading(patch, None, probs, net=net).value
              for patch, probs in zip(patches, probabilities, strict=True)]
    read = {v for v in values if v is not None}
    if len(read) == 1 and sum(v is not None for v in values) >= 2:
        return read.pop()
    return None
