"""The synthetic tray renderer draws what its truth says: pips, geometry, placement, extras."""

from __future__ import annotations

import dataclasses
import json
import math

import cv2
import numpy as np
import pytest

from vision.lab.render import (
    COLOUR_COMBOS,
    FLOORS,
    DieSpec,
    HandSpec,
    TraySpec,
    main,
    random_tray,
    render_tray,
)
from vision.lab.render_draw import Camera, draw_die, light_vector

QUIET = {"noise_sigma": 0.0, "blur_sigma": 0.0, "gradient": 0.0, "vignette": 0.0, "gloss": 0.0}


def one_die(value: int, angle: float = 0.0, combo: str = "white/black", **die_options) -> TraySpec:
    body, pips, translucent = COLOUR_COMBOS[combo]
    die = DieSpec(value, (160, 120), 60, angle, body, pips, translucent=translucent, **die_options)
    return TraySpec(320, 240, "grey", dice=(die,), camera_height=math.inf, **QUIET)


def straightened_top(image: np.ndarray, corners, size: int = 120) -> np.ndarray:
    """The top face warped to an upright size x size square, face corner (0,0) at top-left."""
    square = np.float32([[0, 0], [size - 1, 0], [size - 1, size - 1], [0, size - 1]])
    homography = cv2.getPerspectiveTransform(np.float32(corners), square)
    return cv2.warpPerspective(image, homography, (size, size))


def pip_centres(face: np.ndarray, polarity: str) -> np.ndarray:
    """Centroids of the pips on a straightened face, found by thresholding the grey levels."""
    grey = cv2.cvtColor(face, cv2.COLOR_BGR2GRAY)
    mode = cv2.THRESH_BINARY_INV if polarity == "dark" else cv2.THRESH_BINARY
    _, binary = cv2.threshold(grey, 0, 255, mode | cv2.THRESH_OTSU)
    inner = np.zeros_like(binary)
    margin = face.shape[0] // 10  # the darker rounded rim is not a pip
    inner[margin:-margin, margin:-margin] = binary[margin:-margin, margin:-margin]
    _n, _, stats, centroids = cv2.connectedComponentsWithStats(inner)
    keep = stats[1:, cv2.CC_STAT_AREA] > face.shape[0] ** 2 * 0.005
    return centroids[1:][keep] / face.shape[0]


@pytest.mark.parametrize("combo", ["white/black", "red/white", "black/white", "yellow/black"])
@pytest.mark.parametrize("value", range(1, 7))
def test_top_face_has_as_many_pips_as_its_value(value: int, combo: str) -> None:
    shot = render_tray(one_die(value, angle=17.0, combo=combo), seed=value)
    (truth,) = shot.truth
    centres = pip_centres(straightened_top(shot.image, truth.corners), truth.pip_polarity)
    assert len(centres) == value


@pytest.mark.parametrize("value", range(1, 7))
def test_the_truth_says_where_the_top_face_pips_are(value: int) -> None:
    # Seen from a camera at a finite height, off the image centre, turned, and leaning: the
    # truth's pips are the pips drawn, found in the picture itself.
    die = DieSpec(value, (215, 150), 60, 23.0, tilt_deg=12.0 if value % 2 else 0.0)
    spec = TraySpec(320, 240, "grey", dice=(die,), camera_height=700.0, **QUIET)
    shot = render_tray(spec, seed=value)
    (truth,) = shot.truth
    size = 120
    square = np.float32([[0, 0], [size - 1, 0], [size - 1, size - 1], [0, size - 1]])
    to_face = cv2.getPerspectiveTransform(np.float32(truth.corners), square)
    found = pip_centres(straightened_top(shot.image, truth.corners, size), "dark") * size
    said = cv2.perspectiveTransform(np.float32(truth.pips).reshape(-1, 1, 2), to_face)[:, 0]
    assert len(said) == len(found) == value
    for pip in said:
        assert np.min(np.linalg.norm(found - pip, axis=1)) < 0.03 * size


@pytest.mark.parametrize("angle", [0.0, 33.0, 90.0])
def test_six_is_two_columns_of_three_along_one_face_axis(angle: float) -> None:
    shot = render_tray(one_die(6, angle), seed=1)
    centres = pip_centres(straightened_top(shot.image, shot.truth[0].corners), "dark")
    us = np.sort(centres[:, 0])
    vs = np.sort(centres[:, 1])
    assert us == pytest.approx([0.25] * 3 + [0.75] * 3, abs=0.04)
    assert vs == pytest.approx([0.25, 0.25, 0.5, 0.5, 0.75, 0.75], abs=0.04)


@pytest.mark.parametrize("value", [2, 3])
def test_two_and_three_run_along_a_diagonal(value: int) -> None:
    shot = render_tray(one_die(value, 40.0), seed=2)
    centres = pip_centres(straightened_top(shot.image, shot.truth[0].corners), "dark")
    assert len(centres) == value
    assert centres[:, 0] == pytest.approx(centres[:, 1], abs=0.04)  # u == v: the diagonal
    assert np.ptp(centres[:, 0]) == pytest.approx(0.5, abs=0.05)


def test_pip_geometry_is_that_of_real_dice() -> None:
    shot = render_tray(one_die(5), seed=3)
    face = straightened_top(shot.image, shot.truth[0].corners, size=200)
    grey = cv2.cvtColor(face, cv2.COLOR_BGR2GRAY)
    _, binary = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    centre_pip = binary[60:140, 60:140]
    diameter = 2 * math.sqrt(np.count_nonzero(centre_pip) / math.pi) / 200
    assert 0.17 <= diameter <= 0.21
    # Pips are darker at their rim than at their centre (the dimple's wall is in shade).
    ring = cv2.circle(np.zeros_like(grey), (100, 100), 16, 255, 2)
    assert grey[ring > 0].mean() < grey[95:105, 95:105].mean()


def test_same_seed_same_image_other_seed_other_noise() -> None:
    spec = random_tray(np.random.default_rng(5), 4, touching=1)
    first, again = render_tray(spec, seed=5), render_tray(spec, seed=5)
    assert np.array_equal(first.image, again.image)
    assert first.truth == again.truth
    assert not np.array_equal(first.image, render_tray(spec, seed=6).image)
    assert random_tray(np.random.default_rng(5), 4, touching=1) == spec


@pytest.mark.parametrize("angle", [0.0, 25.0, 60.0])
def test_truth_of_a_flat_die_is_a_rotated_square_around_its_centre(angle: float) -> None:
    die = DieSpec(4, (400, 300), 50, angle)
    camera_height = 800.0
    spec = TraySpec(640, 480, dice=(die,), camera_height=camera_height)
    (truth,) = render_tray(spec).truth
    corners = np.array(truth.corners)
    edges = np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1)
    # The top face is nearer the camera than the floor, so it looks larger and further out.
    magnification = camera_height / (camera_height - 50)
    assert edges == pytest.approx([50 * magnification] * 4, rel=1e-6)
    assert truth.side == pytest.approx(50 * magnification)
    assert np.linalg.norm(corners[0] - corners[2]) == pytest.approx(
        np.linalg.norm(corners[1] - corners[3])
    )
    assert truth.center == pytest.approx(tuple(corners.mean(axis=0)))
    assert truth.center == pytest.approx((320 + 80 * magnification, 240 + 60 * magnification))
    first_edge = corners[1] - corners[0]
    assert math.degrees(math.atan2(first_edge[1], first_edge[0])) == pytest.approx(angle)
    assert not truth.cocked
    assert truth.pip_polarity == "dark"


def test_a_cocked_die_has_a_foreshortened_top_and_a_large_side_face() -> None:
    tilt = 30.0
    flat = DieSpec(3, (320, 240), 60, 0.0)
    leaning = DieSpec(3, (320, 240), 60, 0.0, tilt_deg=tilt, tilt_toward_deg=0.0)
    results = []
    for die in (flat, leaning):
        spec = TraySpec(640, 480, "slate", dice=(die,), camera_height=math.inf, **QUIET)
        shot = render_tray(spec)
        (truth,) = shot.truth
        corners = np.array(truth.corners)
        die_area = np.count_nonzero(cv2.cvtColor(shot.image, cv2.COLOR_BGR2GRAY) > 120)
        results.append((truth, corners, die_area))
    (flat_truth, _flat_corners, flat_area), (lean_truth, lean_corners, lean_area) = results
    assert not flat_truth.cocked
    assert lean_truth.cocked
    along_x = np.ptp(lean_corners[:, 0])
    assert along_x == pytest.approx(60 * math.cos(math.radians(tilt)), rel=0.01)
    assert np.ptp(lean_corners[:, 1]) == pytest.approx(60, rel=0.01)
    top_area = cv2.contourArea(lean_corners.astype(np.float32))
    side_face = lean_area - top_area
    assert side_face > 0.35 * 60 * 60 * math.sin(math.radians(tilt))
    assert flat_area == pytest.approx(60 * 60, rel=0.1)


def test_dice_off_centre_show_a_side_face_toward_the_image_centre() -> None:
    die = DieSpec(1, (560, 400), 50, 0.0, body_bgr=(236, 236, 234))
    spec = TraySpec(640, 480, "slate", dice=(die,), camera_height=700, **QUIET)
    shot = render_tray(spec)
    bright = cv2.cvtColor(shot.image, cv2.COLOR_BGR2GRAY) > 100
    ys, xs = np.nonzero(bright)
    (truth,) = shot.truth
    corners = np.array(truth.corners)
    assert xs.min() < corners[:, 0].min() - 5  # a side face between the top and the centre
    assert ys.min() < corners[:, 1].min() - 5
    assert xs.max() <= corners[:, 0].max() + 1.5  # nothing beyond the top on the far side


def test_a_side_face_seen_edge_on_leaves_no_nan() -> None:
    # Off-centre by this much, a side face of this die is seen nearly edge-on: a sliver under
    # a pixel wide, onto which the texture's homography is near singular.
    die = DieSpec(1, (334.3656734518672, 262.4786001009749), 40.0, 59.0358153833092,
                  (200, 228, 238), (30, 28, 30))
    spec = TraySpec(640, 480, "felt", dice=(die,), light_azimuth_deg=200.0,
                    light_elevation_deg=65.0, gloss=0.08, camera_height=None)
    img = np.full((480, 640, 3), 100.0, np.float32)
    draw_die(img, die, Camera(640, 480, None), light_vector(spec), spec.gloss)
    assert not np.isnan(img).any()


def test_shadow_falls_away_from_the_light() -> None:
    die = DieSpec(2, (320, 240), 50, 0.0)
    spec = TraySpec(640, 480, "paper", dice=(die,), light_azimuth_deg=180.0,
                    camera_height=math.inf, **QUIET)
    grey = cv2.cvtColor(render_tray(spec).image, cv2.COLOR_BGR2GRAY).astype(float)
    lit_side, shaded_side = grey[235:245, 280:288].mean(), grey[235:245, 352:360].mean()
    assert shaded_side < lit_side - 20


def test_translucent_dice_show_the_floor_through_the_body() -> None:
    shots = [render_tray(one_die(1, combo=combo, corner_radius=0.1), seed=1)
             for combo in ("red/white", "translucent red/white")]
    spots = [shot.image[100:106, 138:144].astype(float).mean(axis=(0, 1)) for shot in shots]
    assert not np.allclose(spots[0], spots[1], atol=3)


@pytest.mark.parametrize("seed", range(8))
def test_random_trays_keep_dice_apart_inside_the_image(seed: int) -> None:
    rng = np.random.default_rng(seed)
    spec = random_tray(rng, 8, touching=1, cocked=1, hand=seed % 2 == 0)
    assert len(spec.dice) == 8
    assert spec.floor in FLOORS
    shot = render_tray(spec, seed)
    assert [t.value for t in shot.truth] == [d.value for d in spec.dice]
    assert sum(t.cocked for t in shot.truth) == 1
    quads = [np.array(t.corners, np.float32) for t in shot.truth]
    for t in shot.truth:
        corners = np.array(t.corners)
        assert corners.min() >= 0, seed
        assert corners[:, 0].max() < spec.width and corners[:, 1].max() < spec.height, seed
    for i in range(len(quads)):
        for j in range(i + 1, len(quads)):
            overlap, _ = cv2.intersectConvexConvex(quads[i], quads[j])
            assert overlap < 0.02 * shot.truth[i].side ** 2, (seed, i, j)
    # Touching pairs come first: face to face, a die's width apart.
    a, b = spec.dice[0], spec.dice[1]
    assert math.dist(a.center, b.center) == pytest.approx((a.side + b.side) / 2, rel=0.12)
    lone = [d for d in spec.dice[4:]]
    for i, d in enumerate(lone):
        for e in lone[i + 1:]:
            assert math.dist(d.center, e.center) > 1.4 * max(d.side, e.side)


def test_random_tray_respects_values_palette_and_floor() -> None:
    spec = random_tray(np.random.default_rng(1), 3, values=[6, 5, 4], palette=["red/white"],
                       floor="wood", noise_sigma=0.0)
    assert [d.value for d in spec.dice] == [6, 5, 4]
    assert {d.body_bgr for d in spec.dice} == {COLOUR_COMBOS["red/white"][0]}
    assert spec.floor == "wood"
    assert spec.noise_sigma == 0.0


def test_a_hand_blob_is_skin_coloured_and_clear_of_the_dice() -> None:
    spec = random_tray(np.random.default_rng(3), 5, hand=True, floor="felt", **QUIET)
    shot = render_tray(spec, 3)
    (outline,) = shot.hands
    inside = np.zeros(shot.image.shape[:2], np.uint8)
    cv2.fillPoly(inside, [outline.astype(np.int32)], 255)
    inside = cv2.erode(inside, np.ones((9, 9), np.uint8))
    assert np.count_nonzero(inside) > (spec.dice[0].side ** 2) * 2
    skin = shot.image[inside > 0].mean(axis=0)
    b, g, r = skin
    assert r > g > b  # skin tones: red over green over blue
    for truth in shot.truth:
        x, y = truth.center
        assert cv2.pointPolygonTest(outline.astype(np.float32), (x, y), True) < -truth.side / 2


def test_empty_tray_is_just_floor() -> None:
    for floor in FLOORS:
        shot = render_tray(TraySpec(160, 120, floor), seed=1)
        assert shot.truth == ()
        assert shot.image.shape == (120, 160, 3) and shot.image.dtype == np.uint8
        assert shot.image.std(axis=(0, 1)).max() < 30


def test_jpeg_option_changes_pixels_slightly() -> None:
    spec = random_tray(np.random.default_rng(2), 3)
    raw = render_tray(spec, 2).image
    jpeg = render_tray(dataclasses.replace(spec, jpeg_quality=70), 2).image
    diff = np.abs(raw.astype(int) - jpeg.astype(int))
    assert 0 < diff.mean() < 6


@pytest.mark.parametrize(
    "make",
    [
        lambda: DieSpec(0, (0, 0), 10),
        lambda: DieSpec(7, (0, 0), 10),
        lambda: DieSpec(1, (0, 0), 0),
        lambda: DieSpec(1, (0, 0), 10, tilt_deg=75),
        lambda: DieSpec(1, (0, 0), 10, body_bgr=(300, 0, 0)),
        lambda: HandSpec((0, 0), 0),
        lambda: TraySpec(4, 4),
        lambda: TraySpec(floor="lava"),
        lambda: random_tray(np.random.default_rng(0), 3, touching=2),
        lambda: random_tray(np.random.default_rng(0), 60, side=120),
        lambda: random_tray(np.random.default_rng(0), 2, palette=["plaid/none"]),
        lambda: random_tray(np.random.default_rng(0), 2, floor="felt", palette=["green/white"],
                            min_contrast=90),
    ],
)
def test_bad_specs_raise_value_error(make) -> None:
    with pytest.raises(ValueError):
        make()


def test_command_line_writes_pngs_and_truth(tmp_path, capsys) -> None:
    out = tmp_path / "examples"
    assert main(["--out", str(out), "--count", "2", "--seed", "4", "--dice", "3", "--width",
                 "320", "--height", "240", "--truth", "--cocked", "1"]) == 0
    pngs = sorted(out.glob("*.png"))
    assert [p.name for p in pngs] == ["tray_0004.png", "tray_0005.png"]
    image = cv2.imread(str(pngs[0]))
    assert image.shape == (240, 320, 3)
    truth = json.loads(pngs[0].with_suffix(".json").read_text())
    assert len(truth) == 3 and sum(t["cocked"] for t in truth) == 1
    assert all(len(t["pips"]) == t["value"] for t in truth)
    assert "3 dice" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # one .png file cannot hold two images
        main(["--out", str(tmp_path / "x.png"), "--count", "2"])


def test_command_line_reports_impossible_trays(tmp_path, capsys) -> None:
    assert main(["--out", str(tmp_path / "x.png"), "--dice", "2", "--touching", "3"]) == 2
    assert "error" in capsys.readouterr().err


def test_show_truth_outlines_every_die(tmp_path) -> None:
    plain, shown = tmp_path / "plain.png", tmp_path / "shown.png"
    common = ["--seed", "8", "--dice", "3", "--cocked", "1", "--width", "320", "--height", "240"]
    assert main(["--out", str(plain), *common]) == 0
    assert main(["--out", str(shown), "--show-truth", *common]) == 0
    spec = random_tray(np.random.default_rng(8), 3, cocked=1, width=320, height=240,
                       side=(15.0, 24.0))  # the default range scaled to 240 px
    shot = render_tray(spec, 8)
    assert np.array_equal(cv2.imread(str(plain)), shot.image)
    changed = np.any(cv2.imread(str(shown)) != shot.image, axis=2)
    for truth in shot.truth:
        x, y = np.round(truth.corners[0]).astype(int)
        assert changed[y - 1:y + 2, x - 1:x + 2].any()


def test_exposure_and_white_balance_scale_the_light() -> None:
    base = TraySpec(160, 120, "grey", **QUIET)
    plain = render_tray(base).image.astype(float).mean(axis=(0, 1))
    bright = render_tray(dataclasses.replace(base, exposure=1.2)).image.astype(float)
    warm = render_tray(dataclasses.replace(base, white_balance=(0.9, 1.0, 1.1))).image
    assert bright.mean(axis=(0, 1)) == pytest.approx(plain * 1.2, rel=0.02)
    b, g, r = warm.astype(float).mean(axis=(0, 1)) / plain
    assert g == pytest.approx(1.0, abs=0.02)
    assert b == pytest.approx(0.9, abs=0.02) and r == pytest.approx(1.1, abs=0.02)
    with pytest.raises(ValueError):
        TraySpec(exposure=0)


def darkest_floor_beside(shot, truth) -> float:
    """Darkest floor (3rd percentile) within 0.7 side of a die, as a fraction of its median."""
    grey = cv2.cvtColor(shot.image, cv2.COLOR_BGR2GRAY).astype(float)
    dice = np.zeros(grey.shape, bool)
    boxes = []
    for t in shot.truth:
        corners = np.array(t.corners)
        (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
        grow = 0.15 * t.side  # the side face and rounded edges around the top face
        box = np.array([x0 - grow, y0 - grow, x1 + grow, y1 + grow]).round().astype(int)
        boxes.append(box)
        dice[max(box[1], 0):box[3] + 1, max(box[0], 0):box[2] + 1] = True
    x0, y0, x1, y1 = boxes[shot.truth.index(truth)]
    pad = round(0.7 * truth.side)
    window = np.s_[max(y0 - pad, 0):y1 + pad, max(x0 - pad, 0):x1 + pad]
    ring = grey[window][~dice[window]]
    return float(np.percentile(ring, 3) / np.median(ring))


def test_shadows_are_as_soft_as_in_tray_photos() -> None:
    # Measured the same way on photos of dice on a grey tray under room light: the darkest
    # floor beside a die is about 8% below the floor (median), 15% at the quartile.
    ratios = []
    for seed in range(8):
        spec = random_tray(np.random.default_rng(seed), 4, floor="grey", width=480, height=360,
                           side=(24.0, 36.0))
        shot = render_tray(spec, seed)
        ratios += [darkest_floor_beside(shot, t) for t in shot.truth]
    # Without shadows the floor's own grain alone gives a median of about 0.96.
    assert 0.86 < np.median(ratios) < 0.945
    assert np.percentile(ratios, 25) > 0.78
