"""A camera through OpenCV's `cv2.VideoCapture`: a USB webcam, a video file or a network stream.

    VideoCaptureCamera(0)                          # the first webcam (/dev/video0)
    VideoCaptureCamera("tray.mp4", realtime=False) # a recorded session, as fast as it reads
    VideoCaptureCamera("rtsp://192.0.2.7/stream")  # an IP camera

A device or a stream that stops answering gives a `CameraError` after ``timeout`` seconds
(OpenCV's own open and read time-outs, where its backend honours them) instead of hanging the
controller; a file that ends gives one that says so.

A webcam (a device index) is locked like the Pi camera where its driver allows it: ``size``
and ``fps`` are asked for, then with ``lock`` auto exposure, auto white balance and autofocus
are switched off after ``warm_up`` seconds of frames (so the picture keeps what they found),
and ``controls`` given in picamera2's units are applied where a V4L2 property means the same
(``ExposureTime`` in microseconds becomes ``CAP_PROP_EXPOSURE`` in V4L2's 100 µs steps).
Gains and lens positions have no common unit across webcam drivers and are not sent. Each
property the driver refuses (``VideoCapture.set`` returns False) is said in one log line: the
camera then keeps adjusting it by itself.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import cv2
import numpy as np

from firmware_host.camera.base import CameraError, CameraSource

log = logging.getLogger(__name__)

# V4L2's exposure menu as OpenCV's V4L2 backend passes it through: 1 manual, 3 automatic.
V4L2_MANUAL_EXPOSURE = 1
V4L2_EXPOSURE_STEP_US = 100  # exposure_time_absolute counts 100 µs steps
UNMAPPED = ("AnalogueGain", "ColourGains", "LensPosition")  # no common unit on webcams


class VideoCaptureCamera(CameraSource):
    """Frames from `cv2.VideoCapture(source)`; `source` is a device index, a path or a URL."""

    def __init__(self, source: int | str, *, timeout: float = 5.0, realtime: bool = True,
                 loop: bool = False, size: tuple[int, int] | None = None,
                 fps: float | None = None, controls: dict[str, Any] | None = None,
                 lock: bool = False, warm_up: float = 1.0) -> None:
        super().__init__()
        self.source = source
        self.size = size
        self.fps = fps
        self.lock = lock
        self.warm_up = warm_up
        self._wanted: dict[str, Any] = dict(controls or {})
        self.locked: dict[str, Any] = {}
        self.timeout = timeout
        self.realtime = realtime
        self.loop = loop
        self.is_file = isinstance(source, str) and "://" not in source
        self.name = f"camera {source!r}"
        self._capture: Any = None
        self._start = 0.0
        self._offset = 0.0  # frame time of the loops already replayed
        self._last = -1.0  # frame time of the last frame given (files)

    def _open(self) -> None:
        # OpenCV logs each failed attempt at a missing device itself, several lines a try;
        # the CameraError below says it once, in words the owner can act on.
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
        millis = int(self.timeout * 1000)
        params = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, millis, cv2.CAP_PROP_READ_TIMEOUT_MSEC, millis]
        try:
            capture = cv2.VideoCapture(self.source, cv2.CAP_ANY, params)
        except cv2.error as exc:
            raise CameraError(f"{self.name}: cannot open ({exc.err or exc})") from None
        if not capture.isOpened():
            capture.release()
            what = "no such file or not a video" if self.is_file else "no such device or stream"
            raise CameraError(f"{self.name}: cannot open ({what})")
        self._capture = capture
        self._start = time.monotonic()
        self._offset = 0.0
        self._last = -1.0
        if isinstance(self.source, int):
            self._set_up_device(capture)

    def _set_up_device(self, capture: Any) -> None:
        """Size, frame rate and the locks, as far as the driver lets them be set."""
        asked: list[tuple[str, int, float]] = []
        if self.size is not None:
            asked += [("width", cv2.CAP_PROP_FRAME_WIDTH, self.size[0]),
                      ("height", cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])]
        if self.fps is not None:
            asked.append(("frame rate", cv2.CAP_PROP_FPS, self.fps))
        self._set_all(capture, asked)
        self.locked = {}
        if self._wanted:
            self._lock(capture, self._wanted)
        if self.lock:
            deadline = time.monotonic() + self.warm_up
            while time.monotonic() < deadline and capture.grab():
                pass  # the driver's automatic exposure and white balance settle meanwhile
            rest = {"AeEnable": False, "AwbEnable": False, "AfMode": 0}
            self._lock(capture, {k: v for k, v in rest.items() if k not in self.locked})

    def _lock(self, capture: Any, controls: dict[str, Any]) -> dict[str, Any]:
        """Apply picamera2-named ``controls`` through their V4L2 equivalents."""
        unmapped = [k for k in controls if k in UNMAPPED]
        if unmapped:
            log.info("%s: %s not sent: webcam drivers each use their own units", self.name,
                     ", ".join(unmapped))
        asked: list[tuple[str, int, float]] = []
        exposure = controls.get("ExposureTime")
        if exposure is not None or controls.get("AeEnable") is False:
            asked.append(("AeEnable", cv2.CAP_PROP_AUTO_EXPOSURE, V4L2_MANUAL_EXPOSURE))
            # Without a value, the exposure the automatic mode reached is kept.
            steps = (exposure / V4L2_EXPOSURE_STEP_US if exposure is not None
                     else capture.get(cv2.CAP_PROP_EXPOSURE))
            asked.append(("ExposureTime", cv2.CAP_PROP_EXPOSURE, steps))
        if controls.get("AwbEnable") is False:
            asked.append(("AwbEnable", cv2.CAP_PROP_AUTO_WB, 0))
        if "AfMode" in controls:
            asked.append(("AfMode", cv2.CAP_PROP_AUTOFOCUS, 0))
        applied = self._set_all(capture, asked)
        self.locked.update(applied)
        return applied

    def _set_all(self, capture: Any, asked: list[tuple[str, int, float]]) -> dict[str, Any]:
        applied: dict[str, Any] = {}
        refused = []
        for name, prop, value in asked:
            if capture.set(prop, value):
                applied[name] = value
            else:
                refused.append(name)
        if refused:
            log.info("%s: the driver does not let %s be set; the camera adjusts it by itself",
                     self.name, ", ".join(refused))
        return applied

    def set_controls(self, **controls: Any) -> dict[str, Any]:
        """Apply controls (picamera2's names and units) where the driver allows; return those
        it accepted. Kept for the next open too."""
        super().set_controls(**controls)
        self._wanted.update(controls)
        if self._capture is None or not isinstance(self.source, int):
            return {}
        return self._lock(self._capture, controls)

    def _read(self) -> tuple[np.ndarray, float, Any]:
        ok, image = self._capture.read()
        if not ok and self.is_file and self.loop and self._last >= 0:
            # The next loop goes on one frame after the last frame given: frame time never
            # goes back, however many times the file is replayed.
            self._offset = self._last + 1.0 / self._fps()
            self._capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, image = self._capture.read()
        if not ok or image is None:
            if self.is_file:
                raise CameraError(f"{self.name}: the video has ended")
            raise CameraError(f"{self.name}: no frame within {self.timeout:g} s "
                              "(unplugged, or the stream stopped)")
        if not self.is_file:
            return image, time.monotonic(), None
        at = self._offset + self._file_time()
        self._last = at
        if self.realtime:
            delay = self._start + at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        return image, at, None

    def _file_time(self) -> float:
        """The time in the file of the frame just read (the first one is at 0)."""
        millis = self._capture.get(cv2.CAP_PROP_POS_MSEC)
        if millis > 0:
            return millis / 1000.0
        # POS_FRAMES is the index of the next frame: the one just read is one before.
        return max(0.0, self._capture.get(cv2.CAP_PROP_POS_FRAMES) - 1) / self._fps()

    def _fps(self) -> float:
        fps = self._capture.get(cv2.CAP_PROP_FPS)
        return fps if fps and fps > 0 else 30.0

    def _close(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None
