"""The die finder: a small fully convolutional network that finds every die's top face.

It looks at the whole frame, reduced so its longer side is ``INPUT_SIDE`` pixels, and answers
on a grid ``STRIDE`` times coarser with, for each cell: how surely a die's top face is centred
there, where in the cell, how large the face is, how it is turned, and whether the die leans
(cocked). Every die is found on its own, at its own size: no guess made for the whole frame
(one die size, one threshold) can lose a tray's dice at once.

It is trained by ``python -m vision.lab.finder_train`` (rendered trays of many kinds of dice,
floors and light, and the dice-photos dataset with augmentation) and runs on ONNX Runtime
(`vision.onnx_model`) from the ONNX file shipped beside this module, like the face network.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.onnx_model import OnnxNetwork

#: Longer side of the frame as the network sees it.
INPUT_SIDE = 320
#: Dice whose faces the network sees smaller than this (input pixels, the median of those it
#: is SURE of) are looked for again in the frame enlarged, so that they are this large, by at
#: most MAX_ZOOM, and never so much that the largest die found grows past LARGEST: a 320-pixel
#: input holds a crowded photo's 25-pixel dice in 12, where the network finds a fifth of them
#: less surely (docs/lab/vision-finder.md).
SMALL_FACE = 18.0
MIN_ZOOM, MAX_ZOOM = 1.25, 2.0  # a second look that enlarges less is not worth its time
LARGEST = 80.0
#: A spot of at least this belief is a die the network is sure of (`zoom_for`, and the
#: reading's check of the frame's die size, `vision.pipeline`).
SURE = 0.5
#: Input pixels per output cell.
STRIDE = 4
#: Output channels, in order: centre (logit), x and y offset within the cell (0..1), log of the
#: face side in input pixels, cos and sin of four times the turn, cocked (logit).
CHANNELS = ("centre", "dx", "dy", "log_side", "cos4", "sin4", "cocked")
#: A cell is a die's centre when its belief is at least this and no neighbour's is higher.
FIND_AT = 0.2
#: A spot this near a surer one (x the surer's side) is the same die seen again: a side face
#: of a die seen at a slant. Touching dice lie a side apart.
SAME_DIE = 0.8
MAX_DICE = 64
DEFAULT_MODEL = Path(__file__).resolve().parent / "models" / "finder_net.onnx"


@dataclass(frozen=True)
class Spot:
    """A die's top face as the finder sees it, in pixels of the frame it was given."""

    center: tuple[float, float]
    side: float
    angle: float  # degrees, 0..90: the face's square is the same turned by 90
    score: float  # belief that a die's top face is centred here, 0..1
    # Belief that the die leans, 0..1. The shipped model's stays under 0.3 on leaning dice
    # (docs/lab/vision-finder.md): the reading does not use it; the lean check does that.
    cocked: float

    def corners(self) -> np.ndarray:
        """The face's square (4, 2) in frame pixels."""
        return cv2.boxPoints((self.center, (self.side, self.side), self.angle))


def input_scale(shape: tuple[int, ...], side: float = INPUT_SIDE) -> float:
    """Network input size / frame size for a frame of ``shape`` (h, w, ...): its longer side
    brought to ``side`` (INPUT_SIDE)."""
    h, w = shape[:2]
    return side / max(h, w)


def to_input(bgr: np.ndarray, side: float = INPUT_SIDE) -> tuple[np.ndarray, float]:
    """The network input (1, 3, H, W) float32 for a BGR frame, and its scale.

    The frame is resized (area when reduced) so its longer side is ``side`` (INPUT_SIDE) and
    padded on the right and bottom to whole multiples of 16 pixels (the network halves its
    grid four times), then standardised (`standardised`)."""
    scale = input_scale(bgr.shape, side)
    h, w = bgr.shape[:2]
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    small = cv2.resize(bgr, size, interpolation=cv2.INTER_AREA if scale < 1 else
                       cv2.INTER_LINEAR)
    unit = 4 * STRIDE
    ph, pw = -size[1] % unit, -size[0] % unit
    x = standardised(small)
    if ph or pw:
        x = np.pad(x, ((0, 0), (0, 0), (0, ph), (0, pw)), mode="edge")
    return x, scale


def standardised(image: np.ndarray) -> np.ndarray:
    """A BGR image (H, W, 3) as the network's input (1, 3, H, W) float32, each channel at
    zero mean and unit spread over the image (a spread under 4 levels counts as 4: a flat
    frame stays flat): the network sees contrast, not the camera's exposure."""
    mean, std = cv2.meanStdDev(image)
    # OpenCV lays the planes out and takes the mean off in one pass, several times faster
    # than NumPy's reductions over an interleaved image.
    blob = cv2.dnn.blobFromImage(image, 1.0, mean=tuple(float(m) for m in mean.ravel()),
                                 swapRB=False, crop=False)
    blob /= np.maximum(std.reshape(1, 3, 1, 1), 4.0).astype(np.float32)
    return blob


def decode(out: np.ndarray, scale: float, at: float = FIND_AT,
           shape: tuple[int, ...] | None = None) -> list[Spot]:
    """The spots of the network's output (1, len(CHANNELS), H, W), in frame pixels (the frame
    was ``scale`` times the input): each cell whose centre belief is at least ``at``, the
    highest in its 3x3 neighbourhood, not within SAME_DIE sides of a surer spot and not
    holding a surer spot's centre; surest first. With the frame's ``shape`` (h, w, ...), a
    centre beyond the frame (in the input's padding) is none."""
    out = np.asarray(out, np.float32).reshape(len(CHANNELS), *np.asarray(out).shape[-2:])
    belief = 1.0 / (1.0 + np.exp(-out[0]))
    peaks = (belief >= at) & (belief >= cv2.dilate(belief, np.ones((3, 3), np.uint8)))
    ys, xs = np.nonzero(peaks)
    order = np.argsort(-belief[ys, xs])[:MAX_DICE]
    found = []
    for y, x in zip(ys[order], xs[order], strict=True):
        dx, dy, log_side, c4, s4, cocked = (float(v) for v in out[1:, y, x])
        cx = (x + min(max(dx, 0.0), 1.0)) * STRIDE / scale
        cy = (y + min(max(dy, 0.0), 1.0)) * STRIDE / scale
        side = math.exp(min(max(log_side, 0.0), 6.0)) / scale
        angle = (math.degrees(math.atan2(s4, c4)) / 4.0) % 90.0
        if shape is not None and not (0 <= cx < shape[1] and 0 <= cy < shape[0]):
            continue
        found.append(Spot((cx, cy), side, angle, float(belief[y, x]),
                          1.0 / (1.0 + math.exp(-cocked))))
    return one_spot_per_die(found)


def one_spot_per_die(spots: list[Spot]) -> list[Spot]:
    """``spots``, surest first, less those that are a surer spot's die seen again: within
    SAME_DIE sides of it (a side face of a die seen at a slant), or holding its centre."""
    kept: list[Spot] = []
    for spot in sorted(spots, key=lambda s: -s.score):
        if any(math.dist(spot.center, s.center) < SAME_DIE * s.side for s in kept):
            continue
        # A die's top face holds no other die's centre: a spot whose square does is a guess
        # as large as two dice, between them.
        if any(_inside(s.center, spot) for s in kept):
            continue
        kept.append(spot)
    return kept


def _inside(point: tuple[float, float], spot: Spot) -> bool:
    """Whether ``point`` lies within the spot's face (its square, 0.9 of its side)."""
    a = math.radians(spot.angle)
    dx, dy = point[0] - spot.center[0], point[1] - spot.center[1]
    u, v = dx * math.cos(a) + dy * math.sin(a), -dx * math.sin(a) + dy * math.cos(a)
    return max(abs(u), abs(v)) < 0.45 * spot.side


class DieFinder:
    """An ONNX die finder run by ONNX Runtime (`vision.onnx_model`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._net = OnnxNetwork.load(self.path, "die finder")

    def raw(self, bgr: np.ndarray, side: float = INPUT_SIDE) -> tuple[np.ndarray, float]:
        """The network's output for a BGR frame brought to ``side`` (`to_input`), and the
        frame's scale to the input."""
        x, scale = to_input(bgr, side)
        return np.asarray(self._net.run(x)), scale

    def find(self, bgr: np.ndarray, at: float = FIND_AT) -> list[Spot]:
        """Every die top face in a BGR frame whose belief is at least ``at``, surest first.
        Where the dice it is sure of are small in its input, the frame is looked at again
        enlarged (`zoom_for`), and the spots of both looks are one die each
        (`one_spot_per_die`): the closer look finds small dice the first missed, the first
        keeps a die the closer look merged with its neighbour."""
        out, scale = self.raw(bgr)
        spots = decode(out, scale, at, bgr.shape)
        zoom = zoom_for(spots, scale)
        if zoom > 1.0:
            out, closer = self.raw(bgr, INPUT_SIDE * zoom)
            spots = one_spot_per_die(spots + decode(out, closer, at, bgr.shape))[:MAX_DICE]
        return spots


def zoom_for(spots: list[Spot], scale: float) -> float:
    """How much larger than INPUT_SIDE to look at a frame whose ``spots`` were found at
    ``scale`` (input / frame): enough to bring the median face of the dice the network is
    SURE of to SMALL_FACE input pixels, at most MAX_ZOOM and never past LARGEST for the
    largest of them; 1 when they are large enough (less than MIN_ZOOM to gain), or none is
    sure."""
    sides = [s.side * scale for s in spots if s.score >= SURE]
    if not sides:
        return 1.0
    zoom = min(MAX_ZOOM, SMALL_FACE / float(np.median(sides)), LARGEST / max(sides))
    if zoom < MIN_ZOOM:
        return 1.0
    # A whole number of the network's 16-pixel units (rounded down: within the caps), so the
    # enlarged input is padded as little as the first.
    return max(1.0, math.floor(INPUT_SIDE * zoom / 16) * 16 / INPUT_SIDE)
