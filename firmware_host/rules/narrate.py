"""A readable log of a game, written from its events and effects (for `dicetower simulate`).

English sentences with the game's own French words (charge, décharge, rampo, nénette...).
Lines go to the ``emit`` callable given (``print`` for the command line): no I/O here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from firmware_host.rules.hands import NENETTE, hand_name, throws_label

RULE = "─"


class Narrator:
    """An observer for ``simulation.play`` that prints each throw and what it caused."""

    def __init__(
        self,
        players: list[str],
        preset: str,
        knobs: dict[str, Any],
        seed: int,
        emit: Callable[[str], None],
    ) -> None:
        self.players = players
        self.preset = preset
        self.knobs = knobs
        self.seed = seed
        self.emit = emit
        self.width = max(len(p) for p in players)
        self.turn: list[str] = []  # what the player to move did so far this turn
        self.opening: list[str] = []
        self.in_opening = True
        self.is_4d = "target" in knobs
        # Our own ledger, moved by the effects only: shows the tokens as each effect lands.
        self.pot = knobs.get("pot", 0)
        self.tokens = [knobs.get("private_tokens", 0)] * len(players)
        self.round_kind: str | None = None
        self.turns_in_round = 0

    # -- output -----------------------------------------------------------------------

    def say(self, text: str = "") -> None:
        self.emit(text)

    def name(self, seat: int) -> str:
        return self.players[seat]

    def header(self) -> None:
        k = self.knobs
        names = ", ".join(self.players)
        if self.is_4d:
            variant = " with the fifth die" if k["fifth_die"] else ""
            pairs = "pairs score" if k["pairs_score"] else "pairs score nothing"
            self.say(f"4D{variant} · {names} · seed {self.seed}")
            self.say(f"first to {k['target']} points · {pairs}")
            return
        self.say(f"421 · preset {self.preset} · {names} · seed {self.seed}")
        charge = "coup sec" if k["charge_throws"] == 1 else "up to 3 throws"
        # The limit binds every round after the opener's turn, charge included.
        limit = {
            "exact": "after the opener: exactly the opener's throws",
            "at-most": "after the opener: at most the opener's throws",
            "free": "the opener binds nobody",
        }[k["throw_limit"]]
        if k["one_round"]:
            self.say(f"single round: up to 3 throws, {limit} · the best hand wins the game")
            return
        pays = "the best hand's value" if k["charge_pays"] == "best" else "their own hand's value"
        self.say(
            f"pot {k['pot']} · 421 worth {k['value_421']} · charge: {charge}, loser takes {pays}"
        )
        if k["split_manches"] != "off":
            split = {"belle": "a belle decides", "decharge": "the décharge's winner wins"}
            self.say(
                f"décharge: up to 3 throws · {limit} · nénette {k['nenette']} · the charge "
                f"winner and the décharge winner each win a manche; one each: "
                f"{split[k['split_manches']]}"
            )
            return
        counts = " · the charge winner wins a manche" if k["charge_win_counts"] else ""
        self.say(
            f"décharge: up to 3 throws · {limit} · nénette {k['nenette']} · "
            f"first to lose {_manches(k['manches_to_lose'])} loses the game{counts}"
        )

    # -- observer ---------------------------------------------------------------------

    def __call__(self, game: Any, event: dict[str, Any], effects: list[dict[str, Any]]) -> None:
        if self.is_4d:
            self._step_4d(game, event, effects)
        else:
            self._step_421(game, event, effects)

    def _step_421(self, game: Any, event: dict[str, Any], effects: list[dict[str, Any]]) -> None:
        made = game.last_hand if game.throw_number == 0 or game.is_over else None
        if self.in_opening:
            # Every opening throw is a whole turn: one die or one hand per player.
            self.opening.append(f"{self.name(made['player'])} {made['hand']}")
        elif event["type"] == "throw":
            dice = made["dice"] if made else game.hand
            hand = hand_name(dice)
            keep = event.get("keep")
            kept = "keeps " + " ".join(str(f) for f in dice[: len(keep)]) + ", " if keep else ""
            star = " ★" if hand in ("421", NENETTE) else ""
            faces = " ".join(str(f) for f in event["faces"])
            self.turn.append(f"{kept}[{faces}] {hand}{star}")
        if made is not None and not self.in_opening:
            self._end_turn(game, made)
        self._effects_421(game, effects)

    def _end_turn(self, game: Any, made: dict[str, Any]) -> None:
        if not self.turn:
            return
        self.turns_in_round += 1
        tail = ""
        announces = self.round_kind != "charge" or self.knobs["charge_throws"] > 1
        if announces and self.turns_in_round == 1 and game.phase != "rampo":
            tail = f"  — announces « {throws_label(made['throws'])} »"
        line = f"  {self.name(made['player']):<{self.width}}  " + " · ".join(self.turn) + tail
        self.turn = []
        self.say(line)

    def _effects_421(self, game: Any, effects: list[dict[str, Any]]) -> None:
        for effect in effects:
            kind = effect["kind"]
            if (
                kind == "phase"
                and effect["phase"] != self.round_kind
                and effect["phase"] in ("charge", "decharge", "round")
            ):
                self._flush_opening(game)
                self.in_opening = False
                self._header(game, effect["phase"])
            elif kind == "manche":
                if self.knobs["split_manches"] != "off":
                    self.say("  One manche each: a belle, a charge and a décharge again")
                self._header(game, "charge")
            elif kind == "round_won" and self.round_kind == "round":
                self.say(f"  → {self.name(effect['player'])} has the best hand: {effect['hand']}")
            elif kind == "turn" and game.phase in ("charge", "decharge", "round"):
                if effect["player"] == game.order[0] and self.turns_in_round:
                    self.turns_in_round = 0
                    self.say()
            elif kind == "opening_tie":
                tied = ", ".join(self.name(p) for p in effect["players"])
                self._flush_opening(game, suffix=f"tie: {tied} throw again")
            elif kind == "rampo":
                tied = " and ".join(self.name(p) for p in effect["players"])
                why = "the worst hand" if effect["stake"] == "worst" else "the best hand"
                self.say(f"  Rampo! {tied} tie for {why}: one coup sec each")
            elif kind == "round_lost":
                last = game.last_round or {}
                nothing = last.get("phase") == "decharge" and last.get("tokens") == 0
                self.say(
                    f"  → {self.name(effect['player'])} loses the round with {effect['hand']}"
                    + (
                        f", best {last['winner_hand']}"
                        if last.get("winner_hand") and last.get("phase") == "charge"
                        else ""
                    )
                )
                if nothing:
                    # A winner who holds no token (zero_after_charge = stays) gives nothing.
                    self.say(
                        f"    {self.name(last['winner'])} ({last['winner_hand']}) has no token "
                        f"to give  │ {self._tokens()}"
                    )
            elif kind == "tokens_from_pot":
                self.pot -= effect["count"]
                self.tokens[effect["player"]] += effect["count"]
                self.say(
                    f"    {self.name(effect['player'])} takes {effect['count']} from the pot"
                    f"  │ {self._tokens()}"
                )
            elif kind == "tokens_between":
                self.tokens[effect["from"]] -= effect["count"]
                self.tokens[effect["to"]] += effect["count"]
                self.say(
                    f"    {self.name(effect['from'])} ({game.last_round['winner_hand']}) gives "
                    f"{effect['count']} to {self.name(effect['to'])}  │ {self._tokens()}"
                )
            elif kind == "tokens_to_pot":
                self.pot += effect["count"]
                self.tokens[effect["player"]] -= effect["count"]
            elif kind == "charge_won":
                wins = " and wins a manche" if effect.get("manche_won") else ""
                self.say(
                    f"  End of the charge: {self.name(effect['player'])} holds the fewest{wins}"
                )
            elif kind == "decharge_won":
                self.say(
                    f"  End of the décharge: {self.name(effect['player'])} was the first to "
                    f"give every token away and wins a manche"
                )
            elif kind == "player_out":
                self.say(
                    f"  ✓ {self.name(effect['player'])} has no token left and is out "
                    f"(#{effect['rank']})"
                )
            elif kind == "manche_lost":
                seat = effect["player"]
                self.say(
                    f"  ✗ {self.name(seat)} holds all {game.total_tokens} tokens and loses "
                    f"manche {effect['manche']} (fiches de manche: {self._fiches(game)})"
                )
            elif kind == "game_over":
                self._game_over(game, effect["loser"], effect["winner"])

    def _game_over(self, game: Any, loser: int | None, winner: int | None) -> None:
        rounds = f"Game over after {game.round_number} rounds"
        if self.knobs["split_manches"] != "off" and not self.knobs["one_round"]:
            pays = ""
            if loser is not None:
                pays = f"; {self.name(loser)} loses it and pays the next round"
            self.say()
            self.say(f"{rounds}: {self.name(winner)} wins the game{pays}.")
        elif loser is not None:
            self.say()
            self.say(f"{rounds}: {self.name(loser)} loses the game and pays the next round.")
        elif winner is not None:
            self.say()
            self.say(f"Game over: {self.name(winner)} wins the single round.")

    def _header(self, game: Any, phase: str) -> None:
        self.turns_in_round = 0
        self.round_kind = phase
        title = {"charge": "charge", "decharge": "décharge", "round": "single round"}[phase]
        extra = f" · pot {self.pot}" if phase == "charge" else ""
        self.say()
        self.say(f"{RULE * 3} Manche {game.manche} · {title}{extra} {RULE * 40}")

    def _flush_opening(self, game: Any, suffix: str = "") -> None:
        if not self.opening:
            return
        rule = "lowest die" if self.knobs["opener"] == "lowest-die" else "weakest hand"
        parts = " · ".join(self.opening)
        end = suffix or (f"{self.name(game.order[0])} opens" if game.order else "")
        self.say(f"Opening ({rule} opens): {parts} → {end}")
        self.opening = []

    def _tokens(self) -> str:
        seats = " ".join(f"{self.name(p)} {self.tokens[p]}" for p in range(len(self.players)))
        return f"pot {self.pot:>2} · {seats}"

    def _fiches(self, game: Any) -> str:
        return ", ".join(f"{self.name(p)} {game.fiches[p]}" for p in range(len(self.players)))

    # -- 4D ---------------------------------------------------------------------------

    def _step_4d(self, game: Any, event: dict[str, Any], effects: list[dict[str, Any]]) -> None:
        if event["type"] == "throw":
            self.say()
            self.say(f"Start: the dice land {' '.join(map(str, event['faces']))}")
            return
        if event["type"] == "present":
            # The thrower turns the square: the position named faces the opponent. The
            # journaled event names the thrower even when the input did not.
            journaled = game.history[-1]["event"]
            thrower, near = journaled["player"], journaled["near"]
            self.say(
                f"  {self.name(thrower):<{self.width}}  presents position {near} "
                f"(face {game.faces[near]}) to {self.name(1 - thrower)}"
            )
            return
        move = game.last_move
        for effect in effects:
            if effect["kind"] != "scored":
                continue
            combo = (effect["combination"] or "nothing").replace("_", " ")
            moved = "+".join(move["moved"])
            scores = " · ".join(
                f"{self.name(p)} {game.scores[p]}" for p in range(len(self.players))
            )
            self.say(
                f"  {self.name(effect['player']):<{self.width}}  turns {moved:<16} "
                f"→ {' '.join(map(str, game.faces))}  {combo} +{effect['points']:<3} │ {scores}"
            )
        if game.is_over:
            self.say()
            self.say(
                f"Game over after {game.moves} moves: {self.name(game.winner)} wins with "
                f"{game.scores[game.winner]} points."
            )


def _manches(count: int) -> str:
    return "1 manche" if count == 1 else f"{count} manches"
