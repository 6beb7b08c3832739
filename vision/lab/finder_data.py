"""The die finder's training samples: frames with the dice a finder must find, and the
augmented crops and target grids it learns from.

A sample is a frame and its dice: centre, face side, turn and cocked, each known or not. The
renderer knows everything; a dataset photo knows the centres, the sides roughly (from its
boxes, by the source's box convention) and neither the turn nor the lean. A crop is the frame
turned, mirrored, scaled, cut and relit at random, at the scale the finder reads frames at
(`vision.finder.input_scale`), with its target grids (`targets`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.finder import CHANNELS, STRIDE, input_scale
from vision.image_io import ImageError, load_image
from vision.lab.recolour import dice_only, foreground, recoloured
from vision.lab.scoring import PIP_EXTENT, load_manifest

#: The face side of a die-box photo's dice (nell-byler), x the box's shorter side: the box
#: holds some of the side faces, and a turned die's box is up to 1.41 times its face.
DIE_BOX_FACE = 0.8
#: How much a side derived from a photo's boxes weighs in the loss, against a rendered one.
PHOTO_SIDE_WEIGHT = 0.25


@dataclass
class Sample:
    """A frame (BGR) and its dice: rows of (x, y, side, angle, cocked, side_weight), with NaN
    for the angle or cocked when unknown."""

    image: np.ndarray
    dice: np.ndarray  # (n, 6) float32
    origin: str  # "render" or the photo's source
    # What stands out from the floor (`vision.lab.recolour.foreground`), for a photo whose
    # dice may be repainted; None: never repainted.
    body: np.ndarray | None = None


def photo_samples(dataset: Path, keep: Callable[[dict[str, Any]], bool],
                  log: Callable[[str], None] = print, bodies: bool = False) -> list[Sample]:
    """The dataset's photos with die or pip boxes that ``keep`` accepts, as samples (with
    their foreground when ``bodies``: to repaint their dice)."""
    samples = []
    for rec in load_manifest(dataset):
        if rec.get("bbox_kind") not in ("die", "pips") or not keep(rec):
            continue
        boxes = [(d["value"], d["bbox"]) for d in rec["dice"] if d.get("bbox")]
        if not boxes:
            continue
        try:
            image = load_image(dataset / rec["image"])
        except ImageError:
            log(f"  skipped {rec['image']}: cannot be read")
            continue
        dice = photo_dice(rec["bbox_kind"], boxes)
        body = None
        if bodies:
            # A photo of ones has no side in its boxes: its regions' size stands for it.
            mask, measured = foreground(image)
            sides = np.where(np.isfinite(dice[:, 2]), dice[:, 2], measured or np.nan)
            body = dice_only(mask, np.column_stack([dice[:, :2], sides]))
        samples.append(Sample(image, dice, rec["source"], body))
    return samples


def photo_dice(kind: str, boxes: list[tuple[int, list[float]]]) -> np.ndarray:
    """Rows of `Sample.dice` for a photo's labelled boxes of ``kind`` ("die" or "pips"). A pip
    box spans PIP_EXTENT of the face for two pips or more; a one's box is a pip, so its side is
    the photo's other dice's (one set of dice per photo)."""
    rows = []
    if kind == "die":
        for _, (x, y, w, h) in boxes:
            rows.append((x + w / 2, y + h / 2, DIE_BOX_FACE * min(w, h)))
    else:
        sides = [max(w, h) / PIP_EXTENT for v, (_, _, w, h) in boxes if v >= 2]
        typical = float(np.median(sides)) if sides else math.nan
        for v, (x, y, w, h) in boxes:
            side = max(w, h) / PIP_EXTENT if v >= 2 else typical
            rows.append((x + w / 2, y + h / 2, side))
    out = np.full((len(rows), 6), np.nan, np.float32)
    out[:, :3] = rows
    out[:, 5] = np.where(np.isfinite(out[:, 2]), PHOTO_SIDE_WEIGHT, 0.0)
    return out


def render_samples(seeds: range, cache: Path | None,
                   draw: Callable[[int], Any],
                   log: Callable[[str], None] = print) -> list[Sample]:
    """Rendered trays of ``seeds`` (``draw(seed)`` makes a seed's TraySpec), as samples; drawn
    once and kept in ``cache`` (PNG and the truth) when given."""
    from vision.lab.render import render_tray

    samples = []
    for k, seed in enumerate(seeds, 1):
        if k % 200 == 0:
            log(f"  {k}/{len(seeds)} renders")
        png = cache / f"{seed}.png" if cache else None
        rows = cache / f"{seed}.npy" if cache else None
        if png is not None and png.is_file() and rows.is_file():
            samples.append(Sample(cv2.imread(str(png)), np.load(rows), "render"))
            continue
        spec = draw(seed)
        if spec is None:
            continue
        shot = render_tray(spec, seed=seed)
        dice = np.array([(t.center[0], t.center[1], t.side, _angle(t.corners),
                          float(t.cocked), 1.0) for t in shot.truth], np.float32).reshape(-1, 6)
        if cache is not None:
            cache.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(png), shot.image)
            np.save(rows, dice)
        samples.append(Sample(shot.image, dice, "render"))
    return samples


def empty_samples(seeds: range) -> list[Sample]:
    """Frames without a die, one a seed: in turn a cloth of dots, a page of print and a price
    list with dotted leaders (`vision.lab.print_scenes`), whose round marks a finder that has
    only seen trays of dice takes for small dice."""
    from vision.lab.print_scenes import cloth, price_list, scene

    draw = (cloth, scene, price_list)
    return [Sample(draw[k % len(draw)](seed), np.zeros((0, 6), np.float32), "empty")
            for k, seed in enumerate(seeds)]


def _angle(corners) -> float:
    """The turn of a face's square (degrees, 0..90) from its corners in face order."""
    (x0, y0), (x1, y1) = corners[0], corners[1]
    return math.degrees(math.atan2(y1 - y0, x1 - x0)) % 90.0


def crop(sample: Sample, rng: np.random.Generator, size: int, recolour: float = 0.0
         ) -> tuple[np.ndarray, np.ndarray]:
    """A ``size`` x ``size`` crop of a sample at the finder's scale, turned, mirrored, scaled
    and relit at random, a share ``recolour`` of the photos' with their dice repainted in
    other colours (`vision.lab.recolour`), with its dice rows in the crop's pixels."""
    image, dice = sample.image, sample.dice.copy()
    h, w = image.shape[:2]
    scale = input_scale(image.shape) * math.exp(rng.uniform(math.log(0.6), math.log(1.7)))
    turn = rng.uniform(0.0, 360.0)
    # The crop's centre: near a die most of the time (dice are small in a frame), anywhere else.
    if len(dice) and rng.random() < 0.8:
        cx, cy = dice[int(rng.integers(len(dice))), :2] + rng.normal(0, 0.25 * size / scale, 2)
    else:
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    m = cv2.getRotationMatrix2D((float(cx), float(cy)), turn, scale)
    m[:, 2] += (size / 2.0 - cx, size / 2.0 - cy)
    mirror = rng.random() < 0.5
    if mirror:
        m = np.array([[-1.0, 0.0, size], [0.0, 1.0, 0.0]]) @ np.vstack([m, (0.0, 0.0, 1.0)])
    # Not reflected: a reflection would copy dice in with no truth.
    border = cv2.BORDER_REPLICATE if rng.random() < 0.7 else cv2.BORDER_CONSTANT
    fill = tuple(float(v) for v in rng.uniform(0, 255, 3))
    out = cv2.warpAffine(image, m, (size, size), flags=cv2.INTER_AREA if scale < 1 else
                         cv2.INTER_LINEAR, borderMode=border, borderValue=fill)
    if sample.body is not None and recolour > 0 and rng.random() < recolour:
        body = cv2.warpAffine(sample.body, m, (size, size), flags=cv2.INTER_NEAREST,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        out = recoloured(out, body, rng, least=0.0)
    if len(dice):
        pts = dice[:, :2] @ m[:, :2].T + m[:, 2]
        dice[:, :2] = pts
        dice[:, 2] *= scale
        angle = dice[:, 3] - turn  # OpenCV's turn is counter-clockwise on screen
        dice[:, 3] = (-angle if mirror else angle) % 90.0
    return relight(out, rng), dice


def relight(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A crop as another camera under other light would show it: colours swapped, grey,
    warmer or colder, brighter or darker, a gradient, blur, noise, JPEG."""
    img = image.astype(np.float32)
    if rng.random() < 0.5:
        img = img[:, :, rng.permutation(3)]
    if rng.random() < 0.15:
        img = np.repeat(img.mean(axis=2, keepdims=True), 3, axis=2)
    img *= rng.uniform(0.85, 1.15, 3).astype(np.float32)  # white balance
    img = img * rng.uniform(0.55, 1.45) + rng.uniform(-30, 30)
    if rng.random() < 0.3:
        h, w = img.shape[:2]
        gx, gy = rng.normal(0, 0.3, 2)
        ramp = 1 + gx * (np.arange(w)[None, :] / w - 0.5) + gy * (np.arange(h)[:, None] / h - 0.5)
        img *= ramp[..., None].astype(np.float32)
    if rng.random() < 0.3:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.5, 1.5))
    img += rng.normal(0.0, rng.uniform(0, 8), img.shape).astype(np.float32)
    out = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        _, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(30, 95))])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


def targets(dice: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The target grids (len(CHANNELS), g, g) of a crop's dice and their weights (the same
    shape: 0 where a target is unknown or meaningless): the centre belief a Gaussian around
    each die's centre cell, the rest at the centre cell only."""
    g = size // STRIDE
    target = np.zeros((len(CHANNELS), g, g), np.float32)
    weight = np.zeros_like(target)
    weight[0] = 1.0
    ys, xs = np.mgrid[0:g, 0:g].astype(np.float32) + 0.5
    for x, y, side, angle, cocked, side_weight in dice:
        gx, gy = x / STRIDE, y / STRIDE
        if not (0 <= gx < g and 0 <= gy < g):
            continue
        cells = side / STRIDE if math.isfinite(side) else 4.0
        sigma = max(0.5, 0.15 * cells)
        blob = np.exp(-((xs - gx) ** 2 + (ys - gy) ** 2) / (2 * sigma**2))
        np.maximum(target[0], blob, out=target[0])
        cx, cy = int(gx), int(gy)
        target[0, cy, cx] = 1.0
        target[1, cy, cx], target[2, cy, cx] = gx - cx, gy - cy
        weight[1:3, cy, cx] = 1.0
        if math.isfinite(side) and side > 1:
            target[3, cy, cx] = math.log(side)
            weight[3, cy, cx] = side_weight
        if math.isfinite(angle):
            a = math.radians(4 * angle)
            target[4, cy, cx], target[5, cy, cx] = math.cos(a), math.sin(a)
            weight[4:6, cy, cx] = 1.0
        if math.isfinite(cocked):
            target[6, cy, cx] = cocked
            weight[6, cy, cx] = 1.0
    return target, weight


def batches(samples: list[Sample], rng: np.random.Generator, batch: int, size: int,
            standardise: Callable[[np.ndarray], np.ndarray], recolour: float = 0.0
            ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Endless batches (input, target, weight) of random crops of random samples (`crop`,
    ``recolour`` of them repainted)."""
    while True:
        xs, ts, ws = [], [], []
        for i in rng.integers(len(samples), size=batch):
            image, dice = crop(samples[int(i)], rng, size, recolour)
            t, w = targets(dice, size)
            xs.append(standardise(image))
            ts.append(t)
            ws.append(w)
        yield np.concatenate(xs), np.stack(ts), np.stack(ws)
