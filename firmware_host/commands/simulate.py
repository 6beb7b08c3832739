"""The `dicetower simulate` subcommand: whole games with random dice, as a log or as statistics.

dicetower simulate --preset tim-11 --players Ana,Ben,Cleo --seed 7
dicetower simulate --preset tim-11 --games 10000 --quiet
dicetower simulate --preset tim-11 --games 1000 --quiet --strategy advisor
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from typing import Any

from firmware_host.advisor.strategies import make_strategy
from firmware_host.argtypes import positive_int
from firmware_host.commands.game_options import (
    STRATEGY_NAMES,
    add_game_options,
    checked_game,
)
from firmware_host.rules.hands import RANKINGS
from firmware_host.rules.narrate import Narrator
from firmware_host.rules.simulation import Totals, play


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="play whole games with random dice and print the log or statistics",
        description="Play whole games of 421 or 4D with random dice and simple players.",
    )
    add_game_options(parser)
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument("--games", type=positive_int, default=1, help="number of games (default 1)")
    parser.add_argument("--quiet", action="store_true", help="print statistics only, no game log")
    parser.add_argument("--strategy", type=strategy_list, default="simple",
                        metavar="|".join(STRATEGY_NAMES),
                        help="how the players choose: simple (default: a bar player's habits), "
                        "random (any legal choice) or advisor (plays by the odds advisor; "
                        "see docs/advisor.md); one for every player, or one per seat "
                        "separated by commas (advisor,simple,simple)")
    parser.add_argument("--rotate", action="store_true",
                        help="with one strategy per seat: move them one seat on at each game, "
                        "so that each plays every seat")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    try:
        players, knobs = checked_game(args.preset, args.players, args.knob)
    except ValueError as err:
        print(f"dicetower simulate: {err}", file=sys.stderr)
        return 2
    names = args.strategy.split(",")
    if len(names) not in (1, len(players)):
        print(f"dicetower simulate: --strategy {args.strategy} names {len(names)} strategies "
              f"for {len(players)} players; give one, or one per player", file=sys.stderr)
        return 2
    seats = Seats(names, args.rotate)
    strategy = seats.strategy
    rng = random.Random(args.seed)
    started = time.perf_counter()
    totals = Totals()
    first = FirstPlayer()
    for number in range(args.games):
        first.new_game()
        seats.new_game(number)
        if args.quiet:
            _, stats = play(args.preset, players, rng, knobs, first, strategy)
        else:
            narrator = Narrator(players, args.preset, knobs, args.seed, print)
            if args.games > 1:
                print(f"\n#### Game {number + 1} of {args.games}\n")
            narrator.header()
            if strategy is not None:
                print(f"players' strategy: {args.strategy}")

            def both(game: Any, event: dict[str, Any], effects: list[dict[str, Any]],
                     narrator: Any = narrator) -> None:
                narrator(game, event, effects)
                first(game, event, effects)

            _, stats = play(args.preset, players, rng, knobs, both, strategy)
        first.end_game(stats)
        seats.end_game(stats)
        totals.add(stats)
    elapsed = time.perf_counter() - started
    if args.quiet or args.games > 1:
        if not args.quiet:
            print()
        _print_stats(args, knobs, players, totals, elapsed)
        first.print_summary(args.strategy, "421" if "target" not in knobs else "4d")
        seats.print_summary("421" if "target" not in knobs else "4d")
    return 0


def strategy_list(text: str) -> str:
    """An argparse type: strategy names separated by commas, each one of STRATEGY_NAMES."""
    names = [name.strip().lower() for name in text.split(",")]  # as --players: spaces allowed
    for name in names:
        if name not in STRATEGY_NAMES:
            raise argparse.ArgumentTypeError(
                f"invalid choice: {name!r} (choose from {', '.join(STRATEGY_NAMES)})")
    return ",".join(names)


class Seats:
    """Which strategy plays each seat (moved one seat on per game with ``rotate``), and how
    often each strategy lost (or won) when several play together."""

    def __init__(self, names: list[str], rotate: bool) -> None:
        self.names = names
        self.rotate = rotate and len(names) > 1
        self.mixed = len(set(names)) > 1
        self.shift = 0
        self.players: dict[str, Any] = {}
        self.lost: dict[str, int] = dict.fromkeys(names, 0)
        self.won: dict[str, int] = dict.fromkeys(names, 0)
        self.seated: dict[str, int] = dict.fromkeys(names, 0)  # seats played over the games
        self.games = self.decided_lost = self.decided_won = 0
        if names != ["simple"] * len(names):
            self.players = {name: make_strategy(name) for name in set(names)}

    @property
    def strategy(self) -> Any:
        """The ``play`` strategy: None when every seat plays simple (the engine's own)."""
        if not self.players:
            return None
        if len(self.names) == 1:
            return self.players[self.names[0]]
        return self._dispatch

    def _dispatch(self, game: Any, rng: random.Random) -> dict[str, Any]:
        return self.players[self.name_at(game.to_move)](game, rng)

    def name_at(self, seat: int) -> str:
        return self.names[(seat - self.shift) % len(self.names)]

    def new_game(self, number: int) -> None:
        self.shift = number if self.rotate else 0

    def end_game(self, stats: Any) -> None:
        if not self.mixed:
            return
        self.games += 1
        for seat in range(len(self.names)):
            self.seated[self.name_at(seat)] += 1
        if stats.loser is not None:
            self.decided_lost += 1
            self.lost[self.name_at(stats.loser)] += 1
        if stats.winner is not None:
            self.decided_won += 1
            self.won[self.name_at(stats.winner)] += 1

    def print_summary(self, kind: str) -> None:
        """Each strategy's share of the games lost (won in 4D, and where no game names a
        loser), with its exact binomial 95% confidence interval, beside an even share."""
        if not self.mixed or not self.games:
            return
        from scipy.stats import binomtest  # SciPy (a second): only when strategies are mixed

        lost = kind == "421" and self.decided_lost > 0
        counts, decided = (self.lost, self.decided_lost) if lost else (self.won, self.decided_won)
        if not decided:
            return
        role = "lost" if lost else "won"
        for name in sorted(set(self.names)):
            seats = self.seated[name] / self.games  # seats this strategy held per game
            low, high = binomtest(counts[name], decided).proportion_ci(0.95)
            even = seats / len(self.names)
            print(f"{name} ({seats:g} of {len(self.names)} seats) {role} {counts[name]} of "
                  f"{decided} games: {counts[name] / decided:.1%} (95% CI {low:.1%} to "
                  f"{high:.1%}; an even share is {even:.1%})")


class FirstPlayer:
    """Watches games beside the players: how long they last and whether the first player
    loses (421: the round's first player, who sets the count, and the first round's first
    player over the game; 4D: the player who moves first)."""

    def __init__(self) -> None:
        self.lengths: list[int] = []
        self.rounds = 0
        self.rounds_first_lost = 0
        self.games = 0
        self.games_first_lost = 0
        self.first: int | None = None

    def new_game(self) -> None:
        self.first = None

    def __call__(self, game: Any, event: dict[str, Any], effects: list[dict[str, Any]]) -> None:
        for effect in effects:
            kind = effect["kind"]
            if kind == "scored" and self.first is None:
                self.first = effect["player"]
            elif kind in ("round_lost", "game_over") and game.kind == "421":
                opener = game.last_round["hands"][0]["player"] if game.last_round else None
                if self.first is None:
                    self.first = opener
                if kind == "round_lost":
                    self.rounds += 1
                    self.rounds_first_lost += effect["player"] == opener

    def end_game(self, stats: Any) -> None:
        self.lengths.append(stats.rounds)
        if stats.loser is not None and self.first is not None:
            self.games += 1
            self.games_first_lost += stats.loser == self.first

    def print_summary(self, strategy: str, kind: str) -> None:
        unit = "rounds" if kind == "421" else "moves"
        ordered = sorted(self.lengths)
        p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        print(f"strategy {strategy}: a game lasts {statistics.median(ordered):g} {unit} "
              f"(median; 90% within {p90})")
        parts = []
        if self.rounds:
            parts.append(f"the round's first player lost {self.rounds_first_lost / self.rounds:.1%}"
                         f" of {self.rounds} rounds")
        if self.games:
            who = "the first round's first player" if kind == "421" else "the first mover"
            parts.append(f"{who} lost {self.games_first_lost / self.games:.1%} of "
                         f"{self.games} games")
        if parts:
            print("; ".join(parts))


def _print_stats(
    args: argparse.Namespace,
    knobs: dict[str, Any],
    players: list[str],
    totals: Any,
    elapsed: float,
) -> None:
    kind = "4d" if "target" in knobs else "421"
    games = totals.games
    mean = totals.mean
    print(
        f"{args.preset} · {len(players)} players · {games} games · seed {args.seed} · "
        f"{elapsed:.2f} s ({elapsed / games * 1000:.2f} ms per game)"
    )
    if kind == "421":
        print(
            f"mean per game: {mean('rounds'):.1f} rounds, {mean('throws'):.1f} throws, "
            f"{mean('rampos'):.2f} rampos, {mean('manches'):.2f} manches"
        )
    else:
        print(f"mean per game: {mean('rounds'):.1f} moves")
    role = "lost" if kind == "421" else "won"
    counts = totals.losers if kind == "421" else totals.winners
    if kind == "421" and totals.losers[None] == games:
        # Games that name only a winner (one-round mode, manches won): show the winners.
        role, counts = "won", totals.winners
    print(
        f"{role} the game: "
        + " · ".join(f"{name} {counts[seat] / games:.1%}" for seat, name in enumerate(players))
    )
    hands = totals.hands
    total = sum(hands.values()) or 1
    if kind == "421":
        order = RANKINGS[knobs["ranking"]]
        print(f"hands made ({total} turns, best first):")
        cells = [f"{hand} {hands[hand] / total:6.2%}" for hand in order]
    else:
        print(f"combinations scored ({total} moves):")
        cells = [f"{name:<11} {count / total:6.2%}" for name, count in hands.most_common()]
    per_line = 6 if kind == "421" else 3
    for start in range(0, len(cells), per_line):
        print("  " + "   ".join(cells[start : start + per_line]))
