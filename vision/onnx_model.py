"""What the project's networks share at run time: their ONNX models, run by ONNX Runtime, and
the standardising of the patches they are shown.

ONNX Runtime runs these small networks two to three times faster than OpenCV's DNN module
on one core, its outputs within 2e-5 of OpenCV's (`docs/lab/vision-notebook.md`, "Speed").
The ``onnx`` package reads the model file: the face network's last layer is read from it,
and its features are added as a second output, for a profile's adaptation
(`vision.adaptation`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np


class NetworkFileError(ValueError):
    """A file that holds no ONNX network this project can run (the message names it)."""


NO_NETWORK = "no ONNX network this project can run"


def load_model(path: str | os.PathLike[str], what: str) -> Any:
    """The ONNX model (an ``onnx.ModelProto``) in the file ``path``. FileNotFoundError naming
    ``what`` when the file is absent; `NetworkFileError` when it holds no model."""
    import onnx  # loaded with the first network, not with the command line

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} model not found: {path}")
    try:
        return onnx.load(str(path))
    except Exception as exc:  # protobuf's DecodeError and kin: one kind for callers
        problem = f"{NO_NETWORK} ({type(exc).__name__})"
        raise NetworkFileError(f"{what} model {path}: {problem}") from None


class OnnxNetwork:
    """An ONNX model run by ONNX Runtime on one thread.

    One thread: the tower reads one frame at a time, and a Raspberry Pi's other cores serve
    the camera and the scoreboard meanwhile. ``outputs``: inner tensors to expose besides the
    model's own outputs (by name, as `run` asks for them). ``named`` says which model it is
    ("face network model PATH") in the `NetworkFileError` raised when ONNX Runtime cannot
    run it."""

    def __init__(self, model: Any, named: str, outputs: tuple[str, ...] = ()) -> None:
        import onnx
        import onnxruntime

        for name in outputs:
            model.graph.output.append(onnx.helper.make_tensor_value_info(
                name, onnx.TensorProto.FLOAT, None))
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: a reading is no place for notices
        try:
            self._session = onnxruntime.InferenceSession(
                model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # ONNX Runtime's own kinds: one kind for callers
            raise NetworkFileError(f"{named}: {NO_NETWORK} ({type(exc).__name__})") from None
        self._input = self._session.get_inputs()[0].name
        self.output = self._session.get_outputs()[0].name

    @classmethod
    def load(cls, path: str | os.PathLike[str], what: str) -> OnnxNetwork:
        """The network in the file ``path`` (errors as `load_model`'s)."""
        return cls(load_model(path, what), f"{what} model {path}")

    def run(self, x: np.ndarray, output: str | None = None) -> np.ndarray:
        """The network's first output for the input ``x`` (float32), or the tensor ``output``
        (one of the model's outputs or of those asked for at loading)."""
        return self._session.run([output or self.output], {self._input: x})[0]

    def run_many(self, x: np.ndarray, outputs: tuple[str, ...]) -> list[np.ndarray]:
        """The tensors ``outputs`` (as `run` names them) for the input ``x``, in one pass."""
        return self._session.run(list(outputs), {self._input: x})


def standardised(patches: np.ndarray) -> np.ndarray:
    """BGR patches (N, H, W, 3) as a network input (N, 3, H, W) float32, each on its own at
    zero mean and unit spread (a spread under 4 levels counts as 4: a flat patch stays flat),
    so a network sees contrast, not the scene's exposure."""
    n = len(patches)
    x = patches.astype(np.float32).reshape(n, -1)
    x -= x.mean(axis=1, keepdims=True)
    x /= np.maximum(x.std(axis=1, keepdims=True), 4.0)
    return np.ascontiguousarray(x.reshape(patches.shape).transpose(0, 3, 1, 2))
