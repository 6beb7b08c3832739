"""Camera sources: where the controller's frames come from.

One small interface (`CameraSource`: `open`, `read -> Frame`, `close`, `set_controls`) over:

- ``simulated``: `SimulatedCamera` filming a `SimulatedTray` (the demo, benchmarks, tests),
  which lives with the simulated tower (`firmware_host.simulation`): this package never imports
  it, the command line offers it (`offer_source`, `firmware_host.commands.camera_sources`);
- ``usb:0`` (a device index), a video file or a network stream (``rtsp://``, ``http://``):
  `VideoCaptureCamera`, through OpenCV;
- ``folder:DIR``: `FolderCamera`, a folder of images replayed as frames;
- ``picamera2``: the Raspberry Pi camera (`PiCamera`, `firmware_host.camera.picamera`);
  picamera2 is imported only when it is asked for, so nothing else needs it installed.

`camera_from_spec(text)` turns the text of a config file or a command-line option into a
source (not opened yet); a spec it cannot use is a `ValueError` saying what it accepts, and
``picamera2`` where its module cannot be imported (or ``simulated`` where no one offered it) a
`CameraError` saying so. `check_spec(text)` refuses the same specs, building no simulated
camera.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from firmware_host.camera.base import CONTROLS, CameraError, CameraSource, Frame
from firmware_host.camera.capture import VideoCaptureCamera

SPEC_HELP = ("'simulated', 'usb:N' (webcam N), 'picamera2', 'folder:DIR', 'file:VIDEO', "
             "or an rtsp:// or http(s):// stream URL")

# Sources made outside this package, by spec: the simulated camera belongs to the simulated
# tower, which nothing that runs at the bar may import (it draws with the lab's renderer), so
# the command line offers it here rather than this package reaching for it.
_OFFERED: dict[str, Callable[..., CameraSource]] = {}


def offer_source(spec: str, make: Callable[..., CameraSource]) -> None:
    """From now on, `camera_from_spec(spec, **options)` is ``make(**options)``."""
    _OFFERED[spec] = make


def check_spec(spec: str) -> None:
    """Raise as `camera_from_spec(spec)` does for a spec it cannot use, opening nothing.
    ``simulated`` is a spec whether or not it was offered yet: checking a configuration must
    not depend on who checks it, nor draw a tray."""
    if spec.strip() != "simulated":
        camera_from_spec(spec)


def camera_from_spec(spec: str, **options: Any) -> CameraSource:
    """The camera source named by ``spec`` (see `SPEC_HELP`); ``options`` go to its class."""
    text = spec.strip()
    kind, _, rest = text.partition(":")
    if text in _OFFERED:
        return _OFFERED[text](**options)
    if text == "simulated":
        raise CameraError("camera 'simulated' is the simulated tower's, which only the "
                          "dicetower command line loads (dicetower run, doctor, calibrate)")
    # The sources that bring the dice reader (folder) or picamera2 load with their first use:
    # naming a camera (as a configuration check does) opens and loads nothing.
    if text == "picamera2":
        try:
            module = importlib.import_module("firmware_host.camera.picamera")
            return module.PiCamera(**options)
        except ImportError as exc:
            raise CameraError(f"camera 'picamera2' is not available on this machine ({exc}); "
                              "on the Raspberry Pi: sudo apt install python3-picamera2, and "
                              "make the virtual environment with --system-site-packages"
                              ) from None
    if kind == "usb":
        # isascii: str.isdigit also accepts digits int() refuses, such as superscripts.
        if not (rest.isascii() and rest.isdigit()):
            raise ValueError(f"camera {spec!r}: 'usb:' takes a device number, e.g. usb:0")
        return VideoCaptureCamera(int(rest), **options)
    if kind in ("folder", "file") and not rest.strip():
        # Path("") is the current folder: an empty name must not quietly mean it.
        raise ValueError(f"camera {spec!r}: '{kind}:' needs a path after it, e.g. "
                         f"{kind}:{'frames' if kind == 'folder' else 'session.mp4'}")
    if kind == "folder":
        from firmware_host.camera.folder import FolderCamera

        return FolderCamera(Path(rest), **options)
    if kind == "file":
        return VideoCaptureCamera(rest, **options)
    if kind in ("rtsp", "http", "https") and rest.startswith("//") and rest[2:].strip("/"):
        return VideoCaptureCamera(text, **options)
    raise ValueError(f"unknown camera {spec!r}; use {SPEC_HELP}")


__all__ = ["CONTROLS", "SPEC_HELP", "CameraError", "CameraSource", "Frame", "camera_from_spec",
           "check_spec", "offer_source"]
