"""The `dicetower` command line: one entry point, one subcommand per job."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from firmware_host import __version__

# Order is the order shown by --help.
COMMAND_MODULES = ("demo", "run", "calibrate", "simulate", "odds", "read", "bench", "serve",
                   "hw_test", "fairness", "service", "doctor", "league")


class OneLineParser(argparse.ArgumentParser):
    """argparse with its refusals said in one line (exit status 2), as every other error of
    the command line: argparse prints its whole usage block first, which buries the reason."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """Return the parser with every subcommand registered."""
    parser = OneLineParser(
        prog="dicetower",
        description="Controller of the dicetower: 421 and 4D read by a camera.",
    )
    parser.add_argument("--version", action="version", version=f"dicetower {__version__}")
    # Subcommands (and theirs) are made by the parser's own class: one-line refusals too.
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"firmware_host.commands.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head` and friends: not an error of ours.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
