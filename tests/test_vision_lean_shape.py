"""The lean seen in a face's shape (`vision.lean_shape`), and its place in `read_dice`."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

import vision
from vision import lean_shape
from vision.lab.render import DieSpec, TraySpec, render_tray
from vision.lean_shape import Shape, face_shape, flat_aspect, leans_toward
from vision.readers import shipped
from vision.straightening import PATCH_SIDE, straighten

SIDE = 44.0


def _tray(value: int, tilt: float, toward: float = 0.0, seed: int = 5):
    """A die showing ``value``, leaning ``tilt`` degrees toward image direction ``toward`` on
    a flat two (tilt 0: lying flat beside it), and the leaning die's truth."""
    a = math.radians(toward)
    leaner = DieSpec(value, (320.0, 240.0), SIDE, 12.0, tilt_deg=tilt, tilt_toward_deg=toward)
    support = DieSpec(2, (320.0 + 1.45 * SIDE * math.cos(a), 240.0 + 1.45 * SIDE * math.sin(a)),
                      SIDE, 0.0)
    shot = render_tray(TraySpec(dice=(leaner, support)), seed=seed)
    truth = min(shot.truth, key=lambda t: math.dist(t.center, (320.0, 240.0)))
    return shot.image, truth


def _shape(value: int, tilt: float, toward: float = 0.0) -> Shape | None:
    image, truth = _tray(value, tilt, toward)
    patch = straighten(image, truth.center, 0.0, truth.side)[0]
    return face_shape(patch, float(PATCH_SIDE), value)


@pytest.mark.parametrize("value", [4, 5])
def test_a_flat_four_or_five_is_square(value) -> None:
    shape = _shape(value, 0.0)
    assert shape is not None and shape.aspect > 1.0 - lean_shape.SQUEEZE / 2


@pytest.mark.parametrize(("value", "tilt", "toward"), [(4, 30.0, 0.0), (5, 26.0, 90.0),
                                                        (5, 33.0, 225.0)])
def test_a_leaning_face_is_squeezed_toward_the_die_it_rests_on(value, tilt, toward) -> None:
    shape = _shape(value, tilt, toward)
    assert shape is not None
    assert shape.aspect == pytest.approx(math.cos(math.radians(tilt)), abs=0.05)
    a = math.radians(toward)
    along = abs(shape.short_axis[0] * math.cos(a) + shape.short_axis[1] * math.sin(a))
    assert along > math.cos(math.radians(15))


@pytest.mark.parametrize("value", [1, 2, 3, 6])
def test_only_fours_and_fives_have_a_shape(value) -> None:
    # A six's columns are closer than its rows on many dice: no shape to trust.
    assert _shape(value, 0.0) is None


def test_pips_that_do_not_make_the_face_have_no_shape() -> None:
    image, truth = _tray(4, 0.0)
    patch = straighten(image, truth.center, 0.0, truth.side)[0]
    assert face_shape(patch, float(PATCH_SIDE), 5) is None


def test_a_pictures_flat_faces_are_its_other_fours_and_fives_or_a_square() -> None:
    assert flat_aspect([]) == 1.0
    shapes = [Shape(a, (1.0, 0.0)) for a in (0.8, 0.84, 0.9)]
    assert flat_aspect(shapes) == pytest.approx(0.84)


@pytest.mark.parametrize(("aspect", "axis", "neighbour", "flat", "leans"), [
    (0.85, (1.0, 0.0), (60.0, 0.0), 1.0, True),     # squeezed toward the die beside it
    (0.85, (0.0, 1.0), (60.0, 0.0), 1.0, False),    # squeezed across: not leaning on it
    (0.85, (1.0, 0.0), (-60.0, 10.0), 1.0, True),   # either way along the axis
    (0.85, (1.0, 0.0), (60.0, 40.0), 1.0, False),   # 34 degrees off the axis
    (0.85, (1.0, 0.0), (100.0, 0.0), 1.0, False),   # too far to lean on
    (0.94, (1.0, 0.0), (60.0, 0.0), 1.0, False),    # too little squeezed
    (0.85, (1.0, 0.0), (60.0, 0.0), 0.86, False),   # a slanted camera squeezes every face
    (0.75, (1.0, 0.0), (60.0, 0.0), 0.86, True),    # ... and this one more
])
def test_a_face_leans_when_squeezed_toward_a_die_within_reach(aspect, axis, neighbour, flat,
                                                               leans) -> None:
    shape = Shape(aspect, axis)
    assert leans_toward(shape, flat, (0.0, 0.0), 40.0, neighbour) is leans


class _FlatLean:
    """A lean network that finds every die flat: what the shape finds is the shape's alone."""

    def leaning(self, patches, distances, beside=None):
        return np.zeros(len(patches), np.float32)


@pytest.mark.parametrize(("value", "toward"), [(5, 0.0), (4, 90.0), (5, 200.0)])
def test_a_squeezed_face_the_lean_network_lets_through_is_cocked(value, toward) -> None:
    readers = replace(shipped(), lean=_FlatLean())
    image, _ = _tray(value, 30.0, toward)
    dice = vision.read_dice(image, readers=readers)
    cocked = [d for d in dice if d.reason == "cocked"]
    assert [d.alternatives for d in cocked] == [(value,)]
    assert sorted(d.value for d in dice if d.value is not None) == [2]
    # The same dice lying flat side by side are read.
    flat, _ = _tray(value, 0.0, toward)
    assert sorted(d.value for d in vision.read_dice(flat, readers=readers)) == sorted([2, value])
    # Without the lean check, the leaning die is read as its top face.
    left_out = vision.read_dice(image, readers=readers, lean_check=False)
    assert sorted(d.value for d in left_out) == sorted([2, value])
