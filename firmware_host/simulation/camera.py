"""The simulated camera: it films a `SimulatedTray` (`firmware_host.simulation.tray`) as a
camera source, so the controller reads its frames as it reads a real camera's.

`simulated_camera(**options)` builds both from one set of options, as a camera spec of
``simulated`` gives them (`firmware_host.camera.camera_from_spec`, which the command line
offers it to: the camera package never imports the simulation).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from firmware_host.camera.base import CameraError, CameraSource
from firmware_host.simulation.tray import REFERENCE_EXPOSURE, SimulatedTray

CAMERA_BUFFER = 4  # frames a live camera holds for a late reader; older ones are dropped
TRAY_OPTIONS = ("colours", "floor", "seed", "noise")  # the tray's; the rest is the camera's


def simulated_camera(**options: Any) -> SimulatedCamera:
    """A `SimulatedCamera` over a new `SimulatedTray`: the tray takes ``colours``, ``floor``,
    ``seed`` and ``noise``, the camera every other option (``fps``, ``realtime``)."""
    tray_options = {k: options.pop(k) for k in TRAY_OPTIONS if k in options}
    return SimulatedCamera(SimulatedTray(**tray_options), **options)


class SimulatedCamera(CameraSource):
    """A camera filming a `SimulatedTray` at ``fps`` frames a second of tray time.

    ``realtime`` paces frames on the wall clock (the demo at a watchable pace); otherwise they
    come as fast as they are drawn. ``fail_after``/`fail` make it stop answering, as a camera
    unplugged mid-game does, until it is opened again.
    """

    name = "simulated camera"

    def __init__(self, tray: SimulatedTray, *, fps: float = 15.0, realtime: bool = False) -> None:
        super().__init__()
        if fps <= 0:
            raise ValueError("fps must be positive")
        self.tray = tray
        self.fps = fps
        self.realtime = realtime
        self._frames = 0
        self._started = 0.0
        self._broken: str | None = None
        self.unplugged = False  # while True, `open` fails too (the cable is out)
        self._controls: dict[str, Any] = {"ExposureTime": REFERENCE_EXPOSURE,
                                          "AnalogueGain": 1.0, "AeEnable": True}  # in use

    def controls(self) -> dict[str, Any]:
        """The controls in use (ExposureTime in microseconds, AnalogueGain, AeEnable)."""
        return dict(self._controls)

    def set_controls(self, **controls: Any) -> dict[str, Any]:
        """ExposureTime (microseconds, > 0) and AnalogueGain (>= 1) change the next frames;
        AeEnable is taken (there is no automatic exposure to lock); others are not applied."""
        super().set_controls(**controls)
        applied = {k: v for k, v in controls.items() if k in self._controls}
        if applied.get("ExposureTime", 1) <= 0 or applied.get("AnalogueGain", 1) < 1:
            raise ValueError("ExposureTime must be positive and AnalogueGain at least 1")
        if "ExposureTime" in applied:
            self.tray.expose(int(applied["ExposureTime"]) / REFERENCE_EXPOSURE)
        self._controls.update(applied)
        return applied

    def due(self, at: float) -> float:
        """When (``time.monotonic``) a frame of frame time ``at`` is taken, at a live pace: a
        reader running late gets it later, as it would from a real camera's queue."""
        return self._started + at

    def fail(self, how: str = "stalled") -> None:
        """From the next frame on: "stalled" (no frame comes) or "garbage" (not an image)."""
        if how not in ("stalled", "garbage"):
            raise ValueError("a camera fails by 'stalled' or 'garbage'")
        self._broken = how

    def _open(self) -> None:
        if self.unplugged:
            raise CameraError(f"{self.name}: no camera found")
        self._broken = None
        self._started = time.monotonic() - self._frames / self.fps

    def _read(self) -> tuple[np.ndarray, float, Any]:
        if self._broken == "stalled":
            raise CameraError(f"{self.name}: no frame within 1 s (unplugged, or it stopped)")
        if self._broken == "garbage":
            return np.zeros((2, 2), np.float32), self._frames / self.fps, None
        if self.realtime:
            # A live camera keeps only its last few frames for a reader that falls behind
            # (older ones are dropped), so the reader sees the tray as it is now.
            behind = int((time.monotonic() - self._started) * self.fps) - self._frames
            for _ in range(behind - CAMERA_BUFFER):
                self.tray.next_shot()
                self._frames += 1
        image, truth, noisy = self.tray.next_shot()
        at = self._frames / self.fps
        self._frames += 1
        if noisy:
            image = self.tray.noisy(image)
        gain = self._controls["AnalogueGain"]
        if gain != 1.0:  # after the noise: gain amplifies it with the picture
            image = np.clip(image.astype(np.float32) * gain + 0.5, 0, 255).astype(np.uint8)
        if self.realtime:
            delay = self._started + at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        return image, at, truth

    def _close(self) -> None:
        pass
