"""How the renderer (`vision.lab.render`) draws: dice posed in 3D under a pinhole camera,
soft shadows and hands. Face and floor textures are in `vision.lab.render_texture`, the light's
sheen and glare in `vision.lab.render_light`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.lab.render_light import glint_spot, highlight
from vision.lab.render_specs import DieSpec, DieTruth, HandSpec, TraySpec
from vision.lab.render_texture import face_texture, pip_uv, rounded_square_outline

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


def die_faces(die: DieSpec) -> list[_Face]:
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


class Camera:
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


def light_vector(spec: TraySpec) -> np.ndarray:
    az, el = math.radians(spec.light_azimuth_deg), math.radians(spec.light_elevation_deg)
    return np.array([math.cos(az) * math.cos(el), math.sin(az) * math.cos(el), math.sin(el)])


# --------------------------------------------------------------------------------------------
# Floor, shadows, hands, dice


def soft_blur(field_: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur of a float image; wide blurs run at reduced size (same look, far faster)."""
    if sigma <= 4.0:
        return cv2.GaussianBlur(field_, (0, 0), sigma)
    factor = sigma / 2.0
    h, w = field_.shape[:2]
    small = cv2.resize(field_, (max(1, round(w / factor)), max(1, round(h / factor))),
                       interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), 2.0)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def hand_mask(hand: HandSpec, width: int, height: int, rng: np.random.Generator) -> np.ndarray:
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


def draw_hand(
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


def _die_silhouette(faces: list[_Face], camera: Camera, die: DieSpec) -> np.ndarray:
    outline = rounded_square_outline(die.corner_radius)
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


def shadow_polygon(faces: list[_Face], light: np.ndarray) -> np.ndarray:
    """The die's shadow on the floor: its corners slid along the light onto z = 0."""
    corners = np.concatenate([f.corners for f in faces])
    on_floor = corners[:, :2] - light[None, :2] * (corners[:, 2:] / max(light[2], 1e-3))
    return cv2.convexHull(np.concatenate([on_floor, corners[:, :2]]).astype(np.float32))


def draw_die(
    img: np.ndarray, die: DieSpec, camera: Camera, light: np.ndarray, gloss: float,
    glint: tuple[float, np.ndarray] | None = None,
) -> DieTruth:
    """Draw `die` into `img` (float BGR, in place) and return its truth. `glint` is the
    (strength, image direction) of the lamp's reflection on its top face (`die_glint`)."""
    faces = die_faces(die)
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
        pip_polarity="dark" if sum(die.pip_bgr) < _body_sum(die) else "light",
        pips=tuple((float(x), float(y)) for x, y in camera.project(
            _face_points(top, np.array(pip_uv(die.value, die.pip_spread))))),
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
        tex, alpha, pips = face_texture(
            face.value, tex_size, die.body_bgr, die.pip_bgr,
            die.corner_radius, die.pip_diameter, die.pip_spread,
            die.marble_bgr, die.marble_seed,
        )
        dst = (camera.project(face.corners) - offset).astype(np.float32)
        homography = cv2.getPerspectiveTransform(tex_corners, dst)
        warp = {"dsize": size, "flags": cv2.INTER_LINEAR, "borderMode": cv2.BORDER_CONSTANT}
        lit = tex * shade(face.normal)
        premul = cv2.warpPerspective(lit * alpha[..., None], homography, **warp)
        if face is top and gloss > 0:
            premul *= highlight(size, top_px - offset, light, gloss)[..., None]
        a = cv2.warpPerspective(alpha, homography, **warp)
        p = cv2.warpPerspective(pips * alpha, homography, **warp)
        # A side face seen nearly edge-on maps onto a sliver through a near-singular
        # homography, whose warp leaves NaN at a few pixels: they take nothing of that face.
        premul, a, p = (np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0) for x in (premul, a, p))
        if face is top and glint is not None and glint[0] > 0:
            premul += (glint_spot(size, top_px - offset, *glint) * a)[..., None]
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


def _body_sum(die: DieSpec) -> float:
    """Sum of the body's channels; a marbled body is about half each colour."""
    if die.marble_bgr is None:
        return float(sum(die.body_bgr))
    return (sum(die.body_bgr) + sum(die.marble_bgr)) / 2.0


def draw_order(dice: Sequence[DieSpec], camera: Camera) -> list[int]:
    """Painter's order: dice resting on others last, else far from the camera axis first."""

    def key(i: int) -> tuple[bool, float]:
        d = dice[i]
        return (d.tilt_deg > 0 or d.lift > 0, -math.hypot(d.center[0] - camera.cx,
                                                        d.center[1] - camera.cy))

    return sorted(range(len(dice)), key=key)
