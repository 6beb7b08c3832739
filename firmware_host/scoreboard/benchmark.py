"""The `dicetower bench scoreboard` benchmark (not built yet)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("scoreboard", help="(not built yet)")
    parser.set_defaults(func=lambda args: 2)
