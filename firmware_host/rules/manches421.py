"""After each 421 round: the tokens it moves, the ends of the charge and of the décharge,
manches, the belle and the end of the game.

A mixin of ``Game421``: it works on the game's state and calls back ``_start_round`` and
``_set_phase`` for what comes next. The rules are named in docs/rules.md.
"""

from __future__ import annotations

from typing import Any

Effects = list[dict[str, Any]]


class MancheFlow:
    """Settling rounds and deciding manches and the game, for ``Game421``."""

    # -- the round's tokens ---------------------------------------------------------------

    def _settle(self, effects: Effects) -> None:
        loser, winner = self._round_loser, self._round_winner
        if self.round_kind == "round":
            self._finish_game(None, winner, effects, hand=self._hand_of(winner))
            return
        loser_hand = self._hand_of(loser)
        best = self._extreme(self.round_hands, weakest=False)
        best_hand = self._hand_of(best[0])
        effects.append({"kind": "round_lost", "player": loser, "hand": loser_hand})
        summary: dict[str, Any] = {
            "round": self.round_number,
            "phase": self.round_kind,
            # Not copies: a new round starts with new lists.
            "hands": self.round_hands,
            "rampo": self.rampo_log,
            "loser": loser,
            "loser_hand": loser_hand,
        }
        if self.round_kind == "charge":
            # Tied best hands are worth the same: no rampo, and nobody in particular won (I4).
            if len(best) == 1:
                effects.append({"kind": "round_won", "player": best[0], "hand": best_hand})
            amount = min(self.judge.charge_amount(loser_hand, best_hand), self.pot)
            self.pot -= amount
            self.tokens[loser] += amount
            effects.append({"kind": "tokens_from_pot", "player": loser, "count": amount})
            summary.update(winner=best[0] if len(best) == 1 else None, winner_hand=best_hand)
        else:
            winner_hand = self._hand_of(winner)
            effects.append({"kind": "round_won", "player": winner, "hand": winner_hand})
            amount = min(self.judge.amount(loser_hand, winner_hand), self.tokens[winner])
            if amount:
                self.tokens[winner] -= amount
                self.tokens[loser] += amount
                effects.append(
                    {"kind": "tokens_between", "from": winner, "to": loser, "count": amount}
                )
            summary.update(winner=winner, winner_hand=winner_hand)
            # Out only by giving the last tokens away; a zero-token winner gives nothing (I7, I8).
            if amount and self.tokens[winner] == 0:
                self._go_out(winner, effects)
        summary["tokens"] = amount
        self.last_round = summary
        self._after_round(loser, effects)

    def _go_out(self, player: int, effects: Effects) -> None:
        self.out[player] = True
        self.out_rank[player] = sum(r is not None for r in self.out_rank) + 1
        effects.append({"kind": "player_out", "player": player, "rank": self.out_rank[player]})

    # -- what the round ends --------------------------------------------------------------

    @property
    def manches_of_their_own(self) -> bool:
        """Whether the charge and the décharge are manches won by their winners (split_manches)."""
        return self.knobs["split_manches"] != "off"

    def _holder(self) -> int | None:
        """The player holding every token, if one does."""
        if self.total_tokens in self.tokens:
            return self.tokens.index(self.total_tokens)
        return None

    def _after_round(self, loser: int, effects: Effects) -> None:
        holder = self._holder()
        if holder is not None and not self.manches_of_their_own:
            self._lose_manche(holder, effects)
            return
        if self.round_kind == "charge" and self.pot == 0:
            self._end_charge(effects)
        # When the charge and the décharge are manches, the décharge is played even after a
        # charge that gave one player every token: classique-10's text names no exception.
        # It ends when one player holds every token again and somebody got rid of theirs.
        if self.round_kind == "decharge" and holder is not None and 1 in self.out_rank:
            self._end_decharge(holder, effects)
            return
        self._start_round(loser, effects)

    def _end_charge(self, effects: Effects) -> None:
        """The pot is empty: name the charge's winner; the décharge comes next."""
        low = min(self.tokens)
        fewest = [p for p, t in enumerate(self.tokens) if t == low]
        self.charge_winner = fewest[0] if len(fewest) == 1 else None
        if self.charge_winner is not None:
            # classique-10: "Celui qui a le moins de jetons à la fin de la charge est gagnant
            # de cette manche" (whoever has the fewest tokens at the end of the charge wins
            # that manche).
            counts = self.manches_of_their_own or bool(self.knobs["charge_win_counts"])
            if counts:
                self.manches_won[self.charge_winner] += 1
            effects.append(
                {"kind": "charge_won", "player": self.charge_winner, "manche_won": counts}
            )
        if self.knobs["zero_after_charge"] == "wins":
            for p in range(len(self.players)):
                if self.tokens[p] == 0:
                    self._go_out(p, effects)
        self.round_kind = "decharge"

    def _end_decharge(self, holder: int, effects: Effects) -> None:
        """One player holds every token again: the décharge's manche has its winner."""
        # classique-10: "Celui qui n'a plus de jetons à la fin de la décharge est gagnant de
        # cette manche" (whoever has no tokens left at the end of the décharge wins that
        # manche). With three or more players several have none by then: the first to get
        # rid of theirs is named, as kyt-11's text names its winner ("le premier qui parvient
        # à ne plus avoir de jetons").
        winner = self.out_rank.index(1)
        self.decharge_winner = winner
        self.manches_won[winner] += 1
        effects.append({"kind": "decharge_won", "player": winner})
        split = self.charge_winner not in (None, winner)
        if split and self.knobs["split_manches"] == "belle":
            # One manche each: a belle, a whole charge and décharge again, which the player
            # holding every token opens (the last round's loser, I19).
            self._new_manche(holder, effects)
            return
        # Both manches, the only one named, or (split_manches = decharge) the décharge's.
        # The text names winners only: the loser is the other player of a two-player game.
        others = [p for p in range(len(self.players)) if p != winner]
        self._finish_game(others[0] if len(others) == 1 else None, winner, effects)

    def _first_out(self) -> int | None:
        """The game's winner among three or more players: "le premier qui parvient à ne plus
        avoir de jetons" (the first to have no tokens left), when the game is one manche;
        over several manches the order out starts again each time, so nobody is named."""
        if self.knobs["manches_to_lose"] != 1 or 1 not in self.out_rank:
            return None
        return self.out_rank.index(1)

    def _lose_manche(self, player: int, effects: Effects) -> None:
        self.fiches[player] += 1
        effects.append({"kind": "manche_lost", "player": player, "manche": self.manche})
        if self.last_round is not None:
            self.last_round["manche_lost"] = player
        if self.fiches[player] >= self.knobs["manches_to_lose"]:
            others = [p for p in range(len(self.players)) if p != player]
            self._finish_game(player, others[0] if len(others) == 1 else self._first_out(),
                              effects)
            return
        self._new_manche(player, effects)

    def _new_manche(self, opener: int, effects: Effects) -> None:
        """Every token goes back, the pot is full again, ``opener`` opens the charge (I19)."""
        private = self.knobs["private_tokens"]
        for p in range(len(self.players)):
            if self.tokens[p] > private:
                effects.append(
                    {"kind": "tokens_to_pot", "player": p, "count": self.tokens[p] - private}
                )
        for p in range(len(self.players)):
            if self.tokens[p] < private:
                effects.append(
                    {"kind": "tokens_from_pot", "player": p, "count": private - self.tokens[p]}
                )
        self.tokens = [private] * len(self.players)
        self.pot = self.knobs["pot"]
        self.out = [False] * len(self.players)
        self.out_rank = [None] * len(self.players)
        self.manche += 1
        self.charge_winner = None
        self.decharge_winner = None
        self.round_kind = "charge"
        effects.append({"kind": "manche", "manche": self.manche})
        self._start_round(opener, effects)

    def _finish_game(
        self,
        loser: int | None,
        winner: int | None,
        effects: Effects,
        hand: str | None = None,
    ) -> None:
        self.loser, self.winner = loser, winner
        if hand is not None:
            effects.append({"kind": "round_won", "player": winner, "hand": hand})
            self.last_round = {
                "round": self.round_number,
                "phase": "round",
                "hands": list(self.round_hands),
                "rampo": list(self.rampo_log),
                "winner": winner,
                "winner_hand": hand,
            }
        self._set_phase("over", effects)
        self.is_over = True
        self._allowed = 0
        self.to_move = None
        self.order = []
        effects.append({"kind": "game_over", "loser": loser, "winner": winner})
