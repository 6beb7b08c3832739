"""Virtual players for `dicetower simulate --strategy` and `dicetower demo --strategy`:
random, simple and advisor.

A strategy is called with the game and the random generator and returns the next event, as
``simulation.play`` expects of a policy; the demo's table, which sees only the scoreboard's
view, asks the same choices from a view (`Strategy.keep_from_view`, `move_from_view`).
``simple`` is the simulation's own players (the default, so its games are unchanged).
``random`` picks uniformly among the legal choices. ``advisor``:

- in 421, keeps (or stops) to serve the round's stake, the players still to throw in view
  (``round_model``): each final hand is worth minus the tokens it is expected to cost (the
  chance to end the round's weakest hand times the price the loser pays, and in the
  décharge, for a player holding tokens, minus the chance to end the best times the tokens
  given away); in one-round mode, the chance to end the best. The later players are taken
  to throw to beat the round's weakest hand within the throws the round leaves them, so the
  opener sees that stopping early binds them to fewer throws (``at-most``, ``exact``);
- in 4D, it makes the best move with the reply in view (``advise_4d``).

In 4D every strategy presents the square before the first move as the simple players do.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from firmware_host.advisor.moves4d import advise_4d
from firmware_host.advisor.odds421 import DICE
from firmware_host.advisor.round_model import Situation, best_action
from firmware_host.rules.fourd import DEFAULT_ROTATION, ROTATIONS, SQUARE, legal_results
from firmware_host.rules.game421 import MAX_THROWS
from firmware_host.rules.hands import hand_name, rank_table
from firmware_host.rules.simulation import (
    GOOD_ENOUGH,
    choose_keep,
    dice,
    policy_4d,
    policy_421,
)

STRATEGIES = ("random", "simple", "advisor")


@dataclass(frozen=True)
class Turn421:
    """A 421 turn with a choice to make, from a game or from its view: what each strategy
    reads to decide (the situation for the advisor is built only when asked)."""

    hand: list[int]
    throw_number: int
    throws_required: int
    ranking: str
    situation: Callable[[], Situation | None]


class Strategy:
    """Chooses every event of a simulated game: ``strategy(game, rng) -> event``.

    The same choices can be asked from a game's view (the simulated table of `dicetower
    demo`, which sees only what the scoreboard shows): `keep_from_view`, `move_from_view`.
    """

    name = ""

    def __call__(self, game: Any, rng: random.Random) -> dict[str, Any]:
        if game.kind == "4d":
            if game.phase == "present":
                # Presenting the square before the first move is the simple players' choice.
                event = policy_4d(game, rng)
                if event["type"] == "present":
                    return event
            return self.move_4d(game, rng)
        if game.throw_number == 0:
            count = game.opening_dice if game.phase == "opening" else DICE
            return {"type": "throw", "faces": dice(rng, count)}
        # Only round turns get here: opening and rampo throws are coups secs.
        return self.keep_421(game, rng)

    def keep_421(self, game: Any, rng: random.Random) -> dict[str, Any]:
        turn = Turn421(list(game.hand), game.throw_number, game.throws_required,
                       game.knobs["ranking"], lambda: situation_from_game(game))
        return _keep_event(self.choose_keep(turn, rng), rng)

    def choose_keep(self, turn: Turn421, rng: random.Random) -> list[int] | None:
        """Indices of the dice to keep and throw the others again, or None to stop."""
        raise NotImplementedError

    def move_4d(self, game: Any, rng: random.Random) -> dict[str, Any]:
        raise NotImplementedError

    def keep_from_view(self, view: Mapping[str, Any], rng: random.Random) -> list[int] | None:
        """`choose_keep` for the player to move in a 421 ``view()`` during a round turn."""
        turn = Turn421(list(view["dice"]), view["throw_number"], view["throws_required"] or 1,
                       view["knobs"]["ranking"], lambda: situation_from_view(view))
        return self.choose_keep(turn, rng)

    def move_from_view(self, view: Mapping[str, Any], rng: random.Random
                       ) -> tuple[list[int], str]:
        """(new faces by position, rotation) of the 4D move for the player to move."""
        event = self(_Game4DView(view), rng)
        return event["faces"], event.get("rotate", DEFAULT_ROTATION)


class Simple(Strategy):
    """The simulation's own players, event for event (same random draws)."""

    name = "simple"

    def __call__(self, game: Any, rng: random.Random) -> dict[str, Any]:
        return policy_4d(game, rng) if game.kind == "4d" else policy_421(game, rng)

    def choose_keep(self, turn: Turn421, rng: random.Random) -> list[int] | None:
        # policy_421's choice, read from a view (it reads a game): stop on a good hand once
        # allowed; else keep what choose_keep keeps (two dice of a good hand one must throw).
        good = rank_table(turn.ranking)[hand_name(turn.hand)] < GOOD_ENOUGH
        if good and turn.throw_number >= turn.throws_required:
            return None
        keep = choose_keep(turn.hand)
        return [0, 1] if good and len(keep) < 2 else keep


class Random(Strategy):
    """Any legal choice, each as likely: stop (when allowed) or any dice kept."""

    name = "random"

    def choose_keep(self, turn: Turn421, rng: random.Random) -> list[int] | None:
        choices: list[list[int] | None] = [
            list(kept) for size in range(DICE) for kept in combinations(range(DICE), size)
        ]
        if turn.throw_number >= turn.throws_required:
            choices.append(None)
        return rng.choice(choices)

    def move_4d(self, game: Any, rng: random.Random) -> dict[str, Any]:
        if game.phase == "start":
            return {"type": "throw", "faces": dice(rng, game.size)}
        _, faces = rng.choice(game.legal_moves())
        return {"type": "turn", "faces": faces, "rotate": rng.choice(sorted(ROTATIONS))}


class Advisor(Strategy):
    """Keeps by the round model; moves by the 4D advisor (see the module's docstring)."""

    name = "advisor"

    def choose_keep(self, turn: Turn421, rng: random.Random) -> list[int] | None:
        situation = turn.situation()
        if situation is None:
            return None
        faces, _ = best_action(situation)
        return None if faces is None else _indices(turn.hand, list(faces))

    def move_4d(self, game: Any, rng: random.Random) -> dict[str, Any]:
        if game.phase == "start":
            return {"type": "throw", "faces": dice(rng, game.size)}
        me = game.to_move
        best = advise_4d(game.faces, near=game.near,
                         scores=(game.scores[me], game.scores[1 - me]), knobs=game.knobs)["best"]
        return {"type": "turn", "faces": best["faces"], "rotate": best["rotate"]}


class _Game4DView:
    """A 4D view read as the few game attributes the strategies use for a move (always the
    move: a presentation is the table's own business)."""

    kind = "4d"
    phase = "play"

    def __init__(self, view: Mapping[str, Any]) -> None:
        self.faces = faces_by_position(view)
        self.near = view["square"]["near"]["pos"]
        self.knobs = view["knobs"]
        self.to_move = view["to_move"]
        self.scores = list(view.get("scores") or [p.get("score", 0) for p in view["players"]])
        self.size = len(self.faces)

    def legal_moves(self) -> list[tuple[str, list[int]]]:
        return legal_results(self.faces, self.near, self.size > SQUARE)


def faces_by_position(view: Mapping[str, Any]) -> list[int]:
    """The 4D top faces by square position (then the fifth die) from a view."""
    faces = [0] * SQUARE
    for spot in view["square"].values():
        faces[spot["pos"]] = spot["face"]
    if view.get("fifth") is not None:
        faces.append(view["fifth"])
    return faces


def situation_from_game(game: Any) -> Situation:
    """The turn of ``game``'s player to move (a ``Game421`` in a round turn)."""
    made = tuple((h["player"], h["hand"], h["throws"]) for h in game.round_hands)
    best_tokens = 0
    if made:
        best_tokens = game.tokens[game.judge.extreme(game.round_hands, False)[0]]
    return Situation(
        knobs=game.knobs, dice=tuple(game.hand), made_throws=game.throw_number,
        allowed=game.throws_allowed, required=game.throws_required,
        round_kind=game.round_kind, made=made, later=len(game.order) - game.pos - 1,
        tokens=game.tokens[game.to_move], best_tokens=best_tokens, pot=game.pot,
        most=_most(game.knobs, game.round_kind),
    )


def situation_from_view(view: Mapping[str, Any]) -> Situation | None:
    """The turn of the player to move from a 421 ``view()`` (JSON types), or None when that
    player has no choice to make (no hand in hand yet, a coup sec, a rampo, game over)."""
    if view.get("game") != "421" or view.get("phase") not in ("charge", "decharge", "round"):
        return None
    mover = view.get("to_move")
    made_now = view.get("throw_number") or 0
    allowed = view.get("throws_allowed") or 0
    if mover is None or made_now < 1 or made_now >= allowed or view.get("dice_player") != mover:
        return None
    players = view["players"]
    hands = view.get("round") or []
    best = view.get("best")
    active = sum(1 for p in players if not p.get("out"))
    return Situation(
        knobs=view["knobs"], dice=tuple(view["dice"]), made_throws=made_now, allowed=allowed,
        required=view.get("throws_required") or 1, round_kind=view["round_kind"],
        made=tuple((h["player"], h["hand"], h["throws"]) for h in hands),
        later=max(0, active - len(hands) - 1), tokens=players[mover]["tokens"],
        best_tokens=players[best["player"]]["tokens"] if best else 0, pot=view.get("pot", 0),
        most=_most(view["knobs"], view["round_kind"]),
    )


def _most(knobs: Mapping[str, Any], round_kind: str) -> int:
    """The most throws anyone may make in this kind of round (I18: 3 in one-round mode)."""
    return knobs["charge_throws"] if round_kind == "charge" else MAX_THROWS


def _indices(hand: list[int], faces: list[int]) -> list[int]:
    """Indices in ``hand`` of the dice showing ``faces`` (each die used once)."""
    free = list(range(len(hand)))
    picked = []
    for face in faces:
        index = next(i for i in free if hand[i] == face)
        free.remove(index)
        picked.append(index)
    return picked


def _keep_event(keep: list[int] | None, rng: random.Random) -> dict[str, Any]:
    if keep is None:
        return {"type": "stop"}
    return {"type": "throw", "faces": dice(rng, DICE - len(keep)), "keep": keep}


def make_strategy(name: str) -> Strategy:
    """The strategy called ``name`` (one of STRATEGIES); ValueError listing them otherwise."""
    for cls in (Random, Simple, Advisor):
        if cls.name == name:
            return cls()
    raise ValueError(f"unknown strategy {name!r}; valid strategies: {', '.join(STRATEGIES)}")
