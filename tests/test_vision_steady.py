"""`vision.scene_reading.steady`: a reading that a turn of the patch would change is unsure."""

from __future__ import annotations

import numpy as np

from vision.detect import Candidate
from vision.scene_reading import EVERY_WAY, STEADY_SURE, Found, steady
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


def _found(value: int, sure: float) -> Found:
    die = Die(value, (5.0, 5.0), CORNERS, 0.9)
    cand = Candidate((5.0, 5.0), (10.0, 10.0), 0.0, False, "found")
    patch = np.zeros((24, 24, 3), np.uint8)
    return Found(die, (0,), (5.0, 5.0), cand, patch=patch, probs=_beliefs(value, sure))


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
