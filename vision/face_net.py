"""The learned second opinion: a small convolutional network that reads a straightened die.

It sees the same patch as the pip readers (`vision.straightening.straighten`: the die's top
face ``PATCH_SIDE`` px wide in the middle of a ``PATCH_SIDE * PATCH_SCALE`` square) and answers
with a probability for "no readable face" and for each value 1..6. It is trained by
``python -m vision.lab.face_net_train`` (reproducibly, from the dice-photos dataset and rendered
dice) and runs through OpenCV's DNN module alone, from the ONNX file shipped beside this
module. The pipeline trusts it only where the classical readers agree with it or leave the
die open; see `vision.combined.combined_reading`.
"""

from __future__ import annotations

import hashlib
import os
from functools import cached_property
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from vision.onnx_model import load_onnx, standardised

#: Side of the network's input (the straightened patch is reduced to this size).
INPUT_SIDE = 32
#: Classes of the output, in order: index 0 is "no readable face", index k is value k.
CLASSES = ("none", "1", "2", "3", "4", "5", "6")
DEFAULT_MODEL = Path(__file__).resolve().parent / "models" / "face_net.onnx"


def to_input(patches: list[np.ndarray]) -> np.ndarray:
    """The network input (N, 3, INPUT_SIDE, INPUT_SIDE) float32 for straightened BGR patches.

    Each patch is reduced and standardised on its own (zero mean, unit spread), so the
    network sees contrast, not the scene's exposure.
    """
    n, side = len(patches), INPUT_SIDE
    if n == 0:
        return np.empty((0, 3, side, side), np.float32)
    if all(p.shape == patches[0].shape for p in patches):
        # Patches of one size are reduced stacked, in one call: no reduction window spans two
        # of them, so each comes out as it would alone.
        small = cv2.resize(np.concatenate(patches), (side, side * n),
                           interpolation=cv2.INTER_AREA)
    else:
        small = np.concatenate([cv2.resize(p, (side, side), interpolation=cv2.INTER_AREA)
                                for p in patches])
    return standardised(small.reshape(n, side, side, 3))


class FaceReader(Protocol):
    """What a reading asks of the face network: a `FaceNet`, a profile's adaptation of one
    (`vision.adaptation.AdaptedNet`), or a stand-in."""

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        """(N, 7) class probabilities (see `CLASSES`) for straightened BGR patches."""
        ...


class FaceNet:
    """An ONNX face classifier loaded into OpenCV's DNN module."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._net = load_onnx(self.path, "face network")

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        """(N, 7) class probabilities (see `CLASSES`) for straightened BGR patches."""
        if not patches:
            return np.zeros((0, len(CLASSES)), np.float32)
        self._net.setInput(to_input(patches))
        logits = np.asarray(self._net.forward(), dtype=np.float64).reshape(len(patches), -1)
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)

    @cached_property
    def digest(self) -> str:
        """The model file's SHA-256 (hex): what a profile's adaptation was computed with."""
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    @cached_property
    def _head(self) -> tuple[str, str]:
        """(the layer before the classifier, the classifier): the last fully connected layer."""
        names = list(self._net.getLayerNames())
        last = max(k for k, name in enumerate(names)
                   if self._net.getLayer(name).type in ("Gemm", "InnerProduct"))
        return names[last - 1], names[last]

    def classifier(self) -> tuple[np.ndarray, np.ndarray]:
        """The last layer's weights (classes, features) and biases (classes,): the logits are
        ``features @ weights.T + biases``."""
        layer = self._head[1]
        weights = np.asarray(self._net.getParam(layer, 0), np.float64)
        return weights, np.asarray(self._net.getParam(layer, 1), np.float64).ravel()

    def features(self, patches: list[np.ndarray]) -> np.ndarray:
        """(N, F) what the classifier sees of straightened BGR patches."""
        if not patches:
            return np.zeros((0, self.classifier()[0].shape[1]), np.float64)
        self._net.setInput(to_input(patches))
        out = np.asarray(self._net.forward(self._head[0]), np.float64)
        return out.reshape(len(patches), -1)
