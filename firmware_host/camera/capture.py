"""A camera through OpenCV's `cv2.VideoCapture`: a USB webcam, a video file or a network stream.

    VideoCaptureCamera(0)                          # the first webcam (/dev/video0)
    VideoCaptureCamera("tray.mp4", realtime=False) # a recorded session, as fast as it reads
    VideoCaptureCamera("rtsp://192.0.2.7/stream")  # an IP camera

A device or a stream that stops answering gives a `CameraError` after ``timeout`` seconds
(OpenCV's own open and read time-outs, where its backend honours them) instead of hanging the
controller; a file that ends gives one that says so.
"""

from __future__ import annotations

import time
from typing import Any

import cv2
import numpy as np

from firmware_host.camera.base import CameraError, CameraSource


class VideoCaptureCamera(CameraSource):
    """Frames from `cv2.VideoCapture(source)`; `source` is a device index, a path or a URL."""

    def __init__(self, source: int | str, *, timeout: float = 5.0, realtime: bool = True,
                 loop: bool = False) -> None:
        super().__init__()
        self.source = source
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
