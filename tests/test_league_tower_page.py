"""The league's offer of a tournament match on the tower's game master page: shown behind
the PIN, started with one tap, and recognised by the league as the match it offered."""

from __future__ import annotations

from pathlib import Path

from firmware_host.hub import GameHub
from firmware_host.league.publisher import TowerPublisher
from firmware_host.league.runner import LeagueOptions, LeagueRunner
from firmware_host.league.simtower import SimTower
from firmware_host.scoreboard.app import create_app
from tests.helpers import logged_in
from tests.league_support import FAST, broker, wait_until  # noqa: F401 - the fixture

PIN = "2468"


class Seat:
    """A tower's seat in a league, as `TowerPublisher` is one."""

    def __init__(self, hub: GameHub, offer: dict | None) -> None:
        self.hub, self.proposal = hub, offer

    def start_proposal(self) -> dict:
        if self.proposal is None:
            raise LookupError("no offer")
        return self.hub.start_game(self.proposal["preset"], self.proposal["players"])


def test_the_offer_behind_the_pin_and_one_tap() -> None:
    hub = GameHub()
    seat = Seat(hub, {"match": "r1-0", "preset": "tim-11", "players": ["Ana", "Ben"]})
    client = create_app({"SCOREBOARD_PIN": PIN}, hub, league=seat).test_client()
    assert client.get("/api/admin/league").status_code == 401
    master = logged_in(client, PIN)
    assert client.get("/api/admin/league").get_json() == {"league": True,
                                                          "offer": seat.proposal}
    assert b'id="league-offer"' in client.get("/admin?lang=en").data
    started = master.post("league/start")
    assert started.status_code == 200
    assert [p["name"] for p in started.get_json()["game"]["players"]] == ["Ana", "Ben"]
    seat.proposal = None
    refused = master.post("league/start")
    assert refused.status_code == 409 and "no match" in refused.get_json()["error"]


def test_a_tower_in_no_league() -> None:
    client = create_app({"SCOREBOARD_PIN": PIN}, GameHub()).test_client()
    master = logged_in(client, PIN)
    assert client.get("/api/admin/league").get_json() == {"league": False, "offer": None}
    assert master.post("league/start").status_code == 409


def test_the_tap_starts_the_match_the_league_offered(tmp_path: Path, broker) -> None:  # noqa: F811
    runner = LeagueRunner(LeagueOptions(broker=broker.address, file=tmp_path / "l.sqlite3",
                                        reconnect=FAST))
    runner.start(serve=False)
    tower = SimTower("t0", tmp_path, broker.address, seed=3, reconnect=FAST)
    tower.start()
    publisher: TowerPublisher = tower.publisher
    client = create_app({"SCOREBOARD_PIN": PIN}, tower.hub, league=publisher).test_client()
    master = logged_in(client, PIN)
    assert wait_until(lambda: [t["status"] for t in runner.store.tables()] == ["online"])
    runner.desk.create(["Ana", "Ben"])
    assert wait_until(lambda: publisher.proposal is not None)
    assert master.post("league/start").status_code == 200
    assert wait_until(lambda: "r1-0" in runner.desk.current().links)
    tower.close()
    runner.close()


def test_the_towers_page_carries_the_leagues_qr_code() -> None:
    app = create_app({"SCOREBOARD_PIN": PIN,
                      "SCOREBOARD_LEAGUE_URL": "http://league.local:8100/"}, GameHub())
    page = app.test_client().get("/?lang=fr").data.decode()
    assert 'id="league-card"' in page and "http://league.local:8100/join" in page
    assert page.count("<svg") == 2  # the tower's own QR code and the league's
    alone = create_app({"SCOREBOARD_PIN": PIN}, GameHub()).test_client().get("/").data
    assert b'id="league-card"' not in alone
