"""What the project's networks share at run time: loading their ONNX models into OpenCV's DNN
module, the only runtime they need, and standardising the patches they are shown."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np


def load_onnx(path: str | os.PathLike[str], what: str) -> cv2.dnn.Net:
    """The network in the ONNX file ``path``; FileNotFoundError naming ``what`` when absent.

    OpenCV 5's classic engine runs these small networks in about 60 % of the time its new
    engine takes (OpenCV 4 has only the classic one).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} model not found: {path}")
    classic = getattr(cv2.dnn, "ENGINE_CLASSIC", None)
    return (cv2.dnn.readNetFromONNX(str(path)) if classic is None
            else cv2.dnn.readNetFromONNX(str(path), classic))


def standardised(patches: np.ndarray) -> np.ndarray:
    """BGR patches (N, H, W, 3) as a network input (N, 3, H, W) float32, each on its own at
    zero mean and unit spread (a spread under 4 levels counts as 4: a flat patch stays flat),
    so a network sees contrast, not the scene's exposure."""
    n = len(patches)
    x = patches.astype(np.float32).reshape(n, -1)
    x -= x.mean(axis=1, keepdims=True)
    x /= np.maximum(x.std(axis=1, keepdims=True), 4.0)
    return np.ascontiguousarray(x.reshape(patches.shape).transpose(0, 3, 1, 2))
