"""Calibration profile of one tray: what its dice, pips, die size and floor look like."""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.adaptation import Adaptation, save_beside

POLARITIES = ("dark", "light")
# Room read around the zones, as a fraction of the image's shorter side, when the profile
# gives no die size (with one, a die's side: a die lying across a zone's edge is whole).
ZONE_MARGIN = 0.1
MAX_FLOORS = 4  # empty trays kept prepared: a frame needs two (die-size pass, working size)
# How near (Lab distance) a pixel must be to one of the dice colours to be of a die (shading
# across a tray changes a die's lightness by up to about a fifth), and the share of an unsure
# die's body that must be (the rest: pips, a side face in shade).
DIE_COLOUR_MATCH = 40.0
DIE_COLOUR_SHARE = 0.3


@dataclass
class Profile:
    """Calibration of a tray camera; every field is optional.

    ``dice_colors``: Lab colours (OpenCV 8-bit Lab) of the dice bodies. ``pip_polarity``: "dark"
    or "light" pips, or None for either. ``die_side``: side of a die's top face in pixels of the
    camera image. ``background``: path of an empty-tray image (loaded on demand). ``zones``:
    polygons (lists of (x, y)) where dice may lie; dice outside them are ignored.
    ``keep_zone``: a polygon where a 421 player sets aside the dice kept between throws (also
    read; `zone_of` tells it from the roll zones). ``adaptation``: the face network tuned to
    these dice (`vision.adaptation`), used with the model it was tuned from.
    """

    dice_colors: list[tuple[float, float, float]] = field(default_factory=list)
    pip_polarity: str | None = None
    die_side: float | None = None
    background: str | None = None
    zones: list[list[tuple[float, float]]] = field(default_factory=list)
    keep_zone: list[tuple[float, float]] | None = None
    adaptation: Adaptation | None = None

    def __post_init__(self) -> None:
        if self.pip_polarity not in (None, *POLARITIES):
            raise ValueError(f"pip_polarity must be one of {POLARITIES} or None")
        if self.die_side is not None and not self.die_side > 0:
            raise ValueError("die_side must be a positive number of pixels")
        self._background_image: np.ndarray | None = None
        self._floors: dict[tuple, np.ndarray] = {}  # of the empty tray loaded, by geometry

    def background_image(self) -> np.ndarray | None:
        """The empty-tray image (BGR), or None when the profile has none."""
        if self.background is None:
            return self._background_image
        if self._background_image is None:
            from vision.image_io import load_image

            self._background_image = load_image(self.background)
        return self._background_image

    def use_empty_tray(self, image: np.ndarray) -> None:
        """Take ``image`` (BGR) as the empty tray, without a file (a simulated tray's)."""
        self.background = None
        self._background_image = image
        self._floors.clear()

    def empty_tray(self, shape: tuple[int, int]) -> np.ndarray | None:
        """The empty-tray image for images of ``shape`` (h, w), or None without one; a
        ValueError if it is of another size."""
        tray = self.background_image()
        if tray is not None and tray.shape[:2] != tuple(shape):
            raise ValueError(
                f"the profile's empty tray is {tray.shape[1]}x{tray.shape[0]} px, the image "
                f"{shape[1]}x{shape[0]}: calibrate again for this camera")
        return tray

    def floor(
        self, shape: tuple[int, int], box: tuple[int, int, int, int], size: tuple[int, int]
    ) -> np.ndarray | None:
        """The empty tray as the pipeline compares frames of ``shape`` (h, w) with it: cut to
        ``box`` (x0, y0, x1, y1), reduced to ``size`` (w, h) and in Lab; or None without one.
        Kept for the next frames (the tray does not change between them), for the few
        geometries a frame is looked at in."""
        tray = self.empty_tray(shape)
        if tray is None:
            return None
        key = (tuple(shape), tuple(box), tuple(size))
        if key not in self._floors:
            x0, y0, x1, y1 = box
            part = tray[y0:y1, x0:x1]
            if part.shape[1::-1] != tuple(size):
                part = cv2.resize(part, size, interpolation=cv2.INTER_AREA)
            if len(self._floors) >= MAX_FLOORS:  # another camera geometry: start afresh
                self._floors.clear()
            self._floors[key] = cv2.cvtColor(part, cv2.COLOR_BGR2Lab)
        return self._floors[key]

    def zone_box(self, shape: tuple[int, int]) -> tuple[int, int, int, int]:
        """The part (x0, y0, x1, y1) of an image of ``shape`` (h, w) worth reading: around the
        zones, with room for a die lying across their edge; the whole image without zones."""
        h, w = shape
        zones = self._all_zones()
        if not zones:
            return 0, 0, w, h
        points = np.array([p for zone in zones for p in zone], dtype=np.float64)
        margin = self.die_side or ZONE_MARGIN * min(h, w)
        (x0, y0), (x1, y1) = points.min(axis=0) - margin, points.max(axis=0) + margin
        x0, y0 = max(0, math.floor(x0)), max(0, math.floor(y0))
        x1, y1 = min(w, math.ceil(x1)), min(h, math.ceil(y1))
        if x1 - x0 < 8 or y1 - y0 < 8:
            raise ValueError("the profile's zones lie outside the image")
        return x0, y0, x1, y1

    def in_zones(self, point: tuple[float, float]) -> bool:
        """Whether ``point`` lies in (or on the edge of) a zone; anywhere, without zones."""
        zones = self._all_zones()
        return not zones or any(_inside(zone, point) for zone in zones)

    def zone_of(self, point: tuple[float, float]) -> str | None:
        """"keep" in the keep zone, "roll" in a roll zone (anywhere, without zones), else None."""
        if self.keep_zone and _inside(self.keep_zone, point):
            return "keep"
        if not self.zones or any(_inside(zone, point) for zone in self.zones):
            return "roll"
        return None

    def dice_coloured(
        self, image: np.ndarray, mask: np.ndarray, center: tuple[float, float], side: float
    ) -> bool:
        """Whether at least DIE_COLOUR_SHARE of what stands out from the floor (``mask``)
        within a die's square around ``center`` in a BGR ``image`` is within DIE_COLOUR_MATCH
        (Lab) of one of the dice colours: a die's body, or two dice's, less their pips. Where
        nothing stands out (white dice on a white floor), there is nothing to judge: it may be
        a die."""
        h, w = mask.shape
        r = max(1, round(side / 2))
        cx, cy = round(center[0]), round(center[1])
        x0, y0, x1, y1 = max(0, cx - r), max(0, cy - r), min(w, cx + r + 1), min(h, cy + r + 1)
        body = mask[y0:y1, x0:x1] > 0
        if not body.any():
            return True
        lab = cv2.cvtColor(image[y0:y1, x0:x1], cv2.COLOR_BGR2Lab)[body].astype(np.float32)
        gaps = lab[:, None, :] - np.asarray(self.dice_colors, np.float32)[None, :, :]
        near = np.sqrt((gaps * gaps).sum(axis=2)).min(axis=1) <= DIE_COLOUR_MATCH
        return float(near.mean()) >= DIE_COLOUR_SHARE

    def _all_zones(self) -> list[list[tuple[float, float]]]:
        return [*self.zones, *([self.keep_zone] if self.keep_zone else [])]

    def to_dict(self, stem: str = "profile") -> dict[str, Any]:
        """Its JSON form, as the file ``stem``.json holds it (its tuned network, if any, in a
        file beside: `vision.adaptation.save_beside`)."""
        data = asdict(replace(self, adaptation=None))
        data.pop("_background_image", None)
        if data["keep_zone"] is None:
            del data["keep_zone"]  # files written before keep zones read the same
        del data["adaptation"]
        if self.adaptation is not None:
            data["adaptation"] = self.adaptation.to_dict(stem)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], folder: str | os.PathLike[str] = ".") -> Profile:
        """A profile from its JSON form, the files it names read from ``folder``; ValueError
        naming the field that is wrong."""
        known = {"dice_colors", "pip_polarity", "die_side", "background", "zones", "keep_zone",
                 "adaptation"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown profile fields: {', '.join(sorted(unknown))}")
        field_name = ""
        try:
            field_name = "dice_colors"
            dice_colors = [tuple(map(float, c)) for c in data.get("dice_colors") or []]
            field_name = "die_side"
            die_side = None if data.get("die_side") is None else float(data["die_side"])
            field_name = "zones"
            zones = [[tuple(map(float, p)) for p in zone] for zone in data.get("zones") or []]
            field_name = "keep_zone"
            keep_zone = ([tuple(map(float, p)) for p in data["keep_zone"]]
                         if data.get("keep_zone") else None)
            field_name = "background"
            background = data.get("background")
            if background is not None and not isinstance(background, str):
                raise TypeError("a file name is text")
            field_name = "adaptation"
            adaptation = (Adaptation.from_dict(data["adaptation"], folder)
                          if data.get("adaptation") is not None else None)
            field_name = ""  # the checks of __post_init__ name their own field
            return cls(dice_colors=dice_colors, pip_polarity=data.get("pip_polarity"),
                       die_side=die_side, background=background, zones=zones,
                       keep_zone=keep_zone, adaptation=adaptation)
        except (TypeError, ValueError) as exc:
            if not field_name:
                raise
            raise ValueError(f"profile field {field_name!r} is not what it should be "
                             f"({exc})") from None

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the profile at ``path`` (and its tuned network beside it)."""
        file = Path(path)
        if self.adaptation is not None:
            save_beside(self.adaptation, file.parent, stem_of(file))
        data = self.to_dict(stem_of(file))
        file.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Profile:
        """Read a profile JSON file; relative background paths are taken from its folder."""
        file = Path(path)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: cannot read profile ({exc})") from exc
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a profile is a JSON object")
        try:
            profile = cls.from_dict(data, file.parent)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        if profile.background and not Path(profile.background).is_absolute():
            profile.background = str(file.parent / profile.background)
        return profile


def stem_of(path: str | os.PathLike[str]) -> str:
    """The name that a profile file's companions begin with: ``red`` for ``red.json``."""
    name = Path(path).name
    return name[:-5] if name.endswith(".json") else name


def _inside(zone: list[tuple[float, float]], point: tuple[float, float]) -> bool:
    polygon = np.array(zone, dtype=np.float32).reshape(-1, 1, 2)
    return cv2.pointPolygonTest(polygon, (float(point[0]), float(point[1])), False) >= 0
