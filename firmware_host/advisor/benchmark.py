"""The `dicetower bench odds` benchmark: how long one advisor query takes.

Random seeded 421 queries over the four 421 presets (random hand, throws made and left,
throw rule, hand to beat and hand to avoid, opener or not), each timed on its own, from a
cold start (the tables are built during the first queries, as in a freshly started tower).
A smaller set of 4D queries (with and without the fifth die) is timed apart.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from typing import Any

from firmware_host.advisor import advise, advise_4d
from firmware_host.advisor.moves4d import _score
from firmware_host.advisor.odds421 import _table
from firmware_host.figures import p95
from firmware_host.rules.game421 import MAX_THROWS

PRESETS_421 = ("regles-21", "tim-11", "classique-10", "kyt-11")
MIN_QUERIES = 1000


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "odds",
        help="time the odds advisor: ms per 421 query (median, p95), and 4D moves",
        description="Time random seeded queries of the odds advisor (dicetower odds) over "
        "the 421 presets, each on its own, from a cold start; then 4D queries.",
    )
    parser.add_argument("--queries", type=int, default=2000,
                        help=f"421 queries (default 2000, at least {MIN_QUERIES})")
    parser.add_argument("--moves", type=int, default=60,
                        help="4D queries (default 60; 0 for none)")
    parser.add_argument("--seed", type=int, default=5, help="random seed (default 5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=_run)


def _query(rng: random.Random) -> dict[str, Any]:
    made = rng.randint(1, MAX_THROWS)

    def hand() -> Any:
        faces = [rng.randint(1, 6) for _ in range(3)]
        return (faces, rng.randint(1, MAX_THROWS)) if rng.random() < 0.5 else faces

    return {
        "dice": [rng.randint(1, 6) for _ in range(3)],
        "preset": rng.choice(PRESETS_421),
        "throws_made": made,
        "throws_left": rng.randint(0, MAX_THROWS - made),
        "rule": rng.choice(("exact", "at-most", "free", None)),
        "to_beat": hand() if rng.random() < 0.8 else None,
        "avoid": hand() if rng.random() < 0.8 else None,
        "opener": rng.random() < 0.2,
    }


def run_benchmark(queries: int = 2000, moves: int = 60, seed: int = 5) -> dict[str, Any]:
    """Time ``queries`` 421 queries and ``moves`` 4D queries; figures in milliseconds."""
    _table.cache_clear()
    _score.cache_clear()
    rng = random.Random(seed)
    times: list[float] = []
    for _ in range(queries):
        query = _query(rng)
        dice = query.pop("dice")
        started = time.perf_counter()
        advise(dice, **query)
        times.append((time.perf_counter() - started) * 1000)
    result: dict[str, Any] = {
        "queries": queries,
        "p50_ms": statistics.median(times),
        "p95_ms": p95(times),
        "max_ms": max(times),
        "first_ms": times[0],
        "seed": seed,
    }
    fourd: dict[bool, list[float]] = {False: [], True: []}
    for number in range(moves):
        fifth = number % 2 == 1
        faces = [rng.randint(1, 6) for _ in range(5 if fifth else 4)]
        started = time.perf_counter()
        advise_4d(faces, near=rng.randrange(4), scores=(rng.randrange(60), rng.randrange(60)))
        fourd[fifth].append((time.perf_counter() - started) * 1000)
    for fifth, label in ((False, "fourd"), (True, "fourd_fifth")):
        if fourd[fifth]:
            result[f"{label}_moves"] = len(fourd[fifth])
            result[f"{label}_p50_ms"] = statistics.median(fourd[fifth])
            result[f"{label}_p95_ms"] = p95(fourd[fifth])
    return result


def _run(args: argparse.Namespace) -> int:
    if args.queries < MIN_QUERIES:
        print(f"dicetower bench odds: --queries must be at least {MIN_QUERIES}", file=sys.stderr)
        return 2
    if args.moves < 0:
        print("dicetower bench odds: --moves cannot be negative", file=sys.stderr)
        return 2
    result = run_benchmark(args.queries, args.moves, args.seed)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"421 odds: {result['queries']} random queries over {', '.join(PRESETS_421)} "
          f"(seed {result['seed']})")
    print(f"  per query: median {result['p50_ms']:.3f} ms · p95 {result['p95_ms']:.3f} ms · "
          f"max {result['max_ms']:.2f} ms · first (tables built) {result['first_ms']:.2f} ms")
    for label, name in (("fourd", "4D"), ("fourd_fifth", "4D with the fifth die")):
        if f"{label}_moves" in result:
            print(f"{name}: {result[f'{label}_moves']} positions · median "
                  f"{result[f'{label}_p50_ms']:.1f} ms · p95 {result[f'{label}_p95_ms']:.1f} ms")
    return 0
