"""Reading rendered trays against their truth: what the photo dataset cannot measure.

The dice-photos dataset labels no die leaning on another, so the lean check (and the reading
of flat dice beside leaning ones) is measured on rendered trays of seeds no model was
trained on (the training scripts use seeds from 100,000; the tests below 10,000)::

    python -m vision.lab.rendered_bench 7000 7150

Each seed draws a tray like those of `tests/test_vision_rendered.py`: 4-9 dice, maybe a pair
of touching dice and maybe a die leaning on another (`vision.lab.render.random_tray`). Each true
die takes the nearest reading within half its side. Printed: flat dice read right, wrong,
unsure (and of those, reported cocked) and missed; leaning dice given a value (a value the
game would wrongly score), unsure and missed; and values read where no die is.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields

import cv2
import numpy as np

from vision.lab.render import RenderedTray, random_tray, render_tray
from vision.pipeline import read_dice
from vision.types import Die


@dataclass
class RenderedCounts:
    """Dice of rendered trays by what their reading was."""

    flat_right: int = 0
    flat_wrong: int = 0
    flat_unsure: int = 0
    flat_cocked: int = 0  # flat dice reported unsure with the reason "cocked"
    flat_missed: int = 0
    leaning_valued: int = 0
    leaning_unsure: int = 0
    leaning_missed: int = 0
    extra_values: int = 0  # values read more than half a side from every true die

    @property
    def flat(self) -> int:
        return self.flat_right + self.flat_wrong + self.flat_unsure + self.flat_missed

    @property
    def leaning(self) -> int:
        return self.leaning_valued + self.leaning_unsure + self.leaning_missed


def tray_for_seed(seed: int) -> RenderedTray:
    """The rendered tray of one seed: the same for every caller."""
    rng = np.random.default_rng(seed)
    n_dice = int(rng.integers(4, 10))
    spec = random_tray(rng, n_dice, touching=int(rng.integers(0, 2)),
                       cocked=int(rng.integers(0, 2)))
    return render_tray(spec, seed=seed)


def count_tray(shot: RenderedTray, readings: list[Die], counts: RenderedCounts) -> None:
    """Add one tray's readings to ``counts``."""
    used: set[int] = set()
    for truth in shot.truth:
        distances = [(math.dist(r.center, truth.center), i) for i, r in enumerate(readings)]
        near = [(d, i) for d, i in distances if d <= 0.5 * truth.side]
        if not near:
            if truth.cocked:
                counts.leaning_missed += 1
            else:
                counts.flat_missed += 1
            continue
        index = min(near)[1]
        used.add(index)
        die = readings[index]
        if truth.cocked:
            if die.value is None:
                counts.leaning_unsure += 1
            else:
                counts.leaning_valued += 1
        elif die.value is None:
            counts.flat_unsure += 1
            counts.flat_cocked += die.reason == "cocked"
        elif die.value == truth.value:
            counts.flat_right += 1
        else:
            counts.flat_wrong += 1
    counts.extra_values += sum(1 for i, r in enumerate(readings)
                               if i not in used and r.value is not None)


def measure(seeds: Iterable[int], log: Callable[[str], None] | None = None) -> RenderedCounts:
    """Render and read the tray of every seed; the counts over all of them."""
    counts = RenderedCounts()
    seeds = list(seeds)
    for k, seed in enumerate(seeds, 1):
        shot = tray_for_seed(seed)
        count_tray(shot, read_dice(shot.image), counts)
        if log:
            log(f"{k}/{len(seeds)} trays")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.lab.rendered_bench",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("first", type=int, help="first seed")
    parser.add_argument("stop", type=int, help="seed after the last")
    args = parser.parse_args(argv)
    if args.stop <= args.first:
        parser.error("the seed range is empty: STOP must be larger than FIRST")
    cv2.setNumThreads(1)
    progress = (lambda text: print(f"\r{text}", end="", file=sys.stderr, flush=True)) \
        if sys.stderr.isatty() else None
    counts = measure(range(args.first, args.stop), progress)
    if progress:
        print(file=sys.stderr)
    print(f"trays {args.first}-{args.stop - 1}: {counts.flat} flat dice, "
          f"{counts.leaning} leaning on another")
    for f in fields(counts):
        print(f"  {f.name:15} {getattr(counts, f.name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
