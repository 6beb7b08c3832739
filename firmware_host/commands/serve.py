"""The `dicetower serve` subcommand: the scoreboard alone, throws entered by the game master.

This is how a bar keeps playing when the camera or the tower is out: the game master types
each throw on the ``/admin`` page. The game is kept in the same journal as the tower's: the
one its configuration names (``--config``, else ~/dicetower/tower.toml when there), else the
user's data directory, unless ``--journal`` says otherwise; so it survives a restart and the
tower can take it over (`dicetower run` resumes it). Tokens are handed out by hand here: no
dispense is written for the tower to pay later.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from firmware_host.commands.paths import tower_journal, writable_file_problem
from firmware_host.hub import GameHub, Journal, JournalError
from firmware_host.locales import LANGUAGES
from firmware_host.scoreboard.network import hostname, qr_terminal, scoreboard_urls

PIN_ENV = "DICETOWER_PIN"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the live scoreboard alone (throws entered by hand on /admin)",
        description="Run the scoreboard with waitress. Phones open the printed URL (or scan "
        "the QR code); the game master opens /admin and unlocks it with the PIN.",
    )
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default: all)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (default: 8000)")
    parser.add_argument(
        "--pin",
        default=os.environ.get(PIN_ENV),
        help=f"game master's PIN, at least 4 digits (default: ${PIN_ENV}, else a random one, "
        "printed)",
    )
    parser.add_argument(
        "--lang", choices=LANGUAGES, default="fr", help="default page language (default: fr)"
    )
    parser.add_argument(
        "--odds", choices=("public", "admin-only"), default="public",
        help="who sees the odds advice for the player to move: public (default: every page) "
        "or admin-only (only the game master's page, unlocked with the PIN)",
    )
    parser.add_argument(
        "--journal", type=Path, default=None,
        help="the game's journal (default: the one the tower's configuration names, else the "
        "user's data directory's)",
    )
    parser.add_argument(
        "--config", type=Path, default=None,
        help="the tower's configuration, whose [journal] path is the default journal "
        "(default: ~/dicetower/tower.toml when it exists)",
    )
    parser.add_argument(
        "--new", action="store_true",
        help="start with no game even if the journal holds an unfinished one",
    )
    parser.add_argument(
        "--max-clients", type=int, default=100, help="live pages served at once (default: 100)"
    )
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    # Flask and waitress: loaded when the command runs.
    from firmware_host.scoreboard.app import create_app
    from firmware_host.scoreboard.auth import check_pin
    from firmware_host.scoreboard.server import make_server, run_until_stopped

    if args.pin is not None:
        try:
            check_pin(args.pin)
        except ValueError as err:
            print(f"dicetower serve: --pin (or ${PIN_ENV}): {err}", file=sys.stderr)
            return 2
    if not 0 < args.port < 65536:
        print(f"dicetower serve: --port must be 1..65535, not {args.port}", file=sys.stderr)
        return 2
    if args.max_clients < 1:
        print(
            f"dicetower serve: --max-clients must be at least 1, not {args.max_clients}",
            file=sys.stderr,
        )
        return 2
    try:
        path, named_by = tower_journal(args.journal, args.config)
    except ValueError as err:
        print(f"dicetower serve: {err}", file=sys.stderr)
        return 2
    problem = writable_file_problem(path, "the journal")
    if problem:
        print(f"dicetower serve: {problem}", file=sys.stderr)
        return 2
    try:
        journal = Journal(path, exclusive=True)
    except JournalError as err:
        print(f"dicetower serve: {err}", file=sys.stderr)
        return 2
    hub = GameHub()
    resumed = resume_into(hub, journal, replay=not args.new)
    urls = scoreboard_urls(args.host, args.port)
    app = create_app(
        {
            "SCOREBOARD_PIN": args.pin,
            "SCOREBOARD_LANG": args.lang,
            "SCOREBOARD_ODDS": args.odds,
            "SCOREBOARD_PUBLIC_URL": urls[0],
            "SSE_MAX_CLIENTS": args.max_clients,
        },
        hub=hub,
    )
    try:
        server = make_server(app, args.host, args.port)
    except OSError as err:
        print(
            f"dicetower serve: cannot listen on {args.host}:{args.port}: {err.strerror}",
            file=sys.stderr,
        )
        journal.close()
        return 1
    def announce() -> None:
        print("dicetower scoreboard")
        state = "resumed the unfinished game of" if resumed else "journal"
        print(f"  {state} {path}" + (f" (named by {named_by})" if named_by else ""))
        for url in urls:
            print(f"  scoreboard:  {url}")
        print(f"  game master: {urls[0]}admin")
        print(f"  host name:   {hostname()}")
        print(f"  PIN:         {app.config['SCOREBOARD_PIN']}")
        qr_terminal(urls[0])
        print("Ctrl+C to stop.", flush=True)

    try:
        run_until_stopped(app, server, ready=announce)
    finally:
        journal.close()
    print("dicetower serve: stopped")
    return 0


def resume_into(hub: GameHub, journal: Journal, *, replay: bool = True) -> bool:
    """Replay the journal's last game into ``hub`` (unless ``replay`` is false) and journal
    every change from now on; True when that game is unfinished (a finished one is shown,
    ready for a new game)."""
    # Tokens are handed out by hand here: the actions are journaled without dispenses.
    hub.open_journal(journal, replay=replay, tokens=False)
    state = hub.state()
    return bool(state.game) and not state.ended
