"""Readings judged over every way a die's patch can be turned or mirrored.

A photo turned by a quarter or mirrored shows the same dice, so it must read the same. The
two pip readers (`vision.pips`, `vision.face`) find the same pips on the same grid however the
patch is turned; the face network does not quite, so its word is asked of the patch and its
seven `other_views` at once where it decides alone: `without_blanks` drops what it sees no
face on every way, `steady` leaves unsure a read die it reads otherwise when turned, and
`read_every_way` reads a die the pip readers left open only as the value it gives every view.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from vision.combined import EVERY_WAY, FEW_PIPS, NET_DOUBT, no_face_every_way, other_views
from vision.face import read_face
from vision.face_net import FaceReader
from vision.pips import read_pips
from vision.scene_reading import NET_NO_FACE, Found, doubted
from vision.straightening import PATCH_SIDE


def without_blanks(found: list[Found], net: FaceReader) -> list[Found]:
    """``found`` less its blanks: unsure "dice" the face network ``net`` is NET_NO_FACE sure
    show no die face, their patch seen every way it can be turned or mirrored
    (`no_face_every_way`; as cut, for a reading that kept no patch): a fingertip, a speck, a
    mark on the tray."""
    # The mean over every view reaches NET_NO_FACE only if the patch as cut gives at least
    # this (each other view gives at most 1): the rest need no turned views.
    least = EVERY_WAY * NET_NO_FACE - (EVERY_WAY - 1)
    turned = [f for f in found
              if f.die.value is None and f.patch is not None and f.no_face >= least]
    beliefs = dict(zip(map(id, turned), no_face_every_way(
        [f.patch for f in turned], [f.no_face for f in turned], net), strict=True))
    return [f for f in found if f.die.value is not None
            or beliefs.get(id(f), f.no_face) < NET_NO_FACE]


#: The face network's belief in the value read from which `steady` does not turn a die: of
#: 2,954 read dice (the dataset's 528 photos and 150 varied rendered trays) the four that
#: turning left unsure all had less than 0.9, and none of the 2,544 at 0.98 or more changed
#: (docs/lab/vision-finder.md).
STEADY_SURE = 0.98


def steady(found: list[Found], net: FaceReader, polarity: str | None = None) -> list[Found]:
    """``found``, each read die that the face network ``net`` reads as another value when its
    patch is turned or mirrored left unsure: over the patch and its seven `other_views`, the
    network's mean belief in another value is higher than in the value read. A reading
    must not depend on how the photo was taken; where it would, it is not guessed. A die
    the network is STEADY_SURE of as cut is not turned: the seven views cost most of a
    reading's network time, and such a die was never read otherwise turned.

    The network is the only reader a turn can change: the two pip readers (`vision.pips`,
    `vision.face`) find the same pips on the same grid however the patch is turned or
    mirrored. So a die both of them read as its value (pips of ``polarity``, if given) keeps
    it while the network's mean belief in that value stays at NET_DOUBT or more: what the
    reading rule asks of the network for the pip readers' word to stand
    (`vision.combined.combined_reading`), asked of every view at once. Not a face of FEW_PIPS
    pips or fewer: glare that hides two pips of a four hides them from both pip readers."""
    read = [f for f in found if f.die.value is not None and f.patch is not None
            and f.probs is not None and f.probs[f.die.value] < STEADY_SURE]
    if not read:
        return found
    turned_views = [v for f in read for v in other_views(f.patch)]
    others = net.probabilities(turned_views).reshape(len(read), EVERY_WAY - 1, -1)
    for f, turned in zip(read, others, strict=True):
        mean = (f.probs + turned.sum(axis=0)) / EVERY_WAY
        value = f.die.value
        best = int(np.argmax(mean[1:])) + 1
        if best != value and mean[best] > mean[value] and not (
                value > FEW_PIPS and mean[value] >= NET_DOUBT
                and _pip_readers_read(f.patch, value, polarity)):
            f.die = doubted(f.die, alternatives=(value, best))
    return found


#: How sure, in every view of its patch, the face network must be of a value to read a die
#: the readers left unsure.
EVERY_WAY_SURE = 0.9
#: The fewest pips such a face may have: a one or a two are a round letter or a colon to the
#: network however they are turned.
EVERY_WAY_LEAST = 3


def read_every_way(found: list[Found], net: FaceReader) -> list[Found]:
    """``found``, each die left unsure as "not a pip face" read as the value the face network
    ``net`` is at least EVERY_WAY_SURE sure of in every one of its patch's eight views (the
    patch as cut, whose beliefs the reading kept, and its `other_views`), when it has
    EVERY_WAY_LEAST pips or more.

    The pip readers set aside a face they cannot place on a grid (marbled, translucent or
    dark dice, pips in shade); the network's word alone then stands where no turn or mirror
    of the photo could change it (the rule `steady` holds every read die to), not on one view.
    Not a die the network itself contests (`Found.contested`): on a whole cut of the die it
    sees another face than on this cut, so its word on this one settles nothing.
    Only a die the network is that sure of as cut is turned: one pass of the network for
    all their seven other views.
    """
    likely = [f for f in found if f.die.value is None and f.die.reason == "not a pip face"
              and not f.contested and f.patch is not None and f.probs is not None
              and int(np.argmax(f.probs)) >= EVERY_WAY_LEAST
              and float(f.probs.max()) >= EVERY_WAY_SURE]
    if not likely:
        return found
    turned = net.probabilities([v for f in likely for v in other_views(f.patch)])
    for f, others in zip(likely, turned.reshape(len(likely), EVERY_WAY - 1, -1), strict=True):
        value = int(np.argmax(f.probs))
        held = min(float(f.probs[value]), float(others[:, value].min()))
        if held >= EVERY_WAY_SURE:
            f.die = replace(f.die, value=value, reason=None, alternatives=(), confidence=held)
    return found


def _pip_readers_read(patch: np.ndarray, value: int, polarity: str | None) -> bool:
    """Whether both pip readers read ``value`` on a straightened patch."""
    side = float(PATCH_SIDE)
    return (read_pips(patch, side, polarity).value == value
            and read_face(patch, side, polarity).value == value)
