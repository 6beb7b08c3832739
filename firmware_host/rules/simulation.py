"""Whole games with random dice and simple player policies (for `dicetower simulate`).

Pure apart from its seeded random generator: it feeds events to a game exactly as the
camera and the buttons would, and hands every step to an optional observer.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from firmware_host.rules.base import GameBase
from firmware_host.rules.factory import new_game
from firmware_host.rules.fourd import (
    DEFAULT_ROTATION,
    ROTATIONS,
    SQUARE,
    best_combination,
    legal_results,
    next_near,
)
from firmware_host.rules.game421 import Game421

# A turn worth keeping: 421, 111, the fiches and brelans, and the suites (top 16 with fiches).
GOOD_ENOUGH = 16

Observer = Callable[[GameBase, dict[str, Any], list[dict[str, Any]]], None]


def choose_keep(hand: list[int]) -> list[int]:
    """Indices of the dice worth keeping when aiming at 421 or a brelan."""
    ones = [i for i, face in enumerate(hand) if face == 1]
    if len(ones) >= 2:
        return ones[:2]
    a, b, c = hand
    if a in (b, c):
        return [0, 1] if a == b else [0, 2]
    if b == c:
        return [1, 2]
    keep = [i for i, face in enumerate(hand) if face in (4, 2, 1)]
    return keep[:2]


def dice(rng: random.Random, count: int) -> list[int]:
    """``count`` fair dice (``random()`` is several times cheaper than ``randint``)."""
    draw = rng.random
    return [int(draw() * 6) + 1 for _ in range(count)]


def policy_421(game: Game421, rng: random.Random) -> dict[str, Any]:
    """Throw, keep or stop like a sensible bar player."""
    if game.throw_number == 0:
        count = game.opening_dice if game.phase == "opening" else 3
        return {"type": "throw", "faces": dice(rng, count)}
    rank = game.rank_of(game.hand_text)
    if rank < GOOD_ENOUGH and game.throw_number >= game.throws_required:
        return {"type": "stop"}
    keep = choose_keep(game.hand)
    if rank < GOOD_ENOUGH and len(keep) < 2:
        # Forced to throw again (the exact rule) with a good hand: risk one die only.
        keep = [0, 1]
    return {"type": "throw", "faces": dice(rng, 3 - len(keep)), "keep": keep}


def policy_4d(game: Any, rng: random.Random) -> dict[str, Any]:
    """Start with a random throw and present the square that leaves the opponent the lowest
    best score; then make the move that scores most (ties at random) and turn the square the
    way that leaves the opponent the lower best score (ties: clockwise)."""
    if game.phase == "start":
        return {"type": "throw", "faces": dice(rng, game.size)}
    if game.phase == "present":
        near = choose_presentation(game)
        if near != game.near:
            return {"type": "present", "near": near}
        # The square as it lies is the best presentation: the opponent moves at once.
    pairs = game.knobs["pairs_score"]
    options = [(best_combination(new, pairs)[1], new) for _, new in game.legal_moves()]
    top = max(points for points, _ in options)
    new = rng.choice([faces for points, faces in options if points == top])
    return {"type": "turn", "faces": new, "rotate": choose_rotation(game, new)}


def choose_rotation(game: Any, faces: list[int]) -> str:
    """The rotation after the move to ``faces`` that gives the opponent the lower best score."""
    pairs = game.knobs["pairs_score"]
    if game.scores[game.to_move] + best_combination(faces, pairs)[1] >= game.knobs["target"]:
        return DEFAULT_ROTATION  # the move wins: the square is not turned for anyone
    fifth = game.size > SQUARE

    def opponent_best(rotate: str) -> int:
        near = next_near(game.near, rotate)
        return max(best_combination(new, pairs)[1] for _, new in legal_results(faces, near, fifth))

    return min(ROTATIONS, key=lambda rotate: (opponent_best(rotate), rotate != DEFAULT_ROTATION))


def choose_presentation(game: Any) -> int:
    """The position to turn towards the opponent before the first move: the one that leaves
    them the lowest best score (ties: the square as it lies, then the lowest position)."""
    pairs = game.knobs["pairs_score"]
    fifth = game.size > SQUARE

    def opponent_best(near: int) -> int:
        return max(best_combination(new, pairs)[1]
                   for _, new in legal_results(game.faces, near, fifth))

    return min(range(SQUARE), key=lambda near: (opponent_best(near), near != game.near, near))


@dataclass
class GameStats:
    """What one simulated game looked like."""

    rounds: int = 0
    throws: int = 0
    rampos: int = 0
    manches: int = 0
    loser: int | None = None
    winner: int | None = None
    hands: Counter = field(default_factory=Counter)


@dataclass
class Totals:
    """Sums over many simulated games (kept as sums: thousands of games cost no memory)."""

    games: int = 0
    rounds: int = 0
    throws: int = 0
    rampos: int = 0
    manches: int = 0
    losers: Counter = field(default_factory=Counter)
    winners: Counter = field(default_factory=Counter)
    hands: Counter = field(default_factory=Counter)

    def add(self, stats: GameStats) -> None:
        self.games += 1
        self.rounds += stats.rounds
        self.throws += stats.throws
        self.rampos += stats.rampos
        self.manches += stats.manches
        self.losers[stats.loser] += 1
        self.winners[stats.winner] += 1
        self.hands.update(stats.hands)

    def mean(self, attr: str) -> float:
        """Mean of a per-game count (rounds, throws, rampos, manches)."""
        return getattr(self, attr) / self.games if self.games else 0.0


def play(
    preset: str,
    players: list[str],
    rng: random.Random,
    knobs: dict[str, Any] | None = None,
    observer: Observer | None = None,
    strategy: Callable[[Any, random.Random], dict[str, Any]] | None = None,
) -> tuple[GameBase, GameStats]:
    """Play one whole game; ``observer(game, event, effects)`` sees every step.

    ``strategy(game, rng) -> event`` plays instead of the simple players when given."""
    game = new_game(preset, players, knobs)
    stats = GameStats()
    is_421 = isinstance(game, Game421)
    policy = strategy or (policy_421 if is_421 else policy_4d)
    hands = stats.hands
    while not game.is_over:
        event = policy(game, rng)
        if event["type"] != "stop":
            stats.throws += 1
        made_before = game.last_hand if is_421 else None
        effects = game.apply(event)
        for effect in effects:
            kind = effect["kind"]
            if kind == "rampo":
                stats.rampos += 1
            elif kind == "manche_lost":
                stats.manches += 1
            elif kind == "scored":
                hands[effect["combination"] or "none"] += 1
        if is_421:
            made = game.last_hand
            if made is not made_before and len(made["dice"]) == 3:
                hands[made["hand"]] += 1
        if observer is not None:
            observer(game, event, effects)
    stats.rounds = getattr(game, "round_number", 0) or getattr(game, "moves", 0)
    stats.loser, stats.winner = game.loser, game.winner
    return game, stats
