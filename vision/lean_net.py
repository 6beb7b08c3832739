"""The lean check: a small network that tells a die lying flat from one leaning on another.

A die leaning on another die shows a whole face on top, and its pips fit that face: the face
readers cannot tell it from a flat die. Geometry can. Its top face is foreshortened, and one
of its side faces shows beside the top face. A flat die shows side faces too, but only from
the camera's perspective: the ones that face the point under the camera (the image centre,
with the camera above the tray), and the wider the farther the die lies from it. So each
die is cut with the image centre straight up and its distance from it as a fourth channel,
and the network learns where a flat die's side faces may show.

It is trained by ``python -m vision.lab.lean_net_train`` (reproducibly, on rendered trays with
leaning dice and on the dataset's real flat dice) and runs on ONNX Runtime (`vision.onnx_model`).
`vision.pipeline.check_lean` asks it about every read die: a die leaning on the tray's wall
has no other die beside it (asked of every die, it calls no more of the dataset's real dice
cocked than when asked only of dice beside another: docs/lab/vision-finder.md).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import cv2
import numpy as np

from vision.onnx_model import OnnxNetwork, load_model, standardised

#: Side of the network's input.
INPUT_SIDE = 32
#: Patch side / die side: room for the side face of a die leaning up to about 40 degrees.
PATCH_SCALE = 2.2
DEFAULT_MODEL = Path(__file__).resolve().parent / "models" / "lean_net.onnx"
# A read die is reported cocked when the lean check is LEAN_SURE sure it leans.
LEAN_SURE = 0.9


def lean_patch(
    image: np.ndarray, center, side: float, toward, zoom: float = 1.0
) -> np.ndarray:
    """The die at ``center`` (``side`` px) cut INPUT_SIDE px wide from a BGR ``image``, turned
    so that the point ``toward`` (the image centre) lies straight up.

    ``center``, ``side`` and ``toward`` are in pixels of an image ``zoom`` times smaller than
    ``image`` (the working copy, when ``image`` is the sharper source)."""
    cx, cy = float(center[0]), float(center[1])
    dx, dy = float(toward[0]) - cx, float(toward[1]) - cy
    norm = math.hypot(dx, dy)
    # Patch "down" points away from the centre; at the centre itself any turn will do.
    a, b = (-dx / norm, -dy / norm) if norm > 1e-6 else (0.0, 1.0)
    # Cut at about the source's own resolution, then reduced by area: sampling straight down
    # to INPUT_SIDE would skip pixels (and pips).
    k = max(1, round(PATCH_SCALE * side * zoom / INPUT_SIDE))
    size = INPUT_SIDE * k
    s = size / (PATCH_SCALE * side * zoom)
    x, y = cx * zoom, cy * zoom
    m = np.array([[s * b, -s * a, 0.0], [s * a, s * b, 0.0]])
    m[:, 2] = (size / 2.0, size / 2.0) - m[:, :2] @ (x, y)
    patch = cv2.warpAffine(image, m, (size, size), flags=cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_REPLICATE)
    if k > 1:
        patch = cv2.resize(patch, (INPUT_SIDE, INPUT_SIDE), interpolation=cv2.INTER_AREA)
    return patch


def distance_from_centre(center, toward, image_side: float) -> float:
    """How far a die lies from the image centre, in units of the image's larger side."""
    return math.dist(center, toward) / max(1.0, image_side)


def to_input(patches: list[np.ndarray], distances: list[float]) -> np.ndarray:
    """The network input (N, 4, INPUT_SIDE, INPUT_SIDE) float32: each lean patch standardised
    on its own (contrast, not exposure), and a channel holding its distance from the centre."""
    n, side = len(patches), INPUT_SIDE
    if len(distances) != n:
        raise ValueError(f"{n} lean patches but {len(distances)} distances")
    out = np.empty((n, 4, side, side), np.float32)
    if n:
        out[:, :3] = standardised(np.stack(patches))
        out[:, 3] = np.asarray(distances, np.float32)[:, None, None]
    return out


#: The leaning margins (leaning minus flat logit) of the two checks in a file made by
#: ``vision.lab.lean_either``: the first one trained on dice leaning on other dice only, the
#: second with dice leaning on the tray's wall as well.
EITHER_MARGINS = ("either_first", "either_second")


class LeanNet:
    """An ONNX lean classifier run by ONNX Runtime (`vision.onnx_model`).

    A file holding two checks (``vision.lab.lean_either``) is asked as such. Its first check,
    trained on plain trays, takes the long hard shadow of a die lying alone in the middle of
    the tray for a side face; a die with nothing beside it to lean on (no other die, no wall)
    is asked of the second check alone (docs/lab/vision-networks.md)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        model = load_model(self.path, "lean network")
        inner = {name for node in model.graph.node for name in node.output}
        self._pair = set(EITHER_MARGINS) <= inner
        self._net = OnnxNetwork(model, f"lean network model {self.path}",
                                EITHER_MARGINS if self._pair else ())

    def leaning(self, patches: list[np.ndarray], distances: list[float],
                beside: list[bool] | None = None) -> np.ndarray:
        """(N,) probabilities that each die (a `lean_patch` and its distance) leans.

        ``beside``: whether each die has something beside it to lean on, another die or the
        tray's wall (None: every die has). A die with nothing is asked only of a pair's second
        check."""
        if not patches:
            return np.zeros(0, np.float32)
        x = to_input(patches, distances)
        if self._pair and beside is not None:
            if len(beside) != len(patches):
                raise ValueError(f"{len(patches)} lean patches but {len(beside)} beside flags")
            first, second = (np.asarray(m, np.float64).reshape(-1)
                             for m in self._net.run_many(x, EITHER_MARGINS))
            margin = np.where(np.asarray(beside, bool), np.maximum(first, second), second)
        else:
            logits = np.asarray(self._net.run(x), np.float64).reshape(len(patches), 2)
            margin = logits[:, 1] - logits[:, 0]
        return (1.0 / (1.0 + np.exp(-margin))).astype(np.float32)
