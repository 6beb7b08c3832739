"""Dice of any colours for the renderer (`vision.lab.render`): no catalogue holds every die.

`any_colour_tray(rng)` draws a tray of the bar's variety (`varied_tray`) and recolours each
die at random (`any_colour_die`): a body of any hue, saturation and lightness, pips that stand
out from it, now and then a swirl of a third colour or a translucent body. The catalogue of
`VARIED_DICE` holds the sets a bar is likely to have; these trays are for a reader that must
count pips of any colour on any body.

    spec = any_colour_tray(np.random.default_rng(3))      # a TraySpec, truth exact as always
    shot = render_tray(spec, seed=3)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np

from vision.lab.render_specs import BGR, DieSpec, TraySpec
from vision.lab.render_varied import lab_of, varied_tray

#: Lab distances for `any_colour_tray`: pips at least this far from their body (a face a
#: person reads at a glance), a marble's swirl at least this far from the pips.
ANY_PIP_CONTRAST = 40.0
ANY_MARBLE_CONTRAST = 30.0


def from_hsv(h: float, s: float, v: float) -> BGR:
    """The BGR colour of OpenCV's 8-bit HSV (hue 0-180, the others 0-255), rounded."""
    hsv = np.uint8([[[round(h) % 180, round(s), round(v)]]])
    return tuple(float(c) for c in cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0])


def _any_colour(rng: np.random.Generator) -> BGR:
    """A colour from anywhere: any hue, any saturation, dark to light."""
    return from_hsv(rng.integers(0, 180), rng.integers(0, 256), rng.integers(25, 250))


def far_from(draw: Callable[[], BGR], other: BGR, distance: float, tries: int = 40) -> BGR:
    """The first colour of ``tries`` drawn by ``draw()`` at least ``distance`` (Lab) from
    ``other``, else the farthest of them."""
    best, best_gap = other, -1.0
    for _ in range(tries):
        colour = draw()
        gap = float(np.linalg.norm(lab_of(colour) - lab_of(other)))
        if gap >= distance:
            return colour
        if gap > best_gap:
            best, best_gap = colour, gap
    return best


def _far_from(rng: np.random.Generator, other: BGR, distance: float) -> BGR:
    """A colour from anywhere at least ``distance`` (Lab) from ``other`` (`far_from`)."""
    # The first colour drawn is never returned; it is drawn all the same, so that a seed
    # gives the trays the measured networks learnt from.
    _any_colour(rng)
    return far_from(lambda: _any_colour(rng), other, distance)


ANY_MARBLED = 1 / 3  # share of `any_colour_die`'s dice with a swirl through the body
ANY_TRANSLUCENT = 1 / 6  # ... and of translucent ones


def any_colour_die(die: DieSpec, rng: np.random.Generator,
                   marbled: float = ANY_MARBLED) -> DieSpec:
    """``die`` recoloured at random: a body and pips of any colours the pips stand out from
    (by ANY_PIP_CONTRAST), a share ``marbled`` of the time with a swirl of a third colour
    through the body, ANY_TRANSLUCENT of the time translucent. No catalogue of sets holds
    every die a bar may have; a reader that counts pips of any colour on any body must see
    them."""
    body = _any_colour(rng)
    pips = _far_from(rng, body, ANY_PIP_CONTRAST)
    draw = rng.random()
    marble = _far_from(rng, pips, ANY_MARBLE_CONTRAST) if draw < marbled else None
    return replace(die, body_bgr=body, pip_bgr=pips, marble_bgr=marble,
                   translucent=marble is None and draw > 1 - ANY_TRANSLUCENT,
                   marble_seed=int(rng.integers(1 << 30)))


def any_colour_tray(rng: np.random.Generator, marbled: float = ANY_MARBLED) -> TraySpec:
    """A tray of the bar's variety (`varied_tray`: floors, light, sizes, leaning and touching
    dice, hands) whose dice are each of any colours (`any_colour_die`, ``marbled`` of them
    marbled). Raises ValueError as `varied_tray`."""
    spec = varied_tray(rng)
    return replace(spec, dice=tuple(any_colour_die(d, rng, marbled) for d in spec.dice))
