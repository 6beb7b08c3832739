"""The 421 state machine: inputs, turns, the opening, rounds and rampos.

Inputs are what the camera sees and what players press (``throw``, ``stop``); outputs are
effects (tokens to move, whose turn, who lost). Every choice the rule texts leave open is
named in docs/rules.md; the comments here say which rule a branch implements. Ranking the
hands of a round is ``round_judge``'s work, what a finished round leads to (tokens, charge,
décharge, manches, the end of the game) ``manches421``'s, the display ``view421``'s.
"""

from __future__ import annotations

from typing import Any, ClassVar

from firmware_host.rules.base import GameBase
from firmware_host.rules.errors import RuleError
from firmware_host.rules.hands import NENETTE, hand_name
from firmware_host.rules.manches421 import MancheFlow
from firmware_host.rules.round_judge import RoundJudge
from firmware_host.rules.view421 import View421

DICE = 3
MAX_THROWS = 3
FLOURISHES = {"421": "421", NENETTE: "nenette"}


class Game421(MancheFlow, View421, GameBase):
    """One game of 421 for 2 to 10 players, in any preset and with any knobs."""

    kind: ClassVar[str] = "421"
    event_types: ClassVar[tuple[str, ...]] = ("throw", "stop")
    event_fields: ClassVar[dict[str, tuple[str, ...]]] = {
        "throw": ("faces", "keep", "player"), "stop": ("player",)}

    # -- state --------------------------------------------------------------------------

    def _reset(self) -> None:
        k = self.knobs
        n = len(self.players)
        self.judge = RoundJudge(k)
        self.total_tokens = k["pot"] + k["private_tokens"] * n
        self.pot = k["pot"]
        self.tokens = [k["private_tokens"]] * n
        self.fiches = [0] * n
        # Manches won: the charge's and the décharge's winners (split_manches), or only the
        # charge's as a tally (charge_win_counts).
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
        self.decharge_winner: int | None = None
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
        return self.judge.rank[hand]

    def key(self, hand: str, throws: int) -> int:
        """Sort key of a made hand: smaller is better (rank first, then throws if they count).

        Within a round ``judge.keys`` also orders nénettes by when they were thrown
        (``second_nenette = beats``)."""
        return self.judge.key(hand, throws)

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
            raise RuleError("die_face", face=bad)
        if self.throw_number == 0:
            expected = self.opening_dice if self.phase == "opening" else DICE
            if keep:
                raise RuleError("nothing_to_keep", player=self._mover())
            if len(faces) != expected:
                if expected == 1:
                    raise RuleError("throw_count_one", count=len(faces), player=self._mover())
                raise RuleError("throw_count", count=len(faces), player=self._mover(),
                                expected=expected)
            self.hand = list(faces)
        else:
            if keep and (len(set(keep)) != len(keep) or min(keep) < 0 or max(keep) >= DICE):
                raise RuleError("bad_keep", keep=str(keep))
            if not faces:
                raise RuleError("no_die_landed", player=self._mover())
            if len(keep) + len(faces) != DICE:
                raise RuleError("hand_size", count=len(faces), kept=len(keep), size=DICE)
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
            raise RuleError("stop_before_throw", player=name)
        required = self.throws_required
        if self.throw_number < required:
            raise RuleError("throws_exact", player=name, required=required,
                            done=self.throw_number)
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
            scores = {h["player"]: -self.judge.rank[h["hand"]] for h in self.opening_hands}
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
        return self.judge.extreme(hands, weakest)

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

