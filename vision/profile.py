"""Calibration profile of one tray: what its dice, pips, die size and floor look like."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

POLARITIES = ("dark", "light")


@dataclass
class Profile:
    """Calibration of a tray camera; every field is optional.

    ``dice_colors``: Lab colours (OpenCV 8-bit Lab) of the dice bodies. ``pip_polarity``: "dark"
    or "light" pips, or None for either. ``die_side``: side of a die's top face in pixels of the
    camera image. ``background``: path of an empty-tray image (loaded on demand). ``zones``:
    polygons (lists of (x, y)) where dice may lie; dice outside them are ignored.
    """

    dice_colors: list[tuple[float, float, float]] = field(default_factory=list)
    pip_polarity: str | None = None
    die_side: float | None = None
    background: str | None = None
    zones: list[list[tuple[float, float]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.pip_polarity not in (None, *POLARITIES):
            raise ValueError(f"pip_polarity must be one of {POLARITIES} or None")
        if self.die_side is not None and not self.die_side > 0:
            raise ValueError("die_side must be a positive number of pixels")
        self._background_image: np.ndarray | None = None

    def background_image(self) -> np.ndarray | None:
        """The empty-tray image (BGR), or None when the profile has none."""
        if self.background is None:
            return None
        if self._background_image is None:
            from vision.image_io import load_image

            self._background_image = load_image(self.background)
        return self._background_image

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("_background_image", None)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Profile:
        known = {"dice_colors", "pip_polarity", "die_side", "background", "zones"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown profile fields: {', '.join(sorted(unknown))}")
        return cls(
            dice_colors=[tuple(map(float, c)) for c in data.get("dice_colors") or []],
            pip_polarity=data.get("pip_polarity"),
            die_side=None if data.get("die_side") is None else float(data["die_side"]),
            background=data.get("background"),
            zones=[[tuple(map(float, p)) for p in zone] for zone in data.get("zones") or []],
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

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
        profile = cls.from_dict(data)
        if profile.background and not Path(profile.background).is_absolute():
            profile.background = str(file.parent / profile.background)
        return profile
