"""Exposure: a dim image brought up to the brightness the reader is made for.

Every threshold of the reader is a number of lightness levels or a Lab distance: a die
against its floor, a pip against its die, shade against the floor it darkens. Such numbers
hold for a range of brightness only; the same tray taken darker (a dim bar, a short
exposure) moves dice across them, and the reading changes with the light instead of with the
dice. So a reading first measures how bright the image's brightest parts are
(`bright_level`: the level of the brightest channel that all but a share BRIGHTEST of the
pixels stay at or below; glints and the odd clipped pixel are fewer) and, when that is under
DIM, multiplies the image's levels to bring it to DIM, as far as its noise allows: a gain
multiplies the sensor's noise as well, and a frame of a dim bar can hold more noise than
light (the simulated dim bar: noise of 3.3 levels under a brightest level of 27). The gain
never lifts the noise (`noise_level`) above NOISE_CEILING.

An image at DIM or brighter is read as it is: the reader's thresholds were set on photos of
trays from several cameras whose brightest parts lie between DIM and 255 (pale floors and
dice under bright light up to 255 itself). Darkening bright images was tried and not kept:
white dice on a white card then lose the little contrast they have. One factor on every
channel keeps colours' hue; a frame taken darker comes back to the levels of one taken
right, but for the rounding of its coarser levels.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.histogram import level_of_share_u8

# The dimmest of the photos the reader was made on: their brightest parts at 190 to 255.
DIM = 190
BRIGHTEST = 0.005  # share of the pixels allowed above the level measured (glints, clipping)
# The most noise (levels, `noise_level`) a gain may lift an image to: the development photos
# of trays carry up to 1.2, and readings of noisier images turn erratic under a gain.
NOISE_CEILING = 2.0
MAX_GAIN = 8.0
# Immerkaer's noise mask, [[1, -2, 1], [-2, 4, -2], [1, -2, 1]]: zero on flat and linear
# shading, so what it measures is noise. It is this second difference across and down.
_SECOND_DIFFERENCE = np.array([1, -2, 1], np.float32)


def bright_level(bgr: np.ndarray) -> int:
    """The level (0-255) of the brightest channel that all but a share BRIGHTEST of the
    pixels of a BGR image stay at or below.

    Counted over every pixel, from a histogram: the image turned or mirrored has the same."""
    top = cv2.max(cv2.max(bgr[..., 0], bgr[..., 1]), bgr[..., 2])
    return level_of_share_u8(top, 1.0 - BRIGHTEST)


def noise_level(bgr: np.ndarray) -> float:
    """The standard deviation (levels) of a BGR image's noise, by Immerkaer's fast estimate
    (`channel_noise`) on its grey copy."""
    return channel_noise(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY))


def channel_noise(channel: np.ndarray) -> float:
    """The standard deviation (levels) of the noise of one 8-bit channel, by Immerkaer's fast
    estimate ("Fast noise variance estimation", 1996): the mean response to a mask that flat
    areas and linear shading give nothing, scaled to a sigma. Edges and texture add a little,
    so it errs on the noisy side."""
    h, w = channel.shape[:2]
    if h < 3 or w < 3:
        return 0.0
    # Two passes of one dimension in 16-bit integers (|response| <= 16 x 255): exact, and
    # four times faster than the 3x3 mask in floats.
    response = cv2.sepFilter2D(channel, cv2.CV_16S, _SECOND_DIFFERENCE,
                               _SECOND_DIFFERENCE)[1:-1, 1:-1]
    return float(np.sqrt(np.pi / 2.0) * cv2.norm(response, cv2.NORM_L1)
                 / (6.0 * (w - 2) * (h - 2)))


def gain(bgr: np.ndarray) -> float:
    """The factor that brings a BGR image's `bright_level` up to DIM: 1 when it is there
    already; else at most what keeps its noise under NOISE_CEILING (and MAX_GAIN)."""
    level = bright_level(bgr)
    if level >= DIM:
        return 1.0
    allowed = NOISE_CEILING / max(1e-6, noise_level(bgr))
    return max(1.0, min(DIM / max(1, level), allowed, MAX_GAIN))


def exposed(bgr: np.ndarray, factor: float) -> np.ndarray:
    """A BGR image with its levels multiplied by ``factor`` (rounded, clipped at 255); the
    image itself for a factor of 1."""
    if factor == 1.0:
        return bgr
    table = np.clip(np.arange(256, dtype=np.float32) * factor + 0.5, 0, 255).astype(np.uint8)
    return cv2.LUT(bgr, table)
