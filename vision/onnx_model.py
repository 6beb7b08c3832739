"""Loading the project's ONNX models into OpenCV's DNN module, the only runtime they need."""

from __future__ import annotations

import os
from pathlib import Path

import cv2


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
