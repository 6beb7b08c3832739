"""The tower's devices (seat lights, status LED, ring light, buttons, token dispensers).

Everything here runs on gpiozero, on a Raspberry Pi's real pins (lgpio pin factory, Pi 4 and
Pi 5) or on gpiozero's mock pins; nothing outside this package imports gpiozero. The rest of
dicetower uses only:

- `open_tower(pinmap_path, simulate=False) -> Tower` and the `Tower` methods documented in
  `hardware.tower` (`show_turn`, `show_owes`, `show_out`, `set_status`, `flourish`,
  `set_ring`, `on_button`, `dispense -> DispenseResult`, `camera_reading()`, `close()`);
- `load_pinmap(path) -> PinMap` and `PinMapError` (`hardware.pinmap`, pure TOML checking);
- `NotOnAPi`, raised when real pins are asked for where there are none;
- for the demo and tests: `SimulatedTower(simulated_pinmap(load_pinmap(EXAMPLE_PINMAP)))`, the
  same Tower on mock pins with millisecond timings, hoppers that drop tokens through a mock
  break-beam, and `press(name)` for the buttons.

Modules: `pinmap` (the TOML file) and `pinmap_model` (what it is read into), `factory` (pin
factory choice), `lights`, `buttons`, `dispenser`, `tower` (the interface), `simulation` (mock
hoppers and buttons), `walkthrough` (`dicetower hw-test`), `wiring` (the wiring table in
docs/hardware.md).

Names are imported lazily so that reading a pin map does not load gpiozero.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Tower": "hardware.tower",
    "open_tower": "hardware.opening",
    "DispenseResult": "hardware.dispenser",
    "SeatState": "hardware.lights",
    "PinMap": "hardware.pinmap",
    "PinMapError": "hardware.pinmap",
    "load_pinmap": "hardware.pinmap",
    "EXAMPLE_PINMAP": "hardware.pinmap",
    "NotOnAPi": "hardware.factory",
    "SimulatedTower": "hardware.simulation",
    "simulated_pinmap": "hardware.simulation",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hardware' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
