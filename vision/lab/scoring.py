"""Scoring readings against a dice-photos manifest, with the dataset's own matching rule.

The rule (the same as the dataset's ``tools/score.py``): per image a typical die size S is
taken from the labels; a predicted centre may match a labelled die when it lies inside the
label box grown by 0.25*S ("die" boxes), within 0.75*S of the box centre ("pips" boxes, tight
around the pip cluster), or anywhere ("none": single-die crops). Among the allowed pairs a
maximum-cardinality, minimum-cost one-to-one assignment is taken (cost = distance to the box
centre / S), blind to values, so a misread is never hidden as a miss plus an extra.

precision = correct / (correct + wrong + extra); recall = correct / labelled dice; an unsure
reading (value None) is never an error.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# Where the dataset lies when none is named: beside the repository, never inside it.
DEFAULT_DATASET = Path(__file__).resolve().parents[3] / "shared/datasets/dice-photos"
PIP_EXTENT = 0.75  # pip-cluster extent / die side, for "pips" boxes
BOX_MARGIN = 0.25  # x S, added on each side of "die" boxes
PIP_RADIUS = 0.75  # x S, radius around the centre of a "pips" box
DIAG_FALLBACK = 0.06  # x image diagonal, last-resort die size
FORBIDDEN = 1.0e6  # cost of a pair the rule does not allow
COUNTS = ("gt_dice", "correct", "wrong", "unsure", "missed", "extra", "extra_null", "half_lost")


def load_manifest(dataset: str | Path) -> list[dict[str, Any]]:
    """The manifest's image records, from the dataset folder or the manifest file.

    A ValueError (one line: what is missing, where) when there is no manifest or it is not
    one: a list of records (or ``{"images": [...]}``), each with ``image``, ``source`` and a
    list of ``dice`` with their ``value``.
    """
    path = Path(dataset)
    if path.is_dir():
        path = path / "manifest.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file (is the dataset there? set $DICE_PHOTOS)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    records = data.get("images") if isinstance(data, dict) else data
    if not isinstance(records, list) or not records:
        raise ValueError(f"{path}: no image records (a list, or an object with \"images\")")
    for number, record in enumerate(records, start=1):
        dice = record.get("dice") if isinstance(record, dict) else None
        if (not isinstance(record, dict) or not isinstance(record.get("image"), str)
                or "source" not in record or not isinstance(dice, list)
                or not all(isinstance(d, dict) and "value" in d for d in dice)):
            raise ValueError(f"{path}: record {number} is not an image record "
                             "(image, source and dice with their value)")
    return records


def half_of(records: list[dict[str, Any]], half: str | None) -> list[dict[str, Any]]:
    """The manifest's even- or odd-indexed records (``"even"``, ``"odd"``), or all of them
    (``"all"`` or None): the halves a model is trained on and measured on, apart."""
    if half in (None, "all"):
        return list(records)
    if half not in ("even", "odd"):
        raise ValueError(f"half must be 'even', 'odd' or 'all', not {half!r}")
    return records[0 if half == "even" else 1 :: 2]


def _median(xs: Sequence[float]) -> float | None:
    return float(statistics.median(xs)) if xs else None


def percentile(xs: Sequence[float], q: float) -> float | None:
    """NumPy's percentile (linear interpolation, 0-100), the dataset's scoring rule's; None of
    nothing."""
    return float(np.percentile(xs, q)) if len(xs) else None


def _raw_die_size(rec: dict[str, Any]) -> float | None:
    boxes = [
        (d["bbox"], d.get("value"))
        for d in rec["dice"]
        if isinstance(d.get("bbox"), list | tuple) and len(d["bbox"]) == 4
    ]
    if rec.get("bbox_kind") == "pips":
        sizes = [max(b[2], b[3]) / PIP_EXTENT for b, v in boxes if v in (2, 3, 4, 5, 6)
                 and max(b[2], b[3]) > 0]
    else:
        sizes = [math.sqrt(b[2] * b[3]) for b, _ in boxes if b[2] > 0 and b[3] > 0]
    return _median(sizes)


def die_sizes(records: Sequence[dict[str, Any]]) -> list[float]:
    """Per-image die size S, falling back to the source's, the box kind's, then the diagonal."""
    raw = [_raw_die_size(r) for r in records]
    by_source: dict[tuple, list[float]] = {}
    by_kind: dict[Any, list[float]] = {}
    for r, s in zip(records, raw, strict=True):
        if s is not None:
            by_source.setdefault((r.get("source"), r.get("bbox_kind")), []).append(s)
            by_kind.setdefault(r.get("bbox_kind"), []).append(s)
    out = []
    for r, s in zip(records, raw, strict=True):
        if s is None:
            s = _median(by_source.get((r.get("source"), r.get("bbox_kind")), []))
        if s is None:
            s = _median(by_kind.get(r.get("bbox_kind"), []))
        if s is None:
            w, h = float(r.get("width") or 0), float(r.get("height") or 0)
            s = DIAG_FALLBACK * math.hypot(w, h) if w > 0 and h > 0 else 40.0
        out.append(s)
    return out


def min_cost_assignment(cost: list[list[float]]) -> list[tuple[int, int]]:
    """Minimum-cost one-to-one assignment of a rectangular matrix (Hungarian method).

    Returns (row, col) pairs: one per row when rows <= cols, else one per column.
    """
    n = len(cost)
    if n == 0 or not cost[0]:
        return []
    m = len(cost[0])
    if n > m:
        transposed = [[cost[i][j] for i in range(n)] for j in range(m)]
        return [(i, j) for j, i in min_cost_assignment(transposed)]
    inf = float("inf")
    u = [0.0] * (n + 1)
    v = [0.0] * (m + 1)
    owner = [0] * (m + 1)  # owner[j] = row (1-based) holding column j
    way = [0] * (m + 1)
    for i in range(1, n + 1):
        owner[0] = i
        j0 = 0
        minv = [inf] * (m + 1)
        used = [False] * (m + 1)
        while True:
            used[j0] = True
            i0 = owner[j0]
            delta = inf
            j1 = 0
            row = cost[i0 - 1]
            for j in range(1, m + 1):
                if not used[j]:
                    cur = row[j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(m + 1):
                if used[j]:
                    u[owner[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if owner[j0] == 0:
                break
        while True:
            j1 = way[j0]
            owner[j0] = owner[j1]
            j0 = j1
            if j0 == 0:
                break
    return [(owner[j] - 1, j - 1) for j in range(1, m + 1) if owner[j] != 0]


def match_image(
    rec: dict[str, Any], size: float, centers: Sequence[tuple[float, float] | None]
) -> list[int | None]:
    """For each labelled die, the index of the prediction matched to it (or None)."""
    kind = rec.get("bbox_kind")
    labels = rec["dice"]
    width, height = float(rec.get("width") or 0), float(rec.get("height") or 0)
    image_center = (width / 2.0, height / 2.0)

    def pair_cost(label: dict[str, Any], c: tuple[float, float] | None) -> float | None:
        box = label.get("bbox")
        has_box = isinstance(box, list | tuple) and len(box) == 4
        if kind == "none" or (not has_box and len(labels) == 1):
            if c is None:
                return 1000.0
            return math.hypot(c[0] - image_center[0], c[1] - image_center[1]) / size
        if not has_box or c is None:
            return None
        x, y, w, h = (float(t) for t in box)
        dist = math.hypot(c[0] - (x + w / 2.0), c[1] - (y + h / 2.0)) / size
        if kind == "pips":
            return dist if dist <= PIP_RADIUS else None
        margin = BOX_MARGIN * size
        inside = x - margin <= c[0] <= x + w + margin and y - margin <= c[1] <= y + h + margin
        return dist if inside else None

    allowed = {}
    for i, label in enumerate(labels):
        for j, c in enumerate(centers):
            cost = pair_cost(label, c)
            if cost is not None:
                allowed[(i, j)] = cost
    assign: list[int | None] = [None] * len(labels)
    if not allowed:
        return assign
    cols = sorted({j for _, j in allowed})
    rows = sorted({i for i, _ in allowed})
    matrix = [[allowed.get((i, j), FORBIDDEN) for j in cols] for i in rows]
    for ri, ci in min_cost_assignment(matrix):
        i, j = rows[ri], cols[ci]
        if (i, j) in allowed:
            assign[i] = j
    return assign


@dataclass
class Tally:
    """Counts of one image, one source or the whole set."""

    images: int = 0
    gt_dice: int = 0
    correct: int = 0
    wrong: int = 0
    unsure: int = 0
    missed: int = 0
    extra: int = 0
    extra_null: int = 0
    half_lost: int = 0  # images where fewer than half the labelled dice were found at all
    ms: list[float] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.images += other.images
        for name in COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.ms.extend(other.ms)

    @property
    def recall(self) -> float | None:
        return self.correct / self.gt_dice if self.gt_dice else None

    @property
    def precision(self) -> float | None:
        given = self.correct + self.wrong + self.extra
        return self.correct / given if given else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"images": self.images}
        out.update({name: getattr(self, name) for name in COUNTS})
        out["recall"] = self.recall
        out["precision"] = self.precision
        out["ms"] = {
            "n": len(self.ms),
            "median": _median(self.ms),
            "mean": sum(self.ms) / len(self.ms) if self.ms else None,
            "p95": percentile(self.ms, 95),
        }
        return out


def score_image(
    rec: dict[str, Any], size: float, dice: Sequence[dict[str, Any]], ms: float | None = None
) -> Tally:
    """Tally of one image's predicted dice (JSON-like dicts with "value" and "center")."""
    centers = [tuple(d["center"]) if d.get("center") is not None else None for d in dice]
    assign = match_image(rec, size, centers)
    tally = Tally(images=1, ms=[] if ms is None else [float(ms)])
    for label, j in zip(rec["dice"], assign, strict=True):
        tally.gt_dice += 1
        if j is None:
            tally.missed += 1
        elif dice[j].get("value") is None:
            tally.unsure += 1
        elif dice[j]["value"] == label.get("value"):
            tally.correct += 1
        else:
            tally.wrong += 1
    if 2 * tally.missed > tally.gt_dice:
        tally.half_lost = 1
    matched = {j for j in assign if j is not None}
    for j, d in enumerate(dice):
        if j not in matched:
            if d.get("value") is None:
                tally.extra_null += 1
            else:
                tally.extra += 1
    return tally


def score(
    records: Sequence[dict[str, Any]], predictions: Iterable[dict[str, Any]]
) -> dict[str, Any]:
    """Per-source and overall tallies of predictions {"image", "dice", "ms"} (manifest paths).

    Only the images that have a prediction are scored.
    """
    sizes = dict(zip((r["image"] for r in records), die_sizes(records), strict=True))
    by_image = {r["image"]: r for r in records}
    overall = Tally()
    per_source: dict[str, Tally] = {}
    for pred in predictions:
        rec = by_image[pred["image"]]
        tally = score_image(rec, sizes[rec["image"]], pred["dice"], pred.get("ms"))
        overall.add(tally)
        per_source.setdefault(rec.get("source") or "?", Tally()).add(tally)
    return {
        "overall": overall.to_json(),
        "per_source": {k: v.to_json() for k, v in sorted(per_source.items())},
    }
