"""The pipeline's own parts: the two-reader rule, face layouts, pip shapes, outputs, the CLI."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

import vision
from firmware_host.cli import main
from vision import combined
from vision.lab.render import (
    COLOUR_COMBOS,
    DieSpec,
    RenderedTray,
    TraySpec,
    render_tray,
)
from vision.layout import FACES, fit_layout
from vision.pips import PipReading, read_one, read_pip_colour, read_pips

POSITIONS = [(110, 130), (320, 130), (530, 130), (110, 350), (320, 350), (530, 350)]


def six_shot(angle: float = 15.0, combo: str = "ivory/black") -> RenderedTray:
    body, pips = COLOUR_COMBOS[combo][:2]
    dice = tuple(DieSpec(v, c, 44, angle, body, pips)
                 for v, c in zip(range(1, 7), POSITIONS, strict=True))
    return render_tray(TraySpec(640, 480, "grey", dice=dice), seed=3)


def six_dice(angle: float = 15.0, combo: str = "ivory/black") -> np.ndarray:
    return six_shot(angle, combo).image


# --- face layouts -------------------------------------------------------------------------

@pytest.mark.parametrize("value", range(1, 7))
@pytest.mark.parametrize("angle", [0.0, 17.0, 45.0, 80.0])
def test_every_face_layout_fits_at_any_rotation_and_scale(value: int, angle: float) -> None:
    nodes = sorted(FACES[value][0])
    pitch = 11.0
    a = math.radians(angle)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    points = np.array(nodes, dtype=np.float64) * pitch @ rot.T + (60.0, 40.0)
    fit = fit_layout(points)
    assert fit is not None and fit.value == value
    assert fit.center == pytest.approx((60.0, 40.0), abs=1e-6)
    if value > 1:
        assert fit.pitch == pytest.approx(pitch, rel=1e-6)


@pytest.mark.parametrize("nodes", [
    [(-1, -1), (0, -1), (1, -1), (0, 0)],     # a T
    [(-1, -1), (1, -1), (-1, 1)],             # three corners
    [(-1, -1), (1, -1), (-1, 1), (1, 1), (0, -1)],  # a four with an edge pip
    [(-1, -1), (1, 1), (1, -1), (0, 0)],      # a five missing a corner
])
def test_pip_sets_that_are_no_face_are_refused(nodes: list[tuple[int, int]]) -> None:
    assert fit_layout(np.array(nodes, dtype=np.float64) * 10.0) is None


# --- pip shapes -----------------------------------------------------------------------------

def test_pip_elongation_tells_round_from_foreshortened_pips() -> None:
    patch = np.full((72, 72, 3), 235, np.uint8)
    cv2.circle(patch, (20, 20), 5, (20, 20, 20), -1)
    cv2.ellipse(patch, (50, 50), (3, 7), 0, 0, 360, (20, 20, 20), -1)
    assert combined.pip_elongation(patch, (20.0, 20.0, 5.0), "dark") == pytest.approx(1.0, abs=0.15)
    assert combined.pip_elongation(patch, (50.0, 50.0, 4.5), "dark") > 1.8
    pair = PipReading(2, 0.9, None, ((20.0, 20.0, 5.0), (50.0, 50.0, 4.5)), "dark", 90.0)
    assert not combined.pips_alike(patch, pair)
    cv2.circle(patch, (50, 50), 9, (235, 235, 235), -1)
    cv2.circle(patch, (50, 50), 5, (20, 20, 20), -1)
    assert combined.pips_alike(patch, pair)


def test_pips_of_very_different_sizes_are_not_one_face() -> None:
    patch = np.full((72, 72, 3), 235, np.uint8)
    cv2.circle(patch, (26, 26), 6, (20, 20, 20), -1)
    cv2.circle(patch, (46, 46), 3, (20, 20, 20), -1)  # round, but a side face's size
    pair = PipReading(2, 0.9, None, ((26.0, 26.0, 6.0), (46.0, 46.0, 3.0)), "dark", 90.0)
    assert not combined.pips_alike(patch, pair)
    cv2.circle(patch, (46, 46), 6, (20, 20, 20), -1)
    assert combined.pips_alike(patch, replace(pair, pips=((26.0, 26.0, 6.0), (46.0, 46.0, 5.5))))


_NODES = {0: [], 1: [(0, 0)], 2: [(-1, -1), (1, 1)], 3: [(-1, -1), (0, 0), (1, 1)],
          4: [(-1, -1), (1, -1), (-1, 1), (1, 1)], 5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
          6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)]}


def _marbled(
    value: int, seed: int, body=(90, 40, 20), swirls=(200, 150, 90), width: int = 2,
    pips=(40, 40, 190),
) -> np.ndarray:
    """A patch of a die marbled with swirls (by default dark blue with light blue swirls) with
    ``value`` pips (by default red)."""
    rng = np.random.default_rng(seed)
    patch = np.full((72, 72, 3), 190, np.uint8)
    cv2.rectangle(patch, (12, 12), (60, 60), body, -1)
    for _ in range(6):
        swirl = rng.integers(14, 58, (3, 2)).astype(np.int32)
        cv2.polylines(patch, [swirl], False, swirls, width)
    for u, v in _NODES[value]:
        cv2.circle(patch, (36 + 13 * u, 36 + 13 * v), 5, pips, -1)
    return cv2.GaussianBlur(patch, (3, 3), 0)


@pytest.mark.parametrize("value", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_red_pips_on_a_marbled_die_are_read_by_their_hue(value: int, seed: int) -> None:
    # The swirls are lighter than the pips: lightness alone finds no face here.
    reading = read_pips(_marbled(value, seed), 48.0)
    assert reading.value == value
    assert reading.polarity == "light"


@pytest.mark.parametrize("seed", range(4))
def test_marbling_alone_is_no_face(seed: int) -> None:
    assert read_pips(_marbled(0, seed), 48.0).value is None


def _swirled(value: int, seed: int) -> np.ndarray:
    """A patch of a black die with thick bright blue swirls and ``value`` red pips: the swirls
    are lighter than the pips and more colourful, so neither lightness nor the most colourful
    hue singles out the pips."""
    return _marbled(value, seed, (35, 30, 30), (235, 140, 30), 3, (50, 40, 200))


@pytest.mark.parametrize("value", range(2, 7))
@pytest.mark.parametrize("seed", range(6))
def test_pips_of_one_colour_are_read_through_thick_marbling(value: int, seed: int) -> None:
    reading = read_pip_colour(_swirled(value, seed), 48.0)
    assert reading.value == value
    centres = [(36 + 13 * u, 36 + 13 * v) for u, v in _NODES[value]]
    assert all(min(math.dist(p[:2], c) for c in centres) < 2.0 for p in reading.pips)


@pytest.mark.parametrize("seed", range(6))
def test_thick_marbling_alone_shows_no_colour_face(seed: int) -> None:
    assert read_pip_colour(_swirled(0, seed), 48.0).value is None


@pytest.mark.parametrize("seed", range(3))
def test_a_lone_blob_of_colour_is_no_one(seed: int) -> None:
    assert read_pip_colour(_swirled(1, seed), 48.0).value is None


@pytest.mark.parametrize("value", [3, 5, 6])
def test_pips_differing_in_lightness_alone_are_left_to_the_contrast_reader(value: int) -> None:
    patch = np.full((72, 72, 3), 170, np.uint8)
    cv2.rectangle(patch, (12, 12), (60, 60), (215, 230, 235), -1)
    for u, v in _NODES[value]:
        cv2.circle(patch, (36 + 13 * u, 36 + 13 * v), 5, (30, 30, 30), -1)
    patch = cv2.GaussianBlur(patch, (3, 3), 0)
    assert read_pips(patch, 48.0).value == value
    assert read_pip_colour(patch, 48.0).value is None


def test_a_plain_patch_has_no_colour_face() -> None:
    reading = read_pip_colour(np.full((72, 72, 3), 128, np.uint8), 48.0)
    assert reading.value is None
    assert reading.reason == "low contrast"


def test_a_glint_beside_a_light_pip_leaves_it_round() -> None:
    patch = np.full((72, 72, 3), (60, 140, 40), np.uint8)  # a glossy green die
    cv2.line(patch, (46, 20), (46, 60), (150, 200, 140), 3)  # light caught by its edge
    cv2.circle(patch, (40, 40), 5, (235, 235, 235), -1)      # a white pip touching the glint
    patch = cv2.GaussianBlur(patch, (3, 3), 0)
    assert combined.pip_elongation(patch, (40.0, 40.0, 5.0), "light") < 1.3


def _slanted_die(pips: list[tuple[int, int, int]]) -> np.ndarray:
    """A patch of an ivory die seen at a slant: its top face with ``pips`` (x, y, radius) and,
    on the right, a darker side face with three foreshortened pips."""
    patch = np.full((72, 72, 3), 150, np.uint8)
    cv2.rectangle(patch, (14, 14), (52, 58), (215, 235, 240), -1)
    cv2.rectangle(patch, (53, 14), (64, 58), (170, 190, 195), -1)
    for x, y, r in pips:
        cv2.circle(patch, (x, y), r, (30, 30, 30), -1)
    for y in (22, 36, 50):
        cv2.ellipse(patch, (59, y), (2, 4), 0, 0, 360, (30, 30, 30), -1)
    return cv2.GaussianBlur(patch, (3, 3), 0)


def test_a_one_is_found_alone_beside_a_side_faces_pips() -> None:
    patch = _slanted_die([(33, 36, 6)])
    assert read_pips(patch, 48.0).value is None  # the side face's pips join the group
    assert read_one(patch, 48.0).value == 1


@pytest.mark.parametrize("pips", [
    [(24, 27, 4), (42, 45, 4)],  # a two: no pip alone in the middle
    [(33, 36, 6), (20, 50, 6)],  # a second pip as large on the same face
])
def test_no_one_is_found_where_the_face_has_more(pips: list[tuple[int, int, int]]) -> None:
    assert read_one(_slanted_die(pips), 48.0).value is None


# --- whole images ---------------------------------------------------------------------------

@pytest.mark.parametrize("value", [2, 3, 4, 5])
@pytest.mark.parametrize("angle", [0.0, 20.0])
def test_a_close_up_of_one_die_is_read_whole(value: int, angle: float) -> None:
    # The die is far wider than the floor model's window: its pips alone stand out at first.
    die = DieSpec(value, (235, 235), 300, angle, (200, 235, 245), (30, 30, 30))
    shot = render_tray(TraySpec(470, 470, "paper", dice=(die,), camera_height=math.inf),
                       seed=value)
    dice = vision.read_dice(shot.image)
    assert [d.value for d in dice] == [value]
    assert math.dist(dice[0].center, (235, 235)) < 20


@pytest.mark.parametrize("floor", ["grey", "paper"])
def test_unsure_dice_on_a_grid_are_not_taken_for_one_large_die(floor: str) -> None:
    # Four dark threes with faint pips, placed like the pips of a four: four dice, each
    # unsure or read right.
    dice = tuple(DieSpec(3, (320 + dx, 240 + dy), 40, 10, (60, 60, 60), (70, 70, 70))
                 for dx in (-60, 60) for dy in (-60, 60))
    read = vision.read_dice(render_tray(TraySpec(640, 480, floor, dice=dice), seed=5).image)
    assert len(read) == 4
    assert all(d.value in (None, 3) for d in read)


def test_a_plain_tray_is_read_with_centres_and_outlines() -> None:
    shot = six_shot()
    dice = vision.read_dice(shot.image)
    assert sorted(d.value for d in dice) == [1, 2, 3, 4, 5, 6]
    for die in dice:
        truth = shot.truth[die.value - 1]
        assert math.dist(die.center, truth.center) < 0.15 * truth.side
        corners = np.array(die.corners)
        side = np.linalg.norm(corners[0] - corners[1])
        assert 0.7 * truth.side < side < 1.3 * truth.side
        assert math.dist(corners.mean(axis=0), die.center) < 5
        assert 0.0 <= die.confidence <= 1.0 and die.reason is None


def test_light_pips_on_dark_dice_are_read_too() -> None:
    combo = next(name for name, (body, pips, _) in COLOUR_COMBOS.items()
                 if sum(pips) > sum(body) + 300)
    assert sorted(d.value for d in vision.read_dice(six_dice(30.0, combo))) == [1, 2, 3, 4, 5, 6]


def test_a_profile_die_side_gives_the_same_reading() -> None:
    image = six_dice()
    plain = sorted(d.value for d in vision.read_dice(image))
    profiled = vision.read_dice(image, vision.Profile(die_side=44.0, pip_polarity="dark"))
    assert sorted(d.value for d in profiled) == plain


def test_profiles_round_trip_through_json(tmp_path) -> None:
    profile = vision.Profile([(200.0, 128.0, 130.0)], "light", 38.5, "empty.png",
                             [[(0.0, 0.0), (10.0, 0.0), (10.0, 10.0)]])
    path = tmp_path / "tray.json"
    profile.save(path)
    loaded = vision.Profile.load(path)
    assert loaded.pip_polarity == "light" and loaded.die_side == 38.5
    assert loaded.background == str(tmp_path / "empty.png")
    assert loaded.zones == profile.zones
    path.write_text(json.dumps({"die_size": 3}))
    with pytest.raises(ValueError, match="unknown profile fields"):
        vision.Profile.load(path)
    with pytest.raises(ValueError):
        vision.Profile(pip_polarity="bright")


def test_dice_check_their_own_consistency() -> None:
    corners = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))
    die = vision.Die(4, (0.5, 0.5), corners, 0.87654, alternatives=(5,))
    assert die.to_json() == {
        "value": 4, "center": [0.5, 0.5], "corners": [list(c) for c in corners],
        "confidence": 0.877, "reason": None, "alternatives": [5],
    }
    with pytest.raises(ValueError):
        vision.Die(7, (0, 0), corners, 0.5)
    with pytest.raises(ValueError):
        vision.Die(None, (0, 0), corners, 0.5, "dunno")
    with pytest.raises(ValueError):
        vision.Die(3, (0, 0), corners, 0.5, "cocked")


def test_annotate_draws_on_a_copy() -> None:
    image = six_dice()
    before = image.copy()
    dice = vision.read_dice(image)
    drawn = vision.annotate(image, dice)
    assert drawn.shape == image.shape and drawn.dtype == np.uint8
    assert np.array_equal(image, before)
    assert np.count_nonzero(np.any(drawn != image, axis=2)) > 500


# --- the read command -------------------------------------------------------------------------

def test_read_json_prints_one_line_per_image_in_the_documented_shape(tmp_path, capsys) -> None:
    path = tmp_path / "tray.png"
    cv2.imwrite(str(path), six_dice())
    out_dir = tmp_path / "annotated"
    assert main(["read", str(path), "--json", "--annotate", str(out_dir)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    data = json.loads(line)
    assert set(data) == {"image", "dice", "ms"}
    assert data["image"] == str(path) and data["ms"] >= 0
    assert sorted(d["value"] for d in data["dice"]) == [1, 2, 3, 4, 5, 6]
    for die in data["dice"]:
        assert set(die) == {"value", "center", "corners", "confidence", "reason"}
        assert len(die["center"]) == 2 and len(die["corners"]) == 4
    assert (out_dir / "tray.png").is_file()


def test_read_without_json_prints_a_summary(tmp_path, capsys) -> None:
    path = tmp_path / "tray.png"
    cv2.imwrite(str(path), six_dice())
    assert main(["read", str(path)]) == 0
    out = capsys.readouterr().out
    assert "6 dice" in out and "values 1 2 3 4 5 6" in out


def test_a_compact_region_of_two_dice_is_also_tried_as_two() -> None:
    from vision.detect import find_candidates, look_at

    # Two touching squares, offset so that together they still look like one (large) die.
    image = np.full((200, 200, 3), 110, np.uint8)
    image[50:80, 50:80] = 235
    image[65:95, 80:110] = 235
    candidates, side = find_candidates(look_at(image), side_hint=34.0)
    assert side == 34.0
    assert any(c.source == "body" for c in candidates)
    split = [c.center for c in candidates if c.source == "split"]
    for x0, y0 in ((50, 50), (80, 65)):  # each die gets a candidate of its own
        assert any(x0 <= x < x0 + 30 and y0 <= y < y0 + 30 for x, y in split), split


@pytest.mark.parametrize("radius", [2, 5, 8, 12])
def test_pip_seed_morphology_works_over_a_near_disk(radius: int) -> None:
    from vision.detect import _octagon

    point = np.zeros((4 * radius + 1,) * 2, np.uint8)
    point[2 * radius, 2 * radius] = 1
    shape = _octagon(cv2.dilate, point, radius)
    ys, xs = np.nonzero(shape)
    assert xs.max() - xs.min() == ys.max() - ys.min() == 2 * radius
    assert np.array_equal(shape, shape.T) and np.array_equal(shape, shape[::-1])
    # Between the disks inscribed in and drawn around the shape's extent.
    assert math.pi * radius**2 < shape.sum() < math.pi * (radius + 1) ** 2


def test_pips_are_grouped_as_discs_drawn_around_them_touch() -> None:
    from vision.detect import _groups

    def drawn(pips, radius):
        canvas = np.zeros((300, 400), np.uint8)
        for x, y in pips:
            cv2.circle(canvas, (round(x), round(y)), radius, 255, -1)
        _, labels = cv2.connectedComponents(canvas, connectivity=8)
        groups: dict[int, list] = {}
        for x, y in pips:
            groups.setdefault(int(labels[round(y), round(x)]), []).append((x, y))
        return list(groups.values())

    rng = np.random.default_rng(3)
    joined = 0
    for _ in range(300):
        radius = int(rng.integers(1, 14))
        pips = [(float(rng.uniform(0, 399.4)), float(rng.uniform(0, 299.4)))
                for _ in range(int(rng.integers(1, 80)))]
        groups = _groups(pips, radius)
        assert groups == drawn(pips, radius)
        joined += len(groups) < len(pips)
    assert joined > 100  # most cases join some pips
