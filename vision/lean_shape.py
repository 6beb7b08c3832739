"""The lean seen in a face's shape: a die leaning on another shows a top face squeezed toward it.

A camera looking down on the tray sees the top face of a die lying flat as a square: the face
is parallel to the sensor, and a pinhole projects such a plane at one scale in every direction
(wherever the die lies in the frame). A die resting on another at a tilt ``t`` shows its top
face shortened to ``cos t`` along the direction it leans, toward the die it rests on: 0.94 at
20 degrees, 0.82 at 35. The four corner pips of a four or a five measure that shape; a six's
columns are closer than its rows on many dice, and ones, twos and threes give no second axis.

A camera at a slant squeezes every face of the picture alike, so a face is compared with the
other fours and fives of the same picture when there are any, and with a square when there are
none (as the lean network, `vision.lean_net`, assumes the image centre lies under the camera).

Pure functions on straightened patches (`vision.straightening.straighten` at no turn, so the
patch's axes are the image's); `vision.pipeline.check_lean` asks them beside the lean network.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vision.pips import read_pips

#: Faces whose corner pips make a square on every die.
SQUARE_FACES = (4, 5)
#: A face squeezed this much below its picture's flat faces leans (under a camera straight
#: above, a tilt of 22 degrees and more). Flat fours and fives of varied rendered trays
#: measure 0.91-1.0; a slanted photo's up to 0.13 under its other fours and fives (near and
#: far dice squeezed differently), but none of those toward a die within REACH.
SQUEEZE = 0.07
#: The squeeze must point at the die leant on: within this many degrees of the direction to it.
TOWARD = 30.0
#: ... which lies within this many of the leaning die's sides (a die leaning 20-35 degrees on
#: another lies 1.5-1.95 sides from its centre).
REACH = 2.0


@dataclass(frozen=True)
class Shape:
    """A face's corner pips: width over length of their square, and the short axis (a unit
    vector in the patch's axes, which are the image's)."""

    aspect: float
    short_axis: tuple[float, float]


def face_shape(patch: np.ndarray, side: float, value: int,
               polarity: str | None = None) -> Shape | None:
    """The shape of the corner pips of a four or five centred in ``patch`` (``side`` px a die
    side), or None when the pips found do not make that face."""
    if value not in SQUARE_FACES:
        return None
    reading = read_pips(patch, side, polarity)
    if reading.value != value:
        return None
    pts = np.array([(x, y) for x, y, _ in reading.pips], np.float64)
    # A five's centre pip lies nearest the middle; the other four are the corners.
    corners = pts[np.argsort(-np.linalg.norm(pts - pts.mean(axis=0), axis=1))[:4]]
    spread, axes = np.linalg.eigh(np.cov((corners - corners.mean(axis=0)).T))
    if spread[1] <= 0:
        return None
    return Shape(math.sqrt(max(float(spread[0]), 0.0) / float(spread[1])),
                 (float(axes[0, 0]), float(axes[1, 0])))


def flat_aspect(shapes: list[Shape]) -> float:
    """What a flat face measures in a picture: the median of its fours' and fives' shapes
    (those others than the one judged), or a square when there are none."""
    return float(np.median([s.aspect for s in shapes])) if shapes else 1.0


def leans_toward(shape: Shape, flat: float, center, side: float, neighbour) -> bool:
    """Whether a face of ``shape`` (its die at ``center``, ``side`` px) is squeezed toward the
    ``neighbour`` die's centre as a die leaning on it is, against a picture whose flat faces
    measure ``flat``."""
    offset = np.subtract(neighbour, center, dtype=np.float64)
    distance = float(np.linalg.norm(offset))
    if not 0.0 < distance <= REACH * side or shape.aspect >= flat - SQUEEZE:
        return False
    cos = abs(float(offset @ np.array(shape.short_axis))) / distance
    return math.degrees(math.acos(min(1.0, cos))) <= TOWARD
