"""An unsure "die" no reader vouches for (`vision.pipeline._nothing_seen`): the finder not
sure of it and nothing read on it, it is not reported; a die the finder is sure of, a read
die and a cocked one always are."""

from __future__ import annotations

from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from vision import pipeline, read_dice
from vision.detect import Candidate
from vision.finder import SURE
from vision.lab.render import random_tray, render_tray
from vision.scene_reading import Found
from vision.types import Die

SIDE = 32.0


def _found(value: int | None, reason: str | None, source: str = "body",
           at: tuple[float, float] = (100.0, 100.0)) -> Found:
    die = Die(value, at, ((0, 0), (1, 0), (1, 1), (0, 1)), 0.3, reason)
    cand = Candidate(at, (SIDE, SIDE), 0.0, False, source)
    return Found(die, (0,), at, cand)


def _scene(*spots: tuple[tuple[float, float], float]) -> SimpleNamespace:
    """What `_nothing_seen` asks of a scene: its die side and its candidates."""
    found = [Candidate(at, (SIDE, SIDE), 0.0, False, "found", score=score)
             for at, score in spots]
    return SimpleNamespace(side=SIDE, candidates=found)


@pytest.mark.parametrize("reason", ["not a pip face", "low contrast", "occluded"])
def test_an_unsure_die_the_finder_doubts_is_nothing_seen(reason) -> None:
    doubted = _scene(((100.0, 100.0), SURE - 0.01), ((300.0, 100.0), 0.9))
    assert pipeline._nothing_seen(_found(None, reason), doubted)
    # ... and so is one the finder is sure of a die beside, not on.
    beside = _scene(((100.0 + SIDE, 100.0), 0.9))
    assert pipeline._nothing_seen(_found(None, reason), beside)


def test_what_a_reader_vouches_for_stays() -> None:
    sure = _scene(((104.0, 98.0), SURE))
    assert not pipeline._nothing_seen(_found(None, "not a pip face"), sure)
    assert not pipeline._nothing_seen(_found(None, "not a pip face", "found"), sure)
    nothing = _scene()
    assert not pipeline._nothing_seen(_found(4, None), nothing)  # read: the classic stage's
    assert not pipeline._nothing_seen(_found(None, "cocked"), nothing)  # a re-throw asked


def _tray_with_a_ring(seed: int) -> tuple[np.ndarray, list[int]]:
    """Three rendered dice and a dark ring drawn on the floor away from them (a coaster's
    print): the classic stage takes it for a die it cannot read on some trays."""
    shot = render_tray(random_tray(np.random.default_rng(300 + seed), 3, side=(40, 48)),
                       seed=seed)
    image = shot.image.copy()
    centres = [t.center for t in shot.truth]
    x, y = next(p for p in [(82, 82), (542, 82), (82, 402), (542, 402)]
                if all(np.hypot(p[0] - a, p[1] - b) > 90 for a, b in centres))
    cv2.circle(image, (x, y), 20, (40, 40, 40), 6)
    return image, sorted(t.value for t in shot.truth)


@pytest.mark.parametrize("seed", range(4))
def test_a_ring_on_the_floor_is_no_die(seed) -> None:
    image, values = _tray_with_a_ring(seed)
    dice = read_dice(image)
    assert sorted(d.value for d in dice if d.value is not None) == values
    assert len(dice) == 3, [(d.value, d.reason, d.center) for d in dice]


def test_the_ring_is_an_unsure_die_without_the_rule(monkeypatch) -> None:
    """The trays above test the rule: without it, one of them reads the ring unsure."""
    monkeypatch.setattr(pipeline, "_nothing_seen", lambda found, scene: False)
    counts = [len(read_dice(_tray_with_a_ring(seed)[0])) for seed in range(4)]
    assert max(counts) == 4
