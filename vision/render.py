"""Synthetic dice-tray photos with ground truth, for tests without the dataset and the demo tray.

Each die is modelled as a cube with rounded edges, posed in 3D (rotation about the vertical axis,
an optional lean when it rests on another die) and seen by a pinhole camera above the tray centre,
so dice away from the centre show a side face, as in real photos. Faces carry pips with the real
layout (centres at 0.25/0.5/0.75 of the face, diameter about 0.19 of the side, darker rims);
the floor is textured (grey card, wood, felt, paper, slate), dice cast soft shadows, and the image
gets a lighting gradient, vignetting, blur, sensor noise and optionally JPEG compression.
Everything is numpy + OpenCV and deterministic for a given seed.

    spec = random_tray(np.random.default_rng(7), n_dice=5, cocked=1)
    shot = render_tray(spec, seed=7)          # shot.image (BGR uint8), shot.truth (DieTruth, ...)

`python -m vision.render --out DIR` writes example PNGs (and their truth as JSON).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import cv2
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
    lowest point above the floor (pixels).
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

    def __post_init__(self) -> None:
        if int(self.width) < 8 or int(self.height) < 8:
            raise ValueError(f"tray image must be at least 8x8, got {self.width}x{self.height}")
        if self.floor not in FLOORS:
            raise ValueError(f"unknown floor {self.floor!r}; one of {', '.join(FLOORS)}")
        if not 5.0 <= self.light_elevation_deg <= 90.0:
            raise ValueError("light_elevation_deg must be within 5..90")
        if self.jpeg_quality is not None and not 1 <= self.jpeg_quality <= 100:
            raise ValueError("jpeg_quality must be within 1..100")
        if not self.exposure > 0 or len(self.white_balance) != 3 or min(self.white_balance) <= 0:
            raise ValueError("exposure and the three white_balance gains must be positive")
        object.__setattr__(self, "white_balance", tuple(float(g) for g in self.white_balance))
        object.__setattr__(self, "width", int(self.width))
        object.__setattr__(self, "height", int(self.height))
        object.__setattr__(self, "dice", tuple(self.dice))
        object.__setattr__(self, "hands", tuple(self.hands))
        if self.floor_bgr is not None:
            object.__setattr__(self, "floor_bgr", _check_bgr("floor_bgr", self.floor_bgr))


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

    def to_json(self) -> dict:
        """A JSON-ready dict."""
        return {
            "value": self.value,
            "center": [round(c, 2) for c in self.center],
            "corners": [[round(x, 2), round(y, 2)] for x, y in self.corners],
            "cocked": self.cocked,
            "side": round(self.side, 2),
            "pip_polarity": self.pip_polarity,
        }


@dataclass(frozen=True)
class RenderedTray:
    """A rendered picture and its truth: dice in the spec's order, hand outlines as polygons."""

    image: np.ndarray
    truth: tuple[DieTruth, ...]
    hands: tuple[np.ndarray, ...] = field(default=())
    spec: TraySpec | None = None


# --------------------------------------------------------------------------------------------
# Geometry


def _rotation(die: DieSpec) -> np.ndarray:
    """World-from-die rotation: turn about the vertical, then lean the top toward the tilt."""
    a = math.radians(die.angle_deg)
    turn = np.array(
        [[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]]
    )
    if die.tilt_deg == 0.0:
        return turn
    d = math.radians(die.tilt_toward_deg)
    # Axis z x d turns the vertical toward d by the tilt angle.
    axis = np.array([-math.sin(d), math.cos(d), 0.0]) * math.radians(die.tilt_deg)
    lean, _ = cv2.Rodrigues(axis)
    return lean @ turn


@dataclass(frozen=True)
class _Face:
    value: int
    normal: np.ndarray  # world
    corners: np.ndarray  # 4x3 world points for (u, v) = (0,0), (1,0), (1,1), (0,1)


def _side_values(top: int) -> tuple[int, int]:
    rest = [v for v in range(1, 7) if v not in (top, 7 - top)]
    return rest[0], rest[1] if rest[1] != 7 - rest[0] else rest[2]


def _die_faces(die: DieSpec) -> list[_Face]:
    """The six faces of the posed die in world coordinates (x, y image axes; z up)."""
    h = die.side / 2.0
    rot = _rotation(die)
    a, b = _side_values(die.value)
    ex, ey, ez = np.eye(3)
    # (value, normal, u axis, v axis) in die coordinates; opposite faces sum to seven.
    local = [
        (die.value, ez, ex, ey),
        (7 - die.value, -ez, ex, -ey),
        (a, ex, ey, ez),
        (7 - a, -ex, -ey, ez),
        (b, ey, -ex, ez),
        (7 - b, -ey, ex, ez),
    ]
    corner_uv = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float) * 2.0 - 1.0
    faces = []
    for value, n, u, v in local:
        pts = np.array([n * h + cu * h * u + cv * h * v for cu, cv in corner_uv]) @ rot.T
        faces.append(_Face(value, rot @ n, pts))
    all_z = np.concatenate([f.corners[:, 2] for f in faces])
    shift = np.array([die.center[0], die.center[1], die.lift - all_z.min()])
    return [_Face(f.value, f.normal, f.corners + shift) for f in faces]


class _Camera:
    """A pinhole camera looking straight down at the image centre from `height` pixels."""

    def __init__(self, width: int, height: int, camera_height: float | None) -> None:
        self.cx, self.cy = width / 2.0, height / 2.0
        self.h = 1.6 * max(width, height) if camera_height is None else float(camera_height)
        if not self.h > 0:
            raise ValueError(f"camera_height must be positive, got {camera_height!r}")

    def project(self, pts: np.ndarray) -> np.ndarray:
        pts = np.asarray(pts, dtype=float)
        if math.isinf(self.h):
            return pts[..., :2].copy()
        scale = self.h / np.maximum(self.h - pts[..., 2], 1e-3)
        out = np.empty((*pts.shape[:-1], 2))
        out[..., 0] = self.cx + (pts[..., 0] - self.cx) * scale
        out[..., 1] = self.cy + (pts[..., 1] - self.cy) * scale
        return out

    def sees(self, face: _Face) -> bool:
        centre = face.corners.mean(axis=0)
        if math.isinf(self.h):
            return face.normal[2] > 1e-6
        to_camera = np.array([self.cx, self.cy, self.h]) - centre
        return float(face.normal @ to_camera) > 1e-6


def _light_vector(spec: TraySpec) -> np.ndarray:
    az, el = math.radians(spec.light_azimuth_deg), math.radians(spec.light_elevation_deg)
    return np.array([math.cos(az) * math.cos(el), math.sin(az) * math.cos(el), math.sin(el)])


# --------------------------------------------------------------------------------------------
# Face textures


def _rounded_square_outline(radius: float, per_corner: int = 8) -> np.ndarray:
    """Points (u, v) in 0..1 around a square with corners rounded by `radius`."""
    r = max(radius, 1e-3)
    centres = ((1 - r, 1 - r), (r, 1 - r), (r, r), (1 - r, r))
    pts = []
    for k, (cx, cy) in enumerate(centres):
        for t in np.linspace(0, math.pi / 2, per_corner):
            a = k * math.pi / 2 + t
            pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    return np.array(pts)


@lru_cache(maxsize=256)
def _face_texture(
    value: int,
    size: int,
    body: BGR,
    pip: BGR,
    radius: float,
    pip_diameter: float,
    spread: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(colour float32 HxWx3, alpha float32 HxW, pip mask float32 HxW) of one face, square."""
    ss = 4  # drawn supersampled, then averaged down: smooth pip and corner edges
    big = size * ss
    alpha = np.zeros((big, big), np.uint8)
    outline = _rounded_square_outline(radius, 16) * (big - 1)
    cv2.fillPoly(alpha, [np.round(outline).astype(np.int32)], 255, cv2.LINE_AA)

    body_f = np.array(body, np.float32)
    # Rounded edges catch less light than the flat face: a darker rim fading inwards.
    dist = cv2.distanceTransform((alpha > 127).astype(np.uint8), cv2.DIST_L2, 5) / big
    rim = 1.0 - 0.22 * np.exp(-dist / 0.045)
    colour = body_f[None, None, :] * rim[..., None]

    pips = np.zeros((big, big), np.uint8)
    rims = np.zeros((big, big), np.uint8)
    rp = pip_diameter / 2.0 * big
    for u, v in PIP_LAYOUTS[value]:
        uu = spread + (u - 0.25) / 0.5 * (1 - 2 * spread) if u != 0.5 else 0.5
        vv = spread + (v - 0.25) / 0.5 * (1 - 2 * spread) if v != 0.5 else 0.5
        centre = (round(uu * big), round(vv * big))
        cv2.circle(pips, centre, round(rp), 255, -1, cv2.LINE_AA)
        wall = max(1, round(0.25 * rp))
        cv2.circle(rims, centre, round(rp - wall / 2), 255, wall, cv2.LINE_AA)
    pip_f = np.array(pip, np.float32)
    # Pip paint sits in a dimple: a darker ring where its wall is in shade.
    rim_colour = pip_f * 0.6
    p = (pips.astype(np.float32) / 255.0)[..., None]
    r = (rims.astype(np.float32) / 255.0)[..., None] * p
    colour = colour * (1 - p) + (pip_f * (1 - r) + rim_colour * r) * p

    colour = cv2.resize(colour, (size, size), interpolation=cv2.INTER_AREA)
    alpha_f = cv2.resize(alpha.astype(np.float32) / 255.0, (size, size), cv2.INTER_AREA)
    pip_mask = cv2.resize(pips.astype(np.float32) / 255.0, (size, size), cv2.INTER_AREA)
    return colour.astype(np.float32), alpha_f.astype(np.float32), pip_mask.astype(np.float32)


# --------------------------------------------------------------------------------------------
# Floor, shadows, hands, dice


def _soft_blur(field_: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur of a float image; wide blurs run at reduced size (same look, far faster)."""
    if sigma <= 4.0:
        return cv2.GaussianBlur(field_, (0, 0), sigma)
    factor = sigma / 2.0
    h, w = field_.shape[:2]
    small = cv2.resize(field_, (max(1, round(w / factor)), max(1, round(h / factor))),
                       interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), 2.0)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _smooth_noise(rng: np.random.Generator, width: int, height: int, cell: float) -> np.ndarray:
    """Zero-mean, roughly unit-variance noise varying over about `cell` pixels."""
    gw, gh = max(2, int(width / cell) + 2), max(2, int(height / cell) + 2)
    grid = rng.normal(0.0, 1.0, (gh, gw)).astype(np.float32)
    return cv2.resize(grid, (width, height), interpolation=cv2.INTER_CUBIC)


def _floor(spec: TraySpec, rng: np.random.Generator) -> np.ndarray:
    w, h = spec.width, spec.height
    base = np.array(spec.floor_bgr or FLOORS[spec.floor], np.float32)
    scale = max(w, h) / 640.0
    if spec.floor == "wood":
        # Long, gently wavy growth lines plus fine streaks stretched along the grain.
        angle = rng.uniform(-0.15, 0.15)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        across = -xx * math.sin(angle) + yy * math.cos(angle)
        warp = across + 5 * scale * _smooth_noise(rng, w, h, 220 * scale)
        period = rng.uniform(24, 48) * scale
        rings = (0.5 + 0.5 * np.sin(2 * math.pi * warp / period)) ** 3
        streaks = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0),
                                   sigmaX=12 * scale, sigmaY=0.7)
        streaks /= max(float(streaks.std()), 1e-6)
        shade = 1.0 - 0.08 * rings - 0.012 * streaks + 0.03 * _smooth_noise(rng, w, h, 160 * scale)
        grain = rng.normal(0, 1.5, (h, w)).astype(np.float32)
        img = base[None, None, :] * shade[..., None] + grain[..., None]
    elif spec.floor == "felt":
        fibres = cv2.GaussianBlur(rng.normal(0, 9, (h, w)).astype(np.float32), (0, 0), 0.8)
        shade = 1.0 + 0.04 * _smooth_noise(rng, w, h, 150 * scale)
        img = base[None, None, :] * shade[..., None] + fibres[..., None]
    else:  # card, paper and slate: fine grain, gentle blotches, a few specks
        grain = cv2.GaussianBlur(rng.normal(0, 4, (h, w)).astype(np.float32), (0, 0), 0.6)
        shade = 1.0 + 0.025 * _smooth_noise(rng, w, h, 80 * scale)
        img = base[None, None, :] * shade[..., None] + grain[..., None]
        for _ in range(int(rng.integers(0, 6))):
            centre = (int(rng.integers(0, w)), int(rng.integers(0, h)))
            cv2.circle(img, centre, int(rng.integers(1, 3)), (base * 0.55).tolist(), -1)
    return img.astype(np.float32)


def _hand_mask(hand: HandSpec, width: int, height: int, rng: np.random.Generator) -> np.ndarray:
    """Float mask 0..1 of an irregular palm with fingers."""
    mask = np.zeros((height, width), np.uint8)
    cx, cy = hand.center
    a = math.radians(hand.angle_deg)
    angles = np.linspace(0, 2 * math.pi, 40, endpoint=False)
    wobble = 1.0 + 0.1 * np.convolve(rng.normal(0, 1, 46), np.ones(7) / 7, "valid")[:40]
    rx, ry = hand.size * 1.0, hand.size * 1.2
    pts = np.stack(
        [
            cx + wobble * (rx * np.cos(angles) * math.cos(a) - ry * np.sin(angles) * math.sin(a)),
            cy + wobble * (rx * np.cos(angles) * math.sin(a) + ry * np.sin(angles) * math.cos(a)),
        ],
        axis=1,
    )
    cv2.fillPoly(mask, [np.round(pts).astype(np.int32)], 255, cv2.LINE_AA)
    for k in range(hand.fingers):
        spread = (k - (hand.fingers - 1) / 2) * 0.26 + rng.normal(0, 0.04)
        fa = a + spread
        length = hand.size * rng.uniform(1.0, 1.4)
        base = (cx + 0.7 * hand.size * math.cos(fa), cy + 0.7 * hand.size * math.sin(fa))
        tip = (base[0] + length * math.cos(fa), base[1] + length * math.sin(fa))
        thick = max(2, round(hand.size * rng.uniform(0.42, 0.52)))
        cv2.line(mask, tuple(map(round, base)), tuple(map(round, tip)), 255, thick, cv2.LINE_AA)
    return mask.astype(np.float32) / 255.0


def _draw_hand(
    img: np.ndarray, mask: np.ndarray, hand: HandSpec, rng: np.random.Generator
) -> None:
    inside = (mask > 0.5).astype(np.uint8)
    dist = cv2.distanceTransform(inside, cv2.DIST_L2, 5)
    # A rounded volume: brighter in the middle, darker toward its silhouette.
    shade = 0.72 + 0.38 * np.clip(dist / (0.6 * hand.size), 0, 1)
    skin = np.array(hand.skin_bgr, np.float32)
    texture = cv2.GaussianBlur(
        rng.normal(0, 3, mask.shape).astype(np.float32), (0, 0), 2.0
    )
    colour = skin[None, None, :] * shade[..., None] + texture[..., None]
    soft = cv2.GaussianBlur(mask, (0, 0), 1.0)[..., None]
    img *= 1 - soft
    img += colour * soft


def _die_silhouette(faces: list[_Face], camera: _Camera, die: DieSpec) -> np.ndarray:
    outline = _rounded_square_outline(die.corner_radius)
    pts = []
    for face in faces:
        if camera.sees(face):
            pts.append(camera.project(_face_points(face, outline)))
    return cv2.convexHull(np.concatenate(pts).astype(np.float32)).reshape(-1, 2)


def _face_points(face: _Face, uv: np.ndarray) -> np.ndarray:
    """World points of face coordinates (u, v) by bilinear interpolation of its corners."""
    c = face.corners
    u, v = uv[:, :1], uv[:, 1:]
    return (1 - u) * (1 - v) * c[0] + u * (1 - v) * c[1] + u * v * c[2] + (1 - u) * v * c[3]


def _shadow_polygon(faces: list[_Face], light: np.ndarray) -> np.ndarray:
    """The die's shadow on the floor: its corners slid along the light onto z = 0."""
    corners = np.concatenate([f.corners for f in faces])
    on_floor = corners[:, :2] - light[None, :2] * (corners[:, 2:] / max(light[2], 1e-3))
    return cv2.convexHull(np.concatenate([on_floor, corners[:, :2]]).astype(np.float32))


def _draw_die(
    img: np.ndarray, die: DieSpec, camera: _Camera, light: np.ndarray, gloss: float
) -> DieTruth:
    faces = _die_faces(die)
    visible = sorted((f for f in faces if camera.sees(f)), key=lambda f: f.normal[2])
    hull = _die_silhouette(faces, camera, die)
    top = faces[0]  # the die's own top face, whichever way it leans
    top_px = camera.project(top.corners)
    truth = DieTruth(
        value=die.value,
        center=(float(top_px[:, 0].mean()), float(top_px[:, 1].mean())),
        corners=tuple((float(x), float(y)) for x, y in top_px),  # type: ignore[arg-type]
        cocked=die.cocked,
        side=float(np.mean(np.linalg.norm(top_px - np.roll(top_px, 1, axis=0), axis=1))),
        pip_polarity="dark" if sum(die.pip_bgr) < sum(die.body_bgr) else "light",
    )

    h_img, w_img = img.shape[:2]
    x0, y0 = np.floor(hull.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(hull.max(axis=0)).astype(int) + 3
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w_img), min(y1, h_img)
    if x1 <= x0 or y1 <= y0:
        return truth
    size = (x1 - x0, y1 - y0)
    offset = np.array([x0, y0], np.float64)

    sil = np.zeros((size[1], size[0]), np.uint8)
    cv2.fillConvexPoly(sil, np.round((hull - offset) * 16).astype(np.int32), 255, cv2.LINE_AA, 4)
    sil_f = sil.astype(np.float32) / 255.0

    body = np.array(die.body_bgr, np.float32)
    ambient, diffuse = 0.5, 0.5
    top_light = ambient + diffuse * max(light[2], 0.0)

    def shade(normal: np.ndarray) -> float:
        return min(1.15, (ambient + diffuse * max(float(normal @ light), 0.0)) / top_light)

    colour = np.empty((size[1], size[0], 3), np.float32)
    # Where faces meet, the rounded edge is seen at a grazing angle: a darker body colour.
    colour[:] = body * 0.7 * float(np.mean([shade(f.normal) for f in visible]))
    pip_cover = np.zeros((size[1], size[0]), np.float32)

    tex_size = int(np.clip(round(die.side * 1.3), 32, 320))
    tex_corners = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32) * (tex_size - 1)
    for face in visible:
        tex, alpha, pips = _face_texture(
            face.value, tex_size, die.body_bgr, die.pip_bgr,
            die.corner_radius, die.pip_diameter, die.pip_spread,
        )
        dst = (camera.project(face.corners) - offset).astype(np.float32)
        homography = cv2.getPerspectiveTransform(tex_corners, dst)
        warp = {"dsize": size, "flags": cv2.INTER_LINEAR, "borderMode": cv2.BORDER_CONSTANT}
        lit = tex * shade(face.normal)
        premul = cv2.warpPerspective(lit * alpha[..., None], homography, **warp)
        if face is top and gloss > 0:
            premul *= _highlight(size, top_px - offset, light, gloss)[..., None]
        a = cv2.warpPerspective(alpha, homography, **warp)
        p = cv2.warpPerspective(pips * alpha, homography, **warp)
        colour = colour * (1 - a[..., None]) + premul
        pip_cover = np.maximum(pip_cover, p)

    roi = img[y0:y1, x0:x1]
    if die.translucent:
        # Light passes through tinted plastic: the floor shows faintly, coloured by the body.
        seen_through = roi * (body / 255.0)[None, None, :] * 1.1
        opacity = 0.72 + 0.28 * pip_cover
        colour = colour * opacity[..., None] + seen_through * (1 - opacity[..., None])
    roi *= 1 - sil_f[..., None]
    roi += colour * sil_f[..., None]
    return truth


def _highlight(
    size: tuple[int, int], face_px: np.ndarray, light: np.ndarray, gloss: float
) -> np.ndarray:
    """Gain map of a soft sheen on a glossy face, off-centre toward the light."""
    side = float(np.linalg.norm(face_px[1] - face_px[0]))
    centre = face_px.mean(axis=0) + light[:2] * 0.3 * side
    yy, xx = np.mgrid[0:size[1], 0:size[0]].astype(np.float32)
    d2 = (xx - centre[0]) ** 2 + (yy - centre[1]) ** 2
    return (1.0 + gloss * np.exp(-d2 / (2 * (0.3 * side) ** 2))).astype(np.float32)


def _lighting(spec: TraySpec) -> np.ndarray:
    w, h = spec.width, spec.height
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    xs, ys = (xx - w / 2) / (max(w, h) / 2), (yy - h / 2) / (max(w, h) / 2)
    az = math.radians(spec.light_azimuth_deg)
    field_ = 1.0 + spec.gradient * 0.5 * (xs * math.cos(az) + ys * math.sin(az))
    field_ -= spec.vignette * (xs**2 + ys**2) / 2
    return field_


def _draw_order(dice: Sequence[DieSpec], camera: _Camera) -> list[int]:
    """Painter's order: dice resting on others last, else far from the camera axis first."""

    def key(i: int) -> tuple[bool, float]:
        d = dice[i]
        return (d.tilt_deg > 0 or d.lift > 0, -math.hypot(d.center[0] - camera.cx,
                                                        d.center[1] - camera.cy))

    return sorted(range(len(dice)), key=key)


def render_tray(spec: TraySpec, seed: int = 0) -> RenderedTray:
    """Render `spec` to a BGR uint8 image with its truth; same spec and seed, same pixels."""
    rng = np.random.default_rng(seed)
    camera = _Camera(spec.width, spec.height, spec.camera_height)
    light = _light_vector(spec)
    img = _floor(spec, rng)

    # Soft shadows first, on the floor only.
    shadow = np.zeros((spec.height, spec.width), np.float32)
    sides = [d.side for d in spec.dice]
    for die in spec.dice:
        poly = _shadow_polygon(_die_faces(die), light)
        cv2.fillConvexPoly(shadow, np.round(poly * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
    hand_masks = [_hand_mask(hand, spec.width, spec.height, rng) for hand in spec.hands]
    if sides:
        sigma = 0.18 * float(np.median(sides)) + 0.5
        shadow = _soft_blur(shadow, sigma)
    for hand, mask in zip(spec.hands, hand_masks, strict=True):
        # A hand hovers: its shadow is offset away from the light and very soft.
        shift = -light[:2] / max(light[2], 0.2) * hand.size * 0.5
        moved = cv2.warpAffine(mask, np.float32([[1, 0, shift[0]], [0, 1, shift[1]]]),
                               (spec.width, spec.height))
        shadow = np.maximum(shadow, 0.8 * _soft_blur(moved, hand.size * 0.3))
    img *= 1 - spec.shadow_strength * np.clip(shadow, 0, 1)[..., None]

    truths: list[DieTruth | None] = [None] * len(spec.dice)
    for i in _draw_order(spec.dice, camera):
        truths[i] = _draw_die(img, spec.dice[i], camera, light, spec.gloss)
    outlines = []
    for hand, mask in zip(spec.hands, hand_masks, strict=True):
        _draw_hand(img, mask, hand, rng)
        contours, _ = cv2.findContours((mask > 0.5).astype(np.uint8), cv2.RETR_EXTERNAL,
                                       cv2.CHAIN_APPROX_SIMPLE)
        if contours:
            outlines.append(max(contours, key=cv2.contourArea).reshape(-1, 2))

    gains = np.array(spec.white_balance, np.float32) * spec.exposure
    img *= _lighting(spec)[..., None] * gains[None, None, :]
    if spec.blur_sigma > 0:
        img = cv2.GaussianBlur(img, (0, 0), spec.blur_sigma)
    if spec.noise_sigma > 0:
        img += rng.normal(0.0, spec.noise_sigma, img.shape).astype(np.float32)
    image = np.clip(img + 0.5, 0, 255).astype(np.uint8)
    if spec.jpeg_quality is not None:
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, spec.jpeg_quality])
        if ok:
            image = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return RenderedTray(image, tuple(t for t in truths if t is not None), tuple(outlines), spec)


# --------------------------------------------------------------------------------------------
# Random trays


def _lab(colour: BGR) -> np.ndarray:
    return cv2.cvtColor(np.uint8([[colour]]), cv2.COLOR_BGR2LAB)[0, 0].astype(float)


def _far_enough(points: list[tuple[Point, float]], centre: Point, radius: float) -> bool:
    return all(math.dist(centre, c) >= r + radius for c, r in points)


def random_tray(
    rng: np.random.Generator,
    n_dice: int,
    *,
    width: int = 640,
    height: int = 480,
    side: float | tuple[float, float] = (30.0, 48.0),
    floor: str | None = None,
    palette: Sequence[str] | None = None,
    values: Sequence[int] | None = None,
    touching: int = 0,
    cocked: int = 0,
    hand: bool = False,
    min_contrast: float = 30.0,
    **tray_options: object,
) -> TraySpec:
    """A tray of `n_dice` dice at random places, values, rotations and colours.

    Dice never overlap. `touching` pairs stand face to face; `cocked` dice lean on another
    die (each uses two of the `n_dice`). `palette` names entries of COLOUR_COMBOS (default:
    all of them); combos whose body is within `min_contrast` (Lab distance) of the floor are
    skipped. `hand` adds a skin-coloured blob entering from an image edge, clear of the dice.
    `values` fixes the faces, in the order of the returned dice: touching pairs first, then
    (supporting, leaning) pairs, then lone dice. Light, exposure, blur and noise are drawn at
    random; keyword arguments go to TraySpec and win (e.g. noise_sigma=0, camera_height=math.inf).
    Same generator state, same tray.
    """
    if n_dice < 0 or touching < 0 or cocked < 0:
        raise ValueError("n_dice, touching and cocked must not be negative")
    if 2 * (touching + cocked) > n_dice:
        raise ValueError(
            f"{touching} touching pairs and {cocked} cocked dice need at least "
            f"{2 * (touching + cocked)} dice, got {n_dice}"
        )
    if values is not None and len(values) != n_dice:
        raise ValueError(f"values has {len(values)} entries for {n_dice} dice")
    floor = floor or str(rng.choice(list(FLOORS)))
    if floor not in FLOORS:
        raise ValueError(f"unknown floor {floor!r}; one of {', '.join(FLOORS)}")
    floor_colour = FLOORS[floor]
    names = list(palette or COLOUR_COMBOS)
    unknown = [n for n in names if n not in COLOUR_COMBOS]
    if unknown:
        raise ValueError(f"unknown colour combos {unknown}; known: {', '.join(COLOUR_COMBOS)}")
    usable = [
        n for n in names
        if np.linalg.norm(_lab(COLOUR_COMBOS[n][0]) - _lab(floor_colour)) >= min_contrast
    ]
    if not usable:
        raise ValueError(f"no colour combo in {names} contrasts with the {floor} floor")
    lo, hi = (side, side) if isinstance(side, int | float) else side
    base_side = float(rng.uniform(lo, hi))
    # Dice of one set share their make: edge rounding and pip size.
    make = {"corner_radius": float(rng.uniform(0.1, 0.2)),
            "pip_diameter": float(rng.uniform(0.17, 0.21))}

    taken: list[tuple[Point, float]] = []
    hands: list[HandSpec] = []
    if hand:
        edge = int(rng.integers(4))
        along = rng.uniform(0.25, 0.75)
        centre, angle = [
            ((along * width, 0.0), 90.0),
            ((float(width), along * height), 180.0),
            ((along * width, float(height)), 270.0),
            ((0.0, along * height), 0.0),
        ][edge]
        size = 1.8 * base_side
        hands.append(HandSpec(centre, size, angle + rng.uniform(-20, 20),
                              SKIN_TONES[int(rng.integers(len(SKIN_TONES)))]))
        taken.append((centre, size * 2.9))

    def pick_colours() -> tuple[BGR, BGR, bool]:
        return COLOUR_COMBOS[usable[int(rng.integers(len(usable)))]]

    def place(radius: float) -> Point:
        # Room for the side face that perspective shows toward the image centre, too.
        margin = radius + 0.45 * base_side + 2
        for _ in range(2000):
            centre = (rng.uniform(margin, width - margin), rng.uniform(margin, height - margin))
            if _far_enough(taken, centre, radius):
                taken.append((centre, radius))
                return centre
        raise ValueError(f"cannot fit {n_dice} dice of side {base_side:.0f} px in "
                         f"{width}x{height}; use fewer or smaller dice")

    value_iter = iter(values) if values is not None else None

    def next_value() -> int:
        return int(next(value_iter)) if value_iter is not None else int(rng.integers(1, 7))

    def die(centre: Point, angle: float, **extra: object) -> DieSpec:
        body, pips, translucent = pick_colours()
        s = base_side * rng.uniform(0.97, 1.03)
        return DieSpec(next_value(), centre, s, angle, body, pips, translucent=translucent,
                       **make, **extra)  # type: ignore[arg-type]

    dice: list[DieSpec] = []
    half_diag = base_side * 0.75  # circumscribed radius plus a little room
    for _ in range(touching):
        angle = rng.uniform(0, 360)
        centre = place(2.2 * half_diag)
        a = math.radians(angle + 90 * int(rng.integers(4)))
        gap = base_side * 0.52 * 1.02
        slide = base_side * rng.uniform(-0.25, 0.25)
        offset = np.array([math.cos(a), math.sin(a)]) * gap
        across = np.array([-math.sin(a), math.cos(a)]) * slide / 2
        for sign in (-1, 1):
            c = np.array(centre) + sign * (offset + across)
            dice.append(die((float(c[0]), float(c[1])), angle))
    for _ in range(cocked):
        angle = rng.uniform(0, 360)
        tilt = rng.uniform(20.0, 35.0)
        centre = place(2.6 * half_diag)
        a = math.radians(angle + 90 * int(rng.integers(4)))
        t = math.radians(tilt)
        dist = base_side / 2 * (1 + math.cos(t) + math.sin(t)) + 0.5
        half = dist / 2
        u = np.array([math.cos(a), math.sin(a)])
        support = np.array(centre) - u * half
        leaner = np.array(centre) + u * half
        dice.append(die((float(support[0]), float(support[1])), angle))
        dice.append(die((float(leaner[0]), float(leaner[1])), angle + rng.uniform(-4, 4),
                        tilt_deg=tilt, tilt_toward_deg=math.degrees(a)))
    while len(dice) < n_dice:
        dice.append(die(place(half_diag), rng.uniform(0, 360)))
    # Lamps, windows and cameras differ from bar to bar: vary them unless told otherwise.
    warmth = float(rng.uniform(-0.06, 0.06))
    light = {
        "light_azimuth_deg": float(rng.uniform(0, 360)),
        "light_elevation_deg": float(rng.uniform(50, 80)),
        "shadow_strength": float(rng.uniform(0.15, 0.4)),
        "gradient": float(rng.uniform(0.0, 0.2)),
        "exposure": float(rng.uniform(0.85, 1.12)),
        "white_balance": (1.0 - warmth, 1.0, 1.0 + warmth),
        "blur_sigma": float(rng.uniform(0.4, 1.0)),
        "noise_sigma": float(rng.uniform(1.0, 3.5)),
    }
    options = {**light, **tray_options}
    return TraySpec(width=width, height=height, floor=floor, dice=tuple(dice),
                    hands=tuple(hands), **options)  # type: ignore[arg-type]


def draw_truth(shot: RenderedTray) -> np.ndarray:
    """A copy of the image with each die's top face outlined and labelled ('?' when cocked)."""
    image = shot.image.copy()
    for truth in shot.truth:
        colour = (0, 140, 255) if truth.cocked else (40, 200, 40)
        corners = np.round(np.array(truth.corners)).astype(np.int32)
        cv2.polylines(image, [corners], True, colour, 1, cv2.LINE_AA)
        label = "?" if truth.cocked else str(truth.value)
        x, y = corners[:, 0].min(), corners[:, 1].min() - 4
        cv2.putText(image, label, (int(x), int(max(y, 10))), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                    colour, 1, cv2.LINE_AA)
    for outline in shot.hands:
        cv2.polylines(image, [outline.astype(np.int32)], True, (200, 80, 200), 1, cv2.LINE_AA)
    return image


# --------------------------------------------------------------------------------------------
# Command line


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m vision.render`: write example trays as PNG (+ truth JSON)."""
    parser = argparse.ArgumentParser(
        prog="python -m vision.render", description="Render synthetic dice-tray images."
    )
    parser.add_argument("--out", required=True, type=Path,
                        help="a .png file, or a folder for --count images")
    parser.add_argument("--count", type=int, default=1, help="images to write (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--dice", type=int, default=5, help="dice per tray (default 5)")
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument("--side", type=float, default=None, help="die side in px (default random)")
    parser.add_argument("--floor", choices=sorted(FLOORS), default=None)
    parser.add_argument("--touching", type=int, default=0, help="touching pairs")
    parser.add_argument("--cocked", type=int, default=0, help="dice leaning on another")
    parser.add_argument("--hand", action="store_true", help="add a hand-like blob")
    parser.add_argument("--noise", type=float, default=None,
                        help="sensor noise sigma in grey levels (default random 1..3.5)")
    parser.add_argument("--truth", action="store_true", help="also write NAME.json with truth")
    parser.add_argument("--show-truth", action="store_true",
                        help="draw each die's top-face outline and value (cocked: '?')")
    args = parser.parse_args(argv)

    if args.count < 1:
        parser.error("--count must be at least 1")
    single = args.out.suffix.lower() == ".png"
    if single and args.count != 1:
        parser.error("--out names one .png file; give a folder for --count > 1")
    folder = args.out.parent if single else args.out
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(args.count):
        seed = args.seed + k
        try:
            spec = random_tray(
                np.random.default_rng(seed), args.dice, width=args.width, height=args.height,
                side=args.side or (30.0 * min(args.width, args.height) / 480,
                                   48.0 * min(args.width, args.height) / 480),
                floor=args.floor, touching=args.touching, cocked=args.cocked, hand=args.hand,
                **({} if args.noise is None else {"noise_sigma": args.noise}),
            )
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        shot = render_tray(spec, seed)
        image = draw_truth(shot) if args.show_truth else shot.image
        path = args.out if single else folder / f"tray_{seed:04d}.png"
        if not cv2.imwrite(str(path), image):
            print(f"error: cannot write {path}", file=sys.stderr)
            return 1
        if args.truth:
            path.with_suffix(".json").write_text(
                json.dumps([t.to_json() for t in shot.truth], indent=1) + "\n"
            )
        print(f"{path}: {len(shot.truth)} dice, values "
              f"{[t.value for t in shot.truth]}, cocked {sum(t.cocked for t in shot.truth)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
