"""The `dicetower simulate` subcommand: whole games with random dice, as a log or as statistics.

dicetower simulate --preset tim-11 --players Ana,Ben,Cleo --seed 7
dicetower simulate --preset tim-11 --games 10000 --quiet
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any

from firmware_host.commands.game_options import add_game_options, checked_game, positive_int


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
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from firmware_host.rules.narrate import Narrator
    from firmware_host.rules.simulation import Totals, play

    try:
        players, knobs = checked_game(args.preset, args.players, args.knob)
    except ValueError as err:
        print(f"dicetower simulate: {err}", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    started = time.perf_counter()
    totals = Totals()
    for number in range(args.games):
        if args.quiet:
            _, stats = play(args.preset, players, rng, knobs)
        else:
            narrator = Narrator(players, args.preset, knobs, args.seed, print)
            if args.games > 1:
                print(f"\n#### Game {number + 1} of {args.games}\n")
            narrator.header()
            _, stats = play(args.preset, players, rng, knobs, narrator)
        totals.add(stats)
    elapsed = time.perf_counter() - started
    if args.quiet or args.games > 1:
        if not args.quiet:
            print()
        _print_stats(args, knobs, players, totals, elapsed)
    return 0


def _print_stats(
    args: argparse.Namespace,
    knobs: dict[str, Any],
    players: list[str],
    totals: Any,
    elapsed: float,
) -> None:
    from firmware_host.rules.hands import RANKINGS

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
