"""A tower's retained status over a real Mosquitto, as the league board shows it: online when
it connects, playing, idle between games, camera fault, and offline by its last will."""

from __future__ import annotations

from pathlib import Path

from firmware_host.league.board import create_app
from firmware_host.league.ingest import LeagueListener
from firmware_host.league.simtower import SimTower
from firmware_host.league.store import LeagueStore
from firmware_host.league.texts import labels
from tests.league_support import (
    FAST,
    Link,
    broker,  # noqa: F401 - the fixture
    wait_until,
)


def test_the_board_shows_every_status_a_tower_publishes(tmp_path: Path, broker) -> None:  # noqa: F811
    link = Link(broker.address)
    tower = SimTower("bar-1", tmp_path, link.address, seed=4, reconnect=FAST)
    tower.start()
    assert wait_until(lambda: tower.publisher.connected)
    # The league starts after the tower: what it learns first is the retained status.
    store = LeagueStore(tmp_path / "league.sqlite3")
    listener = LeagueListener(store, broker.address, reconnect=FAST)
    listener.start()
    client = create_app(store, {"LEAGUE_PIN": "1234"}).test_client()

    def shown() -> str | None:
        tables = client.get("/api/board").get_json()["tables"]
        return tables[0]["status"] if tables else None

    seen = []

    def reaches(status: str) -> bool:
        if wait_until(lambda: shown() == status):
            seen.append(status)
            return True
        return False

    assert reaches("online")  # up, no game yet: free for a match
    tower.new_game(["Ana", "Ben"])
    assert reaches("playing")
    while tower.playing:
        tower.step()
    assert reaches("idle")
    tower.hub.set_tower({"status": "error"})  # the camera stopped answering
    assert reaches("camera_fault")
    tower.hub.set_tower({"status": "ready"})
    assert reaches("idle")
    link.cut()  # the Wi-Fi drops: the broker says the tower's last will
    assert reaches("offline")
    link.restore()  # back: the tower says its status again as it connects
    assert reaches("idle")
    # Each of them in the board's words, in both languages.
    for language in ("fr", "en"):
        words = labels(language)
        assert all(words.get(f"status_{status}") for status in seen)
        page = client.get(f"/?lang={language}").get_data(as_text=True)
        assert words["status_idle"] in page and '"status":"idle"' in page
    tower.close()
    link.close()
    listener.close()
    store.close()
