"""The league board: its pages in both languages, a player's record, picking a name, the
game master's merge behind the PIN, and the live stream moving with the league."""

from __future__ import annotations

import json
import re
import urllib.request

import pytest

from firmware_host.league.board import create_app
from firmware_host.league.server import BoardServer
from firmware_host.league.store import LeagueStore
from firmware_host.league.texts import LABELS
from tests.test_league_store import _feed, _game_actions


@pytest.fixture
def store(tmp_path):
    league = LeagueStore(tmp_path / "league.sqlite3")
    _feed(league, "bar-1", _game_actions(1, ["Ana", "Ben", "Cleo"]))
    _feed(league, "bar-2", _game_actions(2, ["ana", "Dan"])[:15])
    yield league
    league.close()


def _csrf(page: bytes) -> str:
    found = re.search(rb'name="csrf" value="([0-9a-f]+)"', page)
    assert found is not None
    return found[1].decode()


def test_both_languages_say_everything() -> None:
    assert len(LABELS) > 50 and LABELS.problems() == []
    assert LABELS.say("joined", {"name": "Ana"}, "fr").startswith("C'est noté : Ana")


def test_pages_show_the_tables_and_standings(store) -> None:
    client = create_app(store, {"LEAGUE_PIN": "1234"}).test_client()
    french, english = client.get("/?lang=fr"), client.get("/?lang=en")
    assert french.status_code == english.status_code == 200
    assert b"Classement" in french.data and b"Standings" in english.data
    initial = re.search(rb'<script type="application/json" id="initial">(.*?)</script>',
                        english.data, re.S)
    board = json.loads(initial[1])
    assert [t["tower"] for t in board["tables"]] == ["bar-1", "bar-2"]
    assert board["tables"][1]["game"]["players"][0]["name"] == "ana"
    assert {r["name"] for r in board["standings"]} == {"Ana", "Ben", "Cleo"}
    ana = client.get("/player/ANA?lang=en")
    assert ana.status_code == 200 and b"bar-2" in ana.data and b"bar-1" in ana.data
    assert client.get("/player/nobody").status_code == 404


def test_a_name_cannot_break_out_of_the_page(tmp_path) -> None:
    league = LeagueStore(tmp_path / "league.sqlite3")
    _feed(league, "t1", _game_actions(5, ["</script><script>alert(1)</script>", "Ben"]))
    page = create_app(league).test_client().get("/").data
    assert b"</script><script>alert" not in page
    league.close()


def test_join_and_merge_behind_the_pin(store) -> None:
    client = create_app(store, {"LEAGUE_PIN": "1234"}).test_client()
    page = client.get("/join").data
    assert b'<svg' in page and b'class="qr"' in page  # the QR code to print for the tables
    token = _csrf(page)
    client.post("/join", data={"csrf": token, "name": "  Benoît "})
    assert store.player("benoit")["name"] == "Benoît"
    assert client.post("/admin/merge", data={"csrf": token, "source": "Ben",
                                             "target": "Benoît"}).status_code == 403
    assert b"Code erron" in client.post("/admin", data={"csrf": token, "pin": "0000"}).data
    client.post("/admin", data={"csrf": token, "pin": "1234"})
    assert client.post("/admin/merge", data={"csrf": "wrong", "source": "Ben",
                                             "target": "Benoît"}).status_code == 400
    client.post("/admin/merge", data={"csrf": token, "source": "Ben", "target": "Benoît"})
    assert "Benoît" in {r["name"] for r in store.standings()}
    assert "Ben" not in {r["name"] for r in store.standings()}


def test_the_live_stream_follows_the_league(store) -> None:
    app = create_app(store)
    with BoardServer(app) as server:
        stream = urllib.request.urlopen(server.url + "events", timeout=10)
        events = []
        for line in stream:
            if line.startswith(b"data:"):
                events.append(json.loads(line[5:]))
                if len(events) == 1:
                    _feed(store, "bar-2", _game_actions(2, ["ana", "Dan"])[15:16])
                else:
                    break
        stream.close()
    assert [e["tables"][1]["last"] for e in events] == [15, 16]
