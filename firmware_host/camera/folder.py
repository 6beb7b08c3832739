"""A folder of images replayed as camera frames (sorted by name), for tests and for tuning.

Each image is shown for ``hold`` frames at ``fps`` frames a second (frame time, so a replay
runs as fast as it can unless ``realtime``): a folder of still trays then reads like a camera
watching each tray long enough to settle. An image that cannot be decoded is a `CameraError`
naming it, as garbage from a real camera would be, and so is an image too small to be a
picture; reopening goes on from the next image (a reconnect never rewinds the replay, so one
bad file costs one error, not the rest, and not one per frame it would have been held).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from firmware_host.camera.base import CameraError, CameraSource, check_frame
from vision import ImageError, load_image

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")


class FolderCamera(CameraSource):
    """Frames from the images of ``folder``; at the end, a `CameraError` or a new loop."""

    def __init__(self, folder: str | Path, *, fps: float = 10.0, hold: int = 10,
                 loop: bool = False, realtime: bool = False) -> None:
        super().__init__()
        if fps <= 0 or hold < 1:
            raise ValueError("fps must be positive and hold at least 1 frame")
        self.folder = Path(folder)
        self.fps = fps
        self.hold = hold
        self.loop = loop
        self.realtime = realtime
        self.name = f"image folder {self.folder}"
        self._files: list[Path] = []
        self._shown = 0
        self._start = 0.0
        self._image: np.ndarray | None = None

    def _open(self) -> None:
        if not self.folder.is_dir():
            raise CameraError(f"{self.name}: no such folder")
        self._files = sorted(p for p in self.folder.iterdir()
                             if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
        if not self._files:
            raise CameraError(f"{self.name}: no images in it "
                              f"({', '.join(IMAGE_SUFFIXES)})")
        self._start = time.monotonic() - self._shown / self.fps
        self._image = None

    def _read(self) -> tuple[np.ndarray, float, Any]:
        index, repeat = divmod(self._shown, self.hold)
        if index >= len(self._files):
            if not self.loop:
                raise CameraError(f"{self.name}: every image has been shown")
            index %= len(self._files)
        if repeat == 0 or self._image is None:
            path = self._files[index]
            try:
                # Checked here as `read` would check each frame: an image too small to be a
                # picture (1x1) is one error for its file, not one per frame it is held.
                self._image = check_frame(load_image(path), f"{self.name}: {path.name}")
            except (ImageError, CameraError) as exc:
                self._shown = (index + 1) * self.hold  # the next read shows the next image
                if isinstance(exc, CameraError):
                    raise
                raise CameraError(f"{self.name}: {exc}") from None
        at = self._shown / self.fps
        self._shown += 1
        if self.realtime:
            delay = self._start + at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        return self._image, at, None

    def _close(self) -> None:
        self._files = []
        self._image = None
