"""Varied trays: every condition drawn, deterministic, truth exact, the classic trays kept."""

from __future__ import annotations

import dataclasses
import json
import math

import cv2
import numpy as np
import pytest

from vision.lab.render import (
    VARIED_DICE,
    DieSpec,
    TraySpec,
    any_colour_tray,
    main,
    random_tray,
    render_tray,
    varied_tray,
)
from vision.lab.render_any_colour import ANY_PIP_CONTRAST
from vision.lab.render_varied import lab_of

#: `random_tray(default_rng(1), 5, cocked=1)` rendered with seed 1, taken before trays became
#: varied, as the mean BGR of each of 8 x 6 blocks: the classic trays (and every test built on
#: them) must not move. Means, not the bytes' digest: OpenCV's blur and resize round a level
#: apart on processors of other vector units, which no reading notices.
CLASSIC_TRAY_BLOCKS = [
    [[44.8, 96.7, 32.7], [46.6, 100.8, 34.0], [46.1, 99.7, 33.7], [47.4, 95.9, 32.7],
     [46.6, 100.5, 34.0], [47.8, 103.1, 34.8], [47.4, 102.1, 34.5], [46.1, 99.4, 33.6]],
    [[47.2, 101.8, 34.5], [48.7, 104.9, 35.5], [96.0, 89.5, 39.7], [83.1, 94.0, 40.1],
     [47.8, 98.8, 33.7], [46.0, 97.8, 36.2], [44.7, 96.5, 32.7], [43.7, 94.2, 31.9]],
    [[44.7, 96.7, 32.6], [47.7, 102.9, 34.8], [48.0, 103.4, 35.0], [47.3, 102.1, 34.5],
     [49.2, 106.1, 36.0], [46.2, 90.5, 96.5], [48.5, 89.4, 54.2], [43.7, 94.1, 31.9]],
    [[43.0, 92.8, 31.3], [44.9, 96.8, 32.8], [46.7, 100.7, 34.1], [48.3, 104.0, 35.4],
     [49.0, 105.9, 35.7], [41.9, 113.7, 73.1], [45.5, 98.3, 33.2], [44.5, 96.0, 32.4]],
    [[43.7, 94.3, 31.8], [44.4, 95.7, 32.4], [46.0, 99.5, 33.6], [50.7, 104.0, 39.6],
     [48.2, 100.6, 36.9], [45.5, 98.2, 33.3], [44.9, 96.9, 32.7], [44.1, 95.1, 32.2]],
    [[42.8, 92.3, 31.3], [46.1, 99.4, 33.6], [47.5, 102.4, 34.7], [75.3, 119.1, 76.1],
     [59.3, 106.4, 53.8], [44.6, 96.3, 32.6], [44.2, 95.3, 32.3], [43.2, 93.3, 31.5]],
]

PLAIN = {"noise_sigma": 0.0, "blur_sigma": 0.0, "gradient": 0.0, "vignette": 0.0, "gloss": 0.0,
         "jpeg_quality": None, "exposure": 1.0, "white_balance": (1.0, 1.0, 1.0), "glare": 0.0,
         "hands": (), "rim": 0.0}


def test_classic_trays_render_as_before() -> None:
    spec = random_tray(np.random.default_rng(1), 5, cocked=1)
    image = render_tray(spec, 1).image
    h, w = image.shape[:2]
    blocks = image.astype(np.float64).reshape(6, h // 6, 8, w // 8, 3).mean(axis=(1, 3))
    assert np.allclose(blocks, CLASSIC_TRAY_BLOCKS, atol=0.5)


@pytest.mark.parametrize("seed", [0, 5, 12])
def test_same_seed_same_varied_tray_other_seed_other_tray(seed: int) -> None:
    a = varied_tray(np.random.default_rng(seed))
    b = varied_tray(np.random.default_rng(seed))
    assert a == b
    assert np.array_equal(render_tray(a, seed).image, render_tray(b, seed).image)
    assert varied_tray(np.random.default_rng(seed + 1000)) != a


def test_every_condition_is_drawn_now_and_then() -> None:
    specs = [varied_tray(np.random.default_rng(seed)) for seed in range(120)]
    dice = [d for s in specs for d in s.dice]
    assert {s.floor for s in specs} >= {"felt", "wood", "plastic", "white"}
    elevations = [s.light_elevation_deg for s in specs]
    assert min(elevations) < 25 and max(elevations) > 82  # a low hard lamp and a ring light
    assert any(s.glare > 0 for s in specs) and any(s.glare == 0 for s in specs)
    assert any(s.jpeg_quality for s in specs) and any(s.jpeg_quality is None for s in specs)
    warm = [s for s in specs if s.white_balance[2] > 1.08 and s.white_balance[0] < 0.9]
    cold = [s for s in specs if s.white_balance[0] > 1.08 and s.white_balance[2] < 0.93]
    assert warm and cold
    assert any(d.marble_bgr is not None for d in dice) and any(d.translucent for d in dice)
    assert any(sum(d.pip_bgr) > sum(d.body_bgr) for d in dice)  # light pips on dark bodies
    assert any(sum(d.pip_bgr) < sum(d.body_bgr) for d in dice)
    assert any(d.cocked for d in dice) and any(s.hands for s in specs)
    assert any(s.rim > 0 for s in specs)


def test_dice_sizes_span_25_to_120_px() -> None:
    sides = [d.side for seed in range(80) for d in varied_tray(np.random.default_rng(seed)).dice]
    assert 25 * 0.97 <= min(sides) < 35 and 100 < max(sides) <= 120 * 1.03
    fixed = varied_tray(np.random.default_rng(3), 4, side=60.0)
    assert len(fixed.dice) == 4 and all(58 <= d.side <= 62 for d in fixed.dice)


@pytest.mark.parametrize("seed", range(8))
def test_truth_lies_on_the_dice(seed: int) -> None:
    """Inside each die's top face (from the truth) the picture differs from the bare floor."""
    spec = varied_tray(np.random.default_rng(seed))
    shot = render_tray(spec, seed)
    bare = render_tray(dataclasses.replace(spec, dice=()), seed).image
    diff = np.abs(shot.image.astype(float) - bare.astype(float)).sum(axis=2)
    assert len(shot.truth) == len(spec.dice)
    for truth in shot.truth:
        corners = np.array(truth.corners)
        inner = truth.center + 0.6 * (corners - np.array(truth.center))
        mask = np.zeros(diff.shape, np.uint8)
        cv2.fillConvexPoly(mask, np.round(inner).astype(np.int32), 1)
        assert mask.any()
        assert diff[mask > 0].mean() > 25, (seed, truth)


def test_a_marbled_body_shows_two_colours() -> None:
    look = VARIED_DICE["marbled red/black"]
    die = DieSpec(1, (160, 120), 150, 0.0, look.body, look.pips, marble_bgr=look.marble,
                  marble_seed=3)
    spec = TraySpec(320, 240, "white", dice=(die,), light_elevation_deg=90.0,
                    camera_height=math.inf, **{k: v for k, v in PLAIN.items() if k != "hands"})
    shot = render_tray(spec, 0)
    face = _face_pixels(shot.image, shot.truth[0], 0.7)
    face = face[np.linalg.norm(face - np.array(look.pips), axis=1) > 90]  # not the pip
    near_body = np.linalg.norm(face - np.array(look.body), axis=1) < 60
    near_marble = np.linalg.norm(face - np.array(look.marble), axis=1) < 60
    assert near_body.mean() > 0.15 and near_marble.mean() > 0.15
    plain_die = dataclasses.replace(die, marble_bgr=None)
    plain = render_tray(dataclasses.replace(spec, dice=(plain_die,)))
    plain_face = _face_pixels(plain.image, plain.truth[0], 0.7)
    assert (np.linalg.norm(plain_face - np.array(look.marble), axis=1) < 60).mean() < 0.01
    assert plain.truth == shot.truth  # the swirl changes the colours, never the geometry


def _face_pixels(image: np.ndarray, truth, shrink: float) -> np.ndarray:
    corners = np.array(truth.corners)
    inner = truth.center + shrink * (corners - np.array(truth.center))
    mask = np.zeros(image.shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, np.round(inner).astype(np.int32), 1)
    return image[mask > 0].astype(float)


def _shadow_reach(light: str, seed: int) -> float:
    """How far (in die sides) from a lone die's centre the floor is darkened by its shadow."""
    spec = varied_tray(np.random.default_rng(seed), 1, light=light, floor="white",
                       dice="ivory/black", side=40.0, cocked=0, leaning=0, touching=0, hands=0)
    # In the middle, so that no shadow runs out of the picture.
    centred = dataclasses.replace(spec.dice[0], center=(spec.width / 2, spec.height / 2))
    spec = dataclasses.replace(spec, dice=(centred,), **PLAIN)
    image = cv2.cvtColor(render_tray(spec, 1).image, cv2.COLOR_BGR2GRAY).astype(float)
    bare = cv2.cvtColor(render_tray(dataclasses.replace(spec, dice=()), 1).image,
                        cv2.COLOR_BGR2GRAY).astype(float)
    ys, xs = np.nonzero(bare - image > 12)
    die = spec.dice[0]
    return float(np.hypot(xs - die.center[0], ys - die.center[1]).max()) / die.side


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_hard_lamp_casts_long_shadows_a_ring_light_nearly_none(seed: int) -> None:
    hard, ring = _shadow_reach("hard", seed), _shadow_reach("ring", seed)
    assert hard > 2.5 and ring < 1.2 and hard > 2 * ring


def test_glare_brightens_a_die_top_and_the_floor_without_moving_the_truth() -> None:
    die = DieSpec(4, (160, 120), 60, 10.0, (176, 78, 32), (236, 236, 236))
    spec = TraySpec(320, 240, "plastic", dice=(die,), **PLAIN)
    glary = dataclasses.replace(spec, glare=1.0, glare_at=(175.0, 110.0), glare_radius=40.0)
    a, b = render_tray(spec, 2), render_tray(glary, 2)
    assert a.truth == b.truth
    top_a, top_b = _face_pixels(a.image, a.truth[0], 0.9), _face_pixels(b.image, b.truth[0], 0.9)
    assert top_b.sum(axis=1).mean() > top_a.sum(axis=1).mean() + 40
    assert b.image[120, 240].astype(int).sum() > a.image[120, 240].astype(int).sum() + 60


def test_leaning_dice_rest_on_the_wall_and_count_as_cocked() -> None:
    for seed in range(5):
        spec = varied_tray(np.random.default_rng(seed), 3, leaning=1, cocked=0, side=50.0)
        assert spec.rim > 0
        leaners = [d for d in spec.dice if d.tilt_deg >= 15]
        assert len(leaners) == 1
        die = leaners[0]
        to_wall = min(die.center[0], spec.width - die.center[0], die.center[1],
                      spec.height - die.center[1]) - spec.rim
        assert 0 < to_wall < die.side
        truth = render_tray(spec, seed).truth
        assert sum(t.cocked for t in truth) == 1


def test_asking_for_too_much_raises() -> None:
    with pytest.raises(ValueError):
        varied_tray(np.random.default_rng(0), 2, cocked=2)
    with pytest.raises(ValueError):
        varied_tray(np.random.default_rng(0), 40, side=120.0)
    with pytest.raises(ValueError):
        varied_tray(np.random.default_rng(0), light="candle")


def test_command_line_writes_varied_examples(tmp_path, capsys) -> None:
    out = tmp_path / "varied"
    assert main(["--varied", "--out", str(out), "--count", "2", "--seed", "3", "--truth"]) == 0
    pngs = sorted(out.glob("*.png"))
    assert [p.name for p in pngs] == ["varied_0003.png", "varied_0004.png"]
    assert cv2.imread(str(pngs[0])).shape == (480, 640, 3)
    truth = json.loads(pngs[0].with_suffix(".json").read_text())
    assert len(truth) == len(varied_tray(np.random.default_rng(3)).dice)
    assert "dice" in capsys.readouterr().out


def test_any_colour_trays_recolour_a_varied_tray_and_nothing_else() -> None:
    tray = any_colour_tray(np.random.default_rng(4))
    plain = varied_tray(np.random.default_rng(4))
    assert tray == any_colour_tray(np.random.default_rng(4))
    assert [(d.value, d.center, d.side, d.tilt_deg) for d in tray.dice] == [
        (d.value, d.center, d.side, d.tilt_deg) for d in plain.dice]
    assert dataclasses.replace(tray, dice=()) == dataclasses.replace(plain, dice=())


def test_any_colour_dice_span_the_colours_and_their_pips_stand_out() -> None:
    dice = [d for seed in range(40) for d in any_colour_tray(np.random.default_rng(seed)).dice]
    assert len(dice) > 100
    gaps = [np.linalg.norm(lab_of(d.body_bgr) - lab_of(d.pip_bgr)) for d in dice]
    # Pips are drawn ANY_PIP_CONTRAST from their body, but for the odd body no colour is
    # that far from (a mid grey): those take the farthest tried.
    assert np.mean(np.array(gaps) >= ANY_PIP_CONTRAST - 1) > 0.95
    assert min(gaps) > 20
    hues = {int(cv2.cvtColor(np.uint8([[d.body_bgr]]), cv2.COLOR_BGR2HSV)[0, 0, 0]) // 30
            for d in dice}
    assert hues == set(range(6))  # every sixth of the hue circle
    assert any(lab_of(d.body_bgr)[0] < 60 for d in dice) and any(lab_of(d.body_bgr)[0] > 200
                                                                for d in dice)
    marbled = sum(d.marble_bgr is not None for d in dice) / len(dice)
    translucent = sum(d.translucent for d in dice) / len(dice)
    assert 0.2 < marbled < 0.45 and 0.08 < translucent < 0.25
    assert not any(d.translucent and d.marble_bgr is not None for d in dice)
    plain = [d for seed in range(10)
             for d in any_colour_tray(np.random.default_rng(seed), marbled=0.0).dice]
    assert plain and not any(d.marble_bgr is not None for d in plain)
    assert any(d.translucent for d in plain)
    assert not any((d.body_bgr, d.pip_bgr, d.marble_bgr) == (s.body, s.pips, s.marble)
                   for d in dice for s in VARIED_DICE.values())


def test_smoky_trays_recolour_a_varied_tray_dark_swirled_dice_with_coloured_pips() -> None:
    from vision.lab.render_smoky import SMOKY_PIP_CONTRAST, smoky_tray

    tray = smoky_tray(np.random.default_rng(4))
    plain = varied_tray(np.random.default_rng(4))
    assert tray == smoky_tray(np.random.default_rng(4))
    assert [(d.value, d.center, d.side) for d in tray.dice] == [
        (d.value, d.center, d.side) for d in plain.dice]
    dice = [d for seed in range(40) for d in smoky_tray(np.random.default_rng(seed)).dice]
    assert len(dice) > 100
    bodies = np.array([lab_of(d.body_bgr)[0] for d in dice])
    assert np.mean(bodies < 128) > 0.6  # most bodies dark
    gaps = [np.linalg.norm(lab_of(d.body_bgr) - lab_of(d.pip_bgr)) for d in dice]
    assert np.mean(np.array(gaps) >= SMOKY_PIP_CONTRAST) > 0.95
    pip_hsv = [cv2.cvtColor(np.uint8([[d.pip_bgr]]), cv2.COLOR_BGR2HSV)[0, 0] for d in dice]
    red = [h for h, s, _ in pip_hsv if s > 120 and (h <= 5 or h >= 170)]
    assert 0.25 < len(red) / len(dice) < 0.65  # red pips most often
    marbled = sum(d.marble_bgr is not None for d in dice) / len(dice)
    translucent = sum(d.translucent for d in dice) / len(dice)
    assert 0.55 < marbled < 0.85 and 0.35 < translucent < 0.65
    assert any(d.translucent and d.marble_bgr is not None for d in dice)
