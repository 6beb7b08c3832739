"""Keeping frames coming: a camera that fails is closed, shown as down, and reopened by itself.

`CameraLink.next_frame()` gives the next frame, or None while the camera is down; it reopens
the camera after 0.5, 1 and 2 seconds, then every 5 seconds, and never raises. It tells its
owner when the camera goes down (with the sentence of its `CameraError`) and when it is back,
so the tower can show it; the game itself never depends on the camera being there.

The camera is back when a frame was read, not when it opened: one that opens but gives no
frame stays down and is retried ever more slowly, instead of flapping to ready twice a second.

While a calibration borrows the camera, a `FrameTap` stands in the link's place.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from firmware_host.camera import CameraError, CameraSource, Frame

log = logging.getLogger(__name__)

RECONNECT_DELAYS = (0.5, 1.0, 2.0, 5.0)  # seconds between camera retries, then 5 s each
FRAME_TIMEOUT = 5.0  # seconds without a frame before the camera counts as stopped
POLL = 0.05  # seconds the loop waits for a request before it checks its stop event again


class CameraLink:
    """The controller's side of ``camera``: frames in, down and back reported."""

    def __init__(self, camera: CameraSource, *, on_down: Callable[[str], None],
                 on_back: Callable[[], None], sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.camera = camera
        self.on_down = on_down
        self.on_back = on_back
        self.sleep = sleep
        self.clock = clock
        self.down: str | None = None  # why the camera is down, or None
        self.errors = 0
        self._retries = 0
        self._retry_at = 0.0

    def next_frame(self) -> Frame | None:
        """The next frame, or None while the camera is down (it is reopened in time)."""
        if not self.camera.is_open:
            wait = self._retry_at - self.clock()
            if wait > 0:
                self.sleep(min(wait, 0.05))
                return None
            try:
                self.camera.open()
            except CameraError as exc:
                self._failed(str(exc))
                return None
        try:
            frame = self.camera.read()
        except CameraError as exc:
            self._failed(str(exc))
            return None
        if self.down is not None:
            self._back()
        return frame

    def _failed(self, detail: str) -> None:
        self.errors += 1
        self.camera.close()
        delay = RECONNECT_DELAYS[min(self._retries, len(RECONNECT_DELAYS) - 1)]
        self._retries += 1
        self._retry_at = self.clock() + delay
        if self.down != detail:
            log.warning("camera: %s", detail)
        self.down = detail
        self.on_down(detail)
        self.sleep(min(delay, 0.05))

    def _back(self) -> None:
        log.info("camera: back")
        self.down = None
        self._retries = 0
        self.on_back()


class FrameTap:
    """Stands in for the controller's camera link while a calibration borrows the camera.

    `next_frame` is called by the loop's thread: it reads a frame only when the calibration
    asked for one (`read`, from its own thread), hands it over, and gives the loop nothing to
    judge. Written here rather than with a queue of frames: a frame read while nobody asks
    would be thrown away, and a simulated camera draws each one.
    """

    def __init__(self, link: Any, poll: float = POLL) -> None:
        self.link = link
        self.poll = poll
        self._asked = threading.Event()
        self._given = threading.Event()
        self._frame: Frame | None = None
        self._reader = threading.Lock()  # one request at a time

    @property
    def down(self) -> Any:
        return self.link.down

    @property
    def errors(self) -> int:
        return int(self.link.errors)

    def next_frame(self) -> None:
        """The loop's turn: serve a request if there is one; never a frame for the game."""
        if not self._asked.wait(self.poll):
            return None
        frame = self.link.next_frame()  # None while the camera is down: asked again next turn
        if frame is not None:
            self._asked.clear()
            self._frame = frame
            self._given.set()
        return None

    def read(self, timeout: float = FRAME_TIMEOUT) -> Frame:
        """The next frame, read by the loop; `CameraError` when none comes in ``timeout``."""
        with self._reader:
            self._given.clear()
            self._asked.set()
            if not self._given.wait(timeout):
                self._asked.clear()
                raise CameraError(f"no frame from the camera within {timeout:.0f} s")
            frame = self._frame
            assert frame is not None
            return frame
