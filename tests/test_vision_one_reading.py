"""`vision.scene_reading.one_reading_per_die`: the readings of a scene, one per die."""

from __future__ import annotations

import numpy as np
import pytest

from vision.detect import Candidate
from vision.every_way import read_every_way
from vision.scene_reading import OFF_CENTRE, Found, one_reading_per_die
from vision.types import Die

SIDE = 30.0


def _found(value: int | None, at: tuple[float, float], source: str, sure: float = 0.9) -> Found:
    x, y = at
    h = SIDE / 2
    corners = ((x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h))
    die = (Die(value, at, corners, sure) if value is not None
           else Die(None, at, corners, 0.3, "not a pip face", (2,)))
    cand = Candidate(at, (SIDE, SIDE), 0.0, False, source)
    rank = (0, -sure) if value is not None else (1 if source != "pips" else 2, 0.0)
    return Found(die, rank, at, cand)


def _values(kept: list[Found]) -> list[int | None]:
    return [k.die.value for k in kept]


def test_a_one_read_on_a_pip_off_the_centre_of_a_found_die_is_unsure() -> None:
    # The finder's spot on a two it cannot read, and one of the two's pips read as a one.
    spot = _found(None, (100.0, 100.0), "found")
    pip = _found(1, (100.0 + 0.4 * SIDE, 100.0 + 0.4 * SIDE), "pips")
    kept = one_reading_per_die([spot, pip], SIDE)
    assert len(kept) == 1 and _values(kept) == [None]
    assert kept[0].die.reason == "not a pip face"


@pytest.mark.parametrize(("value", "source", "unsure_source", "off"), [
    (1, "pips", "found", 0.8 * OFF_CENTRE),   # a one's pip near the die's centre
    (1, "pips", "split", 1.3 * OFF_CENTRE),   # a region takes in a side face: off centre
    (1, "pips", "body", 1.3 * OFF_CENTRE),
    (1, "found", "found", 1.3 * OFF_CENTRE),  # read on a spot of its own: a die's centre
    (2, "pips", "found", 1.3 * OFF_CENTRE),   # only a one's pip must lie in the middle
])
def test_otherwise_the_read_value_stands(value, source, unsure_source, off) -> None:
    unsure = _found(None, (100.0, 100.0), unsure_source)
    read = _found(value, (100.0 + off * SIDE, 100.0), source)
    assert _values(one_reading_per_die([unsure, read], SIDE)) == [value]


def test_two_readings_of_one_die_that_disagree_make_it_unsure() -> None:
    a = _found(5, (100.0, 100.0), "body", 0.95)
    b = _found(3, (105.0, 100.0), "split", 0.9)
    assert _values(one_reading_per_die([b, a], SIDE)) == [None]
    a = _found(5, (100.0, 100.0), "body", 0.95)  # a fresh reading: the first was made unsure
    same = _found(5, (104.0, 100.0), "split", 0.9)
    assert _values(one_reading_per_die([same, a], SIDE)) == [5]


def test_readings_of_other_dice_are_kept_apart() -> None:
    a = _found(1, (100.0, 100.0), "pips")
    b = _found(None, (100.0 + 2 * SIDE, 100.0), "found")
    kept = one_reading_per_die([b, a], SIDE)
    assert _values(kept) == [1, None]


def _beliefs(value: int, sure: float) -> np.ndarray:
    probs = np.full(7, (1.0 - sure) / 6, np.float32)
    probs[value] = sure
    return probs


class _SureEveryWay:
    """A face network that gives every patch, every way turned, what it gave the patch read."""

    def __init__(self, probs: np.ndarray) -> None:
        self.probs = probs

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        return np.tile(self.probs, (len(patches), 1))


@pytest.mark.parametrize(("whole", "sure", "expected"), [
    (6, 0.95, None),  # the die cut whole is a six to the network: the three is in doubt
    (6, 0.85, 3),     # ... not sure enough to doubt it
    (3, 0.95, 3),     # the same face both ways
])
def test_a_face_read_on_a_pip_cluster_that_the_whole_die_denies_is_unsure(
        whole: int, sure: float, expected: int | None) -> None:
    # A six under glare: one column of its pips, cut around, is a three to the network, and
    # so to the colour reader; the finder's spot on the whole die is a six the pip readers
    # could not settle.
    spot = _found(None, (100.0, 100.0), "found")
    spot.probs = _beliefs(whole, sure)
    column = _found(3, (100.0 + 0.3 * SIDE, 100.0), "pips", 0.98)
    column.probs = _beliefs(3, 0.98)
    column.patch = np.zeros((32, 32, 3), np.uint8)
    kept = one_reading_per_die([spot, column], SIDE)
    assert _values(kept) == [expected]
    # The network, sure of a three on every view of the cluster's patch, does not settle it.
    kept = read_every_way(kept, _SureEveryWay(column.probs))
    assert _values(kept) == [expected]
    assert kept[0].contested == (expected is None)
