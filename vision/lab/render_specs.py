"""What the renderer (`vision.lab.render`) draws: trays, dice and hands as specs, and the truth
of a rendered tray.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

BGR = tuple[int, int, int]
Point = tuple[float, float]

#: A die whose top face leans at least this much from horizontal is reported `cocked`.
COCKED_TILT_DEG = 10.0

#: Pip centres on a face in (u, v) face coordinates (u along the face's first edge, 0..1).
#: 2 and 3 run along a diagonal; 6 is two columns of three, as on real dice.
PIP_LAYOUTS: dict[int, tuple[Point, ...]] = {
    1: ((0.5, 0.5),),
    2: ((0.25, 0.25), (0.75, 0.75)),
    3: ((0.25, 0.25), (0.5, 0.5), (0.75, 0.75)),
    4: ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)),
    5: ((0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)),
    6: ((0.25, 0.25), (0.25, 0.5), (0.25, 0.75), (0.75, 0.25), (0.75, 0.5), (0.75, 0.75)),
}

#: Body and pip colours (BGR) of common dice; the last flag marks translucent plastic.
COLOUR_COMBOS: dict[str, tuple[BGR, BGR, bool]] = {
    "ivory/black": ((200, 228, 238), (30, 28, 30), False),
    "white/black": ((236, 236, 234), (25, 25, 28), False),
    "black/white": ((38, 36, 36), (232, 232, 230), False),
    "red/white": ((38, 32, 196), (236, 236, 236), False),
    "blue/white": ((176, 78, 32), (236, 236, 236), False),
    "green/white": ((72, 158, 42), (236, 236, 236), False),
    "yellow/black": ((40, 206, 238), (28, 28, 30), False),
    "white/red": ((234, 234, 232), (40, 36, 192), False),
    "translucent red/white": ((70, 50, 215), (240, 240, 240), True),
    "translucent blue/white": ((205, 120, 60), (240, 240, 240), True),
}

#: Floor kinds and their default colours (BGR).
FLOORS: dict[str, BGR] = {
    "grey": (176, 178, 180),
    "wood": (150, 192, 224),
    "felt": (48, 102, 34),
    "paper": (226, 229, 230),
    "slate": (62, 60, 58),
}

#: Floors drawn only when asked for (`random_tray` picks among FLOORS alone, so that its trays
#: stay as they were): moulded light plastic and a white board.
EXTRA_FLOORS: dict[str, BGR] = {
    "plastic": (208, 212, 214),
    "white": (242, 243, 243),
}

#: Every floor a TraySpec may name.
ALL_FLOORS: dict[str, BGR] = {**FLOORS, **EXTRA_FLOORS}

#: Typical skin tones (BGR) for hand-like blobs.
SKIN_TONES: tuple[BGR, ...] = ((128, 160, 214), (102, 136, 190), (74, 102, 150), (150, 178, 226))


def _check_bgr(name: str, colour: Sequence[int]) -> BGR:
    values = tuple(int(c) for c in colour)
    if len(values) != 3 or not all(0 <= c <= 255 for c in values):
        raise ValueError(f"{name} must be three integers 0..255 (B, G, R), got {colour!r}")
    return values  # type: ignore[return-value]


@dataclass(frozen=True)
class DieSpec:
    """One die on the tray.

    `center` is where the die stands on the floor (image pixels at floor level) and `side` its
    edge length in floor pixels; the camera sees the top face slightly larger and displaced
    outwards. `angle_deg` turns the die about the vertical axis (clockwise on screen, y down).
    `tilt_deg` leans the top face from horizontal toward image direction `tilt_toward_deg`
    (0 = +x, 90 = +y); from COCKED_TILT_DEG on the die counts as cocked. `lift` raises the die's
    lowest point above the floor (pixels). `marble_bgr` swirls a second colour through the
    body (marbled dice), in a pattern fixed by `marble_seed`.
    """

    value: int
    center: Point
    side: float
    angle_deg: float = 0.0
    body_bgr: BGR = (236, 236, 234)
    pip_bgr: BGR = (25, 25, 28)
    tilt_deg: float = 0.0
    tilt_toward_deg: float = 0.0
    corner_radius: float = 0.14  # rounding of the face corners, fraction of the side
    pip_diameter: float = 0.19  # fraction of the side
    pip_spread: float = 0.25  # distance of the outer pip centres from the face edge, fraction
    translucent: bool = False
    lift: float = 0.0
    marble_bgr: BGR | None = None
    marble_seed: int = 0

    def __post_init__(self) -> None:
        if self.value not in PIP_LAYOUTS:
            raise ValueError(f"die value must be 1..6, got {self.value!r}")
        if not self.side > 0:
            raise ValueError(f"die side must be positive, got {self.side!r}")
        if not 0.0 <= self.tilt_deg <= 60.0:
            raise ValueError(f"tilt_deg must be within 0..60, got {self.tilt_deg!r}")
        if not 0.0 <= self.corner_radius <= 0.5:
            raise ValueError(f"corner_radius must be within 0..0.5, got {self.corner_radius!r}")
        if not 0.05 <= self.pip_diameter <= 0.3:
            raise ValueError(f"pip_diameter must be within 0.05..0.3, got {self.pip_diameter!r}")
        object.__setattr__(self, "center", (float(self.center[0]), float(self.center[1])))
        object.__setattr__(self, "body_bgr", _check_bgr("body_bgr", self.body_bgr))
        object.__setattr__(self, "pip_bgr", _check_bgr("pip_bgr", self.pip_bgr))
        if self.marble_bgr is not None:
            object.__setattr__(self, "marble_bgr", _check_bgr("marble_bgr", self.marble_bgr))

    @property
    def cocked(self) -> bool:
        """True when the die leans enough that its top face cannot be trusted."""
        return self.tilt_deg >= COCKED_TILT_DEG


@dataclass(frozen=True)
class HandSpec:
    """A hand-like skin-coloured blob: a palm of radius `size` with fingers toward `angle_deg`."""

    center: Point
    size: float
    angle_deg: float = 0.0
    skin_bgr: BGR = SKIN_TONES[0]
    fingers: int = 4

    def __post_init__(self) -> None:
        if not self.size > 0:
            raise ValueError(f"hand size must be positive, got {self.size!r}")
        object.__setattr__(self, "skin_bgr", _check_bgr("skin_bgr", self.skin_bgr))


@dataclass(frozen=True)
class TraySpec:
    """A whole picture: floor, dice, extras, light and camera.

    `camera_height` is the camera's height above the floor in floor pixels (None: 1.6 times
    the larger image side; math.inf: orthographic, no side faces from perspective). The light
    comes from image direction `light_azimuth_deg` at `light_elevation_deg` above the floor.
    `gradient` and `vignette` are relative brightness changes across the image; `exposure`
    and `white_balance` (B, G, R gains) scale the light before it clips at 255; `noise_sigma`
    is in grey levels; `blur_sigma` in pixels; `jpeg_quality` None keeps the image lossless.
    `shadow_softness` scales how far shadows blur (1: an ordinary lamp; small: a hard lamp's
    sharp shadows). `glare` (0..1) adds the lamp's specular reflection: a bright patch of
    radius `glare_radius` (0: a sixth of the larger image side) on the floor around `glare_at`
    (None: toward the light from the image centre) and a glint on every die's top face, the
    brighter the nearer the die is to the patch. `rim` draws the tray's wall as a band of
    that many pixels along the image edges, in `rim_bgr` (None: a darker floor colour).
    """

    width: int = 640
    height: int = 480
    floor: str = "grey"
    floor_bgr: BGR | None = None
    dice: tuple[DieSpec, ...] = ()
    hands: tuple[HandSpec, ...] = ()
    light_azimuth_deg: float = 225.0
    light_elevation_deg: float = 60.0
    shadow_strength: float = 0.3
    gradient: float = 0.12
    vignette: float = 0.08
    gloss: float = 0.08
    noise_sigma: float = 2.0
    blur_sigma: float = 0.6
    exposure: float = 1.0
    white_balance: tuple[float, float, float] = (1.0, 1.0, 1.0)
    camera_height: float | None = None
    jpeg_quality: int | None = None
    shadow_softness: float = 1.0
    glare: float = 0.0
    glare_at: Point | None = None
    glare_radius: float = 0.0
    rim: float = 0.0
    rim_bgr: BGR | None = None

    def __post_init__(self) -> None:
        if int(self.width) < 8 or int(self.height) < 8:
            raise ValueError(f"tray image must be at least 8x8, got {self.width}x{self.height}")
        if self.floor not in ALL_FLOORS:
            raise ValueError(f"unknown floor {self.floor!r}; one of {', '.join(ALL_FLOORS)}")
        if not 5.0 <= self.light_elevation_deg <= 90.0:
            raise ValueError("light_elevation_deg must be within 5..90")
        if self.jpeg_quality is not None and not 1 <= self.jpeg_quality <= 100:
            raise ValueError("jpeg_quality must be within 1..100")
        if not self.exposure > 0 or len(self.white_balance) != 3 or min(self.white_balance) <= 0:
            raise ValueError("exposure and the three white_balance gains must be positive")
        if not self.shadow_softness > 0 or not 0.0 <= self.glare <= 1.0:
            raise ValueError("shadow_softness must be positive and glare within 0..1")
        if self.glare_radius < 0 or self.rim < 0:
            raise ValueError("glare_radius and rim must not be negative")
        object.__setattr__(self, "white_balance", tuple(float(g) for g in self.white_balance))
        object.__setattr__(self, "width", int(self.width))
        object.__setattr__(self, "height", int(self.height))
        object.__setattr__(self, "dice", tuple(self.dice))
        object.__setattr__(self, "hands", tuple(self.hands))
        if self.floor_bgr is not None:
            object.__setattr__(self, "floor_bgr", _check_bgr("floor_bgr", self.floor_bgr))
        if self.rim_bgr is not None:
            object.__setattr__(self, "rim_bgr", _check_bgr("rim_bgr", self.rim_bgr))


@dataclass(frozen=True)
class DieTruth:
    """What a perfect reader reports for one die, in image pixels.

    `center` and `corners` describe the top face as the camera sees it (corners in face order,
    a rotated rectangle unless the die leans); `side` is the mean edge of that face.
    """

    value: int
    center: Point
    corners: tuple[Point, Point, Point, Point]
    cocked: bool
    side: float
    pip_polarity: str  # "dark" or "light": pips darker or lighter than the body
    #: The centres of the top face's pips as the camera sees them (the face network's training
    #: learns where a face's pips are from them).
    pips: tuple[Point, ...] = ()

    def to_json(self) -> dict:
        """A JSON-ready dict."""
        return {
            "value": self.value,
            "center": [round(c, 2) for c in self.center],
            "corners": [[round(x, 2), round(y, 2)] for x, y in self.corners],
            "cocked": self.cocked,
            "side": round(self.side, 2),
            "pip_polarity": self.pip_polarity,
            "pips": [[round(x, 2), round(y, 2)] for x, y in self.pips],
        }


@dataclass(frozen=True)
class RenderedTray:
    """A rendered picture and its truth: dice in the spec's order, hand outlines as polygons."""

    image: np.ndarray
    truth: tuple[DieTruth, ...]
    hands: tuple[np.ndarray, ...] = field(default=())
    spec: TraySpec | None = None
