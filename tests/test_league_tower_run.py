"""The real tower with `[league]` in its tower.toml, against a real Mosquitto.

`dicetower run` is started as a bar starts it (a subprocess: the simulated tray and camera,
mock pins, the vision, the journal, the scoreboard); the game master enters a short game's
throws on its scoreboard; the league, in this process, hears the game start, every throw with
who made it, the game's end and the tower's status, and counts the result.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
from pathlib import Path

from firmware_host.league.ingest import LeagueListener
from firmware_host.league.store import LeagueStore
from firmware_host.rules import new_game
from firmware_host.rules.simulation import policy_421
from tests.league_support import (
    FAST,
    broker,  # noqa: F401 - the fixture
    wait_until,
)
from tests.test_tower_commands import free_port, start_run, tower_config
from tests.tower_checks import Scoreboard

PIN = "2468"  # tower_config's
PLAYERS = ["Zoe", "Yann"]  # tower_config's
KNOBS = {"pot": 3}  # a tim-11 game of a few dozen throws


def _config(tmp_path: Path, port: int, broker_url: str) -> Path:
    """`run`'s tower.toml, with a short game and the league's keys."""
    return tower_config(tmp_path, port, f"""[game.knobs]
pot = {KNOBS["pot"]}
[league]
broker = "{broker_url}"
tower = "bar-1"
""")


def test_a_tower_run_with_league_keys_publishes_its_game(tmp_path: Path, broker) -> None:  # noqa: F811
    store = LeagueStore(tmp_path / "league.sqlite3")
    listener = LeagueListener(store, broker.address, reconnect=FAST)
    listener.start()
    port = free_port()
    process, _ = start_run(_config(tmp_path, port, broker.address.url()))
    try:
        def table() -> dict:
            tables = store.tables()
            return tables[0] if tables else {}

        # The game `run` started, and the tower's retained status. Status and game are
        # messages of their own: the game may arrive a moment after the status.
        assert wait_until(lambda: table().get("status") == "playing"
                          and table().get("game") is not None)
        assert [p["name"] for p in table()["game"]["players"]] == PLAYERS
        board = Scoreboard(f"http://127.0.0.1:{port}/")
        board.login(PIN)
        mirror, rng = new_game("tim-11", PLAYERS, KNOBS), random.Random(11)
        while not mirror.is_over:
            event = policy_421(mirror, rng)
            body = {k: v for k, v in event.items() if k != "type"}
            status, answer = board.post(f"api/admin/{event['type']}", body)
            assert status == 200, answer
            mirror.apply(event)
        expected = {"over": True, "loser": PLAYERS[mirror.loser]}
        assert wait_until(lambda: table().get("status") == "idle")
        game = table()["game"]
        assert {"over": game["phase"] == "over", "loser": game["loser"]} == expected
        (record,) = [g for g in store.games() if g["state"] == "over"]
        assert record["players"] == PLAYERS and record["loser"] == mirror.loser
        assert {r["name"]: r["lost"] for r in store.standings()} == {
            name: int(name == expected["loser"]) for name in PLAYERS}
        # Every throw the tower took is at the league, with who threw it.
        with sqlite3.connect(tmp_path / "tower.sqlite3") as journal:
            journaled = journal.execute("SELECT count(*) FROM actions").fetchone()[0]
        assert wait_until(lambda: store.counts() == {"bar-1": journaled})
        with sqlite3.connect(store.path) as league:
            bodies = [json.loads(b) for (b,) in league.execute(
                "SELECT body FROM actions WHERE tower = 'bar-1' ORDER BY id")]
        inputs = [b for b in bodies if b["action"] == "event"]
        assert len(inputs) == len(mirror.history)
        assert [b["who"]["name"] for b in inputs] == [
            PLAYERS[seat] for seat in _movers(mirror)]
        assert listener.taken["refused"] == 0
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
        # Stopped on purpose: it says goodbye.
        assert wait_until(lambda: table().get("status") == "offline")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        listener.close()
        store.close()


def _movers(game) -> list[int]:
    """The seat that made each input of ``game``'s history, replayed on a fresh game."""
    fresh = new_game("tim-11", PLAYERS, KNOBS)
    seats = []
    for entry in game.history:
        seats.append(fresh.view()["to_move"])
        fresh.apply(entry["event"])
    return seats
