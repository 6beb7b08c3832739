"""Loading tray images from files, and checking arrays handed in as images, with clear errors."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np


class ImageError(ValueError):
    """A file that cannot be read as an image (missing, empty, not an image)."""


def load_image(path: str | os.PathLike[str]) -> np.ndarray:
    """Read an image file as BGR uint8; raise `ImageError` saying why when it cannot."""
    file = Path(path)
    if not file.exists():
        raise ImageError(f"{path}: no such file")
    if not file.is_file():
        raise ImageError(f"{path}: not a file")
    try:
        data = np.fromfile(file, dtype=np.uint8)
    except OSError as exc:
        raise ImageError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if data.size == 0:
        raise ImageError(f"{path}: empty file")
    image = cv2.imdecode(data, cv2.IMREAD_COLOR)
    if image is None or image.size == 0:
        raise ImageError(f"{path}: not an image (or a format OpenCV cannot decode)")
    return image


def as_bgr(image: np.ndarray, what: str = "image", min_side: int = 1) -> np.ndarray:
    """Check ``image`` and return it as HxWx3 uint8 BGR (gray and BGRA are converted).

    Raises ValueError naming ``what`` and what is wrong with it (type, dtype, shape, size).
    """
    if not isinstance(image, np.ndarray):
        raise ValueError(f"{what} must be a numpy array, got {type(image).__name__}")
    if image.dtype != np.uint8:
        raise ValueError(f"{what} must be uint8, got dtype {image.dtype}")
    if image.size == 0:
        raise ValueError(f"{what} is empty (shape {image.shape})")
    channels = 1 if image.ndim == 2 else image.shape[2] if image.ndim == 3 else 0
    if channels not in (1, 3, 4):
        raise ValueError(f"{what} must be an HxW, HxWx3 or HxWx4 array, got shape {image.shape}")
    if min(image.shape[:2]) < min_side:
        raise ValueError(f"{what} must be at least {min_side} px on each side, got {image.shape}")
    if channels == 1:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if channels == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    return image
