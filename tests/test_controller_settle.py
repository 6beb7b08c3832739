"""Settle detection on synthetic frames: a tray drawn with numpy and OpenCV, sensor noise
added, and a stand-in for the vision pipeline that says which dice it "reads"."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import pytest

from firmware_host.camera import Frame
from firmware_host.controller.settle import (
    GIVE_UP_OBSTRUCTED,
    MAX_READS,
    Outcome,
    SettleWatcher,
    moved,
    same_reading,
    small_grey,
)
from vision import Die

W, H = 320, 240
SIDE = 28.0
SPOTS = [(100.0, 100.0), (160.0, 150.0), (220.0, 90.0)]


def die(value: int | None, at: tuple[float, float], reason: str | None = None,
        side: float = SIDE) -> Die:
    x, y = at
    h = side / 2
    return Die(value, (x, y), ((x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h)),
               0.9 if value else 0.2, reason)


class Tray:
    """A felt tray seen from above; dice are light squares, a hand a big skin-coloured blob.
    Every frame gets fresh sensor noise (seeded)."""

    def __init__(self, fps: float = 10.0, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        texture = self.rng.normal(0, 4, (H, W, 3))
        self.empty = np.clip(np.full((H, W, 3), (60, 90, 70), np.float32) + texture, 0, 255
                             ).astype(np.uint8)
        self.fps = fps
        self.count = 0

    def scene(self, dice: Sequence[tuple[float, float]] = (), *, hand: bool = False,
              shift: float = 0.0) -> np.ndarray:
        """The tray with dice centred at ``dice`` (moved ``shift`` px to the right, sub-pixel
        exact) and maybe a hand."""
        layer = np.zeros((H, W), np.float32)
        for x, y in dice:
            h = int(SIDE / 2)
            cv2.rectangle(layer, (int(x) - h, int(y) - h), (int(x) + h, int(y) + h), 1.0, -1)
        if shift:
            move = np.float32([[1, 0, shift], [0, 1, 0]])
            layer = cv2.warpAffine(layer, move, (W, H), flags=cv2.INTER_LINEAR)
        alpha = layer[:, :, None]
        image = self.empty.astype(np.float32) * (1 - alpha) + 235.0 * alpha
        if hand:
            cv2.ellipse(image, (W - 30, H // 2), (90, 45), 0, 0, 360, (120, 150, 205), -1)
        return np.clip(image, 0, 255).astype(np.uint8)

    def frame(self, image: np.ndarray) -> Frame:
        noisy = np.clip(image.astype(np.float32) + self.rng.normal(0, 2, image.shape), 0, 255)
        frame = Frame(noisy.astype(np.uint8), self.count / self.fps, self.count)
        self.count += 1
        return frame


class Reader:
    """Stands in for the vision pipeline: answers ``dice``, or the next of ``queue``."""

    def __init__(self, dice: Sequence[Die] = ()) -> None:
        self.dice = list(dice)
        self.queue: list[list[Die]] = []
        self.calls = 0

    def __call__(self, image: np.ndarray) -> list[Die]:
        assert image.shape == (H, W, 3)
        self.calls += 1
        return list(self.queue.pop(0) if self.queue else self.dice)


THREE = [die(v, at) for v, at in zip((4, 2, 1), SPOTS, strict=True)]


def feed(watcher: SettleWatcher, tray: Tray, image: np.ndarray, frames: int
         ) -> list[tuple[Frame, Outcome | None]]:
    seen = []
    for _ in range(frames):
        frame = tray.frame(image)
        seen.append((frame, watcher.feed(frame)))
    return seen


def outcomes(seen: list[tuple[Frame, Outcome | None]], moving: bool = False) -> list[str]:
    """The outcomes said, without "moving" unless asked (the tests of motion ask)."""
    return [o.kind for _, o in seen if o is not None and (moving or o.kind != "moving")]


def tumble(watcher: SettleWatcher, tray: Tray, frames: int = 6) -> list[str]:
    """Dice bouncing: each frame they are somewhere else."""
    kinds = []
    for k in range(frames):
        spots = [(x + 23 * ((k + i) % 3) - 20, y + 17 * ((k * 2 + i) % 3) - 15)
                 for i, (x, y) in enumerate(SPOTS)]
        outcome = watcher.feed(tray.frame(tray.scene(spots)))
        kinds.append(outcome.kind if outcome else "-")
    return kinds


# ---------------------------------------------------------------------- motion, hold, agreement


def test_no_reading_while_moving_and_moving_said_once() -> None:
    tray, reader = Tray(), Reader(THREE)
    watcher = SettleWatcher(reader, hold=0.4, agree=2)
    feed(watcher, tray, tray.scene(), 2)  # an empty still tray, read once
    calls = reader.calls
    kinds = tumble(watcher, tray, 8)
    assert kinds == ["moving"] + ["-"] * 7  # said when motion began, not every frame
    assert reader.calls == calls


def test_read_once_still_for_the_hold_and_agreed() -> None:
    tray, reader = Tray(fps=10.0), Reader(THREE)
    watcher = SettleWatcher(reader, hold=0.4, agree=2)
    tumble(watcher, tray)
    seen = feed(watcher, tray, tray.scene(SPOTS), 10)
    readings = [(f, o) for f, o in seen if o is not None and o.kind != "moving"]
    assert [o.kind for _, o in readings] == ["reading"]
    frame, outcome = readings[0]
    since = seen[0][0].at  # the first frame of the still tray
    assert outcome.still_since == pytest.approx(since)
    assert frame.at - since >= 0.4 - 1e-9
    assert frame.at - since < 0.4 + 0.1 + 1e-9  # on the first frame past the hold
    assert outcome.frame is frame and outcome.dice == tuple(THREE)
    assert outcome.readings >= 2 and reader.calls >= 2
    assert watcher.reads == reader.calls


@pytest.mark.parametrize("hold, fps", [(0.4, 10.0), (1.0, 15.0), (0.25, 30.0)])
def test_no_reading_before_the_hold_in_frame_time(hold: float, fps: float) -> None:
    tray, reader = Tray(fps=fps), Reader(THREE)
    watcher = SettleWatcher(reader, hold=hold, agree=2)
    tumble(watcher, tray)
    seen = feed(watcher, tray, tray.scene(SPOTS), int(hold * fps) + 3)
    since = seen[0][0].at
    for frame, outcome in seen:
        if outcome is not None and outcome.kind != "moving":
            assert outcome.kind == "reading"
            assert frame.at - since >= hold - 1e-6
    assert outcomes(seen) == ["reading"]


def test_readings_must_agree() -> None:
    tray, reader = Tray(), Reader(THREE)
    other = [die(5, SPOTS[0]), *THREE[1:]]
    reader.queue = [list(THREE), other, list(THREE)]  # then THREE for good
    watcher = SettleWatcher(reader, hold=0.3, agree=2)
    tumble(watcher, tray)
    seen = feed(watcher, tray, tray.scene(SPOTS), 12)
    reading = [o for _, o in seen if o is not None and o.kind != "moving"]
    assert [o.kind for o in reading] == ["reading"]
    assert reading[0].readings == 4 and reading[0].dice == tuple(THREE)


def test_three_must_agree_when_asked() -> None:
    tray, reader = Tray(), Reader(THREE)
    moved_die = [die(4, (SPOTS[0][0] + 20, SPOTS[0][1])), *THREE[1:]]  # beyond half a die
    reader.queue = [list(THREE), list(THREE), moved_die]
    watcher = SettleWatcher(reader, hold=0.3, agree=3)
    tumble(watcher, tray)
    reading = [o for _, o in feed(watcher, tray, tray.scene(SPOTS), 12)
               if o is not None and o.kind != "moving"]
    assert [(o.kind, o.readings) for o in reading] == [("reading", 6)]


def test_readings_that_never_agree_are_unsteady() -> None:
    tray, reader = Tray(), Reader()
    reader.queue = [[die(k % 6 + 1, SPOTS[0])] for k in range(20)]
    watcher = SettleWatcher(reader, hold=0.2, agree=2)
    tumble(watcher, tray)
    seen = feed(watcher, tray, tray.scene(SPOTS), 20)
    kinds = [o for _, o in seen if o is not None and o.kind != "moving"]
    assert [(o.kind, o.readings) for o in kinds] == [("unsteady", MAX_READS)]
    assert reader.calls == MAX_READS  # and no more: it gave up on this still tray


def test_a_still_tray_is_read_once_until_something_moves() -> None:
    tray, reader = Tray(), Reader(THREE)
    watcher = SettleWatcher(reader, hold=0.3, agree=2)
    tumble(watcher, tray)
    assert outcomes(feed(watcher, tray, tray.scene(SPOTS), 10)) == ["reading"]
    calls = reader.calls
    assert outcomes(feed(watcher, tray, tray.scene(SPOTS), 40)) == []
    assert reader.calls == calls
    # The same dice thrown again, landing on the same spots: motion between, so read again.
    assert tumble(watcher, tray)[0] == "moving"
    assert outcomes(feed(watcher, tray, tray.scene(SPOTS), 10)) == ["reading"]
    # And a reset (a reconnect) reads the same still tray again without motion.
    watcher.reset()
    assert outcomes(feed(watcher, tray, tray.scene(SPOTS), 10)) == ["reading"]


def test_a_slow_drift_is_motion() -> None:
    tray, reader = Tray(fps=30.0), Reader(THREE)
    watcher = SettleWatcher(reader, hold=0.4, agree=2)
    step = 0.2  # pixels a frame: two frames in a row look alike...
    a = small_grey(Frame(tray.scene(SPOTS), 0.0, 0))
    b = small_grey(Frame(tray.scene(SPOTS, shift=step), 0.0, 0))
    far = small_grey(Frame(tray.scene(SPOTS, shift=12 * step), 0.0, 0))
    assert not moved(a, b) and moved(a, far)  # ...but not frames further apart
    tumble(watcher, tray)
    kinds = []
    for k in range(60):  # two seconds of drift: far longer than the hold
        outcome = watcher.feed(tray.frame(tray.scene(SPOTS, shift=k * step)))
        kinds.append(outcome.kind if outcome else "-")
    assert "reading" not in kinds and kinds.count("moving") >= 5
    assert reader.calls == 0
    # Once it stops, it is read.
    assert outcomes(feed(watcher, tray, tray.scene(SPOTS, shift=60 * step), 15)) == ["reading"]


def test_motion_is_judged_on_the_cameras_small_copy() -> None:
    tray, reader = Tray(), Reader(THREE)
    watcher = SettleWatcher(reader, hold=0.3, agree=2)
    small = tray.scene(SPOTS)[::4, ::4].copy()
    kinds = []
    for k in range(10):
        # The full picture changes every frame; the camera's own small copy does not.
        image = tray.scene([(x + 15 * (k % 2), y) for x, y in SPOTS])
        outcome = watcher.feed(Frame(image, k / 10, k, small=small))
        kinds.append(outcome.kind if outcome else "-")
    assert kinds.count("reading") == 1 and "moving" not in kinds


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="hold"):
        SettleWatcher(Reader(), hold=-0.1)
    with pytest.raises(ValueError, match="agree"):
        SettleWatcher(Reader(), agree=0)


# ---------------------------------------------------------------------- obstruction


def test_dice_alone_on_the_empty_tray_are_not_an_obstruction() -> None:
    tray, reader = Tray(), Reader(THREE)
    watcher = SettleWatcher(reader, hold=0.3, agree=2, empty_tray=tray.empty)
    tumble(watcher, tray)
    assert outcomes(feed(watcher, tray, tray.scene(SPOTS), 10)) == ["reading"]


def test_a_hand_that_stays_is_obstructed_once_then_final() -> None:
    tray, reader = Tray(), Reader(THREE)
    watcher = SettleWatcher(reader, hold=0.4, agree=2, empty_tray=tray.empty)
    tumble(watcher, tray)
    frames = int(GIVE_UP_OBSTRUCTED * tray.fps) + 10
    seen = feed(watcher, tray, tray.scene(SPOTS, hand=True), frames)
    since = seen[0][0].at
    said = [(f, o) for f, o in seen if o is not None and o.kind != "moving"]
    assert [(o.kind, o.reason, o.final) for _, o in said] == [
        ("obstructed", "hand", False), ("obstructed", "hand", True)]
    first, final = said[0][0], said[1][0]
    assert first.at - since < 1.0
    assert final.at - since >= GIVE_UP_OBSTRUCTED - 1e-9
    assert final.at - since < GIVE_UP_OBSTRUCTED + 0.4 + 0.1 + 1e-9
    # Looked at again now and then (not on every frame), never once it gave up.
    assert 2 < reader.calls < frames // 2
    calls = reader.calls
    assert outcomes(feed(watcher, tray, tray.scene(SPOTS, hand=True), 20)) == []
    assert reader.calls == calls


def test_a_hand_that_leaves_lets_the_dice_be_read() -> None:
    tray, reader = Tray(), Reader(THREE)
    watcher = SettleWatcher(reader, hold=0.4, agree=2, empty_tray=tray.empty)
    tumble(watcher, tray)
    kinds = outcomes(feed(watcher, tray, tray.scene(SPOTS, hand=True), 12))
    assert kinds == ["obstructed"]
    seen = feed(watcher, tray, tray.scene(SPOTS), 10)
    said = [o for _, o in seen if o is not None]
    assert [o.kind for o in said] == ["moving", "reading"]  # the hand going is motion
    assert said[1].dice == tuple(THREE)


def test_a_hand_resting_briefly_is_read_after_it_goes() -> None:
    """The hand rests still for less than the give-up time: one notice, no final refusal."""
    tray, reader = Tray(), Reader(THREE)
    watcher = SettleWatcher(reader, hold=0.4, agree=2, empty_tray=tray.empty)
    tumble(watcher, tray)
    kinds = outcomes(feed(watcher, tray, tray.scene(SPOTS, hand=True), 30))
    assert kinds == ["obstructed"]
    assert outcomes(feed(watcher, tray, tray.scene(SPOTS), 10), moving=True) == [
        "moving", "reading"]


def test_an_empty_tray_of_another_size_is_ignored() -> None:
    tray, reader = Tray(), Reader(THREE)
    watcher = SettleWatcher(reader, hold=0.3, agree=2,
                            empty_tray=cv2.resize(tray.empty, (W // 2, H)))
    tumble(watcher, tray)
    assert outcomes(feed(watcher, tray, tray.scene(SPOTS, hand=True), 10)) == ["reading"]


# ---------------------------------------------------------------------- same_reading


def test_same_reading() -> None:
    a = [die(4, (100, 100)), die(2, (200, 100)), die(None, (150, 180), "cocked")]
    nudged = [die(None, (153, 176), "cocked"), die(4, (108, 95)), die(2, (195, 104))]
    assert same_reading(a, nudged)  # in any order, each within half a die
    assert same_reading([], [])
    assert not same_reading(a, a[:2])
    assert not same_reading(a, [die(4, (100 + SIDE * 0.6, 100)), *a[1:]])  # past half a die
    assert not same_reading(a, [die(5, (100, 100)), *a[1:]])
    assert not same_reading(a, [*a[:2], die(None, (150, 180), "blurred")])
    assert not same_reading(a, [*a[:2], die(3, (150, 180))])
    # Two dice of the same value swapped with a third: each must find its own partner.
    twins = [die(6, (100, 100)), die(6, (130, 100)), die(1, (300, 300))]
    assert not same_reading(twins, [die(6, (100, 100)), die(1, (130, 100)), die(6, (300, 300))])
    # The reach follows the dice's size, or the size given.
    assert same_reading([die(3, (100, 100), side=60)], [die(3, (125, 100), side=60)])
    assert not same_reading([die(3, (100, 100))], [die(3, (125, 100))])
    assert same_reading([die(3, (100, 100))], [die(3, (125, 100))], side=60)
