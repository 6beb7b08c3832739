"""The light step's sweep (`calibration.light.sweep`) and its knobs (`calibration.controls`):
what it keeps, and what it leaves alone when it has nothing to judge by."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.controls import RING_LEVELS, Knob, light_knobs
from calibration.errors import CalibrationError
from calibration.light import MID_GREY, describe, sweep
from vision import Die

SQUARE = ((40.0, 40.0), (60.0, 40.0), (60.0, 60.0), (40.0, 60.0))


class Ring:
    """A ring light whose level shows in the frames: the frame's grey is 100 + 100 x level."""

    def __init__(self, level: float = 0.0) -> None:
        self.level = level

    def __call__(self, level: float) -> None:
        self.level = level

    def grab(self) -> np.ndarray:
        image = np.full((100, 100, 3), int(100 + 100 * self.level), np.uint8)
        image[45:55, 45:55] = 20  # a pip: the face has some contrast
        return image


def reader(values_at: dict[float, int | None], ring: Ring):
    """One die in every frame, read as ``values_at[level]`` (None: found, not read)."""

    def read(image: np.ndarray) -> list[Die]:
        value = values_at.get(ring.level)
        if value is None:
            return [Die(None, (50.0, 50.0), SQUARE, 0.3, "not a pip face")]
        return [Die(value, (50.0, 50.0), SQUARE, 0.9)]

    return read


def test_an_unlit_ring_is_swept_from_level_0_and_left_off_when_that_reads_best() -> None:
    ring = Ring()
    knobs = light_knobs(object(), ring, None)
    assert [k.name for k in knobs] == ["ring"] and knobs[0].current == 0.0
    # Off reads the die; every level of the ring washes it out.
    best, _, scores = sweep(knobs, ring.grab, reader({0.0: 4}, ring), 1)
    assert dict(best.settings) == {"ring": 0.0} and best.read == 1
    assert ring.level == 0.0 and len(scores) == 1 + len(RING_LEVELS)
    # A lit ring is swept from its own level.
    assert light_knobs(object(), ring, 0.5)[0].current == 0.5


def test_a_level_that_reads_more_dice_is_kept() -> None:
    ring = Ring()
    best, _, _ = sweep(light_knobs(object(), ring, None), ring.grab,
                       reader({0.75: 4}, ring), 1)
    assert dict(best.settings) == {"ring": 0.75} and ring.level == 0.75


def test_dice_found_but_never_read_keep_the_best_exposed_light_that_finds_them() -> None:
    from calibration.tray import lightness

    ring = Ring(0.75)  # the ring as the installer left it: too bright
    knobs = light_knobs(object(), ring, 0.75)

    def read(image: np.ndarray) -> list[Die]:  # found, never read; none at full ring
        if ring.level == 1.0:
            return []
        return [Die(None, (50.0, 50.0), SQUARE, 0.3, "not a pip face")]

    best, image, scores = sweep(knobs, ring.grab, read, 1)
    levels = [0.25, 0.5, 0.75]  # those finding the die
    nearest = min(levels, key=lambda v: abs(lightness(Ring(v).grab()) - MID_GREY))
    assert nearest != 0.75
    assert ring.level == knobs[0].current == nearest == dict(best.settings)["ring"]
    assert (best.read, best.found) == (0, 1)
    assert np.array_equal(image, Ring(nearest).grab())
    assert len({s.level for s in scores}) > 2  # the exposures differ: the choice means it
    assert "none read yet (the exposure judged alone)" in describe(best)


def test_no_die_found_at_any_setting_stops_the_calibration() -> None:
    ring = Ring()
    knob = Knob("ring", RING_LEVELS, ring, 0.0)
    with pytest.raises(CalibrationError, match="no dice found while tuning the light"):
        sweep([knob], ring.grab, lambda image: [], 1)
