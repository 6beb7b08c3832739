"""The values of the dice in calibration photos, as the installer gives them.

A labels file (``--labels FILE``) is in the dice-photos dataset's manifest format: a list of
image records (or ``{"images": [...]}``), each with ``image`` (its path relative to the photos'
folder) and ``dice``, each die with its ``value`` (1..6) and ``bbox`` ``[x, y, w, h]`` in
pixels; ``bbox_kind`` says what a box encloses ("die": the whole die, side faces included;
"pips": the top face's pips; "none": no box, one die roughly centred). A die without a box
is placed by the reading (`place_by_reading`): a read die of that value, or the one unsure
die left.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from calibration.errors import CalibrationError

DIE_BOX_TO_SIDE = 0.85  # a top face's side / the shorter side of a whole die's box


@dataclass(frozen=True)
class Labelled:
    """One die of a photo: its value (0: a die whose value is not given), and where it lies
    (image pixels) if known; ``side``: its top face's side when the box tells it."""

    value: int
    center: tuple[float, float] | None = None
    side: float | None = None


def _die(record: dict[str, Any], die: Any, where: str) -> Labelled:
    if not isinstance(die, dict) or not isinstance(die.get("value"), int) or isinstance(
            die.get("value"), bool) or not 1 <= die["value"] <= 6:
        raise CalibrationError(f"{where}: each die needs a value 1..6")
    box = die.get("bbox")
    if box is None:
        if record.get("bbox_kind") == "none" and len(record["dice"]) == 1 and (
                isinstance(record.get("width"), int | float)
                and isinstance(record.get("height"), int | float)):
            return Labelled(die["value"], (record["width"] / 2.0, record["height"] / 2.0))
        return Labelled(die["value"])
    if (not isinstance(box, list | tuple) or len(box) != 4
            or not all(isinstance(v, int | float) and math.isfinite(v) for v in box)
            or box[2] <= 0 or box[3] <= 0):
        raise CalibrationError(f"{where}: bbox is [x, y, w, h] in pixels")
    x, y, w, h = (float(v) for v in box)
    side = DIE_BOX_TO_SIDE * min(w, h) if record.get("bbox_kind", "die") == "die" else None
    return Labelled(die["value"], (x + w / 2.0, y + h / 2.0), side)


def load_labels(path: Path, folder: Path) -> dict[str, list[Labelled]]:
    """The dice of each photo, by its path relative to ``folder``; `CalibrationError` in one
    line when the file is not a labels file or names a photo not in ``folder``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"--labels {path}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise CalibrationError(f"--labels {path}: not JSON ({exc.msg}, line {exc.lineno})"
                               ) from None
    records = data.get("images") if isinstance(data, dict) else data
    if not isinstance(records, list) or not records:
        raise CalibrationError(f"--labels {path}: no image records (a list, or an object with "
                               "\"images\", as the dataset's manifest)")
    labels: dict[str, list[Labelled]] = {}
    for number, record in enumerate(records, start=1):
        where = f"--labels {path}: record {number}"
        if (not isinstance(record, dict) or not isinstance(record.get("image"), str)
                or not isinstance(record.get("dice"), list)):
            raise CalibrationError(f"{where}: an image record has image and dice")
        name = record["image"]
        if not (folder / name).is_file():
            raise CalibrationError(f"{where}: {name} is not in {folder}")
        labels[str(Path(name))] = [_die(record, d, where) for d in record["dice"]]
    return labels


def place_by_reading(labelled: Sequence[Labelled], dice: Sequence[Any]) -> list[Labelled]:
    """Dice given without a box, placed on the reading's dice (`vision.Die`): each on a read
    die of its value, then the one unsure die left to the one die left; a die that cannot
    be placed so is dropped (its value is still counted by the check)."""
    placed = [d for d in labelled if d.center is not None]
    loose = [d for d in labelled if d.center is None]
    free = [d for d in dice if all(math.dist(d.center, p.center) > 1.0 for p in placed)]
    left = []
    for die in loose:
        match = next((d for d in free if d.value == die.value), None)
        if match is None:
            left.append(die)
            continue
        free.remove(match)
        placed.append(Labelled(die.value, match.center))
    unsure = [d for d in free if d.value is None]
    if len(left) == 1 and len(unsure) == 1:
        placed.append(Labelled(left[0].value, unsure[0].center))
    return placed
