"""The `dicetower odds` subcommand: the exact odds of every keep (421), the best move (4D).

dicetower odds 4 2 6 --preset tim-11 --throws-left 2 --to-beat 5,5,3
dicetower odds --preset 4d --faces 3,5,2,6 --near 1 --scores 40,55
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn

from firmware_host.advisor import AdvisorError, advise, advise_4d
from firmware_host.commands.game_options import knobs_of
from firmware_host.rules.knobs import PRESETS

DESCRIPTION = """\
421: the exact odds of every distinct keep of a hand (the dice kept, the rest thrown
again; "stop" keeps all three where stopping is allowed). "beat" is ending strictly better
than the hand to beat under the preset's ranking (as the engine judges a round, your hand
made after it); "tie" is ending equal to it (a rampo); "worst" is ending strictly worse
than the hand to avoid (the round's weakest so far); "balance" is the chance to beat minus
the chance to be worst (a décharge player wants both). For each goal every later keep serves
that same goal: each column is the best that goal can get after this keep, and * marks
the best keep for each goal (on equal odds, the one throwing fewer dice).

4D: every legal move with each way to turn the square, scored with the opponent's best
reply (the legal move from the new position scoring most); best first."""

EPILOG = """\
examples:
  dicetower odds 4 2 6 --preset tim-11 --throws-left 2 --to-beat 5,5,3 --avoid 3,2,1
  dicetower odds 6 6 1 --preset regles-21 --to-beat 6,6,1@2 --json
  dicetower odds 5 3 2 --preset tim-11 --opener
  dicetower odds --preset 4d --faces 3,5,2,6 --near 1 --scores 40,55"""

GOAL_COLUMNS = (  # (header, field, goal in "best")
    ("beat", "p_beat", "beat"),
    ("tie", "p_tie", "tie"),
    ("worst", "p_worst", "avoid_worst"),
    ("421", "p_421", "421"),
    ("nénette", "p_nenette", "nenette"),
    ("tokens", "expected_tokens", "tokens"),
    ("balance", "balance", "balance"),
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "odds",
        help="exact odds of every keep of a 421 hand, or the best 4D move",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dice", nargs="*", help="421: the three dice, e.g. 4 2 6 or 4,2,6")
    parser.add_argument("--preset", default="tim-11", help="rule set (default tim-11)")
    parser.add_argument("--knob", action="append", default=[], metavar="NAME=VALUE",
                        help="house rule overriding the preset (repeatable)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    group = parser.add_argument_group("421")
    group.add_argument("--throws-left", type=int, metavar="N",
                       help="throws still allowed after this hand (default: all the rest)")
    group.add_argument("--throws-made", type=int, default=None, metavar="N",
                       help="throws made so far in this turn, this hand's included (default 1)")
    group.add_argument("--rule", help="the round's throw rule: exact, at-most or free "
                       "(default: the preset's); under exact a bound player cannot stop")
    group.add_argument("--opener", action="store_true",
                       help="you open the round and set the count: never bound, and the "
                       "final hands of stopping now versus throwing again are shown")
    group.add_argument("--charge", action="store_true",
                       help="in the charge, where the preset may allow fewer throws")
    group.add_argument("--to-beat", metavar="DICE[@N]",
                       help="the hand to beat, e.g. 5,5,3 (made in N throws, default 3)")
    group.add_argument("--avoid", metavar="DICE[@N]",
                       help="the hand not to end below (the round's weakest so far)")
    group = parser.add_argument_group("4D")
    group.add_argument("--faces", help="top faces of positions 0 to 3, then the fifth die")
    group.add_argument("--near", type=int, default=None,
                       help="position of your near die (0-3, default 0)")
    group.add_argument("--scores", default=None, help="your score and the opponent's "
                       "(default 0,0)")
    group.add_argument("--top", type=int, default=None, help="moves to list (default 10)")
    parser.set_defaults(func=_run)
    # Unknown options named by this command, not by the top-level parser (which argparse
    # would otherwise do, as it collects the extras of every subcommand there).
    parse_known = parser.parse_known_args

    def parse_strictly(args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = parse_known(args, namespace)
        if extras:
            _fail(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    parser.parse_known_args = parse_strictly  # type: ignore[method-assign]


def _fail(message: str) -> NoReturn:
    print(f"dicetower odds: {message}", file=sys.stderr)
    sys.exit(2)


def _ints(text: str, what: str) -> list[int]:
    """Comma- or space-separated whole numbers; a bare run of digits is one per digit."""
    text = text.strip()
    parts = text.replace(",", " ").split()
    if len(parts) == 1 and parts[0].isdigit() and len(parts[0]) > 1:
        parts = list(parts[0])
    try:
        return [int(part) for part in parts]
    except ValueError:
        raise ValueError(f"{what} wants whole numbers, e.g. 5,5,3; not {text!r}") from None


def _hand(text: str | None, what: str) -> Any:
    if text is None:
        return None
    faces, sep, throws = text.partition("@")
    dice = _ints(faces, what)
    if not sep:
        return dice
    if not throws.strip().isdigit():
        raise ValueError(f"{what} {text!r}: the throws after @ are a whole number")
    return (dice, int(throws))


def _run(args: argparse.Namespace) -> int:
    try:
        if args.preset not in PRESETS:
            raise ValueError(
                f"unknown preset {args.preset!r}; valid presets: {', '.join(PRESETS)}")
        knobs = knobs_of(args.knob)
        result = _fourd(args, knobs) if args.preset == "4d" else _four21(args, knobs)
    except (AdvisorError, ValueError) as err:
        _fail(str(err))
    if args.json:
        print(json.dumps(result))
    elif result["game"] == "4d":
        _print_4d(result, args.top or 10)
    else:
        _print_421(result)
    return 0


def _four21(args: argparse.Namespace, knobs: dict[str, Any]) -> dict[str, Any]:
    if args.faces is not None:
        raise ValueError("--faces is for 4D; a 421 hand is given as three dice, e.g. 4 2 6")
    _refuse_other_game(args, ("near", "scores", "top"), "4D (--preset 4d)")
    dice = _ints(" ".join(args.dice), "the dice") if args.dice else []
    if not dice:
        raise ValueError("give the three dice of the hand, e.g. dicetower odds 4 2 6")
    return advise(
        dice, preset=args.preset, throws_left=args.throws_left,
        throws_made=1 if args.throws_made is None else args.throws_made,
        rule=args.rule, to_beat=_hand(args.to_beat, "--to-beat"),
        avoid=_hand(args.avoid, "--avoid"), opener=args.opener, charge=args.charge,
        knobs=knobs,
    )


def _fourd(args: argparse.Namespace, knobs: dict[str, Any]) -> dict[str, Any]:
    if args.dice:
        raise ValueError("4D takes the square as --faces 3,5,2,6 (positions 0 to 3), not dice")
    if args.faces is None:
        raise ValueError("4D needs the square: --faces 3,5,2,6 (positions 0 to 3, then "
                         "the fifth die if any)")
    _refuse_other_game(args, ("throws_left", "throws_made", "rule", "opener", "charge",
                              "to_beat", "avoid"), "421")
    if args.top is not None and args.top < 1:
        raise ValueError("--top must be at least 1")
    scores = _ints("0,0" if args.scores is None else args.scores, "--scores")
    return advise_4d(_ints(args.faces, "--faces"), near=args.near or 0, scores=scores,
                     knobs=knobs)


def _refuse_other_game(args: argparse.Namespace, names: tuple[str, ...], game: str) -> None:
    """The other game's options are refused, not ignored: the odds would not use them."""
    given = [name for name in names if getattr(args, name) not in (None, False)]
    if given:
        option = "--" + given[0].replace("_", "-")
        raise ValueError(f"{option} is for {game}, not for --preset {args.preset}")


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _print_421(result: dict[str, Any]) -> None:
    made, left = result["throws_made"], result["throws_left"]
    role = "opener" if result["opener"] else f"rule {result['rule']}"
    stop = "may stop" if result["may_stop"] else "must throw again"
    print(f"421 odds · {result['preset']} · hand {result['hand']} "
          f"({' '.join(map(str, result['dice']))}) · throw {made}, {left} left · {role}, {stop}")
    for label, key in (("to beat", "to_beat"), ("to avoid", "avoid")):
        target = result[key]
        if target:
            print(f"{label}: {target['hand']} (made in {target['throws']} "
                  f"throw{'s' if target['throws'] > 1 else ''})")
    columns = [c for c in GOAL_COLUMNS if result["keeps"][0][c[1]] is not None]
    header = f"{'keep':<9}{'throw':>6}" + "".join(f"{name:>10}" for name, _, _ in columns)
    print(header)
    for keep in result["keeps"]:
        label = "stop" if keep["stop"] else (" ".join(map(str, keep["keep"])) or "nothing")
        cells = []
        for _, field, goal in columns:
            value = keep[field]
            text = _percent(value) if field.startswith("p_") else f"{value:+.3f}"
            if field == "expected_tokens":
                text = f"{value:.2f}"
            mark = "*" if result["best"][goal] == keep["keep"] else " "
            cells.append(f"{text + mark:>10}")
        print(f"{label:<9}{keep['throw']:>6}" + "".join(cells))
    print("* best keep for that goal; every later keep serves the same goal "
          "(worst and nénette: lowest is best)")
    outlook = result.get("outlook")
    if outlook:
        again = outlook["throw_again"]
        stop_hand = outlook["stop"]
        print(f"opener: stop now on {stop_hand['hand']} (rank {stop_hand['rank']}), or keep "
              f"{' '.join(map(str, again['keep'])) or 'nothing'} and throw again aiming "
              f"higher: better {_percent(again['p_better'])}, same "
              f"{_percent(again['p_same'])}, worse {_percent(again['p_worse'])}")
        print("  final hand if throwing again: " + " · ".join(
            f"{kind} {_percent(p)}" for kind, p in sorted(again["kinds"].items(),
                                                          key=lambda item: -item[1])))


def _print_4d(result: dict[str, Any], top: int) -> None:
    fifth = " with the fifth die" if result["fifth_die"] else ""
    mine, theirs = result["scores"]
    print(f"4D{fifth} · faces {','.join(map(str, result['faces']))} · near {result['near']} "
          f"· scores {mine}-{theirs} · target {result['target']}")
    print(f"{'move':<11}{'faces':<11}{'rotate':<7}{'points':<16}{'best reply':<18}{'net':>4}")
    for option in result["moves"][:top]:
        scored = f"{option['points']} {option['combination'] or '-'}"
        if option["wins"]:
            reply, net = "wins the game", ""
        else:
            r = option["reply"]
            reply = f"{r['move']} {r['points']}{' wins' if r['wins'] else ''}"
            net = f"{option['net']:+d}"
        faces = ",".join(map(str, option["faces"]))
        print(f"{option['move']:<11}{faces:<11}{option['rotate']:<7}{scored:<16}"
              f"{reply:<18}{net:>4}")
    shown = min(top, len(result["moves"]))
    print(f"best first ({shown} of {len(result['moves'])}): winning now, then no winning "
          "reply, then points minus the reply's best points")
