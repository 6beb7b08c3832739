"""The `dicetower fairness` subcommand: do the tower's dice come up evenly?

dicetower fairness                      # the tower's journal, every throw it kept
dicetower fairness --since 2026-03-01   # only throws from that day on (new dice?)
dicetower fairness --journal demo.sqlite3 --json

Reads the journal read-only, so it works while the tower plays; prints how often each face
came up, the chi-square test against 1/6 each, and a verdict: too few throws, looks fair or
looks biased (with the face furthest off and the p-value).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from firmware_host.hub.journal import JournalError, default_journal

PROG = "dicetower fairness"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fairness",
        help="tell whether the dice come up evenly (from the tower's journal)",
        description="Count each face of every throw the tower kept, test the counts against "
        "a fair die (chi-square, 1 % false alarms) and say: too few throws, looks fair or "
        "looks biased. Works while the tower runs.",
    )
    parser.add_argument(
        "--journal", type=Path, default=None, metavar="PATH",
        help="the journal to read (default: the tower's, in the user's data directory, as "
        "for run and serve)",
    )
    parser.add_argument(
        "--since", metavar="DATE", default=None,
        help="only throws from DATE on (YYYY-MM-DD or YYYY-MM-DDTHH:MM, local time): e.g. "
        "the day the dice were changed",
    )
    parser.add_argument("--json", action="store_true", help="the report as one JSON object")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    since = None
    if args.since is not None:
        try:
            when = datetime.fromisoformat(args.since)
        except ValueError:
            print(f"{PROG}: --since {args.since!r}: not a date (YYYY-MM-DD, or "
                  "YYYY-MM-DDTHH:MM)", file=sys.stderr)
            return 2
        try:
            since = when.timestamp()
        except (ValueError, OverflowError, OSError):  # year 1: before the clock's epoch range
            print(f"{PROG}: --since {args.since!r}: too far back for this machine's clock; "
                  "give a date since 1970", file=sys.stderr)
            return 2
    from firmware_host.fairness.watch import journal_report  # SciPy: when the command runs

    path = args.journal or default_journal()
    try:
        report = journal_report(path, since)
    except JournalError as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return 2
    data = {"journal": str(path), "since": args.since, **report.to_json()}
    if args.json:
        print(json.dumps(data, ensure_ascii=False))
    else:
        print("\n".join(describe(data)))
    return 0


def describe(data: dict[str, Any]) -> list[str]:
    """The report as lines for people: the journal, the table, the test, the verdict."""
    overall = data["overall"]
    question = data["question"]
    lines = [f"{PROG}: {data['journal']}" + (f" (since {data['since']})" if data["since"]
                                             else "")]
    per_throw = data["dice_per_throw"]
    lines.append(f"  {data['throws']} throws, {overall['dice']} dice read"
                 + (f" ({per_throw:.1f} a throw)" if per_throw else ""))
    lines += _table(overall)
    if overall["p_value"] is not None:
        lines.append(f"  chi-square {overall['statistic']:.2f} (5 degrees of freedom), "
                     f"{_p(overall['p_value'])}")
    lines.append(f"  verdict: {data['said']}: {_why(data)}")
    lines.append(f"  the test: {_question(question, overall['needed'])}")
    for die in data["dice"]:
        lines.append(f"  die {die['label']}: {die['said']}, {die['dice']} dice read"
                     + (f", {_p(die['p_value'])}" if die["p_value"] is not None else ""))
    if data["note"]:
        lines.append(f"  {data['note']}")
    return lines


def _table(test: dict[str, Any]) -> list[str]:
    faces = "".join(f"{face:>8}" for face in range(1, 7))
    counts = "".join(f"{count:>8}" for count in test["counts"])
    shares = "".join(f"{share:>8.1%}" for share in test["shares"])
    return [f"  face  {faces}", f"  count {counts}", f"  share {shares}   (fair: 16.7%)"]


def _why(data: dict[str, Any]) -> str:
    overall = data["overall"]
    if data["verdict"] == "biased":
        biased = overall if overall["verdict"] == "biased" else next(
            die for die in data["dice"] if die["verdict"] == "biased")
        where = "" if biased is overall else f" on the {biased['label']} die"
        return (f"the {biased['face']} comes up {biased['face_share']:.1%} of the time{where} "
                f"instead of 16.7% ({_p(biased['p_value'])}, below the {biased['alpha']:g} "
                "threshold)")
    if data["verdict"] == "fair":
        return f"no face is off by more than chance allows ({overall['dice']} dice read)"
    missing = max(0, overall["needed"] - overall["dice"])
    more = f"{missing} more dice"
    if data["dice_per_throw"]:
        more += f" (about {-(-missing // data['dice_per_throw']):.0f} throws)"
    if missing == 0:
        return "every die must have enough throws of its own"
    return f"{overall['dice']} of the {overall['needed']} dice needed; {more}"


def _question(question: dict[str, Any], needed: int) -> str:
    return (f"{needed} dice are enough to catch, {question['power']:.0%} of the time, dice "
            f"showing one face {question['loaded']:.0%} of the time; fair dice are flagged "
            f"{question['alpha']:.0%} of the time")


def _p(value: float) -> str:
    return f"p = {value:.2g}" if value >= 1e-4 else "p < 0.0001"
