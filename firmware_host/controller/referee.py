"""From dice read in the tray to the game input they mean, or a reasoned request to throw again.

Pure: a reading (`vision.Die`s), the tray's zones (the profile) and the engine's view go in; a
`Call` comes out: the input to apply (``event``), or a refusal (``refusal``: a message code
and its values, shown on the scoreboard in the page's language), or nothing to do.

421: the roll zone holds the dice just thrown, the keep zone the dice set aside from the hand.
A first throw has an empty keep zone; a later one keeps only dice of the current hand (a kept
die turned between throws is tampering); the number of dice must make the hand the engine
expects (one die or three at the opening, three after). Any unsure die, cocked or unreadable,
refuses the whole throw: no token ever moves on a guess. An empty tray is nothing to do.

4D is followed by `firmware_host.controller.square`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vision import Die, Profile

JSONDict = dict[str, Any]


@dataclass(frozen=True)
class Call:
    """The referee's decision on one reading."""

    event: JSONDict | None = None
    refusal: str | None = None  # a message code of `firmware_host.controller.messages`
    values: JSONDict = field(default_factory=dict)
    correction: JSONDict | None = None  # replace the last input (4D: the square's true order)
    rotation: str | None = None  # 4D: the square was turned this way after the last move

    @property
    def accepted(self) -> bool:
        return self.event is not None

    @staticmethod
    def refuse(code: str, **values: Any) -> Call:
        return Call(refusal=code, values=values)


def zone_of(die: Die, profile: Profile | None) -> str:
    """"roll" or "keep" ("roll" everywhere without a profile or a keep zone)."""
    if profile is None:
        return "roll"
    return profile.zone_of(die.center) or "outside"


def unsure_refusal(dice: Sequence[Die]) -> Call | None:
    """A refusal naming the first unsure die's reason, or None when every die is read."""
    unsure = [d for d in dice if d.value is None]
    if not unsure:
        return None
    if any(d.reason == "cocked" for d in unsure):
        return Call.refuse("cocked", count=sum(d.reason == "cocked" for d in unsure))
    return Call.refuse("unreadable", count=len(unsure), reason=unsure[0].reason or "")


def judge_421(dice: Sequence[Die], view: JSONDict, profile: Profile | None) -> Call:
    """The 421 input these dice make for the player to move, or why they make none."""
    if view.get("phase") == "over" or view.get("to_move") is None:
        return Call.refuse("game_over")
    if not dice:
        return Call()  # an empty tray: the dice were picked up, nobody has thrown yet
    zones = [zone_of(d, profile) for d in dice]
    # A die out of the tray (on the rim, half out of the picture) is often unsure: it is
    # missing from the throw, and the count says so, not its face.
    unsure = unsure_refusal([d for d, z in zip(dice, zones, strict=True) if z != "outside"])
    if unsure is not None:
        return unsure
    rolled = [d.value for d, z in zip(dice, zones, strict=True) if z == "roll"]
    kept = [d.value for d, z in zip(dice, zones, strict=True) if z == "keep"]
    assert all(v is not None for v in rolled + kept)
    opening = view.get("phase") == "opening"
    first = opening or view.get("throw_number", 0) == 0 or view.get("dice_player") != view.get(
        "to_move")
    if first:
        if kept:
            return Call.refuse("keep_on_first_throw", kept=sorted(kept, reverse=True))
        expected = 1 if opening and view.get("knobs", {}).get("opener") == "lowest-die" else 3
        if len(rolled) != expected:
            return Call.refuse("dice_count", expected=expected, seen=len(rolled))
        return Call(event={"type": "throw", "faces": sorted(rolled, reverse=True)})
    hand = list(view.get("dice") or [])
    missing = Counter(kept) - Counter(hand)
    if missing:
        return Call.refuse("keep_tampered", kept=sorted(kept, reverse=True),
                           hand=sorted(hand, reverse=True),
                           foreign=sorted(missing.elements(), reverse=True))
    if len(kept) + len(rolled) != len(hand):
        return Call.refuse("dice_count", expected=len(hand) - len(kept), seen=len(rolled))
    if not rolled:
        return Call.refuse("nothing_thrown")
    keep: list[int] = []
    for value in kept:
        keep.append(next(i for i, v in enumerate(hand) if v == value and i not in keep))
    return Call(event={"type": "throw", "faces": sorted(rolled, reverse=True),
                       "keep": sorted(keep)})
