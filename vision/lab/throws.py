"""Three-dice throws cut out of the labelled photos: what a 421 tower's camera sees.

A tower reads three dice on its tray floor, not a crowded table. `cut_throws` takes one manifest
record and gives the photo's throws by a fixed rule (documented in docs/lab/throws.md):

1. Every labelled die gets an *extent*, a box holding the whole die (`die_extents`):
   ``die`` boxes (nell-byler) are that already; ``pips`` boxes (matteop65) hold only the top
   face's pip cluster, so the extent is a square on the box's centre, ``PIP_GROW`` times the
   box's larger side, never less than ``PIP_GROW`` times the photo's typical pip-cluster side
   (``PIP_EXTENT`` x the die size): a "1" box holds one pip. A photo with any die without a
   box (tai-studio) gives no throw: nothing would say that no other die lies in a cut.
2. Every three dice whose extents' union spans at most ``MAX_SPAN`` die sides (close, as on a
   tray) make a candidate cut: that union grown by ``MARGIN`` die sides on every side, in
   whole pixels. A candidate is dropped when it leaves the photo or when any other labelled
   die's extent overlaps it.
3. Of the candidates left, the smallest cut is taken first (ties: the lowest die indices),
   then the next that overlaps no cut taken, and so on: a photo may give several throws, never
   sharing a pixel.

`frame` then pads a cut to 640x480 with the floor's colour (the median of its border strip),
centred, after scaling it down to fit when it is larger. Everything here is a pure function of
the manifest record, its die size (`vision.lab.scoring.die_sizes`) and the image's array.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from vision.lab.scoring import PIP_EXTENT, die_sizes

PIP_GROW = 1.6  # die extent / pip-cluster side, for "pips" boxes (a tilted die's body included)
MARGIN = 1.0  # x die size: floor kept around the three dice on every side
MAX_SPAN = 8.0  # x die size: the three dice's union may be at most this wide and high
BORDER = 4  # px: the strip along the cut's edge whose median colour is the floor's
FRAME = (640, 480)  # width, height of a tower's frame

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 (x1, y1 excluded)


@dataclass(frozen=True)
class Throw:
    """Three labelled dice of one photo and the cut around them.

    ``box`` is the cut as ``(x, y, w, h)`` in whole pixels of the photo; ``dice`` the indices
    of the three dice in the record's ``dice`` list; ``labels`` their values, sorted;
    ``die_size`` the photo's die size in pixels.
    """

    image: str
    source: str
    box: tuple[int, int, int, int]
    dice: tuple[int, int, int]
    labels: tuple[int, ...]
    die_size: float


def _box_of(die: dict[str, Any]) -> Box | None:
    bbox = die.get("bbox")
    if not isinstance(bbox, list | tuple) or len(bbox) != 4:
        return None
    x, y, w, h = (float(t) for t in bbox)
    return (x, y, x + w, y + h) if w > 0 and h > 0 else None


def die_extents(record: dict[str, Any], die_size: float) -> list[Box] | None:
    """A box holding each labelled die whole, in the record's order; None when a die has no box.

    ``die_size`` is the photo's typical die side (`vision.lab.scoring.die_sizes`), used for
    pip-cluster boxes, whose own size says little about the die's ("1" boxes, tilted "2"s).
    """
    boxes = [_box_of(d) for d in record["dice"]]
    if not boxes or any(b is None for b in boxes):
        return None
    if record.get("bbox_kind") != "pips":
        return [b for b in boxes if b is not None]
    extents = []
    least = PIP_GROW * PIP_EXTENT * die_size
    for x0, y0, x1, y1 in (b for b in boxes if b is not None):
        half = max(PIP_GROW * max(x1 - x0, y1 - y0), least) / 2.0
        cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
        extents.append((cx - half, cy - half, cx + half, cy + half))
    return extents


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def cut_throws(record: dict[str, Any], die_size: float) -> list[Throw]:
    """The photo's three-dice throws by the module's rule, in the order they were taken."""
    width, height = int(record.get("width") or 0), int(record.get("height") or 0)
    extents = die_extents(record, die_size)
    if extents is None or len(extents) < 3 or width <= 0 or height <= 0:
        return []
    margin = MARGIN * die_size
    span = MAX_SPAN * die_size
    candidates: list[tuple[int, tuple[int, int, int], Box]] = []
    for trio in itertools.combinations(range(len(extents)), 3):
        x0 = min(extents[i][0] for i in trio)
        y0 = min(extents[i][1] for i in trio)
        x1 = max(extents[i][2] for i in trio)
        y1 = max(extents[i][3] for i in trio)
        if x1 - x0 > span or y1 - y0 > span:
            continue
        # Whole pixels, grown outwards, so the cut never trims the margin.
        cut = (float(np.floor(x0 - margin)), float(np.floor(y0 - margin)),
               float(np.ceil(x1 + margin)), float(np.ceil(y1 + margin)))
        if cut[0] < 0 or cut[1] < 0 or cut[2] > width or cut[3] > height:
            continue
        if any(_overlap(cut, e) for k, e in enumerate(extents) if k not in trio):
            continue
        area = int((cut[2] - cut[0]) * (cut[3] - cut[1]))
        candidates.append((area, trio, cut))
    taken: list[Throw] = []
    cuts: list[Box] = []
    for _, trio, cut in sorted(candidates):
        if any(_overlap(cut, other) for other in cuts):
            continue
        cuts.append(cut)
        x0, y0, x1, y1 = (int(t) for t in cut)
        taken.append(Throw(
            image=record["image"], source=str(record.get("source") or "?"),
            box=(x0, y0, x1 - x0, y1 - y0), dice=trio,
            labels=tuple(sorted(int(record["dice"][i]["value"]) for i in trio)),
            die_size=float(die_size),
        ))
    return taken


def throws_of(records: Sequence[dict[str, Any]],
              sizes_from: Sequence[dict[str, Any]] | None = None) -> list[Throw]:
    """Every throw of the records, photo by photo in the manifest's order.

    Die sizes come from ``sizes_from`` (default: the records), the whole manifest when the
    records are a part of it, so a photo's sizes never depend on which part is read.
    """
    pool = list(sizes_from) if sizes_from is not None else list(records)
    size_of = dict(zip((r["image"] for r in pool), die_sizes(pool), strict=True))
    out: list[Throw] = []
    for record in records:
        out.extend(cut_throws(record, size_of[record["image"]]))
    return out


def crop(image: np.ndarray, throw: Throw) -> np.ndarray:
    """The throw's cut of the photo (a copy)."""
    x, y, w, h = throw.box
    return image[y : y + h, x : x + w].copy()


def floor_colour(cut: np.ndarray, border: int = BORDER) -> np.ndarray:
    """The median colour (per channel) of the cut's border strip, ``border`` pixels wide."""
    h, w = cut.shape[:2]
    b = max(1, min(border, h // 2, w // 2))
    mask = np.ones((h, w), dtype=bool)
    mask[b : h - b, b : w - b] = False
    return np.median(cut[mask], axis=0).round().astype(cut.dtype)


def frame(cut: np.ndarray, size: tuple[int, int] = FRAME
          ) -> tuple[np.ndarray, float, tuple[int, int]]:
    """The cut centred on a ``size`` (width, height) frame of its floor's colour.

    A cut larger than the frame is first scaled down to fit (area averaging). Returns the frame,
    the scale and the offset ``(ox, oy)``: a cut pixel ``(x, y)`` lies at
    ``(x * scale + ox, y * scale + oy)`` in the frame.
    """
    fw, fh = size
    h, w = cut.shape[:2]
    colour = floor_colour(cut)
    scale = min(1.0, fw / w, fh / h)
    if scale < 1.0:
        dsize = (min(fw, max(1, round(w * scale))), min(fh, max(1, round(h * scale))))
        cut = cv2.resize(cut, dsize, interpolation=cv2.INTER_AREA)
        h, w = cut.shape[:2]
    ox, oy = (fw - w) // 2, (fh - h) // 2
    out = np.empty((fh, fw, *cut.shape[2:]), dtype=cut.dtype)
    out[...] = colour
    out[oy : oy + h, ox : ox + w] = cut
    return out, scale, (ox, oy)


def throw_record(record: dict[str, Any], throw: Throw, scale: float = 1.0,
                 offset: tuple[int, int] = (0, 0), size: tuple[int, int] | None = None
                 ) -> dict[str, Any]:
    """A manifest record of the throw alone, in the pixels of the image read.

    The cut's pixel ``(x, y)`` is at ``(x * scale + ox, y * scale + oy)`` (`frame`'s mapping);
    ``size`` is the image's (width, height), the cut's own when None. The dataset's matching
    rule (`vision.lab.scoring.score_image`, with ``throw.die_size * scale``) then scores it.
    """
    bx, by, bw, bh = throw.box
    ox, oy = offset
    dice = []
    for i in throw.dice:
        x, y, w, h = (float(t) for t in record["dice"][i]["bbox"])
        dice.append({"value": record["dice"][i]["value"],
                     "bbox": [(x - bx) * scale + ox, (y - by) * scale + oy, w * scale, h * scale]})
    width, height = size if size is not None else (bw, bh)
    return {"image": record["image"], "source": record.get("source"), "width": width,
            "height": height, "bbox_kind": record.get("bbox_kind"), "dice": dice}
