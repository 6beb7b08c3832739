"""The lean seen between two dice: a die leaning on another hides the floor between them.

A camera looking down on the tray sees two flat dice as two top faces with floor between them,
unless they touch (their centres then lie at most about 1.4 sides apart). A die resting on
another at a tilt lies 1.5-2 of its sides from it, and its side face, tipped up toward the
camera, fills the gap: the foreground runs unbroken from one top face to the other. In varied
rendered tower throws, 42 of 50 leaning pairs show no floor in the middle of the gap, against
2 of 19 flat pairs at those distances.

A photo taken at a slant shows every die's side faces, so flat dice touching there look bridged
too. The gap alone therefore only confirms the lean network (`vision.lean_net`) where it
already leans toward a lean (LEAN_BRIDGED), and the dice must be alone in the gap (no third die
lying between them, whose top face would bridge it).

Pure functions on a foreground mask (`vision.detect`, working pixels);
`vision.pipeline.check_lean` asks them beside the lean network.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: The lean network's belief from which an unbroken gap confirms a lean. Leaning dice the
#: network let through (under LEAN_SURE) in varied tower throws: 0.42-0.89 where the gap is
#: bridged; flat dice there: under 0.1. Flat dice touching others in slanted photos reach
#: 0.46-0.84, so a slanted photo's crowd loses a few dice to this
#: (docs/lab/vision-reading.md, "The gap a leaning die fills").
LEAN_BRIDGED = 0.4
#: How far apart, in sides of the leaning die, a die and the one it rests on lie: from just
#: beyond touching (1.41 sides, two flat dice corner to corner) to a shallow lean.
APART = (1.45, 2.1)
#: The share of the gap's middle (its middle two fifths) that must be foreground.
BRIDGED = 0.9
#: A third die whose centre lies within this many sides of the gap's middle bridges it itself.
BETWEEN = 0.75

Point = tuple[float, float]


def bridged(mask: np.ndarray, a: Point, b: Point) -> float:
    """The share of the middle two fifths of the segment from ``a`` to ``b`` that ``mask``
    (nonzero: foreground) covers; points outside the mask count as floor."""
    height, width = mask.shape[:2]
    steps = np.linspace(0.3, 0.7, 21)
    xs = np.rint(a[0] + (b[0] - a[0]) * steps).astype(int)
    ys = np.rint(a[1] + (b[1] - a[1]) * steps).astype(int)
    inside = (xs >= 0) & (xs < width) & (ys >= 0) & (ys < height)
    covered = np.zeros(len(steps), bool)
    covered[inside] = mask[ys[inside], xs[inside]] > 0
    return float(covered.mean())


def leans_on(mask: np.ndarray, center: Point, side: float, dice: Sequence[Point],
             others: Sequence[Point]) -> bool:
    """Whether a die at ``center`` (``side`` px) has one of ``dice`` lying APART from it with
    the gap between them BRIDGED and no centre of ``others`` (every die of the picture)
    within BETWEEN sides of the gap's middle."""
    lo, hi = APART
    for partner in dice:
        if not lo * side <= math.dist(center, partner) <= hi * side:
            continue
        middle = ((center[0] + partner[0]) / 2.0, (center[1] + partner[1]) / 2.0)
        if any(math.dist(o, middle) < BETWEEN * side for o in others
               if o != center and o != partner):
            continue
        if bridged(mask, center, partner) >= BRIDGED:
            return True
    return False
