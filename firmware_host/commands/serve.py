"""The `dicetower serve` subcommand: the scoreboard alone, throws entered by the game master.

This is how the scoreboard is used before the controller exists, and how a bar keeps playing
when the camera is out: the game master types each throw on the ``/admin`` page.
"""

from __future__ import annotations

import argparse
import os
import sys

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
        help=f"game master's PIN (default: ${PIN_ENV}, else a random one, printed)",
    )
    parser.add_argument(
        "--lang", choices=("fr", "en"), default="fr", help="default page language (default: fr)"
    )
    parser.add_argument(
        "--max-clients", type=int, default=100, help="live pages served at once (default: 100)"
    )
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from firmware_host.scoreboard.app import create_app
    from firmware_host.scoreboard.network import hostname, qr_terminal, scoreboard_urls
    from firmware_host.scoreboard.server import make_server, run_until_stopped

    if args.pin is not None and not args.pin.strip():
        print("dicetower serve: the PIN cannot be empty", file=sys.stderr)
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
    urls = scoreboard_urls(args.host, args.port)
    app = create_app(
        {
            "SCOREBOARD_PIN": args.pin,
            "SCOREBOARD_LANG": args.lang,
            "SCOREBOARD_PUBLIC_URL": urls[0],
            "SSE_MAX_CLIENTS": args.max_clients,
        }
    )
    try:
        server = make_server(app, args.host, args.port)
    except OSError as err:
        print(
            f"dicetower serve: cannot listen on {args.host}:{args.port}: {err.strerror}",
            file=sys.stderr,
        )
        return 1
    print("dicetower scoreboard")
    for url in urls:
        print(f"  scoreboard:  {url}")
    print(f"  game master: {urls[0]}admin")
    print(f"  host name:   {hostname()}")
    print(f"  PIN:         {app.config['SCOREBOARD_PIN']}")
    qr_terminal(urls[0])
    print("Ctrl+C to stop.", flush=True)
    run_until_stopped(app, server)
    print("dicetower serve: stopped")
    return 0
