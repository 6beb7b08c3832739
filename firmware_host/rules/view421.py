"""The display snapshot of a 421 game (``view``) and its prompt: what happens next.

A mixin of ``Game421``: it reads the game's state and changes nothing.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from firmware_host.rules.hands import hand_name, throws_label
from firmware_host.rules.texts import RuleText, rule_text


class View421:
    """``view()`` and ``prompt()`` for ``Game421`` (which holds every attribute read here)."""

    def view(self) -> dict[str, Any]:
        n = len(self.players)
        hands = self.round_hands
        best = worst = None
        if hands:
            b = self._extreme(hands, weakest=False)[0]
            w = self._extreme(hands, weakest=True)[0]
            best = {"player": b, "hand": self._hand_of(b)}
            worst = {"player": w, "hand": self._hand_of(w)}
        if self.throw_number:
            dice, dice_player = list(self.hand), self.to_move
        elif self.last_hand is not None:
            dice, dice_player = list(self.last_hand["dice"]), self.last_hand["player"]
        else:
            dice, dice_player = [], None
        label = None
        if self.phase in ("charge", "decharge", "round"):
            if self.throws_allowed == 1 and self.round_kind == "charge":
                label = "sec"
            else:
                label = throws_label(self.opener_throws)
        # A deep copy: the caller may keep or change it without touching the game.
        return deepcopy(
            {
                "game": "421",
                "preset": self.preset,
                "knobs": dict(self.knobs),
                "players": [
                    {
                        "name": self.players[p],
                        "seat": p,
                        "tokens": self.tokens[p],
                        "fiches": self.fiches[p],
                        "manches_won": self.manches_won[p],
                        "out": self.out[p],
                        "out_rank": self.out_rank[p],
                        "score": 0,
                    }
                    for p in range(n)
                ],
                "phase": self.phase,
                "round_kind": self.round_kind,
                "round_number": self.round_number,
                "to_move": self.to_move,
                "throw_number": self.throw_number,
                "throws_allowed": self.throws_allowed,
                "throws_required": self.throws_required if self.to_move is not None else 0,
                "throws_label": label,
                "dice": dice,
                "dice_player": dice_player,
                "kept": list(self.kept) if self.throw_number else [],
                "round": [dict(h) for h in hands],
                "opening": [dict(h) for h in self.opening_hands],
                "rampo": (
                    {
                        "players": list(self.order),
                        "stake": self.rampo_stake,
                        "hands": [dict(h) for h in self.rampo_hands],
                    }
                    if self.phase == "rampo"
                    else None
                ),
                "best": best,
                "worst": worst,
                "pot": self.pot,
                "total_tokens": self.total_tokens,
                "tokens_in_play": 0,
                "manche": self.manche,
                "charge_winner": self.charge_winner,
                "decharge_winner": self.decharge_winner,
                "last_round": self.last_round,
                "loser": self.loser,
                "winner": self.winner,
                "prompt": self.prompt(),
            }
        )

    def prompt(self) -> RuleText:
        """What happens next, as a code and values (`firmware_host.rules.texts.PROMPTS`)."""
        if self.phase == "over":
            if self.loser is not None:
                return rule_text("game_lost", player=self.players[self.loser])
            if self.winner is not None:
                return rule_text("game_won", player=self.players[self.winner])
            return rule_text("game_ended")
        name = self.players[self.to_move]
        if self.phase == "opening":
            if self.opening_dice == 1:
                return rule_text("opening_die", player=name)
            return rule_text("opening_dice", player=name)
        if self.phase == "rampo":
            return rule_text("rampo_throw", player=name)
        if self.throw_number:
            return rule_text("keep_or_stop", player=name, hand=hand_name(self.hand),
                             throw=self.throw_number, allowed=self.throws_allowed)
        count = self.throws_allowed
        if self.pos == 0:
            return _opening_prompt(self.round_kind, name, count)
        # What the opener announced binds the others: sec, en 2, à fond.
        if count == 1:
            return rule_text("follow_sec", player=name)
        if count == 2:
            return rule_text("follow_en", player=name, throws=count)
        return rule_text("follow_fond", player=name)


def _opening_prompt(round_kind: str, name: str, count: int) -> RuleText:
    """The prompt of the player who opens a round: which round, and how many throws."""
    sec = count == 1
    if round_kind == "charge":
        if sec:
            return rule_text("open_charge_sec", player=name)
        return rule_text("open_charge", player=name, throws=count)
    if round_kind == "decharge":
        if sec:
            return rule_text("open_decharge_sec", player=name)
        return rule_text("open_decharge", player=name, throws=count)
    if sec:
        return rule_text("open_round_sec", player=name)
    return rule_text("open_round", player=name, throws=count)
