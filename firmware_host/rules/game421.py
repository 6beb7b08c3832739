"""The 421 state machine: opening, charge, décharge, rampo, manches, one-round mode.

Inputs are what the camera sees and what players press (``throw``, ``stop``); outputs are
effects (tokens to move, whose turn, who lost). Every choice RULES.md leaves open is named
in docs/rules.md; the comments here say which rule a branch implements.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any, ClassVar

from firmware_host.rules.base import GameBase
from firmware_host.rules.errors import RuleError
from firmware_host.rules.hands import NENETTE, hand_name, rank_table, throws_label, value_table

DICE = 3
MAX_THROWS = 3
FLOURISHES = {"421": "421", NENETTE: "nenette"}


class Game421(GameBase):
    """One game of 421 for 2 to 10 players, in any preset and with any knobs."""

    kind: ClassVar[str] = "421"
    event_types: ClassVar[tuple[str, ...]] = ("throw", "stop")
    event_fields: ClassVar[dict[str, tuple[str, ...]]] = {
        "throw": ("faces", "keep", "player"), "stop": ("player",)}

    # -- state --------------------------------------------------------------------------

    def _reset(self) -> None:
        k = self.knobs
        n = len(self.players)
        self._rank = rank_table(k["ranking"])
        self._value = value_table(k["ranking"], k["value_421"], k["nenette"])
        self._fewer = bool(k["fewer_throws_breaks_tie"])
        self.total_tokens = k["pot"] + k["private_tokens"] * n
        self.pot = k["pot"]
        self.tokens = [k["private_tokens"]] * n
        self.fiches = [0] * n
        # Charges won, when the winner of a charge counts as winning a manche (classique-10).
        self.manches_won = [0] * n
        self.out = [False] * n
        self.out_rank: list[int | None] = [None] * n
        self.manche = 1
        self.round_number = 0
        self.loser: int | None = None
        self.winner: int | None = None
        self.last_round: dict[str, Any] | None = None
        self.last_hand: dict[str, Any] | None = None
        self.charge_winner: int | None = None
        # The round being played ("charge", "decharge" or "round" in one-round mode) and
        # the phase shown ("opening", that round kind, "rampo" or "over").
        self.round_kind = "round" if k["one_round"] else "charge"
        self.phase = "opening"
        self.order: list[int] = []
        self.pos = 0
        self.to_move: int | None = None
        self.throw_number = 0
        self.hand: list[int] = []
        self.hand_text = ""
        self.kept: list[int] = []
        self.round_hands: list[dict[str, Any]] = []
        self.opener_throws: int | None = None
        self.rampo_stake: str | None = None
        self.rampo_hands: list[dict[str, Any]] = []
        self.rampo_log: list[dict[str, Any]] = []
        self._round_loser: int | None = None
        self._round_winner: int | None = None
        self.opening_hands: list[dict[str, Any]] = []
        self._start_sequence(list(range(n)))

    # -- derived facts ------------------------------------------------------------------

    @property
    def opening_dice(self) -> int:
        return 1 if self.knobs["opener"] == "lowest-die" else DICE

    @property
    def throws_allowed(self) -> int:
        """Throws the player to move may make in this turn."""
        return self._allowed

    def _compute_allowed(self) -> int:
        if self.phase in ("opening", "rampo", "over"):
            return 1 if self.phase != "over" else 0
        # One-round mode allows 3 throws whatever charge_throws says (I18).
        most = self.knobs["charge_throws"] if self.round_kind == "charge" else MAX_THROWS
        if self.pos == 0 or self.opener_throws is None or self.knobs["throw_limit"] == "free":
            return most
        return min(most, self.opener_throws)

    @property
    def throws_required(self) -> int:
        """Throws the player to move must make before stopping (the ``exact`` rule)."""
        if self.pos > 0 and self.opener_throws and self.knobs["throw_limit"] == "exact":
            return self.throws_allowed
        return 1

    def rank_of(self, hand: str) -> int:
        """Position of a hand in this game's ranking, 0 being the best."""
        return self._rank[hand]

    def key(self, hand: str, throws: int) -> int:
        """Sort key of a made hand: smaller is better (rank first, then throws if they count)."""
        return self._rank[hand] * 4 + (throws if self._fewer else 0)

    def active_players(self) -> list[int]:
        return [p for p in range(len(self.players)) if not self.out[p]]

    def clockwise_from(self, first: int, among: list[int]) -> list[int]:
        """``among`` in table order, starting at ``first``."""
        n = len(self.players)
        seats = set(among)
        return [seat for seat in ((first + i) % n for i in range(n)) if seat in seats]

    # -- events -------------------------------------------------------------------------

    def _step(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        if "player" in event:
            self._check_player(event, self.to_move)
        if event["type"] == "throw":
            return self._throw(event.get("faces", []), event.get("keep", []))
        return self._stop()

    def _throw(self, faces: list[int], keep: list[int]) -> list[dict[str, Any]]:
        if faces and (min(faces) < 1 or max(faces) > 6):
            bad = next(f for f in faces if not 1 <= f <= 6)
            raise RuleError(f"a die shows 1 to 6, not {bad}")
        if self.throw_number == 0:
            expected = self.opening_dice if self.phase == "opening" else DICE
            if keep:
                raise RuleError(
                    f"{self._mover()} has not thrown yet this turn: there is nothing to keep"
                )
            if len(faces) != expected:
                raise RuleError(
                    f"{len(faces)} dice landed; {self._mover()} throws {expected} "
                    f"{'die' if expected == 1 else 'dice'} now"
                )
            self.hand = list(faces)
        else:
            if keep and (len(set(keep)) != len(keep) or min(keep) < 0 or max(keep) >= DICE):
                raise RuleError(f"keep must list distinct dice of the hand (0 to 2), not {keep}")
            if not faces:
                raise RuleError(f"no die landed; {self._mover()} throws at least one die or stops")
            if len(keep) + len(faces) != DICE:
                raise RuleError(
                    f"{len(faces)} dice landed and {len(keep)} kept; a hand is {DICE} dice"
                )
            hand = self.hand
            self.hand = [hand[i] for i in keep] + faces
        self.kept = list(range(len(keep)))
        self.throw_number += 1
        effects: list[dict[str, Any]] = []
        if len(self.hand) == DICE:
            self.hand_text = hand_name(self.hand)
            if self.phase != "opening" and self.hand_text in FLOURISHES:
                effects.append({"kind": "flourish", "name": FLOURISHES[self.hand_text]})
        else:
            self.hand_text = str(self.hand[0])
        if self.throw_number >= self._allowed:
            self._end_turn(effects)
        return effects

    def _mover(self) -> str:
        return self.players[self.to_move]

    def _stop(self) -> list[dict[str, Any]]:
        name = self.players[self.to_move]
        if self.throw_number == 0:
            raise RuleError(f"{name} has not thrown yet: throw before stopping")
        required = self.throws_required
        if self.throw_number < required:
            raise RuleError(
                f"{name} must throw exactly {required} times, like the opener "
                f"({self.throw_number} so far)"
            )
        effects: list[dict[str, Any]] = []
        self._end_turn(effects)
        return effects

    # -- turns and sequences --------------------------------------------------------------

    def _start_sequence(self, order: list[int]) -> None:
        """Players of ``order`` take one turn each, in that order."""
        self.order = order
        self.pos = 0
        self._start_turn()

    def _start_turn(self) -> None:
        self.to_move = self.order[self.pos]
        self._allowed = self._compute_allowed()
        self.throw_number = 0
        self.hand = []
        self.kept = []

    def _turn_effect(self) -> dict[str, Any]:
        return {"kind": "turn", "player": self.to_move, "throws_allowed": self._allowed}

    def _current_turn_effects(self) -> list[dict[str, Any]]:
        return [] if self.to_move is None else [self._turn_effect()]

    def _end_turn(self, effects: list[dict[str, Any]]) -> None:
        player = self.to_move
        made = {
            "player": player,
            "hand": self.hand_text,
            "throws": self.throw_number,
            "dice": list(self.hand),
        }
        self.last_hand = made
        if self.phase == "opening":
            self.opening_hands.append(made)
        elif self.phase == "rampo":
            self.rampo_hands.append(made)
        else:
            self.round_hands.append(made)
            if self.pos == 0:
                self.opener_throws = self.throw_number
        self.pos += 1
        if self.pos < len(self.order):
            self._start_turn()
            effects.append(self._turn_effect())
            return
        if self.phase == "opening":
            self._end_opening(effects)
        elif self.phase == "rampo":
            self._end_rampo(effects)
        else:
            self._decide(effects)

    def _set_phase(self, phase: str, effects: list[dict[str, Any]]) -> None:
        if phase != self.phase:
            self.phase = phase
            effects.append({"kind": "phase", "phase": phase})

    # -- opening --------------------------------------------------------------------------

    def _end_opening(self, effects: list[dict[str, Any]]) -> None:
        if self.opening_dice == 1:
            scores = {h["player"]: int(h["hand"]) for h in self.opening_hands}
        else:
            scores = {h["player"]: -self._rank[h["hand"]] for h in self.opening_hands}
        low = min(scores.values())
        lowest = [p for p, s in scores.items() if s == low]
        self.opening_hands = []
        if len(lowest) > 1:
            # Tied for lowest: only they throw again (seat order), until one is lowest (I1).
            self._start_sequence(sorted(lowest))
            effects.append({"kind": "opening_tie", "players": sorted(lowest)})
            effects.append(self._turn_effect())
            return
        self._start_round(lowest[0], effects)

    # -- rounds ---------------------------------------------------------------------------

    def _start_round(self, opener: int, effects: list[dict[str, Any]]) -> None:
        self._set_phase(self.round_kind, effects)
        self.round_number += 1
        self.round_hands = []
        self.rampo_log = []
        self.rampo_stake = None
        self.opener_throws = None
        self._round_loser = None
        self._round_winner = None
        self._start_sequence(self.clockwise_from(opener, self.active_players()))
        effects.append(self._turn_effect())

    def _extreme(self, hands: list[dict[str, Any]], weakest: bool) -> list[int]:
        """Players whose hand is the weakest (or best) of ``hands``, ties included."""
        keys = [(self.key(h["hand"], h["throws"]), h["player"]) for h in hands]
        edge = max(keys)[0] if weakest else min(keys)[0]
        return [player for key, player in keys if key == edge]

    def _decide(self, effects: list[dict[str, Any]]) -> None:
        """Name the round's loser and winner, calling a rampo for a tie that matters."""
        hands = self.round_hands
        if self.round_kind != "round" and self._round_loser is None:
            worst = self._extreme(hands, weakest=True)
            if len(worst) > 1:
                self._start_rampo(worst, "worst", hands, effects)
                return
            self._round_loser = worst[0]
        if self.round_kind != "charge" and self._round_winner is None:
            # The best is sought among the others, so one rampo can settle both (I3).
            others = [h for h in hands if h["player"] != self._round_loser]
            best = self._extreme(others, weakest=False)
            if len(best) > 1:
                self._start_rampo(best, "best", hands, effects)
                return
            self._round_winner = best[0]
        self._settle(effects)

    def _start_rampo(
        self,
        tied: list[int],
        stake: str,
        thrown: list[dict[str, Any]],
        effects: list[dict[str, Any]],
    ) -> None:
        # The tied player who threw last starts; the others follow in table order (I2).
        last = [h["player"] for h in thrown if h["player"] in tied][-1]
        self.rampo_stake = stake
        self.rampo_hands = []
        phase: list[dict[str, Any]] = []
        self._set_phase("rampo", phase)
        self._start_sequence(self.clockwise_from(last, tied))
        effects.append({"kind": "rampo", "players": list(self.order), "stake": stake})
        effects.extend(phase)
        effects.append(self._turn_effect())

    def _end_rampo(self, effects: list[dict[str, Any]]) -> None:
        self.rampo_log.append({"stake": self.rampo_stake, "hands": list(self.rampo_hands)})
        stake = self.rampo_stake
        decided = self._extreme(self.rampo_hands, weakest=stake == "worst")
        if len(decided) > 1:
            self._start_rampo(decided, stake, self.rampo_hands, effects)
            return
        if stake == "worst":
            self._round_loser = decided[0]
        else:
            self._round_winner = decided[0]
        self.rampo_stake = None
        self._decide(effects)

    def _hand_of(self, player: int) -> str:
        for made in self.round_hands:
            if made["player"] == player:
                return made["hand"]
        raise KeyError(player)

    def _amount(self, loser_hand: str, payer_hand: str) -> int:
        """Tokens the loser takes; the original hands decide, not the rampo throws."""
        nenette = self.knobs["nenette"]
        if loser_hand == NENETTE and nenette == "fixed-2":
            return 2
        amount = self._value[payer_hand]
        if loser_hand == NENETTE and nenette == "plus-2":
            amount += 2
        return amount

    def _settle(self, effects: list[dict[str, Any]]) -> None:
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
            if self.knobs["charge_pays"] == "loser":
                amount = self._value[loser_hand]
            else:
                amount = self._amount(loser_hand, best_hand)
            amount = min(amount, self.pot)
            self.pot -= amount
            self.tokens[loser] += amount
            effects.append({"kind": "tokens_from_pot", "player": loser, "count": amount})
            summary.update(winner=best[0] if len(best) == 1 else None, winner_hand=best_hand)
        else:
            winner_hand = self._hand_of(winner)
            effects.append({"kind": "round_won", "player": winner, "hand": winner_hand})
            amount = min(self._amount(loser_hand, winner_hand), self.tokens[winner])
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

    def _first_out(self) -> int | None:
        """The game's winner among three or more players: "le premier qui parvient à ne plus
        avoir de jetons" (the first to have no tokens left), when the game is one manche;
        over several manches the order out starts again each time, so nobody is named."""
        if self.knobs["manches_to_lose"] != 1 or 1 not in self.out_rank:
            return None
        return self.out_rank.index(1)

    def _go_out(self, player: int, effects: list[dict[str, Any]]) -> None:
        self.out[player] = True
        self.out_rank[player] = sum(r is not None for r in self.out_rank) + 1
        effects.append({"kind": "player_out", "player": player, "rank": self.out_rank[player]})

    def _after_round(self, loser: int, effects: list[dict[str, Any]]) -> None:
        if self.total_tokens in self.tokens:
            self._lose_manche(self.tokens.index(self.total_tokens), effects)
            return
        if self.round_kind == "charge" and self.pot == 0:
            low = min(self.tokens)
            fewest = [p for p, t in enumerate(self.tokens) if t == low]
            self.charge_winner = fewest[0] if len(fewest) == 1 else None
            if self.charge_winner is not None:
                counts = bool(self.knobs["charge_win_counts"])
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
        self._start_round(loser, effects)

    def _lose_manche(self, player: int, effects: list[dict[str, Any]]) -> None:
        self.fiches[player] += 1
        effects.append({"kind": "manche_lost", "player": player, "manche": self.manche})
        if self.last_round is not None:
            self.last_round["manche_lost"] = player
        if self.fiches[player] >= self.knobs["manches_to_lose"]:
            others = [p for p in range(len(self.players)) if p != player]
            self._finish_game(player, others[0] if len(others) == 1 else self._first_out(),
                              effects)
            return
        # A new manche: every token goes back, the pot is full again, the loser opens (I19).
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
        self.round_kind = "charge"
        effects.append({"kind": "manche", "manche": self.manche})
        self._start_round(player, effects)

    def _finish_game(
        self,
        loser: int | None,
        winner: int | None,
        effects: list[dict[str, Any]],
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

    # -- display --------------------------------------------------------------------------

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
                "last_round": self.last_round,
                "loser": self.loser,
                "winner": self.winner,
                "message": self.message(),
            }
        )

    def message(self) -> str:
        """One short French sentence saying what happens next."""
        if self.phase == "over":
            if self.loser is not None:
                return f"{self.players[self.loser]} a perdu la partie"
            if self.winner is not None:
                return f"{self.players[self.winner]} a gagné la partie"
            return "Partie terminée"
        name = self.players[self.to_move]
        if self.phase == "opening":
            what = "un dé" if self.opening_dice == 1 else "les dés"
            return f"{name} lance {what} pour désigner qui commence"
        if self.phase == "rampo":
            return f"Rampo ! {name} relance (coup sec)"
        if self.throw_number:
            return (
                f"{name} a {hand_name(self.hand)} : garde et relance, ou s'arrête "
                f"({self.throw_number}/{self.throws_allowed})"
            )
        phase = {"charge": "charge", "decharge": "décharge", "round": "manche unique"}
        if self.pos == 0:
            count = self.throws_allowed
            limit = "coup sec" if count == 1 else f"jusqu'à {count} lancers"
            return f"{name} ouvre la {phase[self.round_kind]} ({limit})"
        return f"{name} lance ({throws_label(self.throws_allowed)})"
