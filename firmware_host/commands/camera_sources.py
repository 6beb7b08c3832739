"""The camera sources that the command line adds to `firmware_host.camera`'s own.

The simulated camera lives with the simulated tower (`firmware_host.simulation`), which draws
with the lab's renderer: the camera package must not import it, so that nothing that runs at
the bar loads the lab. The commands that build a camera from a spec or a configuration (run,
doctor, service, calibrate) offer it first, and ``source = "simulated"`` works as before.
"""

from __future__ import annotations

from typing import Any


def offer_simulated_camera() -> None:
    """Let `camera_from_spec("simulated", **options)` build a simulated camera."""
    # OpenCV (the camera package): loaded when a command that needs a camera runs.
    from firmware_host.camera import offer_source

    offer_source("simulated", _simulated_camera)


def _simulated_camera(**options: Any) -> Any:
    # The renderer: loaded only when a simulated camera is asked for.
    from firmware_host.simulation.camera import simulated_camera

    return simulated_camera(**options)
