"""Images with no hue (a grey camera): shade cannot be told from a die by its hue there."""

from __future__ import annotations

import cv2
import numpy as np

import vision
from vision.detect import foreground, has_hue


def _floor_with_square(floor_bgr: tuple, square_bgr: tuple) -> np.ndarray:
    image = np.full((240, 320, 3), floor_bgr, np.uint8)
    cv2.rectangle(image, (140, 100), (175, 135), square_bgr, -1)
    return image


def test_hue_is_seen_in_colour_and_not_in_grey() -> None:
    colour = _floor_with_square((150, 192, 224), (38, 32, 196))
    assert has_hue(cv2.cvtColor(colour, cv2.COLOR_BGR2Lab))
    grey = cv2.cvtColor(cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    assert not has_hue(cv2.cvtColor(grey, cv2.COLOR_BGR2Lab))
    # A grey frame re-saved as colour JPEG keeps next to no chroma: still no hue.
    ok, data = cv2.imencode(".jpg", grey, [cv2.IMWRITE_JPEG_QUALITY, 40])
    assert ok and not has_hue(cv2.cvtColor(cv2.imdecode(data, cv2.IMREAD_COLOR), cv2.COLOR_BGR2Lab))
    assert not has_hue(np.full((1, 1, 3), 128, np.uint8))


def test_a_darker_square_with_the_floors_hue_is_shade_in_colour() -> None:
    # The floor's own colour at 70 % of its lightness: shade, in an image that has hue.
    image = _floor_with_square((150, 192, 224), (105, 134, 157))
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2Lab)
    assert has_hue(lab)
    assert cv2.countNonZero(foreground(lab)[105:130, 145:170]) == 0


def test_a_darker_square_is_a_die_body_in_grey() -> None:
    # A red die on a grey tray, seen by a grey camera: 70 % of the floor's lightness with its
    # (absent) hue, which the shade rule used to remove.
    colour = _floor_with_square((176, 178, 180), (38, 32, 196))
    grey = cv2.cvtColor(cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    lab = cv2.cvtColor(grey, cv2.COLOR_BGR2Lab)
    assert cv2.countNonZero(foreground(lab)[105:130, 145:170]) == 25 * 25


def test_an_empty_darker_patch_in_grey_is_no_die() -> None:
    # Nothing inside it to read: a shadow or a wall to a grey camera, not an unsure die.
    grey = cv2.cvtColor(_floor_with_square((176, 178, 180), (120, 122, 124)), cv2.COLOR_BGR2GRAY)
    assert vision.read_dice(grey) == []


def test_a_die_on_a_grey_floor_reads_in_grey() -> None:
    from vision.lab.render import DieSpec, TraySpec, render_tray

    dice = (DieSpec(5, (110, 120), 44, 10.0, body_bgr=(38, 32, 196), pip_bgr=(236, 236, 236)),
            DieSpec(3, (230, 130), 44, 35.0, body_bgr=(176, 78, 32), pip_bgr=(236, 236, 236)))
    shot = render_tray(TraySpec(340, 260, "grey", dice=dice), seed=5)
    grey = cv2.cvtColor(shot.image, cv2.COLOR_BGR2GRAY)
    assert sorted(d.value for d in vision.read_dice(grey)) == [3, 5]
