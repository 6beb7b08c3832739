"""`vision.every_way`: a reading that a turn of the patch would change is unsure, and one no
turn changes stands on the network alone."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.combined import EVERY_WAY
from vision.detect import Candidate
from vision.every_way import EVERY_WAY_LEAST, EVERY_WAY_SURE, STEADY_SURE, read_every_way, steady
from vision.scene_reading import Found
from vision.straightening import FACE_PER_PITCH, PATCH_SCALE, PATCH_SIDE
from vision.types import Die

CORNERS = ((0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0))


def _beliefs(value: int, sure: float) -> np.ndarray:
    probs = np.full(7, (1.0 - sure) / 6.0, np.float32)
    probs[value] = sure
    return probs


class _TurnedNet:
    """A face network that reads every turned or mirrored view as ``value``."""

    def __init__(self, value: int) -> None:
        self.value, self.seen = value, 0

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        self.seen += len(patches)
        return np.stack([_beliefs(self.value, 0.9) for _ in patches])


class _HesitantNet:
    """A face network that gives every turned or mirrored view ``held`` for ``value`` and
    the rest to ``other``."""

    def __init__(self, value: int, held: float, other: int) -> None:
        self.probs = np.zeros(7, np.float32)
        self.probs[value], self.probs[other] = held, 1.0 - held

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        return np.stack([self.probs for _ in patches])


def _found(value: int, sure: float, patch: np.ndarray | None = None) -> Found:
    die = Die(value, (5.0, 5.0), CORNERS, 0.9)
    cand = Candidate((5.0, 5.0), (10.0, 10.0), 0.0, False, "found")
    patch = np.zeros((24, 24, 3), np.uint8) if patch is None else patch
    return Found(die, (0,), (5.0, 5.0), cand, patch=patch, probs=_beliefs(value, sure))


_GRID = {2: [(-1, -1), (1, 1)],
         4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
         5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)]}


def _straightened_die(value: int) -> np.ndarray:
    """A straightened patch of an ivory die with dark pips on a green floor, as
    `vision.straightening` cuts one."""
    size = round(PATCH_SIDE * PATCH_SCALE)
    patch = np.full((size, size, 3), (60, 120, 60), np.uint8)
    c, half, pitch = size / 2.0, PATCH_SIDE / 2.0, PATCH_SIDE / FACE_PER_PITCH
    cv2.rectangle(patch, (round(c - half), round(c - half)), (round(c + half), round(c + half)),
                  (235, 235, 230), -1)
    for gx, gy in _GRID[value]:
        cv2.circle(patch, (round(c + gx * pitch), round(c + gy * pitch)),
                   round(0.1 * PATCH_SIDE), (30, 30, 30), -1, cv2.LINE_AA)
    return patch


def test_a_die_read_otherwise_when_turned_is_unsure() -> None:
    net = _TurnedNet(value=2)
    shaky = _found(4, sure=0.6)
    steady([shaky], net)
    assert shaky.die.value is None and shaky.die.reason == "not a pip face"
    assert shaky.die.alternatives == (4, 2)
    assert net.seen == EVERY_WAY - 1


def test_a_die_read_alike_every_way_keeps_its_value() -> None:
    held = _found(4, sure=0.6)
    steady([held], _TurnedNet(value=4))
    assert held.die.value == 4


def test_a_die_the_network_is_sure_of_is_not_turned() -> None:
    net = _TurnedNet(value=2)
    sure = _found(4, sure=STEADY_SURE)
    steady([sure], net)
    assert sure.die.value == 4 and net.seen == 0


def test_a_face_both_pip_readers_count_holds_while_the_network_allows_it() -> None:
    # Turned, the network prefers a two but still gives the four 0.3: the pip readers, which
    # find the same four pips however the patch is turned, keep it.
    held = _found(4, sure=0.6, patch=_straightened_die(4))
    steady([held], _HesitantNet(4, held=0.3, other=2), "dark")
    assert held.die.value == 4


@pytest.mark.parametrize(("read", "drawn", "polarity", "held"), [
    (4, 4, "dark", 0.05),   # the network rules the four out, turned
    (4, 5, "dark", 0.3),    # the pip readers count five
    (4, 4, "light", 0.3),   # no light pips there
    (2, 2, "dark", 0.3),    # two pips: glare may hide the others from both pip readers
])
def test_the_pip_readers_hold_only_their_own_value_that_the_network_allows(
    read: int, drawn: int, polarity: str, held: float
) -> None:
    shaky = _found(read, sure=0.6, patch=_straightened_die(drawn))
    other = 6 if read == 2 else 2
    net = _HesitantNet(read, held=held, other=other)
    steady([shaky], net, polarity)
    assert shaky.die.value is None and shaky.die.alternatives == (read, other)


class _ViewsNet:
    """A face network that gives each of the views it is shown, in turn, the beliefs of
    ``views`` (a patch's seven `other_views`: the beliefs as cut are the reading's)."""

    def __init__(self, views: list[np.ndarray]) -> None:
        self.views, self.seen = views, 0

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        out = [self.views[(self.seen + k) % len(self.views)] for k in range(len(patches))]
        self.seen += len(patches)
        return np.stack(out)


def _unsure(as_cut: np.ndarray, reason: str = "not a pip face") -> Found:
    die = Die(None, (5.0, 5.0), CORNERS, 0.2, reason, (6, 5))
    cand = Candidate((5.0, 5.0), (10.0, 10.0), 0.0, False, "found")
    return Found(die, (1, 0.0), (5.0, 5.0), cand, patch=np.zeros((24, 24, 3), np.uint8),
                 probs=as_cut)


def test_a_die_the_network_reads_alike_every_way_is_read() -> None:
    sure = _beliefs(6, EVERY_WAY_SURE + 0.02)
    found = _unsure(sure)
    read_every_way([found], _ViewsNet([sure]))
    assert found.die.value == 6 and found.die.reason is None
    assert found.die.confidence == pytest.approx(EVERY_WAY_SURE + 0.02)


@pytest.mark.parametrize("turned", [
    _beliefs(5, 0.6),                     # one view reads a five
    _beliefs(6, 0.45),                    # one view doubts the six
])
def test_a_die_one_view_reads_otherwise_stays_unsure(turned: np.ndarray) -> None:
    views = [_beliefs(6, 0.95)] * (EVERY_WAY - 2) + [turned]
    found = _unsure(_beliefs(6, 0.95))
    read_every_way([found], _ViewsNet(views))
    assert found.die.value is None and found.die.reason == "not a pip face"


def test_a_face_of_few_pips_or_a_cocked_die_is_not_read_on_the_network_alone() -> None:
    few = _unsure(_beliefs(EVERY_WAY_LEAST - 1, 0.99))
    read_every_way([few], _ViewsNet([_beliefs(EVERY_WAY_LEAST - 1, 0.99)]))
    assert few.die.value is None
    cocked = _unsure(_beliefs(6, 0.99), "cocked")
    net = _ViewsNet([_beliefs(6, 0.99)])
    read_every_way([cocked], net)
    assert cocked.die.value is None and net.seen == 0


def test_read_dice_are_left_as_they_are() -> None:
    net = _ViewsNet([_beliefs(6, 0.99)])
    read = _found(4, sure=0.6)
    assert read_every_way([read], net) == [read]
    assert read.die.value == 4 and net.seen == 0


def test_one_pass_of_the_network_reads_every_view_of_every_unsure_die() -> None:
    # The beliefs as cut come with the reading: only the seven other views are asked.
    net = _ViewsNet([_beliefs(4, 0.97)])
    dice = [_unsure(_beliefs(4, 0.97)), _unsure(_beliefs(4, 0.97))]
    read_every_way(dice, net)
    assert [f.die.value for f in dice] == [4, 4] and net.seen == 2 * (EVERY_WAY - 1)


def test_a_die_not_that_sure_as_cut_is_not_turned() -> None:
    net = _ViewsNet([_beliefs(6, 0.99)])
    found = _unsure(_beliefs(6, EVERY_WAY_SURE - 0.05))
    read_every_way([found], net)
    assert found.die.value is None and net.seen == 0
