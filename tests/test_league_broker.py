"""The league over a real Mosquitto: the standings are exactly those of the games played,
whatever the broker and the links do, and no tower's game ever waits on them."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from firmware_host.league.broker import LocalBroker, find_mosquitto
from firmware_host.league.ingest import LeagueListener
from firmware_host.league.messages import action_payload, actions_topic, status_topic
from firmware_host.league.publisher import TowerPublisher, cursor_beside
from firmware_host.league.simtower import SimTower
from firmware_host.league.store import LeagueStore
from tests.league_support import (
    FAST,
    Link,
    broker,  # noqa: F401 - the fixture
    expected_standings,
    journal_counts,
    wait_until,
)


@pytest.fixture
def league(tmp_path: Path, broker):  # noqa: F811
    store = LeagueStore(tmp_path / "league.sqlite3")
    listener = LeagueListener(store, broker.address, reconnect=FAST)
    listener.start()
    assert listener.wait_connected(10)
    yield store, listener
    listener.close()
    store.close()


def _towers(tmp_path: Path, address, count: int, **extra) -> list[SimTower]:
    towers = [SimTower(f"table-{i}", tmp_path, address, seed=100 + i, reconnect=FAST, **extra)
              for i in range(count)]
    for tower in towers:
        tower.start()
    return towers


def _steps(towers: list[SimTower], count: int) -> None:
    """Every tower plays ``count`` inputs; fails if any of them waits on the league (the
    bound is generous: a tower that waited on a stopped broker would never finish)."""
    done = threading.Event()

    def play() -> None:
        for _ in range(count):
            for tower in towers:
                tower.step()
        done.set()

    threading.Thread(target=play, daemon=True).start()
    assert done.wait(30), "a tower's game waited on the broker"
    assert not any(tower.hub.state().paused for tower in towers)


def _caught_up(store: LeagueStore, towers: list[SimTower]) -> bool:
    return store.counts() == journal_counts(towers)


def test_broker_restarted_mid_game_loses_and_doubles_nothing(tmp_path, broker, league):  # noqa: F811
    store, _ = league
    towers = _towers(tmp_path, broker.address, 3)
    _steps(towers, 40)
    broker.stop()
    _steps(towers, 60)  # the towers play on while the broker is down
    assert all(tower.publisher.pending() > 0 for tower in towers)
    broker.start()
    for tower in towers:
        while tower.playing:
            tower.step()
    assert wait_until(lambda: _caught_up(store, towers))
    assert store.counts() == journal_counts(towers)
    assert store.standings() == expected_standings(towers)
    assert sum(len(tower.games_over) for tower in towers) >= 3
    assert all(table["gaps"] == 0 for table in store.tables())
    for tower in towers:
        tower.close()


def test_a_tower_offline_for_a_while_comes_back_with_everything(tmp_path, broker, league):  # noqa: F811
    store, _ = league
    link = Link(broker.address)
    towers = _towers(tmp_path, link.address, 2)
    _steps(towers, 20)
    assert wait_until(lambda: _caught_up(store, towers))
    link.cut()
    # Its last will says so at the league while it is away ...
    assert wait_until(lambda: {t["status"] for t in store.tables()} == {"offline"})
    _steps(towers, 80)  # ... and its game goes on ("a minute" of play)
    assert store.counts() != journal_counts(towers)
    link.restore()
    for tower in towers:
        while tower.playing:
            tower.step()
    assert wait_until(lambda: _caught_up(store, towers))
    assert store.standings() == expected_standings(towers)
    assert wait_until(lambda: {t["status"] for t in store.tables()} == {"idle"})
    for tower in towers:
        tower.close()
    link.close()


def test_every_published_input_names_who_made_it(tmp_path, broker, league):  # noqa: F811
    store, listener = league
    tower = _towers(tmp_path, broker.address, 1)[0]
    tower.play_game(["Ana", "Ben", "Cleo"])
    assert wait_until(lambda: _caught_up(store, [tower]))
    with sqlite3.connect(store.path) as db:
        bodies = [json.loads(body) for (body,) in db.execute(
            "SELECT body FROM actions WHERE tower = ? ORDER BY id", (tower.name,))]
    inputs = [body for body in bodies if body["action"] == "event"]
    assert inputs and all(body["who"]["name"] in ("Ana", "Ben", "Cleo") for body in inputs)
    assert inputs[0]["who"] == {"player": 0, "name": "Ana"}
    # The tower's own notes of who threw, input by input: the same players.
    seats = [entry["player"] for entry in tower.hub.history()["entries"]]
    assert [body["who"]["player"] for body in inputs] == seats
    assert "who" not in bodies[0]  # the new game: no one's input
    assert listener.taken["refused"] == 0 and store.refused == []
    tower.close()


def test_a_tower_restarted_publishes_only_what_is_left(tmp_path, broker, league):  # noqa: F811
    store, listener = league
    tower = _towers(tmp_path, broker.address, 1)[0]
    tower.play_game()
    assert wait_until(lambda: _caught_up(store, [tower]))
    tower.publisher.close(goodbye=True)
    assert wait_until(lambda: store.tables()[0]["status"] == "offline")
    first = tower.publisher.published
    # The same journal and cursor, a new publisher: as a tower switched off and on again.
    again = TowerPublisher(tower.hub, tower.journal, broker.address, tower.name,
                           cursor=cursor_beside(tower.journal.path), reconnect=FAST)
    again.start()
    tower.play_game()
    assert wait_until(lambda: _caught_up(store, [tower]))
    assert again.published == tower.journal.last_action_id() - first
    assert listener.taken["duplicate"] == 0
    assert store.standings() == expected_standings([tower])
    again.close()
    tower.journal.close()


def _raw_client(broker, name: str) -> mqtt.Client:  # noqa: F811
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=name)
    client.connect(broker.address.host, broker.address.port)
    client.loop_start()
    return client


def test_the_same_message_twice_counts_once(tmp_path, broker, league):  # noqa: F811
    store, listener = league
    tower = _towers(tmp_path, broker.address, 1)[0]
    tower.play_game()
    assert wait_until(lambda: _caught_up(store, [tower]))
    before = store.standings()
    client = _raw_client(broker, "replayer")
    for action_id, action in tower.journal.actions_after(0, 10_000):
        client.publish(actions_topic("dicetower", tower.name),
                       action_payload(tower.name, action_id, action_id - 1, action),
                       qos=1).wait_for_publish(5)
    total = tower.journal.last_action_id()
    assert wait_until(lambda: listener.taken["duplicate"] == total)
    assert store.standings() == before == expected_standings([tower])
    assert store.counts() == journal_counts([tower])
    client.loop_stop()
    tower.close()


def test_a_tower_speaking_for_another_and_garbage_are_refused(tmp_path, broker, league):  # noqa: F811
    store, listener = league
    tower = _towers(tmp_path, broker.address, 1)[0]
    tower.play_game()
    assert wait_until(lambda: _caught_up(store, [tower]))
    before = store.standings()
    client = _raw_client(broker, "intruder")
    topic = actions_topic("dicetower", "intruder")
    game = {"action": "new_game", "preset": "tim-11", "players": ["X", "Y"], "knobs": {}}
    bad = [
        # Under its own topic, the payload of another tower: refused by the league.
        (topic, action_payload(tower.name, 10_000, 0, game)),
        (actions_topic("dicetower", tower.name).replace(tower.name, "intruder"),
         action_payload(tower.name, 10_001, 0, game)),
        (topic, b"\xff\xfe not json"),
        (topic, b"[1, 2, 3]"),
        (topic, json.dumps({"v": 1, "tower": "intruder", "id": -4, "prev": 0,
                            "action": game}).encode()),
        (topic, json.dumps({"v": 1, "tower": "intruder", "id": 5, "prev": 0,
                            "action": {"action": "format_disk"}}).encode()),
        (topic, json.dumps({"v": 2, "tower": "intruder", "id": 5, "prev": 0,
                            "action": game}).encode()),
        (topic, b"{" * 70_000),
        (status_topic("dicetower", "intruder"), b'{"v": 1, "tower": "intruder"}'),
        (status_topic("dicetower", "intruder"), json.dumps(
            {"v": 1, "tower": tower.name, "status": "offline", "at": 0}).encode()),
    ]
    for where, payload in bad:
        client.publish(where, payload, qos=1).wait_for_publish(5)
    assert wait_until(lambda: listener.taken["refused"] == len(bad))
    assert listener.taken["refused"] == len(bad)
    assert store.standings() == before == expected_standings([tower])
    assert [t["tower"] for t in store.tables()] == [tower.name]
    assert store.tables()[0]["status"] != "offline"
    assert any("claims tower" in reason for reason in store.refused)
    client.loop_stop()
    tower.close()


def test_a_broker_that_forgot_everything_loses_nothing(tmp_path) -> None:
    """Without persistence a restarted broker forgets the league's session: what the towers
    publish before the league is back is lost for it. The league sees the hole (an action
    whose predecessor it lacks) and asks the tower for its journal again."""
    if find_mosquitto() is None:
        pytest.skip("mosquitto is not installed: `make broker`")
    forgetful = LocalBroker(tmp_path / "forgetful", persistence=False)
    forgetful.start()
    store = LeagueStore(tmp_path / "league.sqlite3")
    listener = LeagueListener(store, forgetful.address, reconnect=FAST)
    listener.start()
    assert listener.wait_connected(10)
    towers = _towers(tmp_path, forgetful.address, 2)
    _steps(towers, 20)
    assert wait_until(lambda: _caught_up(store, towers))
    listener.close()
    forgetful.stop()
    _steps(towers, 30)
    forgetful.start()
    # The towers hand everything to the new broker while no league listens: gone.
    assert wait_until(lambda: all(t.publisher.pending() == 0 for t in towers))
    assert store.counts() != journal_counts(towers)
    listener = LeagueListener(store, forgetful.address, reconnect=FAST)
    listener.start()
    assert listener.wait_connected(10)
    for tower in towers:
        while tower.playing:
            tower.step()
    assert wait_until(lambda: _caught_up(store, towers))
    assert listener.taken["held"] > 0
    assert store.standings() == expected_standings(towers)
    assert all(table["gaps"] == 0 for table in store.tables())
    for tower in towers:
        tower.close()
    listener.close()
    store.close()
    forgetful.stop()


def test_a_new_league_file_is_filled_from_the_towers_journals(tmp_path, broker) -> None:  # noqa: F811
    towers = _towers(tmp_path, broker.address, 2)
    for tower in towers:
        tower.play_game()
    assert wait_until(lambda: all(t.publisher.pending() == 0 for t in towers))
    store = LeagueStore(tmp_path / "new-league.sqlite3")  # no league listened until now
    listener = LeagueListener(store, broker.address, reconnect=FAST)
    listener.start()
    assert listener.wait_connected(10)
    for tower in towers:
        tower.play_game()
    assert wait_until(lambda: _caught_up(store, towers))
    assert store.standings() == expected_standings(towers)
    assert sum(g["state"] == "over" for g in store.games()) == 4
    for tower in towers:
        tower.close()
    listener.close()
    store.close()
