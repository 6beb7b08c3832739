"""Drawing readings on an image: outlines, values, and "?" with the reason for unsure dice."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.image_io import as_bgr
from vision.types import Die

READ_COLOUR = (40, 200, 40)  # BGR green
UNSURE_COLOUR = (0, 140, 255)  # BGR orange


def canvas(image: np.ndarray) -> tuple[np.ndarray, float, int]:
    """A BGR copy of ``image`` to draw on, its scale against 640 pixels and the line width
    that suits it."""
    out = as_bgr(image).copy()
    scale = max(out.shape[:2]) / 640.0
    return out, scale, max(1, round(1.5 * scale))


def outline(out: np.ndarray, die: Die, thick: int) -> tuple[int, int, int]:
    """Draw ``die``'s outline on ``out`` (green: read, orange: unsure); its colour."""
    colour = READ_COLOUR if die.value is not None else UNSURE_COLOUR
    pts = np.array(die.corners, dtype=np.float32).round().astype(np.int32)
    cv2.polylines(out, [pts], True, colour, thick, cv2.LINE_AA)
    return colour


def annotate(image: np.ndarray, dice: Sequence[Die]) -> np.ndarray:
    """A BGR copy of ``image`` with each die's outline and value (or "?reason") drawn."""
    out, scale, thick = canvas(image)
    font = 0.45 * scale
    for die in dice:
        colour = outline(out, die, thick)
        label = str(die.value) if die.value is not None else f"?{die.reason or ''}"
        x = round(min(p[0] for p in die.corners))
        y = round(min(p[1] for p in die.corners)) - 3
        y = max(y, int(12 * scale))
        cv2.putText(out, label, (x, y), cv2.FONT_HERSHEY_SIMPLEX, font, (0, 0, 0), thick + 2,
                    cv2.LINE_AA)
        cv2.putText(out, label, (x, y), cv2.FONT_HERSHEY_SIMPLEX, font, colour, thick,
                    cv2.LINE_AA)
    return out
