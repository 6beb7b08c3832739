"""The Raspberry Pi camera (Camera Module 2, 3, HQ...) through picamera2, the Pi's own library.

    PiCamera()                                    # camera 0, 2304 x 1296, 15 fps, locked
    PiCamera(controls={"ExposureTime": 8000, "AnalogueGain": 1.5,
                       "ColourGains": (1.9, 1.6), "LensPosition": 3.0})

Two streams come from every capture request: ``main`` in picamera2's "RGB888" format, whose
bytes are laid out B, G, R (picamera2's manual, appendix A), so the image goes to OpenCV as it
is; and a small ``lores`` stream in YUV420 (the only lores format a Pi 4 has), whose Y plane is
the grey copy settle detection looks at (`Frame.small`) without reducing the big image.

Nothing automatic changes the picture during a game. Controls given (from the configuration)
are applied as given; with ``lock`` (the default) whatever is not given is measured once at
start: auto exposure and auto white balance run for ``warm_up`` seconds, one autofocus cycle
runs on a camera that has one, then exposure, gain, colour gains and lens position are fixed at
what they found (`AeEnable`/`AwbEnable` off, `AfMode` manual). The values are logged, so that
they can be copied into the configuration. A control the camera does not have (`AfMode` on a
Camera Module 2) is left out with a log line: picamera2 refuses unknown controls outright.

Failures come out as `CameraError`, each in one line: no camera (picamera2 raises IndexError
when libcamera lists none), a camera busy or failing (RuntimeError from `Picamera2()`, e.g.
another program holds it), a capture that times out (a loose ribbon cable). A `Picamera2()` that
fails has already opened a pipe and joined picamera2's camera manager, which its own `close`
does not undo for a camera that never opened: `_new_camera` undoes it, so a camera retried
every few seconds through an outage does not run the process out of file descriptors.

`picamera2` is imported when a `PiCamera` is made, never before: the rest of dicetower runs
on machines without it. Raspberry Pi OS's picamera2 imports ``simplejpeg``, compiled against
the system's NumPy 1: beside the project's NumPy 2 its import fails with ValueError
("numpy.dtype size changed"), said here as a `CameraError` naming the package to install.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import importlib
import logging
import os
import time
from typing import Any

import numpy as np

from firmware_host.camera.base import CONTROLS, CameraError, CameraSource

log = logging.getLogger(__name__)

DEFAULT_SIZE = (2304, 1296)  # Camera Module 3's full field of view, 2x2 binned: fast and sharp
LORES_WIDTH = 320  # settle detection reduces to 96 px wide; this leaves it room to average noise
# Controls measured at start and fixed, with what switches their automatic mode off.
MEASURED = ("ExposureTime", "AnalogueGain", "ColourGains")
NUMPY_CLASH = ("camera 'picamera2' cannot be loaded: a compiled module it imports was built for "
               "another NumPy ({}); install simplejpeg into the virtual environment without "
               "touching its NumPy: ~/dicetower/venv/bin/pip install --ignore-installed "
               "--no-deps simplejpeg (docs/install-pi.md, step 4)")


def _cause(exc: BaseException) -> str:
    """The innermost message of an exception chain: picamera2 wraps libcamera's real reason
    ("Failed to acquire camera: Device or resource busy") in a generic RuntimeError."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return str(exc) or type(exc).__name__


def _release_unopened(camera: Any) -> None:
    """What a `Picamera2` whose ``__init__`` raised still holds: its place in the camera
    manager (which keeps it alive, and the manager's thread running) and both ends of its
    notification pipe. Each step is skipped when ``__init__`` failed before it."""
    manager = getattr(type(camera), "_cm", None)
    registered = getattr(manager, "cameras", None)
    if isinstance(registered, dict):
        for index, held in list(registered.items()):
            if held is camera:
                with contextlib.suppress(Exception):
                    manager.cleanup(index)  # type: ignore[union-attr]
    reader = getattr(camera, "notifymeread", None)
    if reader is not None:
        with contextlib.suppress(OSError):
            reader.close()  # closes notifyme_r with it
    elif isinstance(getattr(camera, "notifyme_r", None), int):
        with contextlib.suppress(OSError):
            os.close(camera.notifyme_r)
    if isinstance(getattr(camera, "notifyme_w", None), int):
        with contextlib.suppress(OSError):
            os.close(camera.notifyme_w)


class PiCamera(CameraSource):
    """Frames from the Pi camera ``camera_num``: see the module docstring."""

    def __init__(self, camera_num: int = 0, *, size: tuple[int, int] = DEFAULT_SIZE,
                 fps: float = 15.0, controls: dict[str, Any] | None = None, lock: bool = True,
                 warm_up: float = 1.0, timeout: float = 2.0,
                 lores_width: int = LORES_WIDTH) -> None:
        super().__init__()
        # ImportError here is the caller's to explain (camera_from_spec: "apt install ..."),
        # unless it is NumPy's: then, as for the ValueError, what to install is said here.
        try:
            self._picamera2 = importlib.import_module("picamera2")
            self._libcamera = importlib.import_module("libcamera")
        except ValueError as exc:  # "numpy.dtype size changed, may indicate binary ..."
            raise CameraError(NUMPY_CLASH.format(exc)) from None
        except ImportError as exc:
            if "numpy" in str(exc).lower():  # "numpy.core.multiarray failed to import"
                raise CameraError(NUMPY_CLASH.format(exc)) from None
            raise
        if fps <= 0 or timeout <= 0 or warm_up < 0:
            raise ValueError("fps and timeout must be positive, warm_up at least 0")
        unknown = set(controls or {}) - set(CONTROLS)
        if unknown:
            raise ValueError(f"unknown camera control(s) {', '.join(sorted(unknown))}")
        self.camera_num = camera_num
        self.size = (int(size[0]), int(size[1]))
        self.fps = fps
        self.lock = lock
        self.warm_up = warm_up
        self.timeout = timeout
        self.lores_width = lores_width
        self.name = "Raspberry Pi camera" + (f" {camera_num}" if camera_num else "")
        self._wanted: dict[str, Any] = dict(controls or {})
        self.locked: dict[str, Any] = {}  # what the camera runs with, once open
        self._camera: Any = None
        self._lores: tuple[int, int] | None = None

    # ------------------------------------------------------------------ open and close

    def _open(self) -> None:
        try:
            camera = self._new_camera()
        except IndexError:
            raise CameraError(f"{self.name}: not found (check the ribbon cable, then "
                              "`rpicam-hello --list-cameras`)") from None
        except RuntimeError as exc:
            raise CameraError(f"{self.name}: cannot be opened ({_cause(exc)}); is another "
                              "program using it (rpicam-hello, a second dicetower)?") from None
        self._camera = camera
        try:
            self._start(camera)
        except CameraError:
            self._close()
            raise
        except (RuntimeError, ValueError, KeyError) as exc:
            self._close()
            raise CameraError(f"{self.name}: cannot start ({_cause(exc)})") from None

    def _new_camera(self) -> Any:
        """``Picamera2(camera_num)``, releasing what it holds when it fails.

        picamera2 opens its notification pipe and registers the object with its camera manager
        (whose listening thread then runs) before it looks the camera up and acquires it; when
        either fails, the half-made object is unreachable and its `close` returns early for a
        camera that is not open. It is made here in two steps so that it can be let go.
        """
        cls = self._picamera2.Picamera2
        camera = cls.__new__(cls)
        try:
            camera.__init__(self.camera_num)
        except BaseException:
            _release_unopened(camera)
            raise
        return camera

    def _start(self, camera: Any) -> None:
        frame_us = round(1_000_000 / self.fps)
        width, height = self.size
        lores_height = max(2, round(height * self.lores_width / width / 2) * 2)  # even
        config = camera.create_video_configuration(
            main={"size": self.size, "format": "RGB888"},
            lores={"size": (self.lores_width, lores_height), "format": "YUV420"},
            controls={"FrameDurationLimits": (frame_us, frame_us)})
        camera.configure(config)
        # picamera2 may align the sizes to what the hardware prefers: read them back.
        self._lores = tuple(camera.camera_configuration()["lores"]["size"])  # type: ignore[assignment]
        camera.start()
        self.locked = {}
        given = self._supported(camera, self._wanted)
        if given:
            self._apply(camera, self._manual(given))
        if self.lock:
            self._lock_the_rest(camera, given)
        if self.locked:
            shown = ", ".join(f"{k}={v}" for k, v in self.locked.items()
                              if k not in ("AeEnable", "AwbEnable", "AfMode"))
            log.info("%s: locked %s (set them under [camera] to keep them)", self.name, shown)

    def _lock_the_rest(self, camera: Any, given: dict[str, Any]) -> None:
        """Measure what the configuration did not give, then fix it there."""
        measure = [k for k in MEASURED if k not in given]
        focus = "AfMode" in camera.camera_controls and "LensPosition" not in given
        if not measure and not focus:
            return
        if focus:
            # One autofocus cycle on the tray, then the lens stays where it focused.
            try:
                camera.autofocus_cycle(wait=max(self.timeout, 5.0))
            except (TimeoutError, RuntimeError) as exc:
                self._cancel_autofocus(camera)
                log.warning("%s: autofocus did not finish (%s); the lens stays where it is",
                            self.name, _cause(exc) if str(exc) else "timed out")
        deadline = time.monotonic() + self.warm_up
        metadata = self._metadata(camera)
        while time.monotonic() < deadline:  # auto exposure and white balance settle
            metadata = self._metadata(camera)
        fixed: dict[str, Any] = {}
        for key in measure:
            if key in metadata:
                value = metadata[key]
                fixed[key] = tuple(value) if isinstance(value, (list, tuple)) else value
        if focus and "LensPosition" in metadata:
            fixed["LensPosition"] = metadata["LensPosition"]
        self._apply(camera, self._manual(fixed))

    def _cancel_autofocus(self, camera: Any) -> None:
        """Drop an autofocus cycle that timed out: picamera2 keeps its job queued, where it
        would take the frames of every capture asked after it, and the lens goes on scanning."""
        with contextlib.suppress(Exception):
            camera.cancel_all_and_flush()
        if "AfTrigger" in camera.camera_controls:
            with contextlib.suppress(Exception):
                camera.set_controls(
                    {"AfTrigger": self._libcamera.controls.AfTriggerEnum.Cancel})

    def _manual(self, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` with the automatic modes they replace switched off."""
        controls = dict(values)
        if "ExposureTime" in values or "AnalogueGain" in values:
            controls.setdefault("AeEnable", False)
        if "ColourGains" in values:
            controls.setdefault("AwbEnable", False)
        if "LensPosition" in values:
            controls.setdefault("AfMode", self._libcamera.controls.AfModeEnum.Manual)
        return controls

    def _apply(self, camera: Any, controls: dict[str, Any]) -> dict[str, Any]:
        applied = self._supported(camera, controls)
        if applied:
            camera.set_controls(applied)
            self.locked.update(applied)
        return applied

    def _supported(self, camera: Any, controls: dict[str, Any]) -> dict[str, Any]:
        """The controls this camera has; picamera2 raises on any other, so they are left out
        with a line saying so."""
        known = camera.camera_controls
        missing = [k for k in controls if k not in known]
        if missing:
            log.info("%s: this camera has no %s control; left as it is", self.name,
                     ", ".join(missing))
        return {k: v for k, v in controls.items() if k in known}

    def _metadata(self, camera: Any) -> dict[str, Any]:
        request = self._request(camera)
        try:
            return dict(request.get_metadata())
        finally:
            request.release()

    def _request(self, camera: Any) -> Any:
        try:
            return camera.capture_request(wait=self.timeout)
        except (TimeoutError, concurrent.futures.CancelledError):
            # picamera2's advice after a capture timed out: cancel what is queued, then close.
            with contextlib.suppress(Exception):
                camera.cancel_all_and_flush()
            raise CameraError(f"{self.name}: no frame within {self.timeout:g} s (ribbon "
                              "cable loose, or the camera stopped)") from None
        except RuntimeError as exc:
            raise CameraError(f"{self.name}: capture failed ({_cause(exc)})") from None

    def _close(self) -> None:
        camera, self._camera = self._camera, None
        if camera is None:
            return
        # A camera that was unplugged cannot be stopped cleanly; it is released all the same.
        for step in (camera.stop, camera.close):
            try:
                step()
            except Exception as exc:  # closing must never raise
                log.debug("%s: %s", self.name, exc)

    # ------------------------------------------------------------------ frames

    def _read(self) -> tuple[np.ndarray, float, Any]:
        request = self._request(self._camera)
        try:
            image = request.make_array("main")
            lores = request.make_array("lores")
            metadata = request.get_metadata()
        except RuntimeError as exc:
            raise CameraError(f"{self.name}: unreadable frame ({_cause(exc)})") from None
        finally:
            request.release()
        if self._lores is not None and isinstance(lores, np.ndarray) and lores.ndim == 2:
            width, height = self._lores
            # YUV420 arrives as 1.5 x height rows of the stride: the Y plane is the picture.
            self._small = np.ascontiguousarray(lores[:height, :width])
        # SensorTimestamp (ns) is on the monotonic clock: picamera2 compares it with
        # time.monotonic_ns() itself.
        stamp = metadata.get("SensorTimestamp")
        at = stamp / 1e9 if isinstance(stamp, int) and stamp > 0 else time.monotonic()
        return image, at, None

    # ------------------------------------------------------------------ controls

    def set_controls(self, **controls: Any) -> dict[str, Any]:
        """Apply controls now (and on every reopen); return those this camera has."""
        super().set_controls(**controls)
        self._wanted.update(controls)
        if self._camera is None:
            return {}  # applied when the camera opens
        return self._apply(self._camera, self._manual(controls))
