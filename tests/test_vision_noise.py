"""The foreground of a noisy picture (`vision.detect.quieted`): pixel noise does not break
dice up or sink them into the floor."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision import detect
from vision.detect import QUIET_NOISE, foreground, quieted
from vision.exposure import channel_noise

# Twelve squares a little lighter than their floor, as dice of a pale colour on a grey tray.
SQUARES = [(30 + 75 * c, 30 + 70 * r) for r in range(3) for c in range(4)]
SQUARE = 24


def _squares(noise: float, seed: int = 0) -> np.ndarray:
    """Lab: the squares on their floor, with Gaussian noise of ``noise`` levels on every
    channel (as a camera at a high gain gives)."""
    image = np.full((240, 320, 3), 150, np.float32)
    for x, y in SQUARES:
        image[y : y + SQUARE, x : x + SQUARE] = 178
    image += np.random.default_rng(seed).normal(0.0, noise, image.shape)
    return cv2.cvtColor(np.clip(image, 0, 255).astype(np.uint8), cv2.COLOR_BGR2Lab)


def _inside(mask: np.ndarray, x: int, y: int) -> float:
    """The share of a square's inside (its edge's blur left out) that the mask covers."""
    inner = mask[y + 3 : y + SQUARE - 3, x + 3 : x + SQUARE - 3]
    return cv2.countNonZero(inner) / inner.size


def _outside(mask: np.ndarray) -> int:
    """The mask's pixels on the floor."""
    floor = mask.copy()
    for x, y in SQUARES:
        floor[y : y + SQUARE, x : x + SQUARE] = 0
    return cv2.countNonZero(floor)


@pytest.mark.parametrize("seed", range(3))
def test_dice_in_a_noisy_picture_stay_whole(seed: int, monkeypatch) -> None:
    lab = _squares(8.0, seed)
    mask = foreground(lab)
    assert min(_inside(mask, x, y) for x, y in SQUARES) == 1.0
    assert _outside(mask) == 0
    assert cv2.connectedComponents(mask)[0] - 1 == len(SQUARES)
    # Measured on the noisy pixels themselves, the noise raises the threshold above the
    # squares' own difference from the floor, and every square is lost.
    monkeypatch.setattr(detect, "QUIET_NOISE", float("inf"))
    assert max(_inside(foreground(lab), x, y) for x, y in SQUARES) < 0.5


@pytest.mark.parametrize("noise", [8.0, 16.0])
def test_the_smoothing_brings_the_noise_down_to_the_limit(noise: float) -> None:
    lab = _squares(noise)
    assert channel_noise(cv2.extractChannel(lab, 0)) > 2 * QUIET_NOISE
    # The floor above the squares: what is left of the noise is its spread.
    floor = quieted(lab)[2:24, 2:-2, 0]
    assert 0.8 * QUIET_NOISE < floor.std() < 1.1 * QUIET_NOISE


def test_a_clean_picture_is_measured_as_it_is() -> None:
    lab = _squares(1.0)
    assert channel_noise(cv2.extractChannel(lab, 0)) < QUIET_NOISE
    assert quieted(lab) is lab
    mask = foreground(lab)
    assert min(_inside(mask, x, y) for x, y in SQUARES) == 1.0 and _outside(mask) == 0


def test_the_noise_estimate_is_exact_in_integers() -> None:
    # The estimate is made in 16-bit integers: the same as in floats, to rounding.
    lab = _squares(8.0)
    channel = cv2.extractChannel(lab, 0)
    mask = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)
    response = cv2.filter2D(channel, cv2.CV_32F, mask)[1:-1, 1:-1]
    h, w = channel.shape
    floats = float(np.sqrt(np.pi / 2.0) * np.abs(response).sum() / (6.0 * (w - 2) * (h - 2)))
    assert channel_noise(channel) == pytest.approx(floats, rel=1e-9)
