"""A calibration profile's zones, empty tray and dice colours, as `vision.read_dice` uses them."""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

import vision
import vision.pipeline as pipeline
from vision.lab.render import DieSpec, RenderedTray, TraySpec, random_tray, render_tray


def _four_dice(seed: int) -> tuple[TraySpec, RenderedTray]:
    rng = np.random.default_rng(seed)
    dice = tuple(DieSpec(int(rng.integers(1, 7)), (110 + 140 * k, 130 + 200 * (k % 2)), 44,
                         float(rng.uniform(0, 90))) for k in range(4))
    spec = TraySpec(floor="grey", dice=dice)
    return spec, render_tray(spec, seed)


def _lab(bgr: tuple[int, int, int]) -> tuple[float, float, float]:
    return tuple(float(v) for v in cv2.cvtColor(np.uint8([[bgr]]), cv2.COLOR_BGR2Lab)[0, 0])


def _spurious(readings: list[vision.Die], shot: RenderedTray) -> list[vision.Die]:
    return [d for d in readings
            if not any(math.dist(d.center, t.center) < 0.5 * t.side for t in shot.truth)]


@pytest.mark.parametrize("seed", range(3))
def test_only_dice_in_the_zones_are_read_and_the_rest_of_the_image_is_not(
    monkeypatch, seed: int
) -> None:
    _, shot = _four_dice(seed)
    zone = [(40.0, 40.0), (330.0, 40.0), (330.0, 440.0), (40.0, 440.0)]  # the two on the left
    read_parts = []  # the part of the image looked at: the zone, with a die's room around it
    find = pipeline.find_candidates
    monkeypatch.setattr(pipeline, "find_candidates",
                        lambda seen, *a: read_parts.append(seen.image.shape) or find(seen, *a))
    profile = vision.Profile(zones=[zone])
    zoned = vision.read_dice(shot.image, profile)
    assert read_parts and all(h * w < 0.6 * 480 * 640 for h, w, _ in read_parts)
    inside = [t for t in shot.truth if profile.in_zones(t.center)]
    assert len(inside) == 2
    assert sorted(d.value for d in zoned) == sorted(t.value for t in inside)
    # The same dice, at the same places, as when the whole image is read.
    whole = vision.read_dice(shot.image)
    for die in zoned:
        twin = min(whole, key=lambda d: math.dist(d.center, die.center))
        assert twin.value == die.value and math.dist(twin.center, die.center) < 1.5


def test_zones_outside_the_image_are_a_clear_error() -> None:
    _, shot = _four_dice(0)
    far = [(2000.0, 2000.0), (2100.0, 2000.0), (2100.0, 2100.0)]
    with pytest.raises(ValueError, match="zones lie outside the image"):
        vision.read_dice(shot.image, vision.Profile(zones=[far], die_side=40.0))


def _stained(seed: int, tmp_path) -> tuple[np.ndarray, RenderedTray, str]:
    """A tray with a die-sized stain and a burn mark on it, and its empty tray saved."""
    spec, shot = _four_dice(seed)
    image, empty = shot.image.copy(), render_tray(replace(spec, dice=()), seed).image
    for im in (image, empty):
        cv2.rectangle(im, (560, 40), (602, 82), (40, 50, 60), -1)
        cv2.circle(im, (300, 420), 9, (30, 30, 30), -1)
    path = tmp_path / f"empty{seed}.png"
    cv2.imwrite(str(path), empty)
    return image, shot, str(path)


@pytest.mark.parametrize("seed", range(3))
def test_the_empty_tray_tells_marks_on_the_tray_from_dice(tmp_path, seed: int) -> None:
    image, shot, empty = _stained(seed, tmp_path)
    truth = sorted(t.value for t in shot.truth)

    def stain_is_a_body(profile: vision.Profile | None) -> bool:
        scene = pipeline.prepare(image, profile)
        return any(math.dist(np.array(c.center) / scene.scale, (581, 61)) < 22
                   for c in scene.candidates if c.source == "body")

    # Without the empty tray, the stain is a die-sized body to read (the face network then
    # finds no face on it); with it, it is floor.
    assert stain_is_a_body(None)
    assert not stain_is_a_body(vision.Profile(background=empty))
    with_tray = vision.read_dice(image, vision.Profile(background=empty))
    assert not _spurious(with_tray, shot)
    assert sorted(d.value for d in with_tray) == truth


def test_an_empty_tray_of_another_size_is_a_clear_error(tmp_path) -> None:
    image, _, _ = _stained(0, tmp_path)
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), np.full((240, 320, 3), 120, np.uint8))
    with pytest.raises(ValueError, match="empty tray is 320x240 px, the image 640x480"):
        vision.read_dice(image, vision.Profile(background=str(small)))


@pytest.mark.parametrize("seed", [524, 529])
def test_an_unsure_die_of_no_dice_colour_is_no_die(seed: int) -> None:
    # A hand over the tray may leave an unsure "die" on its fingers that the face network
    # takes for a face (most it does not); the dice's colours tell it apart. Real dice keep
    # their values.
    spec = random_tray(np.random.default_rng(seed), 4, hand=True)
    shot = render_tray(spec, seed)
    assert _spurious(vision.read_dice(shot.image), shot)
    profile = vision.Profile(dice_colors=sorted({_lab(d.body_bgr) for d in spec.dice}))
    coloured = vision.read_dice(shot.image, profile)
    assert not _spurious(coloured, shot)
    assert sorted(d.value for d in coloured) == sorted(t.value for t in shot.truth)


def test_an_unsure_die_of_a_dice_colour_stays() -> None:
    # A die leaning on another is reported unsure; its colour is a die's, so it stays.
    spec = random_tray(np.random.default_rng(5001), 4, cocked=1)
    shot = render_tray(spec, 5001)
    profile = vision.Profile(dice_colors=sorted({_lab(d.body_bgr) for d in spec.dice}))
    unsure = [d for d in vision.read_dice(shot.image) if d.value is None]
    assert unsure
    kept = [d for d in vision.read_dice(shot.image, profile) if d.value is None]
    assert [d.center for d in kept] == [d.center for d in unsure]
    # ... and so it does with other colours only: it read a face before the lean check found
    # it leaning, and a die that shows a face is a die whatever the profile's colours.
    other = vision.Profile(dice_colors=[(128.0, 60.0, 200.0)])
    assert [d.reason for d in vision.read_dice(shot.image, other) if d.value is None] == [
        "cocked"]


def test_read_with_a_profile_whose_empty_tray_is_missing_says_so(tmp_path, capsys) -> None:
    from firmware_host.cli import main

    image, _, _ = _stained(0, tmp_path)
    cv2.imwrite(str(tmp_path / "tray.png"), image)
    vision.Profile(background="gone.png").save(tmp_path / "p.json")
    assert main(["read", str(tmp_path / "tray.png"), "--profile", str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err
    assert "p.json" in err and "gone.png" in err


def test_read_reports_an_image_its_profile_does_not_fit_and_goes_on(tmp_path, capsys) -> None:
    import json

    from firmware_host.cli import main

    image, _, empty = _stained(0, tmp_path)
    cv2.imwrite(str(tmp_path / "tray.png"), image)
    cv2.imwrite(str(tmp_path / "half.png"), cv2.resize(image, (320, 240)))
    vision.Profile(background=empty).save(tmp_path / "p.json")
    paths = [str(tmp_path / "half.png"), str(tmp_path / "tray.png")]
    assert main(["read", *paths, "--profile", str(tmp_path / "p.json"), "--json"]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["image"] == paths[0] and "640x480 px, the image 320x240" in lines[0]["error"]
    assert lines[1]["image"] == paths[1] and len(lines[1]["dice"]) == 4


def test_a_profile_knows_its_zones_and_the_part_of_the_image_around_them() -> None:
    triangle = [(100.0, 100.0), (300.0, 100.0), (100.0, 300.0)]
    profile = vision.Profile(zones=[triangle], die_side=40.0)
    assert profile.in_zones((150.0, 150.0)) and profile.in_zones((200.0, 100.0))  # on an edge
    assert not profile.in_zones((250.0, 250.0))  # inside the box, outside the triangle
    assert profile.zone_box((480, 640)) == (60, 60, 340, 340)  # a die's side around it
    assert profile.zone_box((200, 200)) == (60, 60, 200, 200)  # clipped to the image
    assert vision.Profile().in_zones((-5.0, 1e6))  # no zones: anywhere
    assert vision.Profile().zone_box((480, 640)) == (0, 0, 640, 480)


def test_the_empty_tray_is_prepared_once_for_every_frame_alike(tmp_path) -> None:
    _, _, empty = _stained(0, tmp_path)
    profile = vision.Profile(background=empty)
    floor = profile.floor((480, 640), (0, 0, 640, 480), (320, 240))
    assert floor.shape == (240, 320, 3)
    assert profile.floor((480, 640), (0, 0, 640, 480), (320, 240)) is floor  # the next frame
    part = profile.floor((480, 640), (100, 50, 300, 250), (200, 200))
    lab = cv2.cvtColor(cv2.imread(empty), cv2.COLOR_BGR2Lab)
    assert np.array_equal(part, lab[50:250, 100:300])  # cut, not reduced: already that size
    assert vision.Profile().floor((480, 640), (0, 0, 640, 480), (320, 240)) is None


@pytest.mark.parametrize(("value", "angle", "y", "x"), [
    (2, 50, 466, 150), (4, 25, 461, 150), (4, 25, 461, 300), (4, 50, 461, 300),
    (6, 50, 456, 150), (6, 50, 456, 300),
])
def test_a_die_half_out_of_the_picture_is_not_read_by_the_pips_in_view(
        tmp_path, value: int, angle: float, y: float, x: float) -> None:
    # A die bounced off the tray, its lower half below the picture's edge, beyond the zone:
    # the pips in view form a smaller face (a four's two, a six's three), found as a pip
    # cluster whose region does not touch the edge. Read, a throw of one die would have
    # been taken for that smaller face.
    die = DieSpec(value, (float(x), float(y)), 46, float(angle))
    spec = TraySpec(640, 480, "felt", dice=(die,))
    shot, empty = render_tray(spec, 3), render_tray(replace(spec, dice=()), 3).image
    path = tmp_path / "empty.png"
    cv2.imwrite(str(path), empty)
    zone = [(16.0, 16.0), (452.0, 16.0), (452.0, 464.0), (16.0, 464.0)]
    profile = vision.Profile(background=str(path), zones=[zone], pip_polarity="dark")
    assert vision.read_dice(shot.image, profile) == []
