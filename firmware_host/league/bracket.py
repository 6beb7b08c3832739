"""A tournament night: a knock-out bracket of two-player 421 games across the league's tables.

`bracket` lays the entrants out as seeded (the first entrant meets the last; byes, when the
count is not a power of two, go to the first seeds) and fills each round with the winners of
the one before. `TournamentDesk` runs it: it proposes the next ready match to a free table
(status ``online`` or ``idle``) as a retained message on that tower's ``proposal`` topic; the
tower's game master starts it with one tap (`TowerPublisher.start_proposal`); the league
recognises the game (the same players at that table, started after the proposal) and, when
the rules say it is over, the player who is not the loser goes through. A game the game
master ends early is no result: the match is proposed again.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as mqtt

from firmware_host.league.broker import RECONNECT, BrokerAddress
from firmware_host.league.messages import DEFAULT_PREFIX, FREE_STATUSES, proposal_topic
from firmware_host.league.standings import player_key
from firmware_host.league.store import LeagueStore, StreamsEnded

SETTING = "tournament"


@dataclass
class Match:
    id: str
    round: int
    players: list[str | None]
    bye: bool = False
    winner: str | None = None
    tower: str | None = None  # the table it was proposed to

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "round": self.round, "players": list(self.players),
                "bye": self.bye, "winner": self.winner, "tower": self.tower}


@dataclass
class Tournament:
    """The night as kept in the league's file: entrants, proposals, links, results."""

    entrants: list[str]
    preset: str = "tim-11"
    created: float = field(default_factory=time.time)
    results: dict[str, str] = field(default_factory=dict)  # match id -> winner
    proposals: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> tower, at
    links: dict[str, list[Any]] = field(default_factory=dict)  # id -> [tower, game start]

    def to_json(self) -> dict[str, Any]:
        return {"entrants": self.entrants, "preset": self.preset, "created": self.created,
                "results": self.results, "proposals": self.proposals, "links": self.links}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tournament:
        return cls(**data)


def bracket(tournament: Tournament) -> list[list[Match]]:
    """Every round's matches, filled as far as the results go."""
    names = tournament.entrants
    size = 1
    while size < len(names):
        size *= 2
    slots = _seed_order(size)
    seeded: list[str | None] = [names[s] if s < len(names) else None for s in slots]
    rounds: list[list[Match]] = []
    previous: list[str | None] = seeded
    number = 1
    while len(previous) > 1:
        matches = []
        for index in range(0, len(previous), 2):
            pair = [previous[index], previous[index + 1]]
            match = Match(id=f"r{number}-{index // 2}", round=number, players=pair)
            present = [p for p in pair if p is not None]
            if number == 1 and len(present) == 1:
                match.bye, match.winner = True, present[0]
            else:
                match.winner = tournament.results.get(match.id)
            proposal = tournament.proposals.get(match.id)
            match.tower = proposal["tower"] if proposal else None
            matches.append(match)
        rounds.append(matches)
        previous = [m.winner for m in matches]
        number += 1
    return rounds


def _seed_order(size: int) -> list[int]:
    """Seeds in bracket order: 1 meets ``size``, and the top seeds meet as late as can be."""
    order = [0]
    while len(order) < size:
        width = len(order) * 2
        order = [x for seed in order for x in (seed, width - 1 - seed)]
    return order


def ready(rounds: list[list[Match]]) -> list[Match]:
    """Matches whose two players are known and which have no winner yet, in order."""
    return [m for matches in rounds for m in matches
            if m.winner is None and all(p is not None for p in m.players)]


class TournamentDesk:
    """Runs the night: see the module docstring. Its state lives in the league's file."""

    def __init__(self, store: LeagueStore, address: BrokerAddress, *,
                 prefix: str = DEFAULT_PREFIX, reconnect: tuple[float, float] = RECONNECT
                 ) -> None:
        self.store = store
        self.prefix = prefix
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2,
                             client_id="dicetower-league-desk", protocol=mqtt.MQTTv311)
        address.configure(client)
        client.reconnect_delay_set(min_delay=max(0.1, reconnect[0]),
                                   max_delay=max(0.1, reconnect[1]))
        self._client = client
        self._address = address

    def start(self) -> None:
        self._client.connect_async(self._address.host, self._address.port, 30)
        self._client.loop_start()
        self._thread = threading.Thread(target=self._run, name="league-desk", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self.store.end_streams()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._client.disconnect()
        self._client.loop_stop()

    def current(self) -> Tournament | None:
        data = self.store.setting(SETTING)
        return None if not data else Tournament.from_json(data)

    def create(self, entrants: list[str], preset: str = "tim-11") -> Tournament:
        """A new night for ``entrants`` (two or more different names)."""
        keys = [player_key(name) for name in entrants]
        if len(entrants) < 2 or len(set(keys)) != len(keys) or not all(keys):
            raise ValueError("a tournament needs two or more different names")
        with self._lock:
            old = self.current()
            tournament = Tournament(entrants=list(entrants), preset=preset)
            self.store.set_setting(SETTING, tournament.to_json())
        if old is not None:
            for proposal in old.proposals.values():
                self._propose(proposal["tower"], None)
        return tournament

    def view(self) -> dict[str, Any] | None:
        """The bracket as the board shows it."""
        tournament = self.current()
        if tournament is None:
            return None
        rounds = bracket(tournament)
        return {"rounds": [[m.to_json() for m in matches] for matches in rounds],
                "champion": rounds[-1][0].winner if rounds else None,
                "next": [m.id for m in ready(rounds) if m.tower is None][:1]}

    def step(self) -> None:
        """Take finished games as results, then propose ready matches to free tables."""
        with self._lock:
            tournament = self.current()
            if tournament is None:
                return
            before = json.dumps(tournament.to_json(), sort_keys=True)
            games = self.store.games()
            for match in ready(bracket(tournament)):
                self._follow(tournament, match, games)
            busy = {p["tower"] for mid, p in tournament.proposals.items()
                    if mid not in tournament.results}
            free = [t["tower"] for t in self.store.tables()
                    if t["status"] in FREE_STATUSES and t["tower"] not in busy]
            for match in ready(bracket(tournament)):
                if match.id not in tournament.proposals and free:
                    tower = free.pop(0)
                    tournament.proposals[match.id] = {"tower": tower, "at": time.time()}
                    self._propose(tower, {"match": match.id, "preset": tournament.preset,
                                          "players": match.players})
            if json.dumps(tournament.to_json(), sort_keys=True) != before:
                self.store.set_setting(SETTING, tournament.to_json())

    def _follow(self, tournament: Tournament, match: Match, games: list[dict[str, Any]]
                ) -> None:
        proposal = tournament.proposals.get(match.id)
        if proposal is None:
            return
        wanted = sorted(player_key(p or "") for p in match.players)
        link = tournament.links.get(match.id)
        if link is None:
            for game in games:
                if (game["tower"] == proposal["tower"] and (game["started"] or 0)
                        >= proposal["at"] - 5 and game["preset"] == tournament.preset
                        and sorted(player_key(p) for p in game["players"]) == wanted):
                    link = tournament.links[match.id] = [game["tower"], game["start"]]
                    self._propose(game["tower"], None)  # taken: the offer goes
                    break
        if link is None:
            return
        game = next((g for g in games if [g["tower"], g["start"]] == link), None)
        if game is None:
            return
        if game["state"] == "over" and game["loser"] is not None:
            loser = player_key(game["players"][game["loser"]])
            tournament.results[match.id] = next(
                p for p in match.players if p is not None and player_key(p) != loser)
        elif game["state"] == "ended":
            del tournament.links[match.id]
            del tournament.proposals[match.id]  # stopped early: proposed again

    def _propose(self, tower: str, offer: dict[str, Any] | None) -> None:
        payload = b"" if offer is None else json.dumps({"v": 1, **offer}).encode()
        self._client.publish(proposal_topic(self.prefix, tower), payload, qos=1, retain=True)

    def _run(self) -> None:
        version = -1
        while not self._stop.is_set():
            try:
                self.step()
                changed = self.store.wait_for_change(version, timeout=1.0)
            except StreamsEnded:
                return
            except Exception:  # a bad state must not stop the night's other tables
                self._stop.wait(1.0)
                continue
            version = changed if changed is not None else version
