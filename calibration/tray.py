"""Step 1, the empty tray: its picture, its outline, and the roll and keep zones in it.

The empty-tray image is the per-pixel median of a few frames (sensor noise and a flicker
average out). The tray's outline is the region of the floor's colour around the image
centre: the floor is what the centre shows, the walls and the bar around it differ from it.
Its four corners (the region's smallest enclosing rotated rectangle) can be given instead
(`--tray`). The roll zone and the keep zone are proposed inside it: the keep zone a strip
along one end of the tray (where a 421 player sets aside the dice kept), the roll zone the
rest, with a gap between them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from calibration.errors import CalibrationError

Point = tuple[float, float]
Quad = list[Point]

KEEP_SIDES = ("right", "left", "top", "bottom", "none")
KEEP_SHARE = 0.24  # of the tray's length along the keep side's axis
ZONE_GAP = 0.04  # between the roll and the keep zone, same unit
ZONE_MARGIN = 0.02  # inside the tray's outline, same unit
MIN_TRAY_SHARE = 0.2  # of the image: a smaller floor region is no tray
FLOOR_SPREAD = 3.0  # x the centre's own colour spread: how far a floor pixel may differ
MIN_FLOOR_DISTANCE = 10.0  # Lab: the least difference that sets a wall apart from the floor
TOO_DIM = 35  # mean lightness (OpenCV 8-bit L) of an image too dark to read dice in
WORK_SIDE = 320  # the outline is looked for at this width (cheap, walls are wide)


def median_image(frames: Sequence[np.ndarray]) -> np.ndarray:
    """The per-pixel median of frames of one size (one frame: itself)."""
    if not frames:
        raise CalibrationError("no picture of the empty tray")
    shapes = {f.shape for f in frames}
    if len(shapes) > 1:
        raise CalibrationError("the empty-tray pictures are not all of one size: take them "
                               "with the tray camera, which does not change its size")
    if len(frames) == 1:
        return frames[0].copy()
    return np.median(np.stack(frames), axis=0).astype(np.uint8)


def lightness(image: np.ndarray) -> float:
    """Mean lightness (OpenCV 8-bit L, 0..255) of a BGR image."""
    return float(cv2.cvtColor(image, cv2.COLOR_BGR2Lab)[:, :, 0].mean())


def check_light(image: np.ndarray, what: str) -> None:
    """`CalibrationError` when ``image`` is too dark for dice to be read in it."""
    level = lightness(image)
    if level < TOO_DIM:
        raise CalibrationError(f"light too dim to read: {what} is dark (lightness {level:.0f} "
                               f"of 255, at least {TOO_DIM} needed); turn the ring light or "
                               "the bar's lamp up, or open the lens")


def find_tray(image: np.ndarray) -> Quad | None:
    """Four corners (clockwise from the top-left, image pixels) of the tray's floor around
    the image centre, or None when no floor region of at least MIN_TRAY_SHARE is found."""
    h, w = image.shape[:2]
    scale = min(1.0, WORK_SIDE / max(h, w))
    small = cv2.resize(image, (max(8, round(w * scale)), max(8, round(h * scale))),
                       interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(cv2.GaussianBlur(small, (5, 5), 0), cv2.COLOR_BGR2Lab).astype(np.float32)
    sh, sw = lab.shape[:2]
    centre = lab[int(sh * 0.35):int(sh * 0.65), int(sw * 0.35):int(sw * 0.65)].reshape(-1, 3)
    floor = np.median(centre, axis=0)
    spread = float(np.median(np.linalg.norm(centre - floor, axis=1)))
    # A cluttered centre (no even floor) or noise: no tray to speak of.
    if spread > 12.0:
        return None
    distance = np.linalg.norm(lab - floor, axis=2)
    mask = (distance <= max(MIN_FLOOR_DISTANCE, FLOOR_SPREAD * spread * 2.0)).astype(np.uint8)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel)
    _, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    label = labels[sh // 2, sw // 2]
    if label == 0 or stats[label, cv2.CC_STAT_AREA] < MIN_TRAY_SHARE * sh * sw:
        return None
    points = np.column_stack(np.nonzero(labels == label)[::-1]).astype(np.float32)
    hull = cv2.convexHull(points)
    # A floor region with ragged edges fills little of its hull: not a tray's outline.
    if stats[label, cv2.CC_STAT_AREA] < 0.75 * cv2.contourArea(hull):
        return None
    box = cv2.boxPoints(cv2.minAreaRect(hull)) / scale
    box[:, 0] = np.clip(box[:, 0], 0, w - 1)
    box[:, 1] = np.clip(box[:, 1], 0, h - 1)
    return order_corners([(float(x), float(y)) for x, y in box])


def order_corners(points: Sequence[Point]) -> Quad:
    """Four points in clockwise order on screen (y down) from the top-left one."""
    pts = np.asarray(points, np.float64)
    centre = pts.mean(axis=0)
    angles = np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0])
    pts = pts[np.argsort(angles)]  # clockwise on screen, from the left
    start = int(np.argmin(pts.sum(axis=1)))
    pts = np.roll(pts, -start, axis=0)
    return [(float(x), float(y)) for x, y in pts]


def parse_tray(text: str) -> Quad:
    """Corners from ``x,y;x,y;x,y;x,y`` (image pixels); `ValueError` saying the form."""
    form = "give four corners as x,y;x,y;x,y;x,y (image pixels)"
    parts = [p for p in text.replace(" ", "").split(";") if p]
    if len(parts) != 4:
        raise ValueError(f"--tray {text!r}: {form}")
    corners: list[Point] = []
    for part in parts:
        xy = part.split(",")
        try:
            x, y = (float(v) for v in xy)
        except ValueError:
            raise ValueError(f"--tray {text!r}: {form}") from None
        if not (math.isfinite(x) and math.isfinite(y)):  # float() takes nan and inf
            raise ValueError(f"--tray {text!r}: {form}")
        if x < 0 or y < 0:
            raise ValueError(f"--tray {text!r}: corners lie in the image (no negative pixels)")
        corners.append((x, y))
    quad = order_corners(corners)
    if cv2.contourArea(np.asarray(quad, np.float32)) < 16:
        raise ValueError(f"--tray {text!r}: the four corners enclose no area")
    return quad


def check_inside(quad: Quad, shape: tuple[int, ...]) -> None:
    """`CalibrationError` when given corners lie outside an image of ``shape``."""
    h, w = shape[:2]
    if any(x > w or y > h for x, y in quad):
        raise CalibrationError(f"--tray: a corner lies outside the camera's {w}x{h} picture")


def _at(quad: Quad, u: float, v: float) -> Point:
    """The point at (u, v) in 0..1 of the tray (u across from left to right, v from top to
    bottom), bilinearly between its corners: a tray seen at a slant is no rectangle."""
    (ax, ay), (bx, by), (cx, cy), (dx, dy) = quad  # top-left, top-right, bottom-right, b-left
    top = (ax + (bx - ax) * u, ay + (by - ay) * u)
    bottom = (dx + (cx - dx) * u, dy + (cy - dy) * u)
    return (round(top[0] + (bottom[0] - top[0]) * v, 1), round(top[1] + (bottom[1] - top[1]) * v,
                                                               1))


def _part(quad: Quad, u0: float, u1: float, v0: float, v1: float) -> list[Point]:
    return [_at(quad, u0, v0), _at(quad, u1, v0), _at(quad, u1, v1), _at(quad, u0, v1)]


def propose_zones(quad: Quad, keep: str = "right") -> tuple[list[Point], list[Point] | None]:
    """(roll zone, keep zone or None) inside the tray ``quad``; the keep zone a strip along
    its ``keep`` side ("none": the whole tray rolls)."""
    if keep not in KEEP_SIDES:
        raise ValueError(f"keep side must be one of {', '.join(KEEP_SIDES)}")
    lo, hi = ZONE_MARGIN, 1.0 - ZONE_MARGIN
    if keep == "none":
        return _part(quad, lo, hi, lo, hi), None
    inner = 1.0 - KEEP_SHARE - ZONE_GAP
    if keep == "right":
        return _part(quad, lo, inner, lo, hi), _part(quad, 1.0 - KEEP_SHARE, hi, lo, hi)
    if keep == "left":
        return _part(quad, 1.0 - inner, hi, lo, hi), _part(quad, lo, KEEP_SHARE, lo, hi)
    if keep == "bottom":
        return _part(quad, lo, hi, lo, inner), _part(quad, lo, hi, 1.0 - KEEP_SHARE, hi)
    return _part(quad, lo, hi, 1.0 - inner, hi), _part(quad, lo, hi, lo, KEEP_SHARE)


def draw(image: np.ndarray, quad: Quad | None, roll: list[Point] | None,
         keep: list[Point] | None) -> np.ndarray:
    """A copy of ``image`` with the tray (blue), roll zone (green) and keep zone (orange)."""
    out = image.copy()
    thick = max(1, round(max(out.shape[:2]) / 400))
    for polygon, colour in ((quad, (255, 120, 0)), (roll, (60, 200, 60)), (keep, (0, 150, 255))):
        if polygon:
            pts = np.round(np.asarray(polygon, np.float32)).astype(np.int32)
            cv2.polylines(out, [pts], True, colour, thick, cv2.LINE_AA)
    return out
