"""The `dicetower bench` subcommand: benchmarks of speed and accuracy, one per part.

Each benchmark lives with the part it measures (those that play on the simulated tower, `bench
tower` and `bench calibrate`, with it in `firmware_host.simulation`), in a module exposing
``register(subparsers)`` (light imports at module level, heavy ones inside the run function).
"""

from __future__ import annotations

import argparse
import importlib

BENCHMARK_MODULES = (
    "vision.lab.benchmark",
    "firmware_host.scoreboard.benchmark",
    "firmware_host.simulation.bench_tower",
    "firmware_host.advisor.benchmark",
    "firmware_host.simulation.bench_calibrate",
    "firmware_host.league.benchmark",
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench", help="measure a part: `bench vision`, `bench scoreboard`, `bench tower`, "
        "`bench odds`, `bench calibrate`, `bench league`"
    )
    benchmarks = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    benchmarks.required = True
    for module in BENCHMARK_MODULES:
        importlib.import_module(module).register(benchmarks)
