"""Bad and odd inputs: missing or broken files, wrong arrays, blank, noise and huge images."""

from __future__ import annotations

import json
import math

import cv2
import numpy as np
import pytest

import vision
from firmware_host.cli import main as dicetower
from vision.lab.render import DieSpec, TraySpec, random_tray, render_tray


@pytest.fixture(scope="module")
def tray_png(tmp_path_factory) -> tuple:
    """A small rendered tray saved as PNG, with its truth."""
    spec = random_tray(np.random.default_rng(11), 3, width=320, height=240, side=30.0,
                       floor="grey", palette=["white/black"])
    shot = render_tray(spec, 11)
    path = tmp_path_factory.mktemp("tray") / "tray.png"
    assert cv2.imwrite(str(path), shot.image)
    return path, shot


def test_load_image_reads_a_png_as_bgr_uint8(tray_png) -> None:
    path, shot = tray_png
    image = vision.load_image(path)
    assert image.dtype == np.uint8 and image.shape == shot.image.shape
    assert np.array_equal(image, shot.image)


def test_load_image_gives_three_channels_for_a_grey_png(tmp_path) -> None:
    path = tmp_path / "grey.png"
    cv2.imwrite(str(path), np.full((20, 30), 128, np.uint8))
    assert vision.load_image(path).shape == (20, 30, 3)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("missing.png", None),
        ("notes.txt", b"these are the rules of 421, not a picture\n"),
        ("empty.png", b""),
        ("truncated.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"),
    ],
)
def test_load_image_names_the_file_it_cannot_read(tmp_path, name: str, content) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(vision.ImageError) as caught:
        vision.load_image(path)
    assert isinstance(caught.value, ValueError)
    assert name in str(caught.value)


def test_load_image_refuses_a_folder(tmp_path) -> None:
    with pytest.raises(vision.ImageError, match=tmp_path.name):
        vision.load_image(tmp_path)


def test_read_command_reports_bad_files_and_still_reads_the_good_one(
    tmp_path, tray_png, capsys
) -> None:
    good, _ = tray_png
    text = tmp_path / "notes.txt"
    text.write_text("not an image\n")
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    missing = tmp_path / "missing.png"
    status = dicetower(["read", str(missing), str(text), str(good), str(empty)])
    out, err = capsys.readouterr()
    assert status == 1
    for bad in (missing, text, empty):
        assert bad.name in err
        assert bad.name not in out
    assert str(good) in out


def test_read_command_succeeds_when_every_file_is_an_image(tray_png, capsys) -> None:
    good, _ = tray_png
    assert dicetower(["read", str(good), str(good)]) == 0
    out, err = capsys.readouterr()
    assert out.count(str(good)) == 2
    assert err == ""


@pytest.mark.parametrize(
    ("array", "complaint"),
    [
        (np.zeros((0, 0, 3), np.uint8), "empty"),
        (np.zeros((0, 640, 3), np.uint8), "empty"),
        (np.zeros((48, 64, 3), np.float64), "dtype"),
        (np.zeros((48, 64, 3), np.uint16), "dtype"),
        (np.zeros((48, 64, 3), bool), "dtype"),
        (np.zeros(640, np.uint8), "shape"),
        (np.zeros((48, 64, 2), np.uint8), "shape"),
        (np.zeros((2, 48, 64, 3), np.uint8), "shape"),
    ],
)
def test_read_dice_rejects_arrays_that_are_not_images(array: np.ndarray, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        vision.read_dice(array)


def test_read_dice_rejects_what_is_not_an_array() -> None:
    with pytest.raises(ValueError):
        vision.read_dice([[0, 0, 0]])  # type: ignore[arg-type]


@pytest.mark.parametrize("level", [0, 128, 255])
def test_a_uniform_image_has_no_dice(level: int) -> None:
    assert vision.read_dice(np.full((480, 640, 3), level, np.uint8)) == []


@pytest.mark.parametrize("seed", [0, 1])
def test_pure_noise_has_no_dice(seed: int) -> None:
    rng = np.random.default_rng(seed)
    uniform = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    assert vision.read_dice(uniform) == []
    grey_noise = np.clip(rng.normal(128, 25, (480, 640, 3)), 0, 255).astype(np.uint8)
    assert vision.read_dice(grey_noise) == []


def test_grey_and_bgra_images_are_accepted(tray_png) -> None:
    _, shot = tray_png
    bgr_reading = vision.read_dice(shot.image)
    bgra = cv2.cvtColor(shot.image, cv2.COLOR_BGR2BGRA)
    assert vision.read_dice(bgra) == bgr_reading
    grey = cv2.cvtColor(shot.image, cv2.COLOR_BGR2GRAY)
    # One channel is read as the same grey in three: the same dice, at the same places.
    grey_reading = vision.read_dice(cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR))
    assert len(grey_reading) == len(bgr_reading) == 3
    assert vision.read_dice(grey) == grey_reading
    assert vision.read_dice(grey[..., None]) == grey_reading


def test_a_tiny_image_reads_without_crashing() -> None:
    assert vision.read_dice(np.full((3, 2, 3), 90, np.uint8)) == []


@pytest.mark.parametrize("shape", [(1, 1), (1, 2), (2, 1), (2, 2), (1, 640), (640, 1),
                                   (3, 5000), (5000, 3), (1, 4000), (4000, 1), (7, 7000),
                                   (5, 1030), (16, 16), (2, 20000), (20000, 2), (24, 9000)])
def test_every_image_size_reads(shape: tuple[int, int]) -> None:
    # A short side under the long side / 1024 once made the patch reduction divide it to
    # nothing (an OpenCV error, not a reading).
    image = np.random.default_rng(sum(shape)).integers(0, 255, (*shape, 3), dtype=np.uint8)
    assert all(d.value is None or 1 <= d.value <= 6 for d in vision.read_dice(image))


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (1, 300), (300, 1), (2, 6000), (6000, 2)])
@pytest.mark.parametrize("channels", [None, 3, 4])
def test_every_image_size_reads_in_every_channel_layout(shape: tuple[int, int], channels) -> None:
    rng = np.random.default_rng(sum(shape) + (channels or 1))
    layout = shape if channels is None else (*shape, channels)
    image = rng.integers(0, 256, layout, dtype=np.uint8)
    dice = vision.read_dice(image)
    h, w = shape
    for die in dice:
        assert die.value is None or 1 <= die.value <= 6
        assert -w <= die.center[0] <= 2 * w and -h <= die.center[1] <= 2 * h


def test_read_command_reads_tiny_and_thin_files_and_goes_on(tmp_path, tray_png, capsys) -> None:
    good, _ = tray_png
    files = []
    for h, w in ((1, 1), (2, 2), (1, 500), (500, 1), (3, 9000)):
        path = tmp_path / f"odd_{h}x{w}.png"
        assert cv2.imwrite(str(path), np.full((h, w, 3), 90, np.uint8))
        files.append(path)
    status = dicetower(["read", "--json", *map(str, files), str(good)])
    out, err = capsys.readouterr()
    assert status == 0 and err == ""
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["image"] for line in lines] == [*map(str, files), str(good)]
    assert all("dice" in line and "error" not in line for line in lines)


def test_read_command_goes_on_past_an_image_the_pipeline_chokes_on(
    tmp_path, tray_png, capsys, monkeypatch
) -> None:
    good, _ = tray_png
    thin = tmp_path / "thin.png"
    assert cv2.imwrite(str(thin), np.full((3, 5000, 3), 120, np.uint8))
    real = vision.read_dice

    def choking(image, profile=None, *, readers=None):
        if image.shape[0] == 3:
            raise RuntimeError("something nobody foresaw")
        return real(image, profile, readers=readers)

    monkeypatch.setattr(vision, "read_dice", choking)
    status = dicetower(["read", str(thin), str(good)])
    out, err = capsys.readouterr()
    assert status == 1
    assert err.count("\n") == 1 and "thin.png" in err and "something nobody foresaw" in err
    assert str(good) in out and "Traceback" not in err


def test_a_huge_image_is_read_in_input_pixels() -> None:
    # A 6000x8000 photo of the tray: rendered small, then enlarged ten times, like a
    # high-resolution camera of the same scene.
    dice = (
        DieSpec(5, (250, 200), 48, 20.0),
        DieSpec(2, (520, 380), 48, 55.0, body_bgr=(38, 32, 196), pip_bgr=(236, 236, 236)),
    )
    shot = render_tray(TraySpec(800, 600, "grey", dice=dice), seed=3)
    huge = cv2.resize(shot.image, (8000, 6000), interpolation=cv2.INTER_LINEAR)
    readings = vision.read_dice(huge)
    assert len(readings) == 2
    for truth in shot.truth:
        # Pixel centres: input x = (x + 0.5) * 10 - 0.5 after enlarging ten times.
        expected = ((truth.center[0] + 0.5) * 10 - 0.5, (truth.center[1] + 0.5) * 10 - 0.5)
        nearest = min(readings, key=lambda r: math.dist(r.center, expected))
        assert math.dist(nearest.center, expected) < 0.5 * truth.side * 10
        corners = np.array(nearest.corners)
        assert np.linalg.norm(corners[0] - corners[2]) > 0.8 * truth.side * 10


@pytest.mark.parametrize("profile_text", ['{"zones": 5}', '{"dice_colors": [["red"]]}',
                                          '{"die_side": -3}', '{"background": 7}', '[1, 2]'])
def test_read_command_says_once_what_is_wrong_with_a_profile(
    tmp_path, tray_png, capsys, profile_text: str
) -> None:
    good, _ = tray_png
    profile = tmp_path / "profile.json"
    profile.write_text(profile_text)
    assert dicetower(["read", str(good), "--profile", str(profile)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.count(str(profile)) == 1


def test_read_command_annotate_must_be_a_folder_it_can_make(tmp_path, tray_png, capsys) -> None:
    good, _ = tray_png
    existing = tmp_path / "out.png"
    existing.write_text("not a folder")
    assert dicetower(["read", str(good), "--annotate", str(existing)]) == 2
    assert "is a file" in capsys.readouterr().err
    blocked = existing / "below"
    assert dicetower(["read", str(good), "--annotate", str(blocked)]) == 2
    err = capsys.readouterr().err
    assert "cannot create it" in err and err.count("\n") == 1
    made = tmp_path / "annotated"
    assert dicetower(["read", str(good), "--annotate", str(made)]) == 0
    assert (made / (good.stem + ".png")).is_file()
