"""Textures of the renderer (`vision.lab.render`): die faces (plain or marbled, with pips) and
the tray's floor (card, wood, felt, paper, slate, light plastic, white board) and wall.
"""

from __future__ import annotations

import math
from functools import lru_cache

import cv2
import numpy as np

from vision.lab.render_specs import ALL_FLOORS, BGR, PIP_LAYOUTS, TraySpec


def smooth_noise(rng: np.random.Generator, width: int, height: int, cell: float) -> np.ndarray:
    """Zero-mean, roughly unit-variance noise varying over about `cell` pixels."""
    gw, gh = max(2, int(width / cell) + 2), max(2, int(height / cell) + 2)
    grid = rng.normal(0.0, 1.0, (gh, gw)).astype(np.float32)
    return cv2.resize(grid, (width, height), interpolation=cv2.INTER_CUBIC)


def draw_floor(spec: TraySpec, rng: np.random.Generator) -> np.ndarray:
    """The floor's picture (float32 BGR), before light and shadows."""
    w, h = spec.width, spec.height
    base = np.array(spec.floor_bgr or ALL_FLOORS[spec.floor], np.float32)
    scale = max(w, h) / 640.0
    if spec.floor == "wood":
        # Long, gently wavy growth lines plus fine streaks stretched along the grain.
        angle = rng.uniform(-0.15, 0.15)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        across = -xx * math.sin(angle) + yy * math.cos(angle)
        warp = across + 5 * scale * smooth_noise(rng, w, h, 220 * scale)
        period = rng.uniform(24, 48) * scale
        rings = (0.5 + 0.5 * np.sin(2 * math.pi * warp / period)) ** 3
        streaks = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0),
                                   sigmaX=12 * scale, sigmaY=0.7)
        streaks /= max(float(streaks.std()), 1e-6)
        shade = 1.0 - 0.08 * rings - 0.012 * streaks + 0.03 * smooth_noise(rng, w, h, 160 * scale)
        grain = rng.normal(0, 1.5, (h, w)).astype(np.float32)
        img = base[None, None, :] * shade[..., None] + grain[..., None]
    elif spec.floor == "felt":
        fibres = cv2.GaussianBlur(rng.normal(0, 9, (h, w)).astype(np.float32), (0, 0), 0.8)
        shade = 1.0 + 0.04 * smooth_noise(rng, w, h, 150 * scale)
        img = base[None, None, :] * shade[..., None] + fibres[..., None]
    elif spec.floor == "plastic":
        # Moulded plastic: a fine matte stipple, nearly no blotches, no specks.
        stipple = cv2.GaussianBlur(rng.normal(0, 2.2, (h, w)).astype(np.float32), (0, 0), 0.9)
        shade = 1.0 + 0.012 * smooth_noise(rng, w, h, 200 * scale)
        img = base[None, None, :] * shade[..., None] + stipple[..., None]
    elif spec.floor == "white":
        # A white board: very fine grain and a faint unevenness.
        grain = cv2.GaussianBlur(rng.normal(0, 1.5, (h, w)).astype(np.float32), (0, 0), 0.6)
        shade = 1.0 + 0.01 * smooth_noise(rng, w, h, 160 * scale)
        img = base[None, None, :] * shade[..., None] + grain[..., None]
    else:  # card, paper and slate: fine grain, gentle blotches, a few specks
        grain = cv2.GaussianBlur(rng.normal(0, 4, (h, w)).astype(np.float32), (0, 0), 0.6)
        shade = 1.0 + 0.025 * smooth_noise(rng, w, h, 80 * scale)
        img = base[None, None, :] * shade[..., None] + grain[..., None]
        for _ in range(int(rng.integers(0, 6))):
            centre = (int(rng.integers(0, w)), int(rng.integers(0, h)))
            cv2.circle(img, centre, int(rng.integers(1, 3)), (base * 0.55).tolist(), -1)
    return img.astype(np.float32)


def _marble_mix(size: int, seed: int) -> np.ndarray:
    """Share (0..1, float32 size x size) of the second colour in a marbled face: veined bands
    bent by smooth noise, as plastic of two colours stirred before it sets."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / max(size, 1)
    angle = rng.uniform(0, math.pi)
    along = xx * math.cos(angle) + yy * math.sin(angle)
    bend = smooth_noise(rng, size, size, size / 2.2) + 0.35 * smooth_noise(rng, size, size,
                                                                             size / 6.0)
    waves = np.sin(2 * math.pi * (rng.uniform(0.9, 1.7) * along + 0.5 * bend))
    # Veins of the second colour where the waves cross zero, thick and thin, with short
    # blends at their edges: two colours, not a grey average of both.
    width = 0.55 + 0.35 * smooth_noise(rng, size, size, size / 3.0)
    return np.clip((width - np.abs(waves)) * 3.0 + 0.5, 0.0, 1.0).astype(np.float32)


def rounded_square_outline(radius: float, per_corner: int = 8) -> np.ndarray:
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
def pip_uv(value: int, spread: float) -> list[tuple[float, float]]:
    """The pip centres of a face of ``value`` in face coordinates (0..1), the corner pips
    ``spread`` from the face's edges."""

    def along(t: float) -> float:
        return spread + (t - 0.25) / 0.5 * (1 - 2 * spread) if t != 0.5 else 0.5

    return [(along(u), along(v)) for u, v in PIP_LAYOUTS[value]]


def face_texture(
    value: int,
    size: int,
    body: BGR,
    pip: BGR,
    radius: float,
    pip_diameter: float,
    spread: float,
    marble: BGR | None = None,
    marble_seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(colour float32 HxWx3, alpha float32 HxW, pip mask float32 HxW) of one face, square."""
    ss = 4  # drawn supersampled, then averaged down: smooth pip and corner edges
    big = size * ss
    alpha = np.zeros((big, big), np.uint8)
    outline = rounded_square_outline(radius, 16) * (big - 1)
    cv2.fillPoly(alpha, [np.round(outline).astype(np.int32)], 255, cv2.LINE_AA)

    body_f = np.array(body, np.float32)
    # Rounded edges catch less light than the flat face: a darker rim fading inwards.
    dist = cv2.distanceTransform((alpha > 127).astype(np.uint8), cv2.DIST_L2, 5) / big
    rim = 1.0 - 0.22 * np.exp(-dist / 0.045)
    if marble is None:
        colour = body_f[None, None, :] * rim[..., None]
    else:
        # Each face of a marbled die shows its own part of the swirl.
        mix = cv2.resize(_marble_mix(size, marble_seed * 7 + value), (big, big),
                         interpolation=cv2.INTER_LINEAR)[..., None]
        swirl = body_f * (1 - mix) + np.array(marble, np.float32) * mix
        colour = swirl * rim[..., None]

    pips = np.zeros((big, big), np.uint8)
    rims = np.zeros((big, big), np.uint8)
    rp = pip_diameter / 2.0 * big
    for uu, vv in pip_uv(value, spread):
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


def draw_rim(img: np.ndarray, spec: TraySpec, light: np.ndarray) -> None:
    """The tray's wall along the image edges: each side lit by how much it faces the light,
    a bright line along its top edge and a dark line where it meets the floor."""
    if spec.rim <= 0:
        return
    h, w = img.shape[:2]
    r = max(1, round(spec.rim))
    floor = np.array(spec.floor_bgr or ALL_FLOORS[spec.floor], np.float32)
    colour = np.array(spec.rim_bgr, np.float32) if spec.rim_bgr is not None else floor * 0.72
    # (band, inward normal): the inner face of each wall looks toward the tray's middle.
    sides = (((slice(0, r), slice(0, w)), (0.0, 1.0)),
             ((slice(h - r, h), slice(0, w)), (0.0, -1.0)),
             ((slice(0, h), slice(0, r)), (1.0, 0.0)),
             ((slice(0, h), slice(w - r, w)), (-1.0, 0.0)))
    for (rows, cols), (nx, ny) in sides:
        facing = nx * float(light[0]) + ny * float(light[1])
        img[rows, cols] = colour * (0.85 + 0.3 * facing)
    inner = np.zeros((h, w), np.uint8)
    cv2.rectangle(inner, (r, r), (w - 1 - r, h - 1 - r), 255, 1)
    img[inner > 0] *= 0.55
    edge = np.zeros((h, w), np.uint8)
    cv2.rectangle(edge, (max(r // 3, 0), max(r // 3, 0)), (w - 1 - r // 3, h - 1 - r // 3), 255, 1)
    img[edge > 0] = np.minimum(img[edge > 0] * 1.25 + 12, 255)
