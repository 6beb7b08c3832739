"""The result of reading a tray image: one `Die` per die found, read or marked unsure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Why a die was found but not given a value.
REASONS: tuple[str, ...] = ("cocked", "occluded", "blurred", "low contrast", "not a pip face")

Point = tuple[float, float]


@dataclass(frozen=True)
class Die:
    """One die found in an image.

    ``value`` is 1..6, or None when the pips do not support a value; ``reason`` then says why
    (one of `REASONS`). ``center`` and ``corners`` (the rotated rectangle of the top face) are in
    pixels of the input image. ``alternatives`` lists other plausible values, likeliest first.
    """

    value: int | None
    center: Point
    corners: tuple[Point, Point, Point, Point]
    confidence: float
    reason: str | None = None
    alternatives: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.value is not None and self.value not in (1, 2, 3, 4, 5, 6):
            raise ValueError(f"die value must be 1..6 or None, got {self.value!r}")
        if self.value is None and self.reason not in REASONS:
            raise ValueError(f"an unsure die needs a reason from {REASONS}, got {self.reason!r}")
        if self.value is not None and self.reason is not None:
            raise ValueError("a read die carries no reason")
        if len(self.corners) != 4:
            raise ValueError("a die outline has exactly 4 corners")

    def to_json(self) -> dict[str, Any]:
        """The die as JSON-ready data (coordinates rounded to 0.1 px)."""
        return {
            "value": self.value,
            "center": [round(float(self.center[0]), 1), round(float(self.center[1]), 1)],
            "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in self.corners],
            "confidence": round(float(self.confidence), 3),
            "reason": self.reason,
            "alternatives": list(self.alternatives),
        }
