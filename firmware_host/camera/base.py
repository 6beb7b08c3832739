"""What every camera source gives the controller: `Frame`s, or a `CameraError` saying why not.

A source is opened, read frame by frame and closed:

    with camera_from_spec("usb:0") as camera:
        frame = camera.read()          # Frame(image=BGR uint8, at=seconds, index=n)

`read` blocks until the next frame (a live camera paces itself; a file or folder replays at
its frame rate, or as fast as asked). Whatever goes wrong underneath (no device, unplugged,
a stream that stalls, a frame that is not an image) comes out as one exception type,
`CameraError`, with a sentence a bar owner can act on; the controller shows it and reconnects
by calling `open` again. `at` is the frame's capture time on the source's own clock (seconds,
monotonic): settle detection measures stillness in frame time, so a replay or a simulation
running faster than real time sees the same holds as a live camera.

Controls (exposure, gain, white balance, focus) are set with `set_controls`, which returns what
the source really applied: a webcam driver or a simulation may accept only some of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import cv2
import numpy as np

#: Camera controls a source may honour; the values are those of picamera2's controls where it
#: has them (ExposureTime in microseconds, AnalogueGain as a factor, ColourGains (red, blue)).
CONTROLS = ("ExposureTime", "AnalogueGain", "ColourGains", "LensPosition", "AeEnable",
            "AwbEnable", "AfMode")


class CameraError(RuntimeError):
    """The camera cannot give a frame now: gone, busy, stalled, or sending garbage."""


@dataclass(frozen=True)
class Frame:
    """One picture of the tray.

    ``image`` is BGR uint8 (OpenCV's order). ``at`` is when it was taken (seconds on the
    source's monotonic clock), ``index`` counts frames from the source's start. ``truth`` is
    what a simulated tray really holds (None for a real camera); only benchmarks and the demo's
    honesty checks look at it, never the controller's decisions. ``small`` is a reduced copy
    from the camera itself (picamera2's low-resolution stream) when it has one: settle
    detection uses it instead of reducing ``image``.
    """

    image: np.ndarray
    at: float
    index: int
    truth: Any = field(default=None, compare=False)
    small: np.ndarray | None = field(default=None, compare=False)


def check_frame(image: object, what: str) -> np.ndarray:
    """``image`` as a usable BGR frame, or a `CameraError` naming ``what`` sent garbage."""
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.size == 0:
        raise CameraError(f"{what} sent something that is not an image")
    if image.ndim == 2 and min(image.shape) >= 16:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.ndim != 3 or image.shape[2] not in (3, 4) or min(image.shape[:2]) < 16:
        raise CameraError(f"{what} sent a frame of shape {image.shape}, not a picture")
    if image.shape[2] == 4:
        return np.ascontiguousarray(image[:, :, :3])
    return image


class CameraSource:
    """Base of every source: `open`, `read`, `close`, `set_controls`, and a context manager.

    Subclasses implement `_open`, `_read` and `_close`; this class keeps the open/closed state
    and numbers the frames. `name` says which camera this is, for messages.
    """

    name = "camera"

    def __init__(self) -> None:
        self._opened = False
        self._count = 0

    # -- to implement ---------------------------------------------------------------------
    def _open(self) -> None:
        raise NotImplementedError

    def _read(self) -> tuple[np.ndarray, float, Any]:
        """(image, capture time, truth) of the next frame; CameraError when there is none.

        A source with a low-resolution stream of its own sets ``self._small`` before returning.
        """
        raise NotImplementedError

    def _close(self) -> None:
        raise NotImplementedError

    # -- the interface --------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        return self._opened

    def open(self) -> None:
        """Open (or reopen after a `CameraError`) the camera; CameraError when it cannot."""
        if self._opened:
            self.close()
        self._open()
        self._opened = True

    def read(self) -> Frame:
        """The next frame; CameraError when the camera is gone, stalled or sends garbage."""
        if not self._opened:
            raise CameraError(f"{self.name} is not open")
        self._small: np.ndarray | None = None
        image, at, truth = self._read()
        frame = Frame(check_frame(image, self.name), float(at), self._count, truth, self._small)
        self._count += 1
        return frame

    def close(self) -> None:
        """Release the camera; safe to call twice."""
        if self._opened:
            self._opened = False
            self._close()

    def set_controls(self, **controls: Any) -> dict[str, Any]:
        """Apply camera controls (names from `CONTROLS`); return those really applied."""
        unknown = set(controls) - set(CONTROLS)
        if unknown:
            raise ValueError(f"unknown camera control(s) {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(CONTROLS)}")
        return {}

    def __enter__(self) -> CameraSource:
        self.open()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
