"""Reading rendered trays against their truth: what the photo dataset cannot measure.

The dice-photos dataset labels no die leaning on another, so the lean check (and the reading
of flat dice beside leaning ones) is measured on rendered trays of seeds no model was
trained on (the training scripts use seeds from 100,000; the tests below 10,000)::

    python -m vision.lab.rendered_bench 7000 7150
    python -m vision.lab.rendered_bench 7000 7100 --dice 5            # a tower's throws, timed
    python -m vision.lab.rendered_bench 7000 7150 --varied            # the bar's variety
    python -m vision.lab.rendered_bench 7000 7300 --tower             # a tower's, every kind
    python -m vision.lab.rendered_bench 7000 7300 --tower --face other.onnx   # another network

Each seed draws a tray like those of `tests/test_vision_rendered.py`: 4-9 dice, maybe a pair
of touching dice and maybe a die leaning on another (`vision.lab.render.random_tray`). Each true
die takes the nearest reading within half its side. Printed: flat dice read right, wrong,
unsure (and of those, reported cocked) and missed; leaning dice given a value (a value the
game would wrongly score), unsure and missed; and values read where no die is. ``--varied``
and ``--tower`` (`tower_tray`: two to five small dice, every kind of dice set as often) add
the flat dice of each dice set.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields

import cv2
import numpy as np

from vision.lab import net_training
from vision.lab.render import (
    DieTruth,
    RenderedTray,
    random_tray,
    render_tray,
    set_of,
    tower_tray,
    varied_tray,
)
from vision.pipeline import read_dice
from vision.readers import Readers
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


def tray_for_seed(seed: int, dice: int | None = None, varied: bool = False,
                  tower: bool = False) -> RenderedTray:
    """The rendered tray of one seed: the same for every caller. ``dice``: exactly that many,
    none touching or leaning (a tower's throw); ``varied``: drawn from the bar's variety
    (`varied_tray`: other dice sets, floors, light, sizes, dice leaning on the wall);
    ``tower``: a tower's throw of the bar's variety (`tower_tray`)."""
    rng = np.random.default_rng(seed)
    if tower:
        spec = tower_tray(rng)
    elif varied:
        spec = varied_tray(rng, dice, **({"cocked": 0, "leaning": 0, "touching": 0}
                                         if dice is not None else {}))
    elif dice is not None:
        spec = random_tray(rng, dice)
    else:
        n_dice = int(rng.integers(4, 10))
        spec = random_tray(rng, n_dice, touching=int(rng.integers(0, 2)),
                           cocked=int(rng.integers(0, 2)))
    return render_tray(spec, seed=seed)


def _outcome(truth: DieTruth, die: Die | None) -> tuple[str, ...]:
    """The `RenderedCounts` fields one true die adds to, given the reading it took."""
    if die is None:
        return ("leaning_missed",) if truth.cocked else ("flat_missed",)
    if truth.cocked:
        return ("leaning_unsure",) if die.value is None else ("leaning_valued",)
    if die.value is None:
        return ("flat_unsure", "flat_cocked") if die.reason == "cocked" else ("flat_unsure",)
    return ("flat_right",) if die.value == truth.value else ("flat_wrong",)


def count_tray(shot: RenderedTray, readings: list[Die], counts: RenderedCounts,
               by_set: dict[str, RenderedCounts] | None = None) -> None:
    """Add one tray's readings to ``counts`` (and each die's to its dice set's in ``by_set``,
    a varied tray's)."""
    used: set[int] = set()
    specs = shot.spec.dice if shot.spec is not None else ()
    for k, truth in enumerate(shot.truth):
        distances = [(math.dist(r.center, truth.center), i) for i, r in enumerate(readings)]
        near = [(d, i) for d, i in distances if d <= 0.5 * truth.side]
        die = None
        if near:
            used.add(index := min(near)[1])
            die = readings[index]
        name = set_of(specs[k]) if by_set is not None and k < len(specs) else None
        buckets = [counts] + ([by_set.setdefault(name, RenderedCounts())] if name else [])
        for field_ in _outcome(truth, die):
            for bucket in buckets:
                setattr(bucket, field_, getattr(bucket, field_) + 1)
    counts.extra_values += sum(1 for i, r in enumerate(readings)
                               if i not in used and r.value is not None)


def measure(seeds: Iterable[int], log: Callable[[str], None] | None = None,
            dice: int | None = None, varied: bool = False,
            times: list[float] | None = None, tower: bool = False,
            by_set: dict[str, RenderedCounts] | None = None,
            readers: Readers | None = None) -> RenderedCounts:
    """Render and read the tray of every seed (`tray_for_seed`) with ``readers`` (None: the
    shipped networks); the counts over all of them. ``times`` gets each reading's
    milliseconds (`read_dice` alone), ``by_set`` the counts of each dice set."""
    counts = RenderedCounts()
    seeds = list(seeds)
    for k, seed in enumerate(seeds, 1):
        try:
            shot = tray_for_seed(seed, dice, varied, tower)
        except ValueError:
            continue  # the seed's draw cannot fit its dice
        start = time.perf_counter()
        readings = read_dice(shot.image, readers=readers)
        if times is not None:
            times.append((time.perf_counter() - start) * 1000.0)
        count_tray(shot, readings, counts, by_set)
        if log:
            log(f"{k}/{len(seeds)} trays")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.lab.rendered_bench",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("first", type=int, help="first seed")
    parser.add_argument("stop", type=int, help="seed after the last")
    parser.add_argument("--dice", type=int, default=None,
                        help="exactly N dice a tray, none touching or leaning (a tower's throw)")
    parser.add_argument("--varied", action="store_true",
                        help="trays of the bar's variety (dice sets, floors, light, sizes)")
    parser.add_argument("--tower", action="store_true",
                        help="a tower's throws of the bar's variety: two to five small dice, "
                        "every kind of dice set as often")
    net_training.add_networks(parser, "face", "finder", "lean")
    args = parser.parse_args(argv)
    if args.tower and (args.varied or args.dice is not None):
        parser.error("--tower draws its own dice: not with --varied or --dice")
    if args.stop <= args.first:
        parser.error("the seed range is empty: STOP must be larger than FIRST")
    if args.dice is not None and args.dice < 1:
        parser.error("--dice must be at least 1")
    cv2.setNumThreads(1)
    try:
        readers = net_training.readers(args)
    except (FileNotFoundError, ValueError) as exc:
        print(f"rendered_bench: {exc}", file=sys.stderr)
        return 2
    progress = (lambda text: print(f"\r{text}", end="", file=sys.stderr, flush=True)) \
        if sys.stderr.isatty() else None
    times: list[float] = []
    by_set: dict[str, RenderedCounts] | None = {} if args.varied or args.tower else None
    counts = measure(range(args.first, args.stop), progress, args.dice, args.varied, times,
                     args.tower, by_set, readers)
    if progress:
        print(file=sys.stderr)
    print(f"trays {args.first}-{args.stop - 1}: {counts.flat} flat dice, "
          f"{counts.leaning} leaning")
    for f in fields(counts):
        print(f"  {f.name:15} {getattr(counts, f.name)}")
    if by_set:
        print(f"  {'flat dice by set':24} {'dice':>5} {'right':>6} {'wrong':>6} {'unsure':>7} "
              f"{'missed':>7}")
        for name, c in sorted(by_set.items(), key=lambda kv: kv[1].flat_right / max(
                kv[1].flat, 1)):
            print(f"  {name:24} {c.flat:5} {c.flat_right:6} {c.flat_wrong:6} "
                  f"{c.flat_unsure:7} {c.flat_missed:7}")
    if times:
        print(f"  read_dice ms: median {np.median(times):.1f}, "
              f"p95 {np.percentile(times, 95):.1f} (one core)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
