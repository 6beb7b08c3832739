"""The per-die face reader: synthetic faces drawn here, and a sample of real dice photos."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from vision.face import FaceReading, read_face
from vision.types import REASONS

# Pip nodes of each face in pitch units (x, y).
LAYOUTS = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
    5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
    6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
}
IVORY, BLACK, WHITE, RED, GREY = (
    (215, 235, 240),
    (30, 30, 30),
    (245, 245, 245),
    (40, 40, 200),
    (150, 150, 150),
)
SUPER = 4  # drawn at 4x, then shrunk: anti-aliased edges like a camera's


def draw_die(
    pips: list[tuple[float, float]],
    *,
    angle: float = 0.0,
    side: float = 60.0,
    size: int = 90,
    body=IVORY,
    pip=BLACK,
    background=GREY,
    pitch: float = 0.25,
    pip_radius: float = 0.085,
    seed: int = 0,
) -> np.ndarray:
    """A top-down die face at ``angle`` degrees, pips at grid nodes (or anywhere, in pitches)."""
    big = np.full((size * SUPER, size * SUPER, 3), background, np.uint8)
    center = np.array([size / 2, size / 2]) * SUPER
    rad = math.radians(angle)
    rot = np.array([[math.cos(rad), -math.sin(rad)], [math.sin(rad), math.cos(rad)]])
    corners = np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)]) * side * SUPER / 2
    outline = (corners @ rot.T + center).astype(np.int32)
    cv2.fillConvexPoly(big, outline, body, cv2.LINE_AA)
    radius = round(pip_radius * side * SUPER)
    for px, py in pips:
        x, y = np.array([px, py]) * pitch * side * SUPER @ rot.T + center
        cv2.circle(big, (round(x), round(y)), radius, pip, -1, cv2.LINE_AA)
    patch = cv2.resize(big, (size, size), interpolation=cv2.INTER_AREA)
    noise = np.random.default_rng(seed).normal(0.0, 3.0, patch.shape)
    return np.clip(patch + noise, 0, 255).astype(np.uint8)


def check_reading(reading: FaceReading) -> None:
    """Invariants of every reading."""
    assert 0.0 <= reading.confidence <= 1.0
    if reading.value is None:
        assert reading.reason in REASONS
    else:
        assert reading.reason is None
        assert 1 <= reading.value <= 6
        assert len(reading.pips) == reading.value
        assert reading.polarity in ("dark", "light")


@pytest.mark.parametrize("value", range(1, 7))
@pytest.mark.parametrize("angle", [0, 17, 45, 71])
@pytest.mark.parametrize(
    ("body", "pip", "polarity"), [(IVORY, BLACK, "dark"), (BLACK, WHITE, "light")]
)
def test_reads_every_face_at_any_rotation_in_both_polarities(value, angle, body, pip, polarity):
    patch = draw_die(LAYOUTS[value], angle=angle, body=body, pip=pip, seed=value * 100 + angle)
    for die_side in (60.0, None):
        reading = read_face(patch, die_side=die_side)
        check_reading(reading)
        assert reading.value == value, (die_side, reading)
        assert reading.polarity == polarity
        assert reading.confidence > 0.5


@pytest.mark.parametrize("value", [2, 5, 6])
def test_reads_red_pips_on_white_and_yellow_pips_on_green(value):
    red = draw_die(LAYOUTS[value], angle=30, body=WHITE, pip=RED, seed=value)
    yellow = draw_die(LAYOUTS[value], angle=10, body=(60, 150, 30), pip=(40, 220, 240), seed=value)
    assert read_face(red, die_side=60).value == value
    assert read_face(yellow).value == value


def test_pips_are_reported_in_patch_pixels():
    patch = draw_die(LAYOUTS[4], angle=0, side=80, size=120)
    reading = read_face(patch, die_side=80)
    assert reading.value == 4
    expected = {(60 + dx * 20, 60 + dy * 20) for dx in (-1, 1) for dy in (-1, 1)}
    for x, y, r in reading.pips:
        assert min(math.hypot(x - ex, y - ey) for ex, ey in expected) < 2.0
        assert 4.0 < r < 10.0


def test_reads_a_die_much_smaller_than_the_patch_without_its_side():
    patch = draw_die(LAYOUTS[5], angle=20, side=50, size=160)
    assert read_face(patch).value == 5


def test_a_patch_far_larger_than_the_given_die_is_read_at_its_centre():
    patch = draw_die(LAYOUTS[3], angle=20, side=40, size=400)
    reading = read_face(patch, die_side=40)
    assert reading.value == 3
    assert all(math.hypot(x - 200, y - 200) < 25 for x, y, _ in reading.pips), reading.pips


def test_a_die_side_larger_than_the_patch_gives_no_value():
    reading = read_face(draw_die(LAYOUTS[5]), die_side=500.0)
    check_reading(reading)
    assert reading.value is None
    assert reading.reason == "occluded"


def test_blank_face_is_not_a_pip_face():
    for body in (IVORY, BLACK):
        reading = read_face(draw_die([], body=body), die_side=60)
        check_reading(reading)
        assert reading.value is None
        assert reading.reason == "not a pip face"


@pytest.mark.parametrize(
    "pips",
    [
        [(-1, -1), (1, -1), (0.1, 0.9)],  # a triangle
        [(-1, -1), (0, -1), (1, -1)],  # a row along an edge
        [(-1, -1), (1, -1), (-1, 1), (1, 1), (0.5, 0.0)],  # a five with its centre pip off
        [(-1, -1), (1, 1), (0.5, -0.8)],  # a two with a stray spot
        [(-0.4, -0.4), (0.4, 0.4)],  # a two that is too short for the die
        [(-1, -1), (-1, 1)],  # an adjacent pair along one edge: a two lies on a diagonal
    ],
)
def test_pips_off_the_grid_give_no_value(pips):
    patch = draw_die(pips, angle=12)
    for die_side in (60.0, None):
        reading = read_face(patch, die_side=die_side)
        check_reading(reading)
        assert reading.value is None, (pips, die_side, reading)


@pytest.mark.parametrize("value", [4, 5, 6])
def test_half_covered_die_gives_no_value(value):
    patch = draw_die(LAYOUTS[value], angle=0)
    patch[:, 50:] = (40, 60, 90)  # a brown card over the right part
    for die_side in (60.0, None):
        reading = read_face(patch, die_side=die_side)
        check_reading(reading)
        assert reading.value is None, (value, die_side, reading)
        if reading.pips:  # with pips seen, it offers values for a correction
            assert reading.alternatives, reading


def test_given_polarity_must_match_the_pips():
    patch = draw_die(LAYOUTS[3], angle=25)
    assert read_face(patch, die_side=60, polarity="dark").value == 3
    assert read_face(patch, die_side=60, polarity="light").value is None


def test_gray_and_bgra_patches_are_accepted():
    patch = draw_die(LAYOUTS[6], angle=5)
    assert read_face(cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)).value == 6
    assert read_face(cv2.cvtColor(patch, cv2.COLOR_BGR2BGRA)).value == 6


@pytest.mark.parametrize(
    ("patch", "kwargs"),
    [
        (np.zeros((40, 40, 3), np.float32), {}),
        (np.zeros((0, 40, 3), np.uint8), {}),
        (np.zeros((40, 40, 2), np.uint8), {}),
        ([[0, 1], [2, 3]], {}),
        (np.zeros((40, 40, 3), np.uint8), {"die_side": -3.0}),
        (np.zeros((40, 40, 3), np.uint8), {"polarity": "bright"}),
    ],
)
def test_bad_input_raises_a_clear_value_error(patch, kwargs):
    with pytest.raises(ValueError, match=r"patch|die_side|polarity"):
        read_face(patch, **kwargs)


def test_noise_and_flat_grey_patches_give_no_value():
    rng = np.random.default_rng(3)
    noise = rng.integers(0, 256, (90, 90, 3), dtype=np.uint8)
    flat = np.full((90, 90, 3), 128, np.uint8)
    for patch in (noise, flat):
        reading = read_face(patch, die_side=60)
        check_reading(reading)
        assert reading.value is None


# Real photos: every 4th image of each source, both with and without the die side.
# Measured on this sample: precision 1.0 everywhere; recall nell-byler 0.76 (553/724),
# matteop65 0.87 (413/474), tai-studio 0.8 (8/10). Floors sit a little below.
RECALL_FLOOR = {"nell-byler": 0.72, "matteop65": 0.83, "tai-studio": 0.7}


@pytest.mark.dataset
def test_real_dice_sample_keeps_precision_and_recall(dice_photos):
    from vision.lab.face_eval import iter_crops

    counts: dict[str, list[int]] = {}
    for index, crop in enumerate(iter_crops(dice_photos, sample_every=4)):
        source = crop.source.split("/")[0]
        for die_side in (crop.die_side, None):
            reading = read_face(crop.patch, die_side=die_side)
            tally = counts.setdefault(source, [0, 0, 0])  # crops, correct, wrong
            tally[0] += 1
            tally[1] += reading.value == crop.value
            tally[2] += reading.value is not None and reading.value != crop.value
        assert index < 2000
    assert set(counts) == set(RECALL_FLOOR)
    for source, (crops, correct, wrong) in counts.items():
        assert correct / max(1, correct + wrong) >= 0.99, (source, counts[source])
        assert correct / crops >= RECALL_FLOOR[source], (source, counts[source])
