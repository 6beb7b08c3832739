"""Order statistics of 8-bit images from their histograms: exact, and much cheaper than
numpy's sorting ones on the few thousand pixels of a patch or a sampled image."""

from __future__ import annotations

import cv2
import numpy as np


def median_u8(image: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """``np.median(image[mask], axis=0)``: each channel's median over the pixels of a uint8
    image (h, w) or (h, w, channels) where ``mask`` (h, w; bool or uint8) is set, or over all
    of them; float64 (channels,).

    OpenCV counts each channel's 256 levels; the two middle ranks are read off the counts."""
    image = np.ascontiguousarray(image)
    channels = 1 if image.ndim == 2 else image.shape[2]
    if mask is not None:
        mask = mask.view(np.uint8) if mask.dtype == bool else mask
        n = cv2.countNonZero(mask)
    else:
        n = image.shape[0] * image.shape[1]
    if n == 0:
        raise ValueError("no pixels to take the median of")
    below = np.stack([_at_or_below(image, c, mask) for c in range(channels)])
    # The first level whose count passes a rank is that rank's value.
    return ((below <= (n - 1) // 2).sum(axis=1) + (below <= n // 2).sum(axis=1)) / 2.0


def level_of_share_u8(image: np.ndarray, share: float) -> int:
    """The least level (0-255) that at least ``share`` of a one-channel uint8 image's pixels
    stay at or below: its ``share`` quantile, counted by OpenCV and read off the counts."""
    below = _at_or_below(np.ascontiguousarray(image), 0)
    return int(np.searchsorted(below, below[-1] * share))


def _at_or_below(image: np.ndarray, channel: int, mask: np.ndarray | None = None) -> np.ndarray:
    """How many pixels of one channel (where ``mask`` is set) lie at or below each of the 256
    levels, counted by OpenCV."""
    return cv2.calcHist([image], [channel], mask, [256], [0, 256]).ravel().cumsum()
