"""Light of the renderer (`vision.lab.render`): the lamp's fall-off over the tray, the soft
sheen of glossy faces and glare, the lamp's specular reflection on the floor and dice tops.
"""

from __future__ import annotations

import math

import numpy as np

from vision.lab.render_specs import TraySpec

#: How much of the lamp each floor mirrors (1: glossy plastic; felt scatters nearly all of it).
FLOOR_GLOSS: dict[str, float] = {
    "grey": 0.5, "wood": 0.75, "felt": 0.2, "paper": 0.4, "slate": 0.9,
    "plastic": 1.0, "white": 0.8,
}

GLARE_LEVEL = 230.0  # grey levels a full glare adds at its core, before exposure


def lighting(spec: TraySpec) -> np.ndarray:
    """Gain map of the lamp's fall-off across the tray and the lens's vignetting."""
    w, h = spec.width, spec.height
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    xs, ys = (xx - w / 2) / (max(w, h) / 2), (yy - h / 2) / (max(w, h) / 2)
    az = math.radians(spec.light_azimuth_deg)
    field_ = 1.0 + spec.gradient * 0.5 * (xs * math.cos(az) + ys * math.sin(az))
    field_ -= spec.vignette * (xs**2 + ys**2) / 2
    return field_


def highlight(
    size: tuple[int, int], face_px: np.ndarray, light: np.ndarray, gloss: float
) -> np.ndarray:
    """Gain map of a soft sheen on a glossy face, off-centre toward the light."""
    side = float(np.linalg.norm(face_px[1] - face_px[0]))
    centre = face_px.mean(axis=0) + light[:2] * 0.3 * side
    yy, xx = np.mgrid[0:size[1], 0:size[0]].astype(np.float32)
    d2 = (xx - centre[0]) ** 2 + (yy - centre[1]) ** 2
    return (1.0 + gloss * np.exp(-d2 / (2 * (0.3 * side) ** 2))).astype(np.float32)


def glare_geometry(spec: TraySpec) -> tuple[np.ndarray, float]:
    """(centre, radius) of the lamp's reflection on the floor, in image pixels."""
    radius = spec.glare_radius or max(spec.width, spec.height) / 6.0
    if spec.glare_at is not None:
        return np.array(spec.glare_at, float), float(radius)
    az = math.radians(spec.light_azimuth_deg)
    reach = 0.3 * min(spec.width, spec.height)
    centre = (spec.width / 2 + reach * math.cos(az), spec.height / 2 + reach * math.sin(az))
    return np.array(centre, float), float(radius)


def _flat_spot(xx: np.ndarray, yy: np.ndarray, centre: np.ndarray, radius: float,
               stretch: float = 1.0, along: float = 0.0) -> np.ndarray:
    """A spot with a flat bright core and a quick fall-off (a mirrored lamp, not a gaussian),
    `stretch` times longer along image direction `along` (radians)."""
    dx, dy = xx - centre[0], yy - centre[1]
    u = (dx * math.cos(along) + dy * math.sin(along)) / stretch
    v = -dx * math.sin(along) + dy * math.cos(along)
    d2 = (u * u + v * v) / max(radius, 1e-3) ** 2
    return (0.85 * np.exp(-d2 * d2) + 0.15 * np.exp(-d2 / 3.0)).astype(np.float32)


def floor_glare(spec: TraySpec) -> np.ndarray:
    """Grey levels the lamp's reflection adds to the floor (HxW float32)."""
    centre, radius = glare_geometry(spec)
    yy, xx = np.mgrid[0:spec.height, 0:spec.width].astype(np.float32)
    # A reflection is drawn out toward the lamp, the more so the lower the lamp.
    stretch = 1.0 + 0.8 * math.cos(math.radians(spec.light_elevation_deg))
    spot = _flat_spot(xx, yy, centre, radius, stretch, math.radians(spec.light_azimuth_deg))
    return spot * (spec.glare * FLOOR_GLOSS.get(spec.floor, 0.5) * GLARE_LEVEL)


def die_glint(spec: TraySpec, top_centre: np.ndarray) -> tuple[float, np.ndarray]:
    """(strength 0..1, unit direction in the image) of the glint on a die's top face: every
    glossy top catches some of the lamp, the nearer the floor's reflection the more."""
    if spec.glare <= 0:
        return 0.0, np.zeros(2)
    centre, radius = glare_geometry(spec)
    gap = centre - np.asarray(top_centre, float)
    dist = float(np.linalg.norm(gap))
    near = math.exp(-(dist**2) / (2 * (2.0 * radius) ** 2))
    direction = gap / dist if dist > 1e-6 else np.zeros(2)
    return spec.glare * (0.45 + 0.55 * near), direction


def glint_spot(size: tuple[int, int], face_px: np.ndarray, strength: float,
               direction: np.ndarray) -> np.ndarray:
    """Grey levels a glint adds on a top face (face corners `face_px` in the same pixels):
    a small flat-topped patch off the face's centre, toward the floor's reflection."""
    side = float(np.mean(np.linalg.norm(face_px - np.roll(face_px, 1, axis=0), axis=1)))
    centre = face_px.mean(axis=0) + direction * 0.22 * side
    yy, xx = np.mgrid[0:size[1], 0:size[0]].astype(np.float32)
    along = math.atan2(float(direction[1]), float(direction[0]))
    return _flat_spot(xx, yy, centre, 0.15 * side, 1.5, along + math.pi / 2) * (
        strength * GLARE_LEVEL)
