"""`dicetower demo --league`: several simulated tables and the league board on this machine.

Each table is a `SimTower` (the real hub, journal and publisher; players chosen by the
simulation's policies, no camera) publishing to a Mosquitto started for the demo on a free
port (the one found on the PATH, else a broker embedded in the process, amqtt), or to the
broker given. The league listens, keeps its file, and serves its board; a table between two
games takes the league's offer of a tournament match when there is one (as its game master
would with one tap), else starts a game of three players drawn from a pool, so the same
players meet at several tables.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from firmware_host.league.broker import (
    RECONNECT,
    BrokerAddress,
    EmbeddedBroker,
    LocalBroker,
    find_mosquitto,
)
from firmware_host.league.runner import LeagueOptions, LeagueRunner
from firmware_host.league.simtower import SimTower

BETWEEN_GAMES = 3  # a table's turns of rest between two games (a round of drinks)


@dataclass
class LeagueDemoOptions:
    tables: int = 3
    seed: int = 7
    pace: float = 1.5  # seconds between two inputs at one table (0: as fast as can be)
    games: int | None = None  # stop once this many games are over, all tables together
    folder: Path = Path(".")
    host: str = "127.0.0.1"
    port: int = 8000
    pin: str | None = None
    broker: BrokerAddress | None = None  # None: start a Mosquitto for the demo
    embedded: bool = False  # the embedded broker even where Mosquitto is installed


class LeagueDemo:
    """Starts the broker (if needed), the league and the tables; `run` plays until told."""

    def __init__(self, options: LeagueDemoOptions, say: Callable[[str], None]) -> None:
        self.options = options
        self.say = say
        self.broker: LocalBroker | EmbeddedBroker | None = None
        if options.broker is None:
            program = None if options.embedded else find_mosquitto()
            if program is not None:
                self.broker = LocalBroker(options.folder / "broker", program=program)
                self.broker_note = f"Mosquitto ({program}) on {self.broker.address.url()}"
            else:
                try:
                    self.broker = EmbeddedBroker()
                except ImportError:
                    raise FileNotFoundError(
                        "no Mosquitto on this machine (Debian: apt-get install mosquitto) "
                        "nor the embedded broker (pip install 'dicetower[league-broker]'), "
                        "and no --broker given") from None
                self.broker_note = (f"the embedded broker (amqtt, no Mosquitto found) on "
                                    f"{self.broker.address.url()}")
            address = self.broker.address
        else:
            address = options.broker
            self.broker_note = f"the broker at {address.url()}"
        self.address = address
        self.runner = LeagueRunner(LeagueOptions(
            broker=address, file=options.folder / "league.sqlite3", host=options.host,
            port=options.port, pin=options.pin, reconnect=RECONNECT))
        self.towers = [SimTower(f"table-{i + 1}", options.folder, address,
                                seed=options.seed * 100 + i, reconnect=RECONNECT)
                       for i in range(options.tables)]

    def start(self) -> None:
        if self.broker is not None:
            self.broker.start()
        self.runner.start()
        for tower in self.towers:
            tower.start()

    def run(self, stop: threading.Event) -> dict[str, Any]:
        """Play until ``stop`` is set or the games are done; a summary."""
        rng = random.Random(self.options.seed)
        rest = dict.fromkeys(range(len(self.towers)), 0)
        while not stop.is_set():
            for index, tower in enumerate(self.towers):
                if tower.playing:
                    tower.step()
                    if not tower.playing:
                        rest[index] = BETWEEN_GAMES
                        self.say(f"{tower.name}: game over "
                                 f"({self._result(tower.games_over[-1])})")
                elif rest[index] > 0:
                    rest[index] -= 1
                elif not tower.accept_proposal():
                    tower.new_game()
            if self.options.games is not None and self._games() >= self.options.games:
                break
            if self.options.pace > 0:
                stop.wait(self.options.pace * (0.5 + rng.random()))
        return self.summary()

    def summary(self, wait: float = 10.0) -> dict[str, Any]:
        """The games played and whether the league holds every action (waits a little for
        the last ones to arrive)."""
        journals = {t.name: t.journal.last_action_id() for t in self.towers}
        deadline = time.monotonic() + wait
        while self.runner.store.counts() != journals and time.monotonic() < deadline:
            time.sleep(0.05)
        counts = self.runner.store.counts()
        return {"tables": len(self.towers), "games": self._games(),
                "actions": sum(journals.values()),
                "at_league": sum(counts.values()),
                "complete": counts == journals, "broker": self.broker_note}

    def close(self) -> None:
        for tower in self.towers:
            tower.close()
        self.runner.close()
        if self.broker is not None:
            self.broker.stop()

    def _games(self) -> int:
        return sum(len(t.games_over) for t in self.towers)

    @staticmethod
    def _result(game: dict[str, Any]) -> str:
        loser = game["loser"]
        return f"{game['players'][loser]} pays" if loser is not None else "no loser"
