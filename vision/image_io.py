"""Loading tray images from files, with clear errors for files that are not images."""

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
