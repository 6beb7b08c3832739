"""The `dicetower demo` subcommand: a whole tower on this machine, nothing to plug in.

A simulated tray filmed by a simulated camera, gpiozero's mock pins, the real vision pipeline,
rules engine, journal and scoreboard, and virtual players throwing at a watchable pace:

    dicetower demo                       # watch on http://localhost:8000, Ctrl-C to stop
    dicetower demo --fast --games 20 --json

Ctrl-C stops between two frames (never between two halves of a token) and the next `demo`
resumes the same game from the journal.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from firmware_host.argtypes import positive_int
from firmware_host.commands.game_options import (
    STRATEGY_NAMES,
    add_game_options,
    checked_game,
)
from firmware_host.commands.paths import writable_file_problem
from firmware_host.hub.journal import JournalError, default_journal
from firmware_host.scoreboard.network import qr_terminal


def default_demo_journal() -> Path:
    """The demo's own journal, beside (never inside) the real tower's."""
    return default_journal().with_name("demo.sqlite3")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="a whole simulated tower: virtual players, the real vision and scoreboard",
        description="Play on a simulated tower: dice rendered into a simulated tray and read "
        "back by the vision pipeline, tokens paid by servos on mock pins, the live scoreboard "
        "served for phones. Resumes the journal's unfinished game.",
    )
    add_game_options(parser)
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument("--fast", action="store_true",
                        help="play as fast as the machine can (no pause between throws)")
    parser.add_argument("--games", type=positive_int, default=None,
                        help="stop after this many games (default: play until Ctrl-C)")
    parser.add_argument("--journal", type=Path, default=None,
                        help="the demo's journal (default: demo.sqlite3 in the user's data "
                             "directory)")
    parser.add_argument("--new", action="store_true",
                        help="start a new game even if the journal holds an unfinished one")
    parser.add_argument("--host", default="127.0.0.1",
                        help="scoreboard address (default 127.0.0.1; 0.0.0.0 for phones)")
    parser.add_argument("--port", type=int, default=8000,
                        help="scoreboard port (default 8000; 0 picks a free one)")
    parser.add_argument("--no-scoreboard", action="store_true", help="do not serve the scoreboard")
    parser.add_argument("--pin", default=None, help="game master's PIN (default: random)")
    parser.add_argument("--json", action="store_true",
                        help="print only one summary object at the end")
    parser.add_argument("--strategy", choices=STRATEGY_NAMES, default=None,
                        help="how the virtual players keep dice and move: simple (the "
                        "simulation's players), advisor (the odds advisor; see "
                        "docs/advisor.md) or random (they stop at random a third of the "
                        "time, even holding 421); default: as people at a bar (they stop on "
                        "a hand worth keeping such as 421 or 111, else now and then)")
    parser.add_argument("--scene", choices=("classic", "varied"), default="classic",
                        help="the simulated tray's look: classic (one set of ivory dice on "
                        "felt under a bar lamp) or varied (other dice, floor, light and camera "
                        "at every throw); default classic")
    parser.add_argument("--league", action="store_true",
                        help="several light simulated tables (no camera) publishing to an "
                        "MQTT broker, and the league board on --port (see docs/league.md)")
    parser.add_argument("--tables", type=positive_int, default=3,
                        help="with --league: how many tables (default 3)")
    parser.add_argument("--broker", default=None,
                        help="with --league: the broker, mqtt://HOST[:PORT] (default: a "
                        "Mosquitto started for the demo)")
    parser.set_defaults(func=_run)


def _fail(message: str) -> int:
    print(f"dicetower demo: {message}", file=sys.stderr)
    return 2


def _run(args: argparse.Namespace) -> int:
    if args.league:
        # The league's tables, broker and board (paho, Flask): loaded when asked for.
        from firmware_host.commands.league import run_demo

        return run_demo(args)
    # The simulated tower (OpenCV, the renderer, Flask): loaded when the demo runs.
    from firmware_host.simulation.demo import Demo, DemoOptions

    try:
        players, knobs = checked_game(args.preset, args.players, args.knob)
    except ValueError as err:
        return _fail(str(err))
    if not 0 <= args.port < 65536:
        return _fail(f"--port must be 0..65535, not {args.port}")
    if args.pin is not None:
        from firmware_host.scoreboard.auth import check_pin  # Flask: when the demo runs

        try:
            check_pin(args.pin)
        except ValueError as err:
            return _fail(f"--pin: {err}")
    journal = args.journal or default_demo_journal()
    problem = writable_file_problem(journal, "the journal")
    if problem:
        return _fail(problem)
    options = DemoOptions(preset=args.preset, players=players, knobs=knobs, seed=args.seed,
                          fast=args.fast, games=args.games, journal=journal, host=args.host,
                          port=args.port, serve=not args.no_scoreboard, pin=args.pin,
                          new=args.new, strategy=args.strategy, scene=args.scene)
    say = (lambda line: None) if args.json else (lambda line: print(line, flush=True))
    stop = threading.Event()
    try:
        demo = Demo(options, say)
    except JournalError as err:
        return _fail(str(err))
    except OSError as err:
        return _fail(f"{err.filename or journal}: {err.strerror}")
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        try:
            demo.start()
        except OSError as err:
            return _fail(f"cannot serve the scoreboard on {args.host}:{args.port}: "
                         f"{err.strerror}")
        if not args.json:
            _introduce(demo, journal)
        summary = demo.run(stop)
    finally:
        demo.close()
        signal.signal(signal.SIGINT, previous)
    if args.json:
        print(json.dumps(summary.to_json()))
    else:
        _report(summary, stopped=stop.is_set())
    return 0


def _introduce(demo: object, journal: Path) -> None:
    server = getattr(demo, "server", None)
    summary = getattr(demo, "summary", None)
    if summary is not None and summary.resumed:
        print(f"dicetower demo: resuming the unfinished game of {journal}")
    else:
        print(f"dicetower demo: journal {journal}")
    if server is not None:
        url = server.url.replace("127.0.0.1", "localhost")
        pin = demo.app.config["SCOREBOARD_PIN"]  # type: ignore[attr-defined]
        print(f"  scoreboard:  {url}")
        print(f"  game master: {url}admin  (PIN {pin})")
        if sys.stdout.isatty():
            qr_terminal(url)
    print("Ctrl-C stops; the next `dicetower demo` resumes.", flush=True)


def _report(summary: object, *, stopped: bool) -> None:
    data = summary.to_json()  # type: ignore[attr-defined]
    reasons = ", ".join(f"{code} {n}" for code, n in sorted(data["rethrow_reasons"].items()))
    head = "stopped" if stopped else "done"
    print(f"dicetower demo: {head}: {data['games']} game(s), {data['throws']} throws read, "
          f"{data['rethrows']} asked again ({reasons or 'none'}), {data['misread']} misread, "
          f"tokens {'conserved' if data['tokens_conserved'] else 'NOT conserved'}")
