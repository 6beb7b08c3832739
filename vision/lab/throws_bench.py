"""`dicetower bench vision --throws`: the dataset's photos read as a 421 tower reads a throw.

Each photo's three-dice throws (`vision.lab.throws`) are cut, padded to a 640x480 frame of
the floor's colour (or read as cut with ``--unpadded``) and read with `vision.read_dice` once,
as a tower's first reading. Each throw then has one outcome:

- ``right``: exactly three dice found, all with a value, and their values are the labels'
  (as a multiset: which die is which is not asked);
- ``misread``: three dice found with values, but not the labels' (a wrong face accepted);
- ``fewer`` / ``more``: fewer or more than three dice found (unsure ones counted);
- ``unsure``: three dice found, at least one without a value.

*Accepted* is right + misread (the tower would take the throw without asking again). Per
source and overall: the counts, ``accepted_share`` and ``right_share`` (of the throws),
``misread_share`` (of the accepted throws), and the dice themselves scored by the dataset's
matching rule (`vision.lab.scoring`, recall and precision) on the image read.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vision.lab import throws as cutting
from vision.lab.scoring import Tally, percentile, score_image

if TYPE_CHECKING:
    from vision.readers import Readers

OUTCOMES = ("right", "misread", "fewer", "more", "unsure")
COUNTS = ("throws", "accepted", *OUTCOMES)


def outcome(values: Sequence[int | None], labels: Sequence[int]) -> str:
    """The throw's outcome (one of `OUTCOMES`) from the values read and the labels."""
    if len(values) < len(labels):
        return "fewer"
    if len(values) > len(labels):
        return "more"
    if any(v is None for v in values):
        return "unsure"
    read = sorted(v for v in values if v is not None)
    return "right" if read == sorted(labels) else "misread"


def read_throws(dataset: Path, records: Sequence[dict[str, Any]],
                all_records: Sequence[dict[str, Any]], padded: bool = True,
                readers: Callable[[str], Readers | None] = lambda source: None,
                ) -> list[dict[str, Any]]:
    """One reading per throw of the records (die sizes from ``all_records``), in order; each
    read with ``readers(source)``, the networks to read that source with (None: the shipped
    ones).

    A reading: the photo, its source, the cut (``box``, x y w h in the photo), how the cut was
    placed in the image read (``scale``, ``offset``, ``size``), the ``labels``, the ``values``
    read, the ``outcome``, the dice as `vision.Die.to_json` gives them (in the image read),
    ``ms`` (`read_dice` alone) and ``tally``, the dice scored by the dataset's rule.
    """
    import cv2
    from tqdm import tqdm

    from vision import ImageError, load_image, read_dice

    by_image = {r["image"]: r for r in records}
    found = cutting.throws_of(records, sizes_from=all_records)
    cv2.setNumThreads(1)
    readings = []
    photo: tuple[str, Any] = ("", None)
    # A progress bar on a terminal only (disable=None): a log gets the summary alone.
    for throw in tqdm(found, unit="throw", disable=None, leave=False, file=sys.stderr):
        if photo[0] != throw.image:
            try:
                photo = (throw.image, load_image(dataset / throw.image))
            except ImageError as exc:
                tqdm.write(str(exc), file=sys.stderr)
                photo = (throw.image, None)
        if photo[1] is None:
            continue
        cut = cutting.crop(photo[1], throw)
        if padded:
            image, scale, offset = cutting.frame(cut)
        else:
            image, scale, offset = cut, 1.0, (0, 0)
        start = time.perf_counter()
        dice = read_dice(image, readers=readers(throw.source))
        ms = (time.perf_counter() - start) * 1000.0
        size = (image.shape[1], image.shape[0])
        record = cutting.throw_record(by_image[throw.image], throw, scale, offset, size)
        as_json = [d.to_json() for d in dice]
        values = [d.value for d in dice]
        readings.append({
            "image": throw.image, "source": throw.source, "box": list(throw.box),
            "scale": round(scale, 4), "offset": list(offset), "size": list(size),
            "labels": list(throw.labels), "values": values,
            "outcome": outcome(values, throw.labels), "dice": as_json, "ms": round(ms, 2),
            "tally": score_image(record, throw.die_size * scale, as_json, ms),
        })
    return readings


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _row(readings: Sequence[dict[str, Any]]) -> dict[str, Any]:
    counts = collections.Counter(r["outcome"] for r in readings)
    row: dict[str, Any] = {"photos": len({r["image"] for r in readings}),
                           "throws": len(readings)}
    row["accepted"] = counts["right"] + counts["misread"]
    row.update({name: counts[name] for name in OUTCOMES})
    row["accepted_share"] = _share(row["accepted"], row["throws"])
    row["right_share"] = _share(row["right"], row["throws"])
    row["misread_share"] = _share(row["misread"], row["accepted"])
    tally = Tally()
    for r in readings:
        tally.add(r["tally"])
    dice = tally.to_json()
    dice.pop("images")
    dice.pop("ms")
    row["dice"] = dice
    ms = [r["ms"] for r in readings]
    row["ms"] = {"median": percentile(ms, 50), "p95": percentile(ms, 95)}
    return row


def summarize(readings: Sequence[dict[str, Any]], sources: Sequence[str]) -> dict[str, Any]:
    """Per-source (every name in ``sources``, even with no throw) and overall rows."""
    per_source = {
        name: _row([r for r in readings if r["source"] == name]) for name in sorted(sources)
    }
    return {"overall": _row(readings), "per_source": per_source}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100.0 * x:.1f}%"


def _num(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def table(result: dict[str, Any]) -> str:
    """The per-source and overall rows as fixed-width text."""
    head = (f"{'source':<38}{'throws':>7}{'accept':>8}{'right':>8}{'misread':>12}"
            f"{'fewer':>6}{'more':>6}{'unsure':>7}{'recall':>8}{'precis':>8}{'ms_med':>8}")
    lines = [head, "-" * len(head)]
    for name, row in [*result["per_source"].items(), ("ALL", result["overall"])]:
        misread = f"{row['misread']} ({_pct(row['misread_share'])})"
        lines.append(
            f"{name[:38]:<38}{row['throws']:>7}{_pct(row['accepted_share']):>8}"
            f"{_pct(row['right_share']):>8}{misread:>12}{row['fewer']:>6}{row['more']:>6}"
            f"{row['unsure']:>7}{_num(row['dice']['recall']):>8}"
            f"{_num(row['dice']['precision']):>8}{_num(row['ms']['median'], 1):>8}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace, dataset: Path, records: list[dict[str, Any]],
        all_records: list[dict[str, Any]],
        readers: Callable[[str], Readers | None] = lambda source: None) -> int:
    """The `--throws` run of `dicetower bench vision` (records after ``--half`` and ``--limit``;
    each source read with ``readers(source)``)."""
    padded = not args.unpadded
    readings = read_throws(dataset, records, all_records, padded=padded, readers=readers)
    if args.predictions:
        with ExitStack() as stack:
            out = stack.enter_context(open(args.predictions, "w", encoding="utf-8"))
            for r in readings:
                out.write(json.dumps({k: v for k, v in r.items() if k != "tally"}) + "\n")
    result = summarize(readings, sorted({str(r.get("source") or "?") for r in records}))
    frame = list(cutting.FRAME) if padded else None
    if args.json:
        print(json.dumps({
            "dataset": str(dataset), "images": len(records), "padded": padded, "frame": frame,
            "rule": {"margin": cutting.MARGIN, "max_span": cutting.MAX_SPAN,
                     "pip_grow": cutting.PIP_GROW},
            **result,
        }, indent=1))
        return 0
    how = "padded to {}x{}".format(*cutting.FRAME) if padded else "as cut, not padded"
    left_out = ", each source read by the networks trained without it" if args.loso else ""
    print(f"dataset: {dataset} ({len(records)} images, {len(readings)} three-dice throws, "
          f"{how}{left_out})")
    print(table(result))
    print("accept/right: share of throws; misread: count (share of accepted); recall and "
          "precision: the throws' dice, the dataset's rule")
    if args.errors:
        for r in readings:
            if r["outcome"] != "right":
                values = ",".join("?" if v is None else str(v) for v in r["values"]) or "-"
                print(f"  {r['image']} box {tuple(r['box'])}: labels "
                      f"{','.join(map(str, r['labels']))}, read {values} ({r['outcome']})")
    return 0
