"""The `dicetower hw-test` subcommand (not built yet)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("hw-test", help="(not built yet)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    print("dicetower hw-test: not built yet")
    return 2
