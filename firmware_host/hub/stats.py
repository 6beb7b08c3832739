"""Simple statistics per player: throws, hands made, 421s and nénettes.

The engine's history says what was input and what followed, not who made which hand; the
hub notes, for each accepted input, who was to move and which hands that input completed
(`hands_completed`, from the views before and after), and the statistics add those up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

JSONDict = dict[str, Any]

HAND_421 = "421"
HAND_NENETTE = "221"


def hands_completed(before: JSONDict, after: JSONDict) -> list[JSONDict]:
    """The hands (``{"player", "hand"}``) that one input finished, comparing two views.

    A 421 hand enters the view's ``round`` list when its turn ends; when the input also ends
    the round, that list restarts and the hand shows up in ``last_round["hands"]`` instead.
    """
    if after.get("game") != "421":
        return []
    old = before.get("round") or []
    new = after.get("round") or []
    if len(new) >= len(old) and new[: len(old)] == old:
        finished = new[len(old) :]
    else:
        last = after.get("last_round") or {}
        hands = last.get("hands") or []
        finished = list(hands[len(old) :]) if hands[: len(old)] == old else []
        finished += new
    return [{"player": h.get("player"), "hand": h.get("hand")} for h in finished]


def player_statistics(
    view: JSONDict, history: Sequence[JSONDict], notes: Sequence[JSONDict]
) -> list[JSONDict]:
    """One row per player, in seat order: name, throws, hands, 421s, nénettes.

    `notes[i]` goes with `history[i]`: ``{"player": index or None, "hands": [...]}``.
    For 4D, a hand is a move that scored.
    """
    rows = [
        {"name": p["name"], "throws": 0, "hands": 0, HAND_421: 0, "nenette": 0}
        for p in view.get("players", [])
    ]

    def row(index: Any) -> JSONDict | None:
        return rows[index] if isinstance(index, int) and 0 <= index < len(rows) else None

    for entry, note in zip(history, notes, strict=False):
        mover = row(note.get("player"))
        if mover is not None and entry["event"].get("type") in ("throw", "turn"):
            mover["throws"] += 1
        for hand in note.get("hands", []):
            made = row(hand.get("player"))
            if made is None:
                continue
            made["hands"] += 1
            if hand.get("hand") == HAND_421:
                made[HAND_421] += 1
            elif hand.get("hand") == HAND_NENETTE:
                made["nenette"] += 1
        for effect in entry.get("effects", []):
            if effect.get("kind") == "scored":
                scorer = row(effect.get("player"))
                if scorer is not None:
                    scorer["hands"] += 1
    return rows
