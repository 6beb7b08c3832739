"""Smoky and swirled dice with coloured pips for the renderer (`vision.lab.render`).

Bars keep dice that neither the catalogue of `VARIED_DICE` nor dice of any colours
(`vision.lab.render_any_colour`) draw often: a dark, smoky body, see-through or swirled with
white, whose pips are painted red, orange, yellow or green. Lightness then hardly sets the
pips apart (the white swirl is lighter than the pips, the body darker), and their colour
alone does, blurred by the camera's chroma subsampling at a small die's scale. `smoky_tray`
draws a tray of the bar's variety whose dice are all of such sets::

    spec = smoky_tray(np.random.default_rng(3))      # a TraySpec, truth exact as always
    shot = render_tray(spec, seed=3)
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from vision.lab.render_any_colour import far_from, from_hsv
from vision.lab.render_specs import BGR, DieSpec, TraySpec
from vision.lab.render_varied import varied_tray

SMOKY_TRANSLUCENT = 0.5  # share of the bodies seen through
SMOKY_SWIRLED = 0.7  # ... swirled (apart from being seen through or not)
SWIRL_LIGHT = 0.8  # ... of the swirls white or pale grey, the others black
SMOKY_BRIGHT = 0.25  # ... of the bodies a lighter, saturated blue or teal, the others dark
# Pip hues (OpenCV's 0-180) and how often: red most, as the sets seen in bars.
PIP_HUES = {0: 0.35, 8: 0.15, 22: 0.15, 60: 0.1, 110: 0.05, 170: 0.1}
PIP_WHITE = 0.1  # ... the rest of the pips gold-white or white
SMOKY_PIP_CONTRAST = 30.0  # Lab distance of the pips from the body, at least


def _body(rng: np.random.Generator) -> BGR:
    """A dark smoky body of any hue, or a lighter saturated blue or teal one."""
    if rng.random() < SMOKY_BRIGHT:
        return from_hsv(rng.uniform(85, 110), rng.uniform(120, 230), rng.uniform(120, 210))
    return from_hsv(rng.uniform(0, 180), rng.uniform(0, 120), rng.uniform(35, 110))


def _pips(rng: np.random.Generator, body: BGR) -> BGR:
    """Pips of a saturated paint (mostly red) that stand out from ``body`` (the farthest of a
    few tries when none does)."""
    hues = list(PIP_HUES)
    shares = np.cumsum([PIP_HUES[h] for h in hues]) / (sum(PIP_HUES.values()) + PIP_WHITE)

    def paint() -> BGR:
        draw = rng.random()
        if draw >= shares[-1]:
            return from_hsv(25, rng.uniform(0, 60), rng.uniform(215, 250))
        hue = hues[int(np.searchsorted(shares, draw, side="right"))]
        return from_hsv(hue + rng.uniform(-4, 4), rng.uniform(150, 255), rng.uniform(150, 250))

    return far_from(paint, body, SMOKY_PIP_CONTRAST, tries=20)


def _swirl(rng: np.random.Generator) -> BGR:
    """A swirl's colour: white or a pale grey most often, now and then black."""
    if rng.random() < SWIRL_LIGHT:
        return from_hsv(rng.uniform(0, 180), rng.uniform(0, 40), rng.uniform(180, 245))
    return from_hsv(0, 0, rng.uniform(15, 40))


def smoky_die(die: DieSpec, rng: np.random.Generator) -> DieSpec:
    """``die`` recoloured as a smoky or swirled die with coloured pips: a dark body (or a
    lighter blue or teal one, SMOKY_BRIGHT of the time), SMOKY_TRANSLUCENT of the time seen
    through, SMOKY_SWIRLED of the time swirled, its pips of a saturated paint."""
    body = _body(rng)
    pips = _pips(rng, body)
    marble = None
    if rng.random() < SMOKY_SWIRLED:
        # Thin or faded veins as often as bold ones: the swirl blends into the body.
        share = rng.uniform(0.45, 1.0)
        marble = tuple(b + share * (w - b) for b, w in zip(body, _swirl(rng), strict=True))
    return replace(die, body_bgr=body, pip_bgr=pips, marble_bgr=marble,
                   translucent=bool(rng.random() < SMOKY_TRANSLUCENT),
                   marble_seed=int(rng.integers(1 << 30)))


def smoky_tray(rng: np.random.Generator) -> TraySpec:
    """A tray of the bar's variety (`varied_tray`) whose dice are each a smoky or swirled die
    with coloured pips (`smoky_die`). Raises ValueError as `varied_tray`."""
    spec = varied_tray(rng)
    return replace(spec, dice=tuple(smoky_die(d, rng) for d in spec.dice))
