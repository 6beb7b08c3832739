"""The lean seen between two dice (`vision.lean_gap`), and its place in `read_dice`."""

from __future__ import annotations

import math

import numpy as np
import pytest

import vision
from firmware_host.simulation.tray import SimulatedTray
from vision.lean_gap import bridged, leans_on


def _mask(*boxes: tuple[int, int, int, int]) -> np.ndarray:
    """A 200 x 300 foreground mask with the given (x0, y0, x1, y1) boxes filled."""
    mask = np.zeros((200, 300), np.uint8)
    for x0, y0, x1, y1 in boxes:
        mask[y0:y1, x0:x1] = 255
    return mask


def test_the_gap_between_two_faces_is_bridged_only_where_foreground_fills_it() -> None:
    faces = ((40, 80, 80, 120), (110, 80, 150, 120))  # two 40 px faces, 70 px apart
    assert bridged(_mask(*faces), (60, 100), (130, 100)) == 0.0
    assert bridged(_mask(*faces, (80, 90, 110, 110)), (60, 100), (130, 100)) == 1.0
    # Outside the picture is floor.
    assert bridged(_mask(*faces), (290, 100), (400, 100)) == 0.0


def test_a_die_leans_on_a_die_apart_from_it_across_a_bridged_gap() -> None:
    side = 40.0
    a, b = (60.0, 100.0), (130.0, 100.0)  # 1.75 sides apart
    filled = _mask((40, 80, 150, 120))
    assert leans_on(filled, a, side, [b], [a, b])
    # Floor in the gap: two flat dice.
    assert not leans_on(_mask((40, 80, 80, 120), (110, 80, 150, 120)), a, side, [b], [a, b])
    # Touching dice (1.1 sides) show no gap to judge.
    near = (104.0, 100.0)
    assert not leans_on(filled, a, side, [near], [a, near])
    # A third die in the gap bridges it itself.
    middle = (95.0, 100.0)
    assert not leans_on(filled, a, side, [b], [a, b, middle])
    # Too far to rest on.
    far = (160.0, 100.0)
    assert not leans_on(_mask((40, 80, 180, 120)), a, side, [far], [a, far])


def _still_throw(seed: int, cocked: bool):
    """The still frame of a varied simulated tower's throw of three dice, and its truth: one
    die leaning on another when ``cocked``."""
    tray = SimulatedTray(scene="varied", seed=1000 + seed)
    faces = [int(v) for v in np.random.default_rng(seed).integers(1, 7, 3)]
    truth = tray.throw(faces, cocked=cocked)
    image, frame, _ = tray.next_shot()
    while frame.moving:  # the dice tumbling in, until they lie still
        image, frame, _ = tray.next_shot()
    return tray.noisy(image), truth, tray.profile()


def test_a_die_the_lean_network_half_suspects_is_cocked_across_a_bridged_gap(monkeypatch
                                                                           ) -> None:
    # A one leaning on another die of a varied tower's throw, that the lean network does not
    # call cocked on its own and whose face shows no squeeze.
    image, truth, profile = _still_throw(132, cocked=True)
    leaner = next(d for d in truth.dice if d.leaning)
    dice = vision.read_dice(image, profile)
    read = min(dice, key=lambda d: math.dist(d.center, leaner.center))
    assert (read.value, read.reason, read.alternatives) == (None, "cocked", (leaner.value,))
    # Without the gap's word the throw was taken as it lies.
    monkeypatch.setattr("vision.pipeline.LEAN_BRIDGED", 1.01)
    assert sorted(d.value for d in vision.read_dice(image, profile)) == sorted(
        d.value for d in truth.dice)


@pytest.mark.parametrize("seed", range(60, 68))
def test_the_gap_changes_no_flat_throw_of_the_same_towers(seed, monkeypatch) -> None:
    image, _, profile = _still_throw(seed, cocked=False)
    with_gap = vision.read_dice(image, profile)
    monkeypatch.setattr("vision.pipeline.LEAN_BRIDGED", 1.01)
    assert [(d.value, d.reason) for d in with_gap] == [
        (d.value, d.reason) for d in vision.read_dice(image, profile)]
