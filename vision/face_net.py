"""The learned second opinion: a small convolutional network that reads a straightened die.

It sees the same patch as the pip readers (`vision.straightening.straighten`: the die's top
face ``PATCH_SIDE`` px wide in the middle of a ``PATCH_SIDE * PATCH_SCALE`` square) and answers
with a probability for "no readable face" and for each value 1..6. It is trained by
``python -m vision.lab.face_net_train`` (reproducibly, from the dice-photos dataset and rendered
dice) and runs on ONNX Runtime (`vision.onnx_model`), from the ONNX file shipped beside this
module. The pipeline trusts it only where the classical readers agree with it or leave the
die open; see `vision.combined.combined_reading`.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from vision.onnx_model import NO_NETWORK, NetworkFileError, OnnxNetwork, load_model, standardised

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
    """What a reading asks of the face network: a `FaceNet` (a profile's tuned copy of one,
    `vision.adaptation`, is one too), or a stand-in."""

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        """(N, 7) class probabilities (see `CLASSES`) for straightened BGR patches."""
        ...


class FaceNet:
    """An ONNX face classifier run by ONNX Runtime (`vision.onnx_model`), from the model file
    ``path``. Its last layer is a fully connected one (ONNX's Gemm) whose input, the features,
    is exposed as well (what `vision.lab.face_mean` joins). A profile's tuned copy of a
    network (`from_bytes`, `vision.adaptation`) knows the network it was tuned from
    (``base``)."""

    def __init__(self, path: str | os.PathLike[str], *, model: Any = None,
                 base: FaceNet | None = None) -> None:
        self.path = Path(path)
        self.base = base
        model = load_model(self.path, "face network") if model is None else model
        head = last_layer(model, self.path)
        self._features, self._weights, self._biases = head.features, head.weights, head.biases
        self._net = OnnxNetwork(model, f"face network model {self.path}",
                                outputs=(self._features,))

    @classmethod
    def from_bytes(cls, data: bytes, named: str, base: FaceNet | None = None) -> FaceNet:
        """The network of an ONNX file's bytes ``data`` (``named`` in errors), tuned from
        ``base``; `NetworkFileError` when they hold none."""
        import onnx

        try:
            model = onnx.load_from_string(data)
        except Exception as exc:  # protobuf's DecodeError and kin: one kind for callers
            raise NetworkFileError(f"{named}: {NO_NETWORK} ({type(exc).__name__})") from None
        net = cls(named, model=model, base=base)
        net.__dict__["digest"] = hashlib.sha256(data).hexdigest()  # no file to read it from
        return net

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        """(N, 7) class probabilities (see `CLASSES`) for straightened BGR patches."""
        if not patches:
            return np.zeros((0, len(CLASSES)), np.float32)
        logits = np.asarray(self._net.run(to_input(patches)), np.float64)
        logits = logits.reshape(len(patches), -1)
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)

    @cached_property
    def digest(self) -> str:
        """The model file's SHA-256 (hex): what a profile's adaptation was tuned from."""
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    def classifier(self) -> tuple[np.ndarray, np.ndarray]:
        """The last layer's weights (classes, features) and biases (classes,): the logits are
        ``features @ weights.T + biases``."""
        return self._weights.copy(), self._biases.copy()

    def features(self, patches: list[np.ndarray]) -> np.ndarray:
        """(N, F) what the classifier sees of straightened BGR patches."""
        if not patches:
            return np.zeros((0, self._weights.shape[1]), np.float64)
        out = np.asarray(self._net.run(to_input(patches), self._features), np.float64)
        return out.reshape(len(patches), -1)


@dataclass(frozen=True)
class LastLayer:
    """A face network's last fully connected layer: the ONNX node computing the logits, and
    its weights (classes, features) and biases (classes,) as it computes them."""

    node: Any
    weights: np.ndarray
    biases: np.ndarray

    @property
    def features(self) -> str:
        """The name of the tensor the layer reads: the features."""
        return str(self.node.input[0])


def last_layer(model: Any, path: str | os.PathLike[str]) -> LastLayer:
    """The last fully connected layer (ONNX Gemm: alpha, beta and transB taken in) of the face
    network ``model`` (an ``onnx.ModelProto``, read from ``path``): what
    `vision.lab.face_mean` joins. `NetworkFileError` when the
    model's output is computed by no such layer."""
    from onnx import helper, numpy_helper

    graph = model.graph
    stored = {t.name: t for t in graph.initializer}
    ends = {o.name for o in graph.output[:1]}
    last = next((node for node in graph.node if set(node.output[:1]) & ends), None)
    if (last is None or last.op_type != "Gemm" or len(last.input) < 3
            or not all(name in stored for name in last.input[1:3])):
        raise NetworkFileError(f"face network model {path}: no fully connected last layer")
    attrs = {a.name: helper.get_attribute_value(a) for a in last.attribute}
    if attrs.get("transA", 0):
        raise NetworkFileError(f"face network model {path}: a last layer of another kind")
    weights = numpy_helper.to_array(stored[last.input[1]]).astype(np.float64)
    if not attrs.get("transB", 0):
        weights = weights.T
    biases = numpy_helper.to_array(stored[last.input[2]]).astype(np.float64).ravel()
    return LastLayer(last, attrs.get("alpha", 1.0) * weights,
                     attrs.get("beta", 1.0) * np.broadcast_to(biases, (weights.shape[0],)))
