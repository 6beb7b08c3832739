"""The `dicetower league` subcommand: the league board of several towers, over MQTT.

    dicetower league serve --broker mqtt://192.168.1.10            # board on :8100
    dicetower league serve --config league.toml
    dicetower league new-season 2026-autumn                      # league-2026-autumn.sqlite3

`dicetower demo --league --tables 3` (see `run_demo`) runs simulated tables and the board on
this machine; `dicetower bench league` measures it (firmware_host/league/benchmark.py).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
from pathlib import Path

import platformdirs


def default_league_file() -> Path:
    return Path(platformdirs.user_data_dir("dicetower")) / "league.sqlite3"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "league", help="the league of several towers: `league serve --broker mqtt://HOST`")
    commands = parser.add_subparsers(dest="league_command", metavar="COMMAND")
    commands.required = True
    serve = commands.add_parser(
        "serve", help="listen to the towers through the broker and serve the league board",
        description="Listen to every tower's messages on the MQTT broker, keep the league "
        "(SQLite, WAL) and serve its board: every table live, the standings, players and "
        "a tournament night. See docs/league.md.")
    serve.add_argument("--broker", default=None,
                       help="mqtt://[USER[:PASSWORD]@]HOST[:PORT] or mqtts://... for TLS")
    serve.add_argument("--config", type=Path, default=None,
                       help="the league's configuration file (league.toml)")
    serve.add_argument("--league", type=Path, default=None,
                       help="the league's file (default: league.sqlite3 in the user's data "
                       "directory)")
    serve.add_argument("--prefix", default=None, help="topic prefix (default dicetower)")
    serve.add_argument("--host", default=None, help="board address (default 0.0.0.0)")
    serve.add_argument("--port", type=int, default=None, help="board port (default 8100)")
    serve.add_argument("--pin", default=None, help="game master's PIN (default: random)")
    serve.add_argument("--lang", choices=("fr", "en"), default=None,
                       help="the board's default language (default fr)")
    for name, default in (("win", 3), ("place", 1), ("loss", 0)):
        serve.add_argument(f"--{name}", type=int, default=None,
                           help=f"points per game {name if name != 'loss' else 'lost'} "
                           f"(default {default}; see docs/league.md)")
    serve.set_defaults(func=_serve)
    season = commands.add_parser(
        "new-season", help="start a new season's league file from the last one (kept)",
        description="Make the next season's league file from the last one, which is only "
        "read and kept: the tables, the players and merged names, and each table's game "
        "under way go on; the standings start again. Then serve the new file with "
        "--league. See docs/league.md.")
    season.add_argument("name", help="the season's name, e.g. 2026-autumn")
    season.add_argument("--league", type=Path, default=None,
                        help="the last season's file (default: as `league serve`)")
    season.add_argument("--config", type=Path, default=None,
                        help="the league's configuration file, for its [league] file")
    season.add_argument("--to", type=Path, default=None,
                        help="the new season's file (default: league-NAME.sqlite3 beside the "
                        "last season's)")
    season.set_defaults(func=_new_season)


def _fail(command: str, message: str) -> int:
    print(f"dicetower {command}: {message}", file=sys.stderr)
    return 2


def _serve(args: argparse.Namespace) -> int:
    # The league (paho, Flask, pydantic): loaded when the command runs.
    from firmware_host.league.broker import BrokerAddress
    from firmware_host.league.config import LeagueFile, load_league_config
    from firmware_host.league.runner import LeagueOptions, LeagueRunner
    from firmware_host.league.standings import Scoring
    from firmware_host.league.store import LeagueError

    checked, base = LeagueFile(), Path.cwd()
    if args.config is not None:
        try:
            checked, base = load_league_config(args.config)
        except ValueError as err:
            return _fail("league serve", str(err))
    url = args.broker or checked.league.broker
    if url is None:
        return _fail("league serve", "which broker? give --broker mqtt://HOST (or [league] "
                     "broker in --config)")
    try:
        address = BrokerAddress.parse(url, ca_file=checked.league.ca_file)
    except ValueError as err:
        return _fail("league serve", f"--broker {err}")
    port = args.port if args.port is not None else checked.board.port or 8100
    if not 0 <= port < 65536:
        return _fail("league serve", f"--port must be 0..65535, not {port}")
    pin = args.pin or checked.board.pin
    if pin is not None and not (pin.isascii() and pin.isdigit() and 4 <= len(pin) <= 12):
        return _fail("league serve", "--pin must be 4 to 12 digits")
    scoring = Scoring(*(getattr(args, name) if getattr(args, name) is not None
                        else getattr(checked.scoring, name) if getattr(checked.scoring, name)
                        is not None else default
                        for name, default in (("win", 3), ("place", 1), ("loss", 0))))
    file = args.league or (base / checked.league.file if checked.league.file
                           else default_league_file())
    options = LeagueOptions(broker=address, file=file,
                            prefix=args.prefix or checked.league.prefix or "dicetower",
                            host=args.host or checked.board.host or "0.0.0.0", port=port,
                            pin=pin, lang=args.lang or checked.board.lang or "fr",
                            scoring=scoring)
    try:
        runner = LeagueRunner(options)
    except LeagueError as err:
        return _fail("league serve", str(err))
    except OSError as err:
        return _fail("league serve", f"{err.filename or file}: {err.strerror}")
    try:
        runner.start()
    except OSError as err:
        runner.close()
        return _fail("league serve", f"cannot serve the board on {options.host}:{port}: "
                     f"{err.strerror}")
    assert runner.server is not None
    season = runner.store.setting("season") or {}
    named = f" (season {season['name']})" if season.get("name") else ""
    print(f"dicetower league: listening to {address.url()} (topics {options.prefix}/towers/"
          f"+/...), league file {file}{named}")
    print(f"  board:       http://{options.host}:{runner.server.port}/")
    print(f"  game master: http://{options.host}:{runner.server.port}/admin  (PIN {runner.pin})")
    print("Ctrl-C stops.", flush=True)
    _wait_for_ctrl_c()
    runner.close()
    return 0


def _new_season(args: argparse.Namespace) -> int:
    # The league's file (pydantic for its config): loaded when the command runs.
    from firmware_host.league.config import load_league_config
    from firmware_host.league.season import check_season_name, new_season, season_file
    from firmware_host.league.store import LeagueError

    try:
        check_season_name(args.name)
    except ValueError as err:
        return _fail("league new-season", str(err))
    old = args.league
    if old is None and args.config is not None:
        try:
            checked, base = load_league_config(args.config)
        except ValueError as err:
            return _fail("league new-season", str(err))
        old = base / checked.league.file if checked.league.file else None
    old = old or default_league_file()
    new = args.to or season_file(old, args.name)
    try:
        carried = new_season(old, new, args.name)
    except LeagueError as err:
        return _fail("league new-season", str(err))
    except OSError as err:
        return _fail("league new-season", f"{err.filename or new}: {err.strerror}")
    print(f"dicetower league: season {args.name} in {new} ({carried['tables']} tables, "
          f"{carried['games_under_way']} games under way, {carried['players']} players "
          f"carried over); the last season stays in {old}")
    print(f"  serve it: dicetower league serve --league {new} ...")
    return 0


def _wait_for_ctrl_c() -> None:
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set())
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_demo(args: argparse.Namespace) -> int:
    """`dicetower demo --league`: simulated tables and the league board on this machine."""
    # The league and its simulated tables (paho, Flask, the rules): loaded when the demo runs.
    from firmware_host.league.broker import BrokerAddress
    from firmware_host.league.demo import LeagueDemo, LeagueDemoOptions

    if not 0 <= args.port < 65536:
        return _fail("demo", f"--port must be 0..65535, not {args.port}")
    broker = None
    if args.broker is not None:
        try:
            broker = BrokerAddress.parse(args.broker)
        except ValueError as err:
            return _fail("demo", f"--broker {err}")
    say = (lambda line: None) if args.json else (lambda line: print(line, flush=True))
    with tempfile.TemporaryDirectory(prefix="dicetower-league-") as folder:
        options = LeagueDemoOptions(tables=args.tables, seed=args.seed,
                                    pace=0.0 if args.fast else 1.5, games=args.games,
                                    folder=Path(folder), host=args.host, port=args.port,
                                    pin=args.pin, broker=broker)
        try:
            demo = LeagueDemo(options, say)
        except FileNotFoundError as err:
            return _fail("demo", str(err))
        try:
            demo.start()
        except (OSError, RuntimeError) as err:
            demo.close()
            return _fail("demo", f"cannot start the league: {err}")
        server = demo.runner.server
        assert server is not None
        say(f"dicetower demo: {args.tables} tables publishing to {demo.broker_note}")
        say(f"  league board: http://localhost:{server.port}/")
        say(f"  game master:  http://localhost:{server.port}/admin  (PIN {demo.runner.pin})")
        say("Ctrl-C stops.")
        stop = threading.Event()
        previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
        try:
            summary = demo.run(stop)
        finally:
            signal.signal(signal.SIGINT, previous)
            demo.close()
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"dicetower demo: {summary['games']} game(s) over {summary['tables']} tables, "
              f"{summary['at_league']} of {summary['actions']} actions at the league"
              f"{'' if summary['complete'] else ' (INCOMPLETE)'}")
    return 0 if summary["complete"] else 1
