"""The `dicetower bench scoreboard` benchmark: how fast a change reaches every open page.

It serves the real application with waitress on 127.0.0.1, opens N live streams
(``/api/events``) like N phones, then plays a real game through the hub (throws from a
seeded generator, applied by the rules engine) and notes, for every client and every change,
the delay from the change to the moment that client has read the whole event.

Clients and server share one Python process (and its GIL) on the same machine, so the
numbers include that contention and no Wi-Fi: read them as the server's share of the delay.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from firmware_host.figures import p95
from firmware_host.hub import HubError
from firmware_host.rules import RuleError

PRESET = "classique-10"
PLAYERS = ["Ana", "Ben", "Cleo", "Dede"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "scoreboard",
        help="live update delay to N Server-Sent Events clients",
        description="Connect N SSE clients to the scoreboard, push game changes, report the "
        "median and 95th percentile delay from each change to each client receiving it.",
    )
    parser.add_argument("--clients", type=int, default=50, help="SSE clients (default: 50)")
    parser.add_argument("--updates", type=int, default=100, help="changes pushed (default: 100)")
    parser.add_argument(
        "--interval", type=float, default=0.05, help="seconds between changes (default: 0.05)"
    )
    parser.add_argument("--seed", type=int, default=421, help="seed of the throws (default: 421)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object (p50_ms, p95_ms, max_ms, clients, missed...)")
    parser.set_defaults(func=_run)


@dataclass
class Client:
    """One live page: a thread reading the event stream and noting when each event arrived."""

    host: str
    port: int
    received: dict[int, float] = field(default_factory=dict)
    connected: threading.Event = field(default_factory=threading.Event)
    error: str | None = None

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self._read, daemon=True)
        thread.start()
        return thread

    def _read(self) -> None:
        try:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
            conn.request("GET", "/api/events", headers={"Accept": "text/event-stream"})
            response = conn.getresponse()
            if response.status != 200:
                self.error = f"HTTP {response.status}"
                self.connected.set()
                return
            version: int | None = None
            while True:
                line = response.readline()
                if not line:
                    return
                if line.startswith(b"id: "):
                    version = int(line.rsplit(b"-", 1)[1])
                elif line == b"\n" and version is not None:
                    # A blank line ends the event: it has fully arrived now.
                    self.received[version] = time.perf_counter()
                    version = None
                    self.connected.set()
        except (OSError, http.client.HTTPException) as err:
            self.error = str(err) or type(err).__name__
            self.connected.set()


def push_changes(hub: Any, updates: int, interval: float, seed: int) -> dict[int, float]:
    """Play `updates` inputs of a real game; return version -> time of the change."""
    rng = random.Random(seed)
    changed: dict[int, float] = {}
    while len(changed) < updates:
        time.sleep(interval)
        start = time.perf_counter()
        faces = [rng.randint(1, 6) for _ in range(3)]
        try:
            hub.apply({"type": "throw", "faces": faces})
        except (RuleError, HubError):
            # Not a throw's moment: the turn must be stopped, or the game is over.
            try:
                hub.apply({"type": "stop"})
            except (RuleError, HubError):
                hub.start_game(PRESET, PLAYERS)
        changed[hub.version] = start
    return changed


def run_benchmark(clients: int, updates: int, interval: float, seed: int) -> dict[str, Any]:
    """Serve, connect, push, measure; return the figures (delays in milliseconds)."""
    # Flask and waitress: loaded when the benchmark runs, not when the command line starts.
    from firmware_host.scoreboard.app import create_app
    from firmware_host.scoreboard.server import BackgroundServer

    # Every client connects from this machine: the per-address cap must not count them as one.
    app = create_app({"SCOREBOARD_PIN": "0000", "SSE_MAX_CLIENTS": clients + 4,
                      "SSE_MAX_PER_CLIENT": clients + 4})
    hub = app.extensions["dicetower.hub"]
    hub.start_game(PRESET, PLAYERS)
    with BackgroundServer(app) as server:
        host, port = server.url.split("//", 1)[1].rstrip("/").rsplit(":", 1)
        readers = [Client(host, int(port)) for _ in range(clients)]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.connected.wait(timeout=10)
        failed = [r.error for r in readers if r.error or not r.received]
        changed = push_changes(hub, updates, interval, seed)
        time.sleep(min(2.0, 10 * interval + 0.5))  # let the last event reach everyone
        payload = len(hub.snapshot_json()[1])
    delays: list[float] = []
    coalesced = missed = 0
    for reader in readers:
        for version, at in changed.items():
            arrived = state_arrival(reader.received, version)
            if arrived is None:
                missed += 1
                continue
            delays.append((arrived - at) * 1000)
            coalesced += version not in reader.received
    return {
        "preset": PRESET,
        "seed": seed,
        "interval_ms": interval * 1000,
        "clients": clients,
        "clients_failed": len(failed),
        "updates": len(changed),
        "changes_expected": len(readers) * len(changed),
        "changes_seen": len(delays),
        "coalesced": coalesced,
        "missed": missed,
        "payload_bytes": payload,
        "p50_ms": statistics.median(delays) if delays else None,
        "p95_ms": p95(delays) if delays else None,
        "max_ms": max(delays) if delays else None,
    }


def state_arrival(received: dict[int, float], version: int) -> float | None:
    """When a client first held a state at least as new as `version`.

    Every event carries the whole state, so when changes come faster than a stream sends,
    the stream skips to the newest one; the skipped change reached the client with it.
    """
    times = [at for seen, at in received.items() if seen >= version]
    return min(times) if times else None


def _run(args: argparse.Namespace) -> int:
    if args.clients < 1 or args.updates < 1 or args.interval < 0:
        print(
            "bench scoreboard: --clients and --updates must be >= 1, --interval >= 0",
            file=sys.stderr,
        )
        return 2
    if not args.json:
        print(
            f"scoreboard: {args.clients} SSE clients, {args.updates} changes every "
            f"{args.interval * 1000:.0f} ms (real {PRESET} game, seed {args.seed})..."
        )
    result = run_benchmark(args.clients, args.updates, args.interval, args.seed)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            shown = f"{value:.2f}" if isinstance(value, float) else value
            print(f"  {key:<16} {shown}")
    if result["clients_failed"] or result["missed"] or result["p50_ms"] is None:
        print("some clients could not connect or missed changes: see above", file=sys.stderr)
        return 1
    return 0
