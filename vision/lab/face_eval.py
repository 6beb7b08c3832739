"""Measure the per-die face reader on ground-truth dice of the dice-photos dataset.

Usage: ``python -m vision.lab.face_eval [DATASET] [--half even|odd|all] [--no-side] [--json]``

Crops are cut in memory around each ground-truth die (never written anywhere):

* boxes around the whole die ("die"): a square of 1.25 x the box's longer side, centred on the
  box; the top-face side is estimated as 0.85 x the box's shorter side;
* boxes tight around the pip cluster ("pips"): the die side S of an image is the median over its
  value 2..6 boxes of max(w, h) / 0.75 (the median S of the source when an image has none);
  the crop is a square of 1.4 x S centred on the box;
* no box ("none"): the whole image is the crop, and no die side is known.

Each crop is read twice, with the die side given and without it, and the results are tallied per
source: crops, correct, wrong, unsure, precision, recall, confusion and median microseconds.
``--half even`` / ``--half odd`` keeps only the even / odd-indexed images of each source, so
that parameters tuned on one half can be confirmed on the other.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.face import read_face
from vision.lab.scoring import DEFAULT_DATASET, PIP_EXTENT, load_manifest

PIPS_CROP = 1.4  # crop side / die side for pip-cluster boxes
DIE_CROP = 1.25  # crop side / longer box side for whole-die boxes
DIE_BOX_TO_SIDE = 0.85  # top-face side / shorter side of a whole-die box (it includes side faces)


@dataclass(frozen=True)
class Crop:
    """One ground-truth die cut out of a dataset image."""

    source: str
    image: str
    value: int
    patch: np.ndarray
    die_side: float | None


def _square(image: np.ndarray, cx: float, cy: float, side: float) -> np.ndarray:
    """A side x side crop centred on (cx, cy), the image edge replicated where it runs out."""
    half = max(2, round(side / 2))
    padded = cv2.copyMakeBorder(image, half, half, half, half, cv2.BORDER_REPLICATE)
    x0, y0 = round(cx), round(cy)
    return padded[y0 : y0 + 2 * half, x0 : x0 + 2 * half].copy()


def _pip_box_side(record: dict) -> float | None:
    sides = [
        max(d["bbox"][2], d["bbox"][3]) / PIP_EXTENT
        for d in record["dice"]
        if d["bbox"] and d["value"] >= 2
    ]
    return statistics.median(sides) if sides else None


def iter_crops(dataset: Path, half: str = "all", sample_every: int = 1) -> Iterator[Crop]:
    """Every ground-truth die of the dataset as a crop (see the module docstring).

    ``half`` keeps the even or odd-indexed images of each source; ``sample_every`` = n keeps
    every n-th image of each source (for a quick, fixed sample).
    """
    records = load_manifest(dataset)
    by_source: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_source[record["source"]].append(record)
    for source, recs in by_source.items():
        known = [s for s in map(_pip_box_side, recs) if s is not None]
        source_side = statistics.median(known) if known else None
        for index, record in enumerate(recs):
            if (half == "even" and index % 2) or (half == "odd" and not index % 2):
                continue
            if index % sample_every:
                continue
            image = cv2.imread(str(dataset / record["image"]), cv2.IMREAD_COLOR)
            if image is None:
                continue
            kind = record["bbox_kind"]
            image_side = _pip_box_side(record) or source_side
            for die in record["dice"]:
                box = die["bbox"]
                if kind == "none" or box is None:
                    patch, side = image, None
                else:
                    x, y, w, h = box
                    cx, cy = x + w / 2, y + h / 2
                    if kind == "pips":
                        if image_side is None:
                            continue
                        patch, side = _square(image, cx, cy, PIPS_CROP * image_side), image_side
                    else:
                        side = DIE_BOX_TO_SIDE * min(w, h)
                        patch = _square(image, cx, cy, DIE_CROP * max(w, h))
                yield Crop(source, record["image"], int(die["value"]), patch, side)


@dataclass
class Tally:
    """Counts for one source and one mode (die side given or not)."""

    crops: int = 0
    correct: int = 0
    wrong: int = 0
    unsure: int = 0

    def __post_init__(self) -> None:
        self.confusion = np.zeros((6, 7), dtype=int)  # rows GT 1..6; columns 1..6 and unsure
        self.micros: list[float] = []
        self.reasons: dict[str, int] = defaultdict(int)

    def add(self, truth: int, value: int | None, reason: str | None, micros: float) -> None:
        self.crops += 1
        self.micros.append(micros)
        if value is None:
            self.unsure += 1
            self.reasons[reason or "?"] += 1
            self.confusion[truth - 1, 6] += 1
        else:
            self.confusion[truth - 1, value - 1] += 1
            if value == truth:
                self.correct += 1
            else:
                self.wrong += 1

    def summary(self) -> dict:
        answered = self.correct + self.wrong
        return {
            "crops": self.crops,
            "correct": self.correct,
            "wrong": self.wrong,
            "unsure": self.unsure,
            "precision": round(self.correct / answered, 4) if answered else None,
            "recall": round(self.correct / self.crops, 4) if self.crops else None,
            "median_us": round(statistics.median(self.micros), 1) if self.micros else None,
            "reasons": dict(self.reasons),
            "confusion": self.confusion.tolist(),
        }


def evaluate(dataset: Path, half: str = "all", with_side: bool = True) -> dict[str, dict]:
    """Per-source (and overall) summaries of reading every ground-truth crop."""
    tallies: dict[str, Tally] = defaultdict(Tally)
    for crop in iter_crops(dataset, half):
        side = crop.die_side if with_side else None
        start = time.perf_counter()
        reading = read_face(crop.patch, die_side=side)
        micros = (time.perf_counter() - start) * 1e6
        for key in (crop.source, "all"):
            tallies[key].add(crop.value, reading.value, reading.reason, micros)
    return {key: tally.summary() for key, tally in tallies.items()}


def _print_table(title: str, results: dict[str, dict]) -> None:
    print(title)
    print(f"  {'source':40s} crops correct wrong unsure  prec  recall  med_us")
    for source, s in results.items():
        prec = "-" if s["precision"] is None else f"{s['precision']:.3f}"
        rec = "-" if s["recall"] is None else f"{s['recall']:.3f}"
        print(
            f"  {source:40s} {s['crops']:5d} {s['correct']:7d} {s['wrong']:5d} {s['unsure']:6d}"
            f" {prec:>5s} {rec:>7s} {s['median_us']:7.0f}"
        )
    confusion = results["all"]["confusion"]
    print("  confusion (all sources): rows = truth 1..6, columns = read 1..6, unsure")
    for value, row in enumerate(confusion, start=1):
        print(f"    {value}: " + " ".join(f"{n:4d}" for n in row))
    print("  unsure reasons:", results["all"]["reasons"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.lab.face_eval", description=__doc__)
    parser.add_argument("dataset", nargs="?", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--half", choices=("all", "even", "odd"), default="all")
    parser.add_argument("--no-side", action="store_true", help="only the run without die side")
    parser.add_argument("--side-only", action="store_true", help="only the run with die side")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if not (args.dataset / "manifest.json").is_file():
        print(f"no manifest.json in {args.dataset}", file=sys.stderr)
        return 2
    cv2.setNumThreads(1)
    modes = [m for m in (True, False) if not (m and args.no_side) and (m or not args.side_only)]
    report = {
        ("with_side" if m else "without_side"): evaluate(args.dataset, args.half, m) for m in modes
    }
    if args.json:
        print(json.dumps(report))
    else:
        for mode, results in report.items():
            _print_table(f"{mode} (half={args.half})", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
