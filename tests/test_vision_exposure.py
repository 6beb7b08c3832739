"""A dim image read at the brightness the reader is made for (`vision.exposure`)."""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

import vision
import vision.pipeline as pipeline
from vision import exposure
from vision.detect import MIN_THRESHOLD, foreground
from vision.lab.render import DieSpec, TraySpec, random_tray, render_tray


def _tray(seed: int = 337):
    return render_tray(random_tray(np.random.default_rng(seed), 4), seed)


def test_the_brightest_level_is_the_same_however_the_image_is_turned() -> None:
    image = _tray().image
    level = exposure.bright_level(image)
    assert exposure.DIM <= level <= 255
    for turned in (cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE), cv2.flip(image, 1),
                   cv2.rotate(image, cv2.ROTATE_180)):
        assert exposure.bright_level(turned) == level


def test_glints_do_not_set_the_level() -> None:
    image = np.full((100, 100, 3), 120, np.uint8)
    image[:3, :10] = 255  # 30 clipped pixels: 0.3 % of the image
    assert exposure.bright_level(image) == 120
    image[:, :2] = 255  # 2 % of the image is bright: that is its brightest part
    assert exposure.bright_level(image) == 255


def test_an_image_in_the_band_is_read_as_it_is() -> None:
    image = _tray().image
    assert exposure.gain(image) == 1.0
    assert exposure.exposed(image, 1.0) is image
    assert pipeline.as_read(image) is image


@pytest.mark.parametrize("factor", [0.3, 0.5, 0.7])
def test_a_dim_image_is_brought_up_to_the_band(factor: float) -> None:
    image = _tray().image
    dim = exposure.exposed(image, factor)
    assert exposure.bright_level(dim) < exposure.DIM
    lifted = exposure.exposed(dim, exposure.gain(dim))
    assert abs(exposure.bright_level(lifted) - exposure.DIM) <= 2
    # One factor on every channel: the hue is kept, so the lifted image is the original
    # scaled, but for the rounding of the dim one's coarser levels.
    scale = exposure.bright_level(lifted) / exposure.bright_level(image)
    expected = np.clip(image.astype(np.float32) * scale, 0, 255)
    assert np.abs(lifted.astype(np.float32) - expected).max() <= 1.0 / factor + 1.0


def test_the_noise_estimate_measures_noise_not_shading() -> None:
    rng = np.random.default_rng(0)
    ramp = np.tile(np.linspace(20, 200, 400, dtype=np.float32), (300, 1))  # linear shading
    flat = cv2.merge([ramp] * 3)
    assert exposure.noise_level(flat.astype(np.uint8)) < 0.3
    for sigma in (2.0, 5.0):
        noisy = np.clip(flat + rng.normal(0, sigma, flat.shape), 0, 255).astype(np.uint8)
        # The grey copy of three channels of independent noise carries less of it.
        grey_sigma = sigma * math.sqrt(0.299**2 + 0.587**2 + 0.114**2)
        assert exposure.noise_level(noisy) == pytest.approx(grey_sigma, rel=0.15)


def test_a_gain_never_lifts_the_noise_above_the_ceiling() -> None:
    rng = np.random.default_rng(1)
    dim = exposure.exposed(_tray().image, 0.15).astype(np.float32)
    noisy = np.clip(dim + rng.normal(0, 1.0, dim.shape), 0, 255).astype(np.uint8)
    factor = exposure.gain(noisy)
    assert 1.0 < factor < exposure.DIM / exposure.bright_level(noisy)  # held back
    assert factor * exposure.noise_level(noisy) == pytest.approx(exposure.NOISE_CEILING)
    # A frame with more noise than the ceiling is read as it is.
    noisier = np.clip(dim + rng.normal(0, 4.0, dim.shape), 0, 255).astype(np.uint8)
    assert exposure.noise_level(noisier) > exposure.NOISE_CEILING
    assert exposure.gain(noisier) == 1.0


@pytest.mark.parametrize("factor", [0.3, 0.4, 0.45, 0.5, 0.6])
def test_a_dim_tray_reads_as_the_tray(factor: float) -> None:
    # Read as they are, the darkest two of these lose their three: its pips no longer
    # stand out from the die by the reader's fixed number of levels.
    shot = _tray()
    dim = exposure.exposed(shot.image, factor)
    assert sorted(d.value for d in vision.read_dice(dim)) == sorted(t.value for t in shot.truth)


def test_with_an_empty_tray_frames_are_read_as_they_are(tmp_path) -> None:
    # Ivory dice on dark felt, and the empty tray: the tray alone looks dim (its felt is its
    # brightest part), the frame does not (its dice are). Read with the tray, the frame is
    # compared with it pixel by pixel, in the light calibration locked: as it is. Brought
    # up as the tray would be, the ivory dice would clip.
    dice = tuple(DieSpec(v, (130.0 + 120 * k, 200.0 + 60 * (k % 2)), 48, 20.0 * k)
                 for k, v in enumerate((2, 3, 5, 6)))
    spec = TraySpec(floor="felt", dice=dice)
    shot, empty = render_tray(spec, 3), render_tray(replace(spec, dice=()), 3).image
    assert exposure.gain(empty) > 1.0 and exposure.gain(shot.image) == 1.0
    path = tmp_path / "empty.png"
    cv2.imwrite(str(path), empty)
    profile = vision.Profile(background=str(path))
    assert pipeline.as_read(empty, profile) is empty
    assert np.array_equal(pipeline.prepare(shot.image, profile).source.image, shot.image)
    assert sorted(d.value for d in vision.read_dice(shot.image, profile)) == [2, 3, 5, 6]
    # A dim frame read with such a profile is read as it is too.
    dim = exposure.exposed(shot.image, 0.5)
    assert exposure.gain(dim) > 1.0 and pipeline.as_read(dim, profile) is dim


def _overexposed_square(floor_level: int, seed: int = 0) -> np.ndarray:
    """Lab: a light floor with a little texture, and a white square clipped at the ceiling."""
    rng = np.random.default_rng(seed)
    image = np.full((200, 260, 3), floor_level, np.float32)
    image += rng.normal(0.0, 2.0, image.shape).astype(np.float32)
    image = np.clip(image, 0, 255).astype(np.uint8)
    image[80:120, 110:150] = 255
    return cv2.cvtColor(image, cv2.COLOR_BGR2Lab)


def test_a_white_die_clipped_on_a_light_floor_is_foreground() -> None:
    lab = _overexposed_square(245)
    # What shows of the square against the floor is under every threshold: only the
    # ceiling tells the square is brighter than that.
    shown = int(lab[100, 130, 0]) - int(np.median(lab[:60, :, 0]))
    assert 0 < shown < MIN_THRESHOLD
    mask = foreground(lab)
    assert cv2.countNonZero(mask[85:115, 115:145]) == 30 * 30
    assert cv2.countNonZero(mask[:60]) == 0  # the floor's own texture stays floor


def test_at_a_floor_that_is_itself_at_the_ceiling_nothing_is_foreground() -> None:
    assert cv2.countNonZero(foreground(_overexposed_square(255))) == 0


@pytest.mark.parametrize("seed", range(4))
def test_white_dice_on_light_wood_overexposed_read(seed: int) -> None:
    # The light clips both the dice and much of the floor: what shows of a die against the
    # floor falls under the foreground's threshold, and without the ceiling the dice
    # melted into the wood (one of these four trays read).
    rng = np.random.default_rng(seed)
    dice = tuple(DieSpec(int(v), (120.0 + 130 * k, 150.0 + 40 * (k % 2)), 46,
                         float(rng.uniform(0, 90))) for k, v in enumerate(rng.integers(1, 7, 3)))
    shot = render_tray(TraySpec(480, 320, "wood", floor_bgr=(200, 228, 240), dice=dice,
                                exposure=1.35), seed)
    assert sorted(d.value for d in vision.read_dice(shot.image)) == sorted(d.value for d in dice)
