"""`open_tower`: a `Tower` on the pins of a pin map, real or simulated.

Its own module because it is the one place that knows both kinds of tower: `hardware.tower`
(real pins) and `hardware.simulation` (mock pins), which builds on the first; neither needs
to import the other back.
"""

from __future__ import annotations

import time
from pathlib import Path

from hardware.dispenser import Sleep
from hardware.factory import real_factory
from hardware.pinmap import PinMap, load_pinmap
from hardware.simulation import SimulatedTower
from hardware.tower import Tower


def open_tower(pinmap: PinMap | str | Path, *, simulate: bool = False,
               sleep: Sleep = time.sleep) -> Tower:
    """A Tower on real pins (NotOnAPi off a Pi) or, with `simulate`, on mock pins."""
    if not isinstance(pinmap, PinMap):
        pinmap = load_pinmap(pinmap)
    if simulate:
        return SimulatedTower(pinmap, sleep=sleep)
    return Tower(pinmap, real_factory(), sleep=sleep)
