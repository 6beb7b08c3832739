"""Who makes the best and the weakest hand of a 421 round, and how many tokens that costs.

Pure: a judge is built from a game's knobs and compares the hands made in one round (or in
one rampo), given in throwing order; it holds no game state. The rule behind each choice is
named in docs/rules.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from firmware_host.rules.hands import NENETTE, rank_table, value_table

#: A hand made in a turn: ``{"player", "hand", "throws", "dice"}``.
Made = dict[str, Any]


class RoundJudge:
    """Ranks the hands of one round and prices the loss, under one game's knobs."""

    def __init__(self, knobs: Mapping[str, Any]) -> None:
        self.rank = rank_table(knobs["ranking"])
        self.value = value_table(knobs["ranking"], knobs["value_421"], knobs["nenette"])
        self.fewer = bool(knobs["fewer_throws_breaks_tie"])
        self.nenette = knobs["nenette"]
        self.charge_pays = knobs["charge_pays"]
        self.later_nenette_beats = knobs["second_nenette"] == "beats"

    def key(self, hand: str, throws: int) -> int:
        """Sort key of a made hand: smaller is better (rank first, then throws if they count)."""
        return self.rank[hand] * 4 + (throws if self.fewer else 0)

    def keys(self, hands: Sequence[Made]) -> list[tuple[int, int]]:
        """Sort keys of ``hands``, made in this order; smaller is better, equal keys tie."""
        keys = []
        for position, made in enumerate(hands):
            hand = made["hand"]
            if hand == NENETTE and self.later_nenette_beats:
                # regles-21: "Dans le cas où un autre joueur ferait nénette, il bat la nénette
                # précédente et ainsi de suite" (when another player makes a nénette, it beats
                # the previous nénette, and so on). Read literally, the later nénette is the
                # better hand, so of several nénettes the first one thrown is the weakest hand
                # and loses the round. The sentence sets no condition, so the throwing order
                # decides even where fewer throws would otherwise break the tie.
                keys.append((self.rank[hand] * 4, -position))
            else:
                keys.append((self.key(hand, made["throws"]), 0))
        return keys

    def extreme(self, hands: Sequence[Made], weakest: bool) -> list[int]:
        """Players whose hand is the weakest (or the best) of ``hands``, ties included."""
        keys = self.keys(hands)
        edge = max(keys) if weakest else min(keys)
        return [made["player"] for made, key in zip(hands, keys, strict=True) if key == edge]

    def amount(self, loser_hand: str, payer_hand: str) -> int:
        """Tokens the loser takes when ``payer_hand`` sets the price (the nénette rule applied).

        The original hands decide, not the rampo throws."""
        if loser_hand == NENETTE and self.nenette == "fixed-2":
            return 2
        amount = self.value[payer_hand]
        if loser_hand == NENETTE and self.nenette == "plus-2":
            amount += 2
        return amount

    def charge_amount(self, loser_hand: str, best_hand: str) -> int:
        """Tokens the charge's loser takes from the pot, before the pot's own limit."""
        if self.charge_pays == "loser":
            return self.value[loser_hand]
        return self.amount(loser_hand, best_hand)
