"""Building the real tower from its configuration: camera, pins, profile, journal, hub, scoreboard.

`open_tower_parts(config)` turns a checked `TowerConfig` into the running parts, releasing
whatever it had opened when a later part fails; `TowerParts.run(stop)` plays until ``stop`` is
set and closes everything in order. Every failure a bar owner can fix (no camera, pins taken,
a damaged journal, a port in use) is a `StartError` with one line naming the thing and the fix.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from calibration.store import light_settings
from firmware_host.camera import CameraError, camera_from_spec
from firmware_host.controller.config import TowerConfig
from firmware_host.controller.controller import Controller
from firmware_host.hub import GameHub, Journal, JournalError
from firmware_host.league.publisher import TowerPublisher, cursor_beside
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.network import scoreboard_urls
from firmware_host.scoreboard.server import BackgroundServer
from hardware import (
    EXAMPLE_PINMAP,
    NotOnAPi,
    PinMapError,
    SimulatedTower,
    load_pinmap,
    open_tower,
    simulated_pinmap,
)
from vision import Profile

MEGABYTE = 1024 * 1024


class StartError(RuntimeError):
    """The tower cannot start; the message says which part and what to do, one line per
    problem (a pin map may have several)."""


@dataclass
class TowerParts:
    """The assembled tower; `close` releases every part, in the reverse order of opening."""

    config: TowerConfig
    camera: Any
    tower: Any
    journal: Any
    hub: Any
    controller: Any
    app: Any
    server: Any
    resumed: bool = False
    _closers: list[Callable[[], None]] = field(default_factory=list)

    def run(self, stop: threading.Event) -> None:
        """Play until ``stop`` is set (SIGTERM, Ctrl-C)."""
        self.controller.run(stop)

    def close(self) -> None:
        _close_all(self._closers)


def open_tower_parts(config: TowerConfig, *, new_game: bool = False,
                     heartbeat: Callable[[], None] | None = None) -> TowerParts:
    """Open every part of the tower described by ``config`` and resume or start its game."""
    closers: list[Callable[[], None]] = []
    try:
        return _open(config, closers, new_game, heartbeat)
    except BaseException:
        _close_all(closers)
        raise


def _close_all(closers: list[Callable[[], None]]) -> None:
    """Call every closer, last opened first; one failing must not keep the rest open."""
    while closers:
        with contextlib.suppress(Exception):
            closers.pop()()


def _open(config: TowerConfig, closers: list[Callable[[], None]], new_game: bool,
          heartbeat: Callable[[], None] | None) -> TowerParts:
    profile = _profile(config)
    light = calibrated_light(config)
    camera = camera_source(config, light)
    tower = _tower(config)
    closers.append(tower.close)
    if "ring" in light:
        tower.set_ring(light["ring"])
    try:
        journal = Journal(config.journal, max_image_bytes=int(config.max_images_mb * MEGABYTE),
                          exclusive=True)
    except JournalError as err:
        raise StartError(str(err)) from None
    closers.append(journal.close)
    hub = GameHub()
    # A simulated camera's tray is the simulated tower's table: a calibration throws there.
    tray = camera.tray if config.camera == "simulated" else None
    controller = Controller(camera, tower, hub, journal, profile=profile, hold=config.hold,
                            agree=config.agree, heartbeat=heartbeat, tray=tray)
    closers.append(controller.close)
    publisher = None
    if config.league_broker is not None and config.league_tower is not None:
        # One more subscriber of the hub: it only wakes its own thread, the game never waits.
        publisher = TowerPublisher(hub, journal, config.league_broker, config.league_tower,
                                   prefix=config.league_prefix,
                                   cursor=cursor_beside(config.journal))
    urls = scoreboard_urls(config.host, config.port)
    app = create_app({"SCOREBOARD_PIN": config.pin, "SCOREBOARD_LANG": config.lang,
                      "SCOREBOARD_ODDS": config.odds, "SCOREBOARD_PUBLIC_URL": urls[0],
                      "CALIBRATION_PROFILE": config.profile,
                      "SCOREBOARD_LEAGUE_URL": config.league_board},
                     hub=hub, tower=controller, league=publisher)
    try:
        server = BackgroundServer(app, config.host, config.port)
    except OSError as err:
        raise StartError(f"cannot serve the scoreboard on {config.host}:{config.port} "
                         f"({err.strerror}); is another tower running? set [scoreboard] port "
                         "in the configuration") from None
    server.start()
    closers.append(server.stop)
    # A camera that cannot open yet is not fatal: the controller shows the error and keeps
    # trying, and the game master can enter throws meanwhile.
    with contextlib.suppress(CameraError):
        camera.open()
    controller.bind_buttons()
    resumed = controller.resume_or_start(config.preset, config.players, config.knobs or None,
                                         new=new_game)
    if publisher is not None:
        publisher.start()
        closers.append(publisher.close)
    return TowerParts(config, camera, tower, journal, hub, controller, app, server, resumed,
                      list(closers))


def _profile(config: TowerConfig) -> Any:
    if config.profile is None:
        return None
    try:
        return Profile.load(config.profile)
    except ValueError as err:
        raise StartError(f"{err}; run `dicetower calibrate` or fix [tower] profile in "
                         f"{config.source}") from None


def calibrated_light(config: TowerConfig) -> dict[str, float]:
    """The light `calibrate` chose for the configured profile (ring level, exposure, gain),
    so the tower plays in the light the profile was made in; empty without one."""
    if config.profile is None:
        return {}
    return light_settings(config.profile)


def camera_source(config: TowerConfig, light: dict[str, float] | None = None) -> Any:
    """The configured camera source (not opened), with its frame rate, size and locks: the
    configuration's own picture settings first, then those of the calibration (``light``)."""
    controls = {key: value for key, value in (light or {}).items() if key != "ring"}
    if "ExposureTime" in controls:
        controls["ExposureTime"] = int(controls["ExposureTime"])
    controls.update(config.camera_controls)
    options: dict[str, Any] = {}
    if config.camera == "simulated":
        options = {"fps": config.fps, "realtime": True}
    elif config.camera.startswith("folder:"):
        options = {"fps": config.fps}
    elif config.camera == "picamera2" or config.camera.startswith("usb:"):
        options = {"fps": config.fps, "controls": controls, "lock": config.camera_lock}
        if config.camera_size is not None:
            options["size"] = config.camera_size
    try:
        camera = camera_from_spec(config.camera, **options)
    except ValueError as err:
        raise StartError(str(err)) from None
    except CameraError as err:
        raise StartError(str(err)) from None
    if config.camera == "simulated" and controls:
        camera.set_controls(**controls)  # the simulated tray answers them as a camera would
    return camera


def _tower(config: TowerConfig) -> Any:
    if config.pinmap is None:
        return SimulatedTower(simulated_pinmap(load_pinmap(EXAMPLE_PINMAP)))
    try:
        return open_tower(config.pinmap)
    except PinMapError as err:
        raise StartError("\n".join(err.problems)) from None  # every problem, not the first
    except NotOnAPi as err:
        raise StartError(f"{err}; set [tower] pinmap = \"simulated\" in {config.source} to try "
                         "the tower with mock pins") from None
    except OSError as err:
        raise StartError(f"{config.pinmap}: {err.strerror}") from None
    except Exception as err:  # gpiozero's own errors: a pin in use, no access
        raise StartError(f"the pins of {config.pinmap} cannot be used: {err}") from None
