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


def input_scale(shape: tuple[int, ...]) -> float:
    """Network input size / frame size for a frame of ``shape`` (h, w, ...): its longer side
    brought to INPUT_SIDE."""
    h, w = shape[:2]
    return INPUT_SIDE / max(h, w)


def to_input(bgr: np.ndarray) -> tuple[np.ndarray, float]:
    """The network input (1, 3, H, W) float32 for a BGR frame, and its scale.

    The frame is reduced (area) so its longer side is INPUT_SIDE and padded on the right and
    bottom to whole multiples of 16 pixels (the network halves its grid four times), then
    standardised (`standardised`)."""
    scale = input_scale(bgr.shape)
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
    spots = []
    for y, x in zip(ys[order], xs[order], strict=True):
        dx, dy, log_side, c4, s4, cocked = (float(v) for v in out[1:, y, x])
        cx = (x + min(max(dx, 0.0), 1.0)) * STRIDE / scale
        cy = (y + min(max(dy, 0.0), 1.0)) * STRIDE / scale
        side = math.exp(min(max(log_side, 0.0), 6.0)) / scale
        angle = (math.degrees(math.atan2(s4, c4)) / 4.0) % 90.0
        if shape is not None and not (0 <= cx < shape[1] and 0 <= cy < shape[0]):
            continue
        if any(math.dist((cx, cy), s.center) < SAME_DIE * s.side for s in spots):
            continue
        spot = Spot((cx, cy), side, angle, float(belief[y, x]), 1.0 / (1.0 + math.exp(-cocked)))
        # A die's top face holds no other die's centre: a spot whose square does is a guess
        # as large as two dice, between them.
        if any(_inside(s.center, spot) for s in spots):
            continue
        spots.append(spot)
    return spots


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

    def raw(self, bgr: np.ndarray) -> tuple[np.ndarray, float]:
        """The network's output for a BGR frame, and the frame's scale to the input."""
        x, scale = to_input(bgr)
        return np.asarray(self._net.run(x)), scale

    def find(self, bgr: np.ndarray, at: float = FIND_AT) -> list[Spot]:
        """Every die top face in a BGR frame whose belief is at least ``at``, surest first."""
        out, scale = self.raw(bgr)
        return decode(out, scale, at, bgr.shape)
