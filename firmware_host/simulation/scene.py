"""The simulated tray's parts: its layout, the dice resting on it, what a frame truly shows,
and the varied scene's looks (`SimulatedTray(scene="varied")`).

The varied scene draws every throw under other conditions, from the bar's variety of
`vision.lab.render_varied`: another dice set (opaque, translucent, marbled; dark, light or
coloured pips), floor, light (ring light, ordinary lamp, one hard low lamp with long shadows,
glare, warm or cold white balance), camera (blur, noise, JPEG, height) and die size (28-48 px:
what the tray's zones and a 4D square hold), fixed by the seed and the throw's number. Its
calibration profile holds the zones only: no one calibration describes every throw's dice
and floor, so the tower reads them as an uncalibrated one does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vision.lab.render import VARIED_DICE, DieSpec, varied_scene

Point = tuple[float, float]
Polygon = tuple[Point, ...]

SCENES = ("classic", "varied")  # the tray's look: one bar's, or another bar's at every throw
VARIED_SIDE = (28.0, 48.0)  # die side (px) of the varied scene: what the zones and 4D hold


@dataclass(frozen=True)
class TrayLayout:
    """The simulated tray's geometry: image size, die size and the two zones (pixels)."""

    width: int = 640
    height: int = 480
    side: float = 40.0
    roll_zone: Polygon = ((16.0, 16.0), (452.0, 16.0), (452.0, 464.0), (16.0, 464.0))
    keep_zone: Polygon = ((476.0, 16.0), (624.0, 16.0), (624.0, 464.0), (476.0, 464.0))

    def box(self, zone: str) -> tuple[float, float, float, float]:
        pts = np.array(self.roll_zone if zone == "roll" else self.keep_zone)
        (x0, y0), (x1, y1) = pts.min(axis=0), pts.max(axis=0)
        return float(x0), float(y0), float(x1), float(y1)


@dataclass(frozen=True)
class PlacedDie:
    """A die resting on the simulated tray; ``leaning`` when it rests cocked on another die."""

    value: int
    center: Point
    angle: float
    zone: str  # "roll", "keep" or "outside"
    leaning: bool = False
    tilt: float = 0.0
    tilt_toward: float = 0.0


@dataclass(frozen=True)
class TrayTruth:
    """What the tray really shows in a frame: the resting dice, or motion, or a hand."""

    dice: tuple[PlacedDie, ...]
    moving: bool = False
    hand: bool = False

    def faces(self, zone: str) -> list[int]:
        return sorted(d.value for d in self.dice if d.zone == zone)

    @property
    def clean(self) -> bool:
        """A throw a perfect reader accepts: still, no hand, no cocked die, none outside."""
        return not (self.moving or self.hand
                    or any(d.leaning or d.zone == "outside" for d in self.dice))


@dataclass(frozen=True)
class VariedLook:
    """One throw's look in the varied scene: die side, dice sets, the tray's light and camera
    (TraySpec options, without noise and JPEG), and the sensor's noise and JPEG per frame."""

    side: float
    sets: tuple[str, ...]
    tray: dict[str, Any] = field(default_factory=dict)
    make: dict[str, float] = field(default_factory=dict)
    noise_gain: float = 1.0  # this throw's sensor noise against the tray's own
    jpeg_quality: int | None = None

    def die_spec(self, die: PlacedDie, index: int, side: float) -> DieSpec:
        """The die drawn in this look; a mixed cup gives the dice their sets in turn."""
        look = VARIED_DICE[self.sets[index % len(self.sets)]]
        return DieSpec(die.value, die.center, side, die.angle, look.body, look.pips,
                       tilt_deg=die.tilt, tilt_toward_deg=die.tilt_toward,
                       translucent=look.translucent, marble_bgr=look.marble, marble_seed=index,
                       **self.make)


def varied_look(seed: int, number: int, layout: TrayLayout, noise: float) -> VariedLook:
    """The look of throw ``number`` of a tray seeded ``seed`` (its own generator: the classic
    scene's draws stay as they were); ``noise`` is the tray's sensor noise (grey levels)."""
    rng = np.random.default_rng((seed, number, 39))
    scene = varied_scene(rng, width=layout.width, height=layout.height, side=VARIED_SIDE)
    tray = dict(scene.tray)
    # Noise and JPEG go on each frame (`SimulatedTray.noisy`), not on the drawn picture.
    sigma = float(tray.pop("noise_sigma"))
    quality = tray.pop("jpeg_quality")
    return VariedLook(round(scene.side, 1), scene.sets, tray, scene.make,
                      sigma / noise if noise else 0.0, quality)
