"""The `dicetower bench vision` benchmark: read every dataset image, score, time.

Runs on one core (``cv2.setNumThreads(1)``), times `read_dice` alone (decoding excluded), and
scores with `vision.lab.scoring` (the dataset's own matching rule), per source and overall.
The networks read with are the shipped ones, those named by ``--face``, ``--finder`` and
``--lean`` (a network trained on one half, read on the other), or with ``--loso`` each
source's left-out ones (`vision.lab.loso`), given to `read_dice` as its ``readers``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vision.lab.networks import NETWORKS
from vision.lab.scoring import DEFAULT_DATASET

if TYPE_CHECKING:
    from vision.readers import Readers

COLUMNS = ("images", "gt_dice", "correct", "wrong", "unsure", "missed", "extra", "half_lost")
# Each column's heading and width where not its name in 8 characters. half_lost: photos where
# fewer than half the labelled dice were found at all.
HEADINGS = {"half_lost": ("halflost", 9)}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "vision",
        help="read a labelled photo set and score it (default: ../shared/datasets/dice-photos)",
    )
    parser.add_argument(
        "dataset", nargs="?", default=None,
        help="folder holding manifest.json and the images (default: $DICE_PHOTOS, else "
        f"{DEFAULT_DATASET})",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--half", choices=("even", "odd"),
        help="only the even- or odd-indexed manifest images (tune on one, confirm on the other)",
    )
    parser.add_argument(
        "--limit", type=int,
        help="only the first N images (after --half); with --variants, N drawn at random "
        "(--seed)",
    )
    parser.add_argument(
        "--variants", action="store_true",
        help="read each photo also turned 90/180/270, mirrored, scaled 0.5 and 1.5, darker "
        "(x0.6) and lighter (x1.4), with noise (sigma 8), as JPEG (quality 40 and 95) and in "
        "grey; print per variant precision, recall and the share of photos whose reading "
        "changed (the multiset of values read, unsure dice as a value of their own, differs "
        "from the original photo's)",
    )
    parser.add_argument(
        "--throws", action="store_true",
        help="cut three-dice throws out of the photos (three labelled dice, floor around, no "
        "other die), pad each to 640x480 with the floor's colour and read it once as a tower "
        "does; print per source the share accepted at the first reading, right and misread "
        "(see docs/lab/throws.md)",
    )
    parser.add_argument(
        "--unpadded", action="store_true",
        help="with --throws: read the cuts as they are, not padded to 640x480",
    )
    parser.add_argument(
        "--seed", type=int, default=0,
        help="with --variants: the seed of the --limit draw and of the noise (default 0)",
    )
    parser.add_argument(
        "--predictions", metavar="FILE",
        help="also write the readings as JSON lines (the `dicetower read --json` format; with "
        "--throws, one line per throw: photo, cut, labels, values read)",
    )
    parser.add_argument(
        "--errors", action="store_true",
        help="list the images with wrong, missed or extra dice (with --variants: the photos "
        "whose reading changed; with --throws: the throws not read right)",
    )
    parser.add_argument(
        "--loso", metavar="DIR",
        help="leave one source out: read each photo with the networks trained without its "
        "source, from DIR/<owner>/ (made by `python -m vision.lab.loso train DIR`)",
    )
    for option, network in NETWORKS.items():
        parser.add_argument(
            f"--{option}", metavar="FILE",
            help=f"read with this {network} (ONNX) instead of the shipped one, e.g. one "
            "trained on --half even and read on --half odd",
        )
    parser.set_defaults(func=run)


def _fmt(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def table(result: dict[str, Any]) -> str:
    """The per-source and overall rows as fixed-width text."""
    widths = {c: HEADINGS.get(c, (c, 8))[1] for c in COLUMNS}
    head = f"{'source':<38}" + "".join(f"{HEADINGS.get(c, (c,))[0]:>{widths[c]}}"
                                        for c in COLUMNS)
    head += f"{'recall':>8}{'precis':>8}{'ms_med':>8}{'ms_p95':>8}"
    lines = [head, "-" * len(head)]
    rows = [*result["per_source"].items(), ("ALL", result["overall"])]
    for name, row in rows:
        line = f"{name[:38]:<38}" + "".join(f"{row[c]:>{widths[c]}}" for c in COLUMNS)
        line += f"{_fmt(row['recall']):>8}{_fmt(row['precision']):>8}"
        line += f"{_fmt(row['ms']['median'], 1):>8}{_fmt(row['ms']['p95'], 1):>8}"
        lines.append(line)
    return "\n".join(lines)


def usage_error(args: argparse.Namespace) -> str | None:
    """What is wrong with the options themselves, or None; the dataset is not looked at.

    ``--predictions`` is checked too: a folder that is not there would otherwise be found
    only once every photo has been read.
    """
    from vision.lab.variants import usage_error as variants_error

    if args.unpadded and not args.throws:
        return "--unpadded goes with --throws"
    if args.throws and args.variants:
        return "--throws and --variants do not go together"
    if args.loso is not None and args.variants:
        return "--loso and --variants do not go together"
    if args.loso is not None and not Path(args.loso).is_dir():
        return f"--loso {args.loso}: no such folder"
    for option in ("face", "finder"):
        if args.loso is not None and getattr(args, option) is not None:
            return f"--loso and --{option} do not go together (--loso names them per source)"
    for option in NETWORKS:
        named = getattr(args, option)
        if named is not None and not Path(named).is_file():
            return f"--{option} {named}: no such file"
    if args.limit is not None and args.limit < 0:
        return "--limit must be at least 0"
    if args.predictions is not None:
        target = Path(args.predictions)
        if target.is_dir():
            return f"--predictions {target}: is a folder, not a file"
        if not target.parent.is_dir():
            return f"--predictions {target}: the folder {target.parent} does not exist"
    return variants_error(args) if args.variants else None


def named_readers(args: argparse.Namespace) -> Readers:
    """The networks ``--face``, ``--finder`` and ``--lean`` name (the shipped ones where none
    is named); ValueError naming a file that holds no network this project can run."""
    # The networks load when a bench runs, not when the command line is parsed.
    from vision.onnx_model import NetworkFileError
    from vision.readers import Readers

    try:
        return Readers.from_files(face=args.face, finder=args.finder, lean=args.lean)
    except NetworkFileError:
        raise ValueError(_unreadable(args)) from None


def readers_for(args: argparse.Namespace, sources: Iterable[str]) -> dict[str, Readers]:
    """The networks to read each source's photos with: those trained without that source
    (``--loso``, with the lean check ``--lean`` names), or the `named_readers`, each file
    loaded once. FileNotFoundError saying in one line what is missing; ValueError naming a
    file that holds no network this project can run."""
    from vision.lab.loso import left_out
    from vision.onnx_model import NetworkFileError

    if not args.loso:
        return dict.fromkeys(sources, named_readers(args))
    try:
        return {source: left_out(Path(args.loso), source, args.lean)
                for source in sorted(set(sources))}
    except NetworkFileError:
        raise ValueError(_unreadable(args)) from None


def _unreadable(args: argparse.Namespace) -> str:
    """That a network file named cannot be read, in one line."""
    from vision.onnx_model import NO_NETWORK

    named = [f"--{option} {getattr(args, option)}" for option in NETWORKS
             if getattr(args, option)]
    named += [f"--loso {args.loso}"] if args.loso else []
    return f"{', '.join(named)}: a network file there is {NO_NETWORK}"


def _named(args: argparse.Namespace) -> dict[str, str]:
    """The network files named on the command line (option: file), for the report."""
    return {option: getattr(args, option) for option in NETWORKS if getattr(args, option)}


def run(args: argparse.Namespace) -> int:
    import cv2
    from tqdm import tqdm

    from vision import ImageError, load_image, read_dice
    from vision.lab.scoring import die_sizes, half_of, load_manifest, score, score_image

    # Usage errors first: they need no dataset, and a clone without one must still hear them.
    problem = usage_error(args)
    if problem:
        print(f"dicetower bench vision: {problem}", file=sys.stderr)
        return 2
    cv2.setNumThreads(1)
    dataset = Path(args.dataset or os.environ.get("DICE_PHOTOS") or DEFAULT_DATASET)
    try:
        records = load_manifest(dataset)
    except ValueError as exc:
        print(f"dicetower bench vision: {exc}", file=sys.stderr)
        return 2
    records = half_of(records, args.half)
    try:
        readers = readers_for(args, (r["source"] for r in records))
        named = named_readers(args)
    except (FileNotFoundError, ValueError) as exc:
        print(f"dicetower bench vision: {exc}", file=sys.stderr)
        return 2
    if args.throws:
        from vision.lab import throws_bench

        all_records = load_manifest(dataset)
        part = records if args.limit is None else records[: args.limit]
        return throws_bench.run(args, dataset, part, all_records, readers.get)
    if args.variants:
        from vision.lab import variants

        return variants.run(args, dataset, records, named)
    if args.limit is not None:
        records = records[: max(0, args.limit)]
    sizes = die_sizes(load_manifest(dataset))
    size_of = dict(zip((r["image"] for r in load_manifest(dataset)), sizes, strict=True))
    predictions = []
    errors = []
    with ExitStack() as stack:
        out = (
            stack.enter_context(open(args.predictions, "w", encoding="utf-8"))
            if args.predictions else None
        )
        # A progress bar on a terminal only (disable=None): a log gets the summary alone.
        for rec in tqdm(records, unit="image", disable=None, leave=False, file=sys.stderr):
            try:
                image = load_image(dataset / rec["image"])
            except ImageError as exc:
                tqdm.write(str(exc), file=sys.stderr)
                predictions.append({"image": rec["image"], "dice": [], "ms": None})
                continue
            start = time.perf_counter()
            dice = read_dice(image, readers=readers[rec["source"]])
            ms = (time.perf_counter() - start) * 1000.0
            pred = {"image": rec["image"], "dice": [d.to_json() for d in dice], "ms": ms}
            predictions.append(pred)
            if out:
                out.write(json.dumps(pred) + "\n")
            if args.errors:
                tally = score_image(rec, size_of[rec["image"]], pred["dice"], ms)
                if tally.wrong or tally.missed or tally.extra:
                    errors.append((rec["image"], tally))
    result = score(records, predictions)
    if args.json:
        result["dataset"] = str(dataset)
        if _named(args):
            result["networks"] = _named(args)
        print(json.dumps(result, indent=1))
    else:
        left_out = (f", each source read by the networks trained without it ({args.loso})"
                    if args.loso else "")
        named = "".join(f", --{option} {file}" for option, file in _named(args).items())
        print(f"dataset: {dataset} ({len(records)} images{left_out}{named})")
        print(table(result))
        for name, tally in errors:
            print(f"  {name}: wrong {tally.wrong}, missed {tally.missed}, extra {tally.extra}")
    return 0
