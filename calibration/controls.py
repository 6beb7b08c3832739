"""The light a calibration may tune: the ring light and, where the camera allows, its controls.

Duck-typed, so that any camera source fits: a source with ``set_controls(**controls)``
returning the controls it really applied (`firmware_host.camera.CameraSource`'s interface,
picamera2's control names: ExposureTime in microseconds, AnalogueGain as a factor, AeEnable)
offers the controls it applies; one that also has ``controls()`` (the values in use) is
swept around them, any other around a typical exposure. The ring light is any callable
taking a level 0..1 (`hardware.Tower.set_ring`, the simulated tray's `set_ring`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

TYPICAL_EXPOSURE = 10_000.0  # microseconds: a lit bar at 30 frames a second or less
# Whole multiples of the usual 10 ms above it: mains lamps flicker at 100 Hz (docs/hardware.md).
EXPOSURE_FACTORS = (0.5, 1.0, 2.0, 3.0)
GAINS = (1.0, 1.5, 2.0, 3.0)
RING_LEVELS = (0.25, 0.5, 0.75, 1.0)


@runtime_checkable
class Controllable(Protocol):
    """A camera whose controls can be set: what the light step needs of it."""

    def set_controls(self, **controls: Any) -> dict[str, Any]: ...


@dataclass
class Knob:
    """One setting the light step sweeps: its name, the values tried, how to set one."""

    name: str
    values: tuple[float, ...]
    apply: Callable[[float], None]
    current: float

    def set(self, value: float) -> None:
        self.apply(value)
        self.current = value


def _current(camera: Any, name: str, default: float) -> float:
    read = getattr(camera, "controls", None)
    if callable(read):
        value = read().get(name)
        if isinstance(value, int | float) and value > 0:
            return float(value)
    return default


def light_knobs(camera: Any, ring: Callable[[float], None] | None = None,
                ring_level: float | None = None) -> list[Knob]:
    """The knobs this camera and ring light offer, in the order they are swept (the ring
    light first: more light is better than more gain); empty when there is nothing to tune."""
    knobs: list[Knob] = []
    if ring is not None:
        # An unlit ring is level 0: the sweep's first frame is judged as what it is, and
        # kept off when that frame reads best.
        knobs.append(Knob("ring", RING_LEVELS, ring, ring_level or 0.0))
    if not isinstance(camera, Controllable):
        return knobs
    exposure = _current(camera, "ExposureTime", TYPICAL_EXPOSURE)
    try:
        applied = camera.set_controls(ExposureTime=int(exposure))
    except (ValueError, RuntimeError):
        applied = {}
    if "ExposureTime" in applied:
        knobs.append(Knob("ExposureTime", tuple(round(exposure * f) for f in EXPOSURE_FACTORS),
                          lambda v: camera.set_controls(ExposureTime=int(v)), exposure))
    gain = _current(camera, "AnalogueGain", 1.0)
    try:
        applied = camera.set_controls(AnalogueGain=float(gain))
    except (ValueError, RuntimeError):
        applied = {}
    if "AnalogueGain" in applied:
        knobs.append(Knob("AnalogueGain", GAINS, lambda v: camera.set_controls(AnalogueGain=v),
                          gain))
    return knobs


def lock(camera: Any) -> bool:
    """Turn the camera's automatic exposure off, so the light chosen stays; whether it did."""
    if not isinstance(camera, Controllable):
        return False
    try:
        return "AeEnable" in camera.set_controls(AeEnable=False)
    except (ValueError, RuntimeError):
        return False
