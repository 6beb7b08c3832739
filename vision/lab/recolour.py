"""Real dice of other colours: a training patch's die repainted, its floor left as it is.

The dataset's photos hold few kinds of dice (left out, a source's coloured dice are dice no
photo the networks learnt from shows), and the renderer's dice of any colours are drawn, not
photographed: flat paint, perfect discs. `recoloured` keeps everything a photo of a real die
has (the pips' own shapes and pits, the rounded edges, the side faces, blur, the camera's
noise) and changes what varies from one set of dice to the next: the body's colour and the
pips'. The die is the part of the patch that stands out from the floor (the pipeline's own
foreground, `Sample.body`); its lightness is mapped to two colours of any hue, pips far
from the body's level taking the pip colour, and now and then a swirl of a third colour is
stirred through the body, as in marbled dice. The floor keeps its colour: a dark die on a
light floor stays a dark shape on a light floor.

    patch = recoloured(patch, body, np.random.default_rng(1))
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.detect import look_at, quick_die_side
from vision.lab.render_texture import smooth_noise
from vision.lab.render_varied import lab_of
from vision.pipeline import WORK_DIE_SIDE, as_read
from vision.straightening import working_copy

#: Lab distance between the body and the pips at least (a face a person reads at a glance,
#: as `render_any_colour.ANY_PIP_CONTRAST`), and between a swirl and the pips.
PIP_CONTRAST = 45.0
SWIRL_CONTRAST = 35.0
SWIRLED = 0.4  # share of recoloured dice with a swirl through the body
MIN_BODY = 0.15  # share of a die's patch the die must cover to be repainted


def _any_colour(rng: np.random.Generator) -> np.ndarray:
    """A colour from anywhere: any hue, any saturation, dark to light (BGR, float32)."""
    hsv = np.uint8([[[rng.integers(0, 180), rng.integers(0, 256), rng.integers(20, 250)]]])
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0].astype(np.float32)


def _apart(rng: np.random.Generator, other: np.ndarray, distance: float) -> np.ndarray:
    """A colour at least ``distance`` (Lab) from ``other``, or the farthest of a few tries."""
    best, gap = other, -1.0
    for _ in range(30):
        colour = _any_colour(rng)
        d = float(np.linalg.norm(lab_of(tuple(colour)) - lab_of(tuple(other))))
        if d >= distance:
            return colour
        if d > gap:
            best, gap = colour, d
    return best


def swirl(size: int, rng: np.random.Generator) -> np.ndarray:
    """Share (0..1, float32 size x size) of a swirl's colour: one to three bent veins across
    the patch, thick or thin."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / size
    a = rng.uniform(0, np.pi)
    along = xx * np.cos(a) + yy * np.sin(a)
    bend = smooth_noise(rng, size, size, size / 3.0) + 0.4 * smooth_noise(rng, size, size,
                                                                            size / 8.0)
    waves = np.sin(2 * np.pi * (rng.uniform(1.0, 3.0) * along + 0.6 * bend))
    width = rng.uniform(0.15, 0.6) + 0.25 * smooth_noise(rng, size, size, size / 4.0)
    return np.clip((width - np.abs(waves)) * 4.0 + 0.5, 0.0, 1.0).astype(np.float32)


def recoloured(patch: np.ndarray, body: np.ndarray, rng: np.random.Generator,
               least: float = MIN_BODY) -> np.ndarray:
    """``patch`` (BGR uint8) with the dice where ``body`` (uint8 mask, 255 on the dice) is
    repainted in colours drawn from ``rng``, all alike (one set of dice); the patch as it is
    where the dice cover less than ``least`` of it (a white die lost in a white floor:
    nothing to repaint)."""
    # Dark pips on a light body may stand out from the body as much as from the floor:
    # holes of a pip's size in the mask are the die's too.
    pip_size = max(3, round(0.12 * patch.shape[0]) | 1)
    inside = cv2.morphologyEx(body, cv2.MORPH_CLOSE, cv2.getStructuringElement(
        cv2.MORPH_ELLIPSE, (pip_size, pip_size))) > 127
    if inside.mean() < least or not inside.any():
        return patch
    grey = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY).astype(np.float32)
    lo, hi = np.percentile(grey[inside], (2, 98))
    level = np.clip((grey - lo) / max(float(hi - lo), 8.0), 0.0, 1.0)
    # The body's own level is the die's commonest; pips lie far from it, either way.
    usual = float(np.median(level[inside]))
    far = np.clip(np.abs(level - usual) / max(usual, 1.0 - usual, 0.3), 0.0, 1.0)[..., None]
    body_colour = _any_colour(rng)
    pip_colour = _apart(rng, body_colour, PIP_CONTRAST)
    painted = body_colour * (1 - far) + pip_colour * far
    if rng.random() < SWIRLED:
        share = swirl(patch.shape[0], rng)[..., None] * rng.uniform(0.5, 1.0)
        on_body = (1 - far) ** 2
        painted = painted * (1 - share * on_body) + _apart(
            rng, pip_colour, SWIRL_CONTRAST) * (share * on_body)
    # The light and shade that fell on the die stay on it.
    shade = np.clip(grey / max(float(np.median(grey[inside])), 1.0), 0.5, 1.5)[..., None]
    painted *= 0.7 + 0.3 * shade
    soft = cv2.GaussianBlur(inside.astype(np.float32), (0, 0), 1.0)[..., None]
    out = patch.astype(np.float32) * (1 - soft) + painted * soft
    return np.clip(out, 0, 255).astype(np.uint8)


#: x a die's side: half the square around a die's centre that holds all of it, however it
#: is turned (a die turned by 45 degrees reaches 0.71 from its centre).
DIE_REACH = 0.75


def dice_only(mask: np.ndarray, dice) -> np.ndarray:
    """``mask`` (uint8) where it lies within DIE_REACH sides of a die of ``dice`` (rows of
    x, y, side in the mask's pixels): the dice, without the shadows and cables beside them
    that stand out from the floor as well."""
    near = np.zeros_like(mask)
    for x, y, side in dice:
        if not np.isfinite(side):
            continue
        r = DIE_REACH * side
        cv2.rectangle(near, (round(x - r), round(y - r)), (round(x + r), round(y + r)), 255, -1)
    return cv2.bitwise_and(mask, near)


def foreground(image: np.ndarray) -> tuple[np.ndarray, float | None]:
    """The mask (uint8, 255 on what stands out from the floor: the dice) of a whole BGR
    photo, at its own size, and the die side its regions give (None: none): the pipeline's
    own foreground, found at the working size the pipeline would read the photo at from
    that side (no network)."""
    bgr = as_read(image)
    h, w = bgr.shape[:2]
    side = quick_die_side(bgr)
    scale = min(1.0, WORK_DIE_SIDE / side) if side else min(1.0, 640 / max(h, w))
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    mask = look_at(working_copy(bgr, size)).mask
    return cv2.resize(mask, (w, h), interpolation=cv2.INTER_NEAREST), side
