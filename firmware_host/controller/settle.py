"""Settle detection: when the dice in the tray are still, and what several readings agree on.

Motion is watched on a small grey copy of each frame (or the camera's own low-resolution
stream), compared with the frame that began the current still period: a slow drift is caught
as surely as a bounce. A throw is read only once the tray has been still for ``hold`` seconds
of frame time, and only when ``agree`` readings of different frames say the same (each die at
the same place with the same value, or unsure for the same reason). A tray that was already
read is not read again until something moves.

With an empty-tray image (from the profile) the watcher also sees what is in the tray besides
the dice found: a hand, a glass, a phone. Such a scene gives no reading; it waits.

The watcher is pure: frames in, `Outcome`s out; `read` (the vision pipeline) is injected.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from firmware_host.camera import Frame
from firmware_host.camera.motion import moved, small_grey
from vision import Die

FOREIGN_LEVEL = 28  # grey levels off the empty tray that make a small pixel "something there"
FOREIGN_DICE = 1.5  # area, in dice, of something there besides the dice, that stops a reading
TIME_SLACK = 1e-6  # seconds: frame times are sums of floats; 6/15 s must count as 0.4 s
MAX_READS = 6  # readings of one still tray before giving up on agreement
GIVE_UP_OBSTRUCTED = 6.0  # seconds of frame time something foreign may lie still in the tray


@dataclass(frozen=True)
class Outcome:
    """What the watcher saw in a frame that matters to the controller.

    ``kind``: "moving" (motion began), "reading" (dice agreed on), "obstructed" (something
    that is not a die lies in the tray; said once per still period, and again with ``final``
    when it has not gone after `GIVE_UP_OBSTRUCTED` seconds), "unsteady" (readings of the
    still tray kept disagreeing). ``dice`` and ``frame`` come with a reading;
    ``still_since`` is the frame time the stillness began (latency is measured from it).
    """

    kind: str
    dice: tuple[Die, ...] = ()
    frame: Frame | None = None
    still_since: float = 0.0
    reason: str = ""
    readings: int = 0
    final: bool = False


@dataclass
class _Still:
    since: float
    reference: np.ndarray
    readings: list[tuple[Die, ...]] = field(default_factory=list)
    done: bool = False
    next_read: float = 0.0  # frame time of the next reading (a hold after an obstruction)
    obstructed: int = 0


def same_reading(a: Sequence[Die], b: Sequence[Die], side: float | None = None) -> bool:
    """Whether two readings show the same dice: as many, each at the same place (within half
    a die) with the same value, or unsure for the same reason."""
    if len(a) != len(b):
        return False
    if not a:
        return True
    reach = 0.5 * (side or _typical_side(a))
    left = list(b)
    for die in a:
        match = min(left, key=lambda other: math.dist(die.center, other.center))
        if math.dist(die.center, match.center) > reach:
            return False
        if (die.value, die.reason) != (match.value, match.reason):
            return False
        left.remove(match)
    return True


def _typical_side(dice: Sequence[Die]) -> float:
    sides = [math.dist(d.corners[0], d.corners[1]) for d in dice]
    return float(np.median(sides)) if sides else 20.0


class SettleWatcher:
    """Feed it every frame (`feed`); it says when a still tray has been read the same enough.

    ``read`` turns a BGR image into dice (the vision pipeline with the tower's profile).
    ``empty_tray`` (BGR, the camera's size) lets it see things that are not dice.
    """

    def __init__(self, read: Callable[[np.ndarray], list[Die]], *, hold: float = 0.4,
                 agree: int = 2, empty_tray: np.ndarray | None = None) -> None:
        if hold < 0 or agree < 1:
            raise ValueError("hold must be >= 0 seconds and agree at least 1 reading")
        self.read = read
        self.hold = hold
        self.agree = agree
        self._empty: np.ndarray | None = None
        if empty_tray is not None:
            self.set_empty_tray(empty_tray)
        self._still: _Still | None = None
        self._moving = False  # the last frame moved: "moving" was said, not again until still
        self._last_at: float | None = None
        self._interval = 0.0  # typical time between frames, learnt from the frames themselves
        self.reads = 0  # readings made, for benchmarks

    def set_empty_tray(self, image: np.ndarray | None) -> None:
        self._empty = None if image is None else small_grey(Frame(image, 0.0, 0))

    def reset(self) -> None:
        """Forget the still period: the next still tray is read even if it was read before
        (after a reconnect, or when the game asks for the same tray to be judged again)."""
        self._still = None

    def feed(self, frame: Frame) -> Outcome | None:
        """Look at the next frame; an `Outcome` when something the controller must act on."""
        small = small_grey(frame)
        # Learnt on every frame: a gap spanning a throw's motion is no frame interval.
        interval = self._frame_interval(frame.at)
        still = self._still
        if still is None or moved(still.reference, small):
            began = still is not None and not self._moving
            self._moving = still is not None
            self._still = _Still(since=frame.at, reference=small)
            return Outcome("moving") if began else None
        self._moving = False
        still_for = frame.at - still.since + TIME_SLACK
        # The readings that must agree are taken on the last frames of the hold, the last one
        # on the first frame past it: waiting for the whole hold before the first reading
        # would add a frame interval per extra reading to every throw.
        first_read = self.hold - (self.agree - 1) * interval
        if still.done or still_for < first_read or frame.at < still.next_read:
            return None
        dice = tuple(self.read(frame.image))
        self.reads += 1
        if self._empty is not None and not still.readings:
            foreign = self._foreign(small, frame.image.shape[:2], dice)
            if foreign is not None:
                # Looked at again after another hold: a hand that rests still for a moment
                # must not stop the tower for good, nor be read with the dice.
                still.obstructed += 1
                still.next_read = frame.at + self.hold
                final = frame.at - still.since >= GIVE_UP_OBSTRUCTED
                still.done = final
                if still.obstructed == 1 or final:
                    return Outcome("obstructed", frame=frame, still_since=still.since,
                                   reason=foreign, final=final)
                return None
        still.readings.append(dice)
        recent = still.readings[-self.agree:]
        if (len(recent) == self.agree and still_for >= self.hold
                and all(same_reading(recent[0], r) for r in recent[1:])):
            still.done = True
            return Outcome("reading", dice=dice, frame=frame, still_since=still.since,
                           readings=len(still.readings))
        if len(still.readings) >= MAX_READS:
            still.done = True
            return Outcome("unsteady", frame=frame, still_since=still.since,
                           readings=len(still.readings))
        return None

    def _frame_interval(self, at: float) -> float:
        """The typical frame interval so far (0 until two frames were seen)."""
        if self._last_at is not None and at > self._last_at:
            step = at - self._last_at
            self._interval = step if self._interval == 0 else 0.8 * self._interval + 0.2 * step
        self._last_at = at
        return min(self._interval, self.hold)

    def _foreign(self, small: np.ndarray, shape: tuple[int, ...],
                 dice: Sequence[Die]) -> str | None:
        """"hand" when more than the dice found differs from the empty tray, else None."""
        empty = self._empty
        if empty is None or empty.shape != small.shape:
            return None
        changed = (cv2.absdiff(small, empty) > FOREIGN_LEVEL).astype(np.uint8)
        scale = small.shape[1] / shape[1]
        side = (_typical_side(dice) if dice else max(shape[:2]) / 16) * scale
        # Each die found, with its shadow and side faces, accounts for what differs around it.
        for die in dice:
            centre = (round(die.center[0] * scale), round(die.center[1] * scale))
            cv2.circle(changed, centre, max(1, round(1.1 * side)), 0, -1)
        if np.count_nonzero(changed) > FOREIGN_DICE * side * side:
            return "hand"
        return None
