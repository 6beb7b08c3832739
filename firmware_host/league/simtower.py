"""Light simulated towers for the league's demo, bench and tests: the real hub, journal and
publisher, with players chosen by the simulation's policies instead of a camera (no vision).

A `SimTower` owns a `GameHub` journaled in its own file and a `TowerPublisher` to the
league's broker; `step` makes one player's input exactly as the camera or the buttons would
(the hub applies it, journals it, and only wakes the publisher). A copy of the game, fed the
same inputs, is what the policy looks at: the engine is deterministic, so both stay equal.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from firmware_host.hub import GameHub, Journal
from firmware_host.league.broker import RECONNECT, BrokerAddress
from firmware_host.league.publisher import TowerPublisher, cursor_beside
from firmware_host.rules import new_game
from firmware_host.rules.game421 import Game421
from firmware_host.rules.simulation import policy_4d, policy_421

# Names for the demo's and the bench's players, drawn per table (some play at two tables).
NAMES = ("Ana", "Ben", "Cleo", "Dan", "Eva", "Fred", "Gus", "Hana", "Ivo", "Jade", "Kim",
         "Léa", "Max", "Nour", "Omar", "Paul", "Rosa", "Sam", "Théo", "Uma", "Vic", "Zoé")


class SimTower:
    """One simulated table; see the module docstring."""

    def __init__(self, name: str, folder: Path, address: BrokerAddress, *, seed: int,
                 preset: str = "tim-11", prefix: str = "dicetower",
                 reconnect: tuple[float, float] = RECONNECT, players: int = 3) -> None:
        self.name = name
        self.preset = preset
        self.rng = random.Random(seed)
        self.player_count = players
        path = Path(folder) / f"{name}.sqlite3"
        self.journal = Journal(path, exclusive=True)
        self.hub = GameHub()
        self.hub.open_journal(self.journal, replay=False, tokens=False)
        self.publisher = TowerPublisher(self.hub, self.journal, address, name, prefix=prefix,
                                        cursor=cursor_beside(path), reconnect=reconnect)
        self._mirror: Any = None
        self.games_over: list[dict[str, Any]] = []  # each finished game: players, winner, loser

    def start(self) -> None:
        self.publisher.start()

    def close(self, *, goodbye: bool = True) -> None:
        self.publisher.close(goodbye=goodbye)
        self.journal.close()

    def new_game(self, players: list[str] | None = None) -> None:
        names = players or self.rng.sample(NAMES, self.player_count)
        self.hub.start_game(self.preset, names)
        self._mirror = new_game(self.preset, names)

    @property
    def playing(self) -> bool:
        return self._mirror is not None and not self._mirror.is_over

    def step(self) -> dict[str, Any]:
        """One input by the player to move (a new game first when none is under way);
        returns the event."""
        if not self.playing:
            self.new_game()
        game = self._mirror
        policy = policy_421 if isinstance(game, Game421) else policy_4d
        event = policy(game, self.rng)
        self.hub.apply(event)
        game.apply(event)
        if game.is_over:
            self.games_over.append({"players": list(game.players), "winner": game.winner,
                                    "loser": game.loser, "preset": self.preset})
        return event

    def accept_proposal(self) -> bool:
        """The game master's one tap on the league's offer, if there is one (between games)."""
        offer = self.publisher.proposal
        if offer is None or self.playing:
            return False
        self.publisher.start_proposal()
        self._mirror = new_game(offer["preset"], [str(p) for p in offer["players"]])
        self.publisher.proposal = None  # taken; the league withdraws it too
        return True

    def play_game(self, players: list[str] | None = None) -> None:
        """One whole game at once."""
        self.new_game(players)
        while self.playing:
            self.step()
