"""Whether the tray moved between two frames, judged on small grey copies of them.

Cheap enough for every frame: the controller's settle detection and the calibration's wait for
a still tray both use it, so both call the same tray "still".
"""

from __future__ import annotations

import cv2
import numpy as np

from firmware_host.camera.base import Frame

SMALL_WIDTH = 96  # settle detection looks at frames this wide: cheap, and sensor noise averages out
MOTION_LEVEL = 14  # grey levels a small pixel must change by to count as moving
MOTION_SHARE = 0.002  # share of small pixels that must change to call the tray moving


def small_grey(frame: Frame) -> np.ndarray:
    """The reduced grey copy motion is judged on: the camera's own when it has one."""
    source = frame.small if frame.small is not None else frame.image
    grey = source if source.ndim == 2 else cv2.cvtColor(source, cv2.COLOR_BGR2GRAY)
    h, w = grey.shape
    size = (SMALL_WIDTH, max(1, round(h * SMALL_WIDTH / w)))
    return cv2.GaussianBlur(cv2.resize(grey, size, interpolation=cv2.INTER_AREA), (3, 3), 0)


def moved(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two small grey frames show motion between them."""
    if a.shape != b.shape:
        return True
    changed = cv2.absdiff(a, b) > MOTION_LEVEL
    return np.count_nonzero(changed) > MOTION_SHARE * changed.size
