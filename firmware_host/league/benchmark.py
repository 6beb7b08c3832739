"""`dicetower bench league`: many light towers publishing through Mosquitto to the league.

``--towers`` simulated tables (`SimTower`: the real hub, journal and publisher; replayed
games, no vision), their games already under way at random points, each make an input every
``--pace`` seconds on average (random gaps), as a busy bar night does, for ``--seconds``; the
broker is stopped and started again once, half way. An SSE client reads the league board's
live stream (``/events``) as a phone does.

Reported: the delay from a throw accepted at a tower (the hub's commit time) to the board's
page showing it (the event that carries it read by the client), p50 and p95, over every
throw and over those made away from the broker's restart; messages lost (journal actions
missing at the league, or throws the page never showed: must be 0) and doubled (actions the
league holds or counts twice, standings that differ from the towers' own games: must be 0).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from firmware_host.figures import p95

WARM_UP = 160  # inputs played at most at each table before the clock starts
RESTART_MARGIN = 5.0  # seconds after the broker is back during which throws count as "restart"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "league", help="towers publishing to the league through Mosquitto: delay to the "
        "board, messages lost and doubled",
        description="Simulated towers (no vision) publish their games through a local "
        "Mosquitto, restarted once half way; the league board's live stream is read as a "
        "phone does. Reports the delay from a throw at a tower to the board (p50, p95), "
        "messages lost and doubled. Needs Debian's mosquitto.")
    parser.add_argument("--towers", type=int, default=50, help="towers (default 50)")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="how long the towers play (default 60)")
    parser.add_argument("--pace", type=float, default=3.0,
                        help="mean seconds between two inputs at one table (default 3)")
    parser.add_argument("--down", type=float, default=1.0,
                        help="seconds the broker stays stopped half way (default 1; 0: no "
                        "restart)")
    parser.add_argument("--reconnect", type=_seconds_pair, default=None,
                        metavar="MIN,MAX", help="seconds between attempts to reach the "
                        "broker, the first and the longest (default: a tower's own, 0.25,30)")
    parser.add_argument("--seed", type=int, default=5, help="random seed (default 5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=_run)


def _seconds_pair(text: str) -> tuple[float, float]:
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: two numbers, e.g. 0.1,0.5") from None
    if not 0.1 <= low <= high:
        raise argparse.ArgumentTypeError(f"{text!r}: from 0.1 s, the first not above the "
                                         "longest")
    return low, high


def _fail(message: str) -> int:
    print(f"dicetower bench league: {message}", file=sys.stderr)
    return 2


class _Page:
    """An SSE client of the board: when each (tower, action id) first reached the page."""

    def __init__(self, url: str) -> None:
        self.seen: dict[tuple[str, int], float] = {}
        self._last: dict[str, int] = {}
        self._response = urllib.request.urlopen(url + "events", timeout=60)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for line in self._response:
                if not line.startswith(b"data:"):
                    continue
                now = time.time()
                for table in json.loads(line[5:])["tables"]:
                    tower, last = table["tower"], int(table["last"])
                    for action_id in range(self._last.get(tower, 0) + 1, last + 1):
                        self.seen.setdefault((tower, action_id), now)
                    self._last[tower] = max(self._last.get(tower, 0), last)
        except (OSError, ValueError, AttributeError):  # closed under it: the end
            return

    def close(self) -> None:
        self._response.close()


def _run(args: argparse.Namespace) -> int:
    # The league and its simulated towers (paho, Flask): loaded when the bench runs.
    from firmware_host.league.broker import RECONNECT, LocalBroker, find_mosquitto
    from firmware_host.league.runner import LeagueOptions, LeagueRunner
    from firmware_host.league.simtower import SimTower
    from firmware_host.league.standings import Scoring, standings

    if args.reconnect is None:
        args.reconnect = RECONNECT
    if args.towers < 1 or args.seconds <= 0 or args.pace <= 0 or args.down < 0:
        return _fail("--towers, --seconds and --pace must be positive, --down not negative")
    program = find_mosquitto()
    if program is None:
        return _fail("no Mosquitto on this machine (Debian: apt-get install mosquitto)")
    progress = None
    if sys.stderr.isatty() and not args.json:
        from tqdm import tqdm  # only on a terminal

        progress = tqdm(total=int(args.seconds), unit="s", desc="playing")
    with tempfile.TemporaryDirectory(prefix="dicetower-bench-league-") as folder:
        broker = LocalBroker(Path(folder) / "broker", program=program)
        broker.start()
        runner = LeagueRunner(LeagueOptions(broker=broker.address,
                                            file=Path(folder) / "league.sqlite3",
                                            port=0, reconnect=args.reconnect))
        runner.start()
        assert runner.server is not None
        runner.listener.wait_connected(10)
        towers = [SimTower(f"bar-{i:02d}", Path(folder), broker.address,
                           seed=args.seed * 1000 + i, reconnect=args.reconnect)
                  for i in range(args.towers)]
        # Games already under way, each at its own point (some end during the run): played
        # at once and published before the clock starts.
        warm = random.Random(args.seed + 1)
        for tower in towers:
            tower.start()
            for _ in range(warm.randrange(WARM_UP)):
                tower.step()
        _wait_for(lambda: runner.store.counts() == _journals(towers), 120)
        throws: dict[tuple[str, int], float] = {}
        for tower in towers:
            tower.hub.subscribe(_note_throws(tower, throws))
        page = _Page(runner.server.url)
        rng = random.Random(args.seed)
        start = time.monotonic()
        due = [start + rng.expovariate(1 / args.pace) for _ in towers]
        restart = (start + args.seconds / 2) if args.down > 0 else None
        outage: tuple[float, float] | None = None
        restarting: threading.Thread | None = None
        shown = 0
        while (now := time.monotonic()) < start + args.seconds:
            if restart is not None and now >= restart:
                # On its own thread: the players go on while the broker is away.
                outage = (time.time(), time.time() + args.down + RESTART_MARGIN)
                restarting = threading.Thread(target=_restart, args=(broker, args.down))
                restarting.start()
                restart = None
            index = min(range(len(towers)), key=due.__getitem__)
            if due[index] > now:
                time.sleep(min(due[index] - now, 0.05))
                continue
            towers[index].step()
            due[index] = now + rng.expovariate(1 / args.pace)
            if progress is not None and int(now - start) > shown:
                progress.update(int(now - start) - shown)
                shown = int(now - start)
        if progress is not None:
            progress.close()
        if restarting is not None:
            restarting.join()
        journals = _journals(towers)
        _wait_for(lambda: runner.store.counts() == journals
                  and set(throws) <= set(page.seen), 60)
        counts = runner.store.counts()
        missing_at_league = sum(max(0, n - counts.get(name, 0)) for name, n in journals.items())
        missing_on_page = len(set(throws) - set(page.seen))
        doubled = sum(max(0, counts.get(name, 0) - n) for name, n in journals.items())
        games = [{"state": "over", **g} for t in towers for g in t.games_over]
        expected = [r.to_json() for r in standings(games, Scoring(), {})]
        standings_match = runner.store.standings() == expected
        delays = {key: page.seen[key] - at for key, at in throws.items() if key in page.seen}
        calm = [d for key, d in delays.items()
                if outage is None or not outage[0] <= throws[key] <= outage[1]]
        page.close()
        redelivered = runner.listener.taken["duplicate"]
        for tower in towers:
            tower.close()
        runner.close()
        broker.stop()
    values = sorted(delays.values())
    result: dict[str, Any] = {
        "towers": args.towers, "seconds": args.seconds, "pace_s": args.pace,
        "reconnect_s": list(args.reconnect),
        "broker_restart_s": args.down, "throws": len(throws),
        "actions": sum(journals.values()), "games": len(games),
        "delay_p50_ms": round(statistics.median(values) * 1000, 1) if values else None,
        "delay_p95_ms": round(p95(values) * 1000, 1) if values else None,
        "delay_p95_away_from_restart_ms": round(p95(calm) * 1000, 1) if calm else None,
        "delay_max_ms": round(values[-1] * 1000, 1) if values else None,
        "lost": missing_at_league + missing_on_page, "doubled": doubled + (not standings_match),
        "redelivered_and_ignored": redelivered, "standings_match": standings_match,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"bench league: {args.towers} towers, {len(throws)} throws "
              f"({result['actions']} actions, {len(games)} games) in {args.seconds:g} s, "
              f"broker restarted once ({args.down:g} s down)")
        print(f"  delay throw -> board page: p50 {result['delay_p50_ms']} ms, p95 "
              f"{result['delay_p95_ms']} ms (away from the restart: "
              f"{result['delay_p95_away_from_restart_ms']} ms), max {result['delay_max_ms']} ms")
        print(f"  lost {result['lost']}, doubled {result['doubled']} (deliveries again, "
              f"ignored: {redelivered}); standings {'match' if standings_match else 'DIFFER'}")
    return 0 if result["lost"] == 0 and result["doubled"] == 0 else 1


def _journals(towers: list[Any]) -> dict[str, int]:
    """Actions journaled per tower (a tower that has not played yet is not at the league)."""
    return {t.name: n for t in towers if (n := t.journal.last_action_id())}


def _wait_for(condition: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not condition():
        time.sleep(0.1)


def _restart(broker: Any, down: float) -> None:
    broker.stop()
    time.sleep(down)
    broker.start()


def _note_throws(tower: Any, throws: dict[tuple[str, int], float]) -> Any:
    """A hub subscriber noting when each accepted throw was committed (and its action id)."""
    def listener(action: dict[str, Any], result: Any) -> None:
        event = action.get("event") or {}
        if action.get("action") == "event" and event.get("type") in ("throw", "turn"):
            throws[(tower.name, tower.hub.recorded_id())] = float(action["at"])
    return listener
