"""The `dicetower run` subcommand: the real tower, as described by its configuration file.

    dicetower run --config ~/dicetower/tower.toml

Reads frames from the configured camera, plays the configured game on the pins of the pin
map, serves the scoreboard and journals everything; on start it resumes the journal's
unfinished game. SIGTERM (systemd) and Ctrl-C stop it between two frames.

Started by systemd (`dicetower service install`), it says READY=1 once the tower is up,
WATCHDOG=1 from the controller's loop (at most once a second, only while the loop goes round,
so a hung tower is restarted) and STOPPING=1 on the way out.

Exit status: 0 when stopped; 2 for whatever a restart cannot fix, in one line: a configuration
refused, and every start-up error of `open_tower_parts` (a bad pin map, pins held by another
program, no lgpio, a profile or a journal it cannot use, the scoreboard's port taken), which
the unit's ``RestartPreventExitStatus=2`` leaves failed instead of restarting it for ever; 1
(with a traceback) only for a fault of the program itself, which a restart may get past.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

from firmware_host.scoreboard.network import qr_terminal, scoreboard_urls
from firmware_host.service import Notifier


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run the tower: camera, rules, lights, dispensers, scoreboard, journal",
        description="Run the tower described by a configuration file (a commented example "
        "ships as firmware_host/controller/tower.example.toml; `--example` prints it).",
    )
    parser.add_argument("--config", type=Path, help="the tower's configuration (tower.toml)")
    parser.add_argument("--example", action="store_true",
                        help="print the commented example configuration and exit")
    parser.add_argument("--new", action="store_true",
                        help="start a new game even if the journal holds an unfinished one")
    parser.add_argument("--journal", type=Path, default=None,
                        help="the game's journal, instead of the configuration's [journal] path")
    parser.set_defaults(func=_run)


def _fail(message: str, code: int = 2) -> int:
    # One line per problem (a pin map may have several), each saying who speaks.
    for line in message.splitlines() or [""]:
        print(f"dicetower run: {line}", file=sys.stderr)
    return code


def _run(args: argparse.Namespace) -> int:
    # Pydantic and the camera sources: loaded when the command runs.
    from firmware_host.commands.camera_sources import offer_simulated_camera
    from firmware_host.controller.config import EXAMPLE_CONFIG, ConfigError, load_config

    offer_simulated_camera()
    if args.example:
        print(EXAMPLE_CONFIG.read_text(encoding="utf-8"), end="")
        return 0
    if args.config is None:
        return _fail("--config TOWER.toml is needed (`dicetower run --example` prints one "
                     "to start from)")
    try:
        config = load_config(args.config)
    except ConfigError as err:
        return _fail(str(err))
    if args.journal is not None:
        config.journal = args.journal
    _quiet_logs()
    return run_tower(config, new_game=args.new)


def _quiet_logs() -> None:
    """One line per event the owner can act on: the tower's own messages (OpenCV's own
    attempts at a missing device are quieted by the camera source)."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")


def run_tower(config: object, *, new_game: bool = False) -> int:
    """Run the configured tower until SIGTERM or Ctrl-C; the process exit status."""
    # The tower (OpenCV, Flask, gpiozero): loaded when it runs.
    from firmware_host.controller.assembly import StartError, open_tower_parts

    notifier = Notifier()
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set())
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            parts = open_tower_parts(config, new_game=new_game,  # type: ignore[arg-type]
                                     heartbeat=notifier.watchdog)
        except StartError as err:
            # What `systemctl status` shows: one line, since a newline would end the status.
            notifier.status("cannot start: " + "; ".join(str(err).splitlines()))
            return _fail(str(err), 2)
        try:
            urls = scoreboard_urls(parts.config.host, parts.server.port)
            state = "resumed the unfinished game" if parts.resumed else "started a new game"
            print(f"dicetower run: {state} of {parts.config.journal}")
            for url in urls:
                print(f"  scoreboard:  {url}")
            print(f"  game master: {urls[0]}admin  (PIN {parts.app.config['SCOREBOARD_PIN']})")
            if sys.stdout.isatty():
                qr_terminal(urls[0])
            print("Ctrl-C or SIGTERM stops; the next start resumes.", flush=True)
            notifier.ready(f"{state}; scoreboard {urls[0]}")
            parts.run(stop)
        finally:
            notifier.stopping()
            parts.close()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("dicetower run: stopped")
    return 0
