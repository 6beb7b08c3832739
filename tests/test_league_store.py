"""The league's storage without a broker: checked messages, each action taken once, late
ones replayed in order, a reopened file rebuilt, merged names and the scoring."""

from __future__ import annotations

import random

import pytest

from firmware_host.hub import GameHub
from firmware_host.league.broker import BrokerAddress
from firmware_host.league.messages import (
    MessageError,
    action_payload,
    parse,
    status_payload,
)
from firmware_host.league.standings import Scoring, outcome, player_key
from firmware_host.league.store import LeagueStore
from firmware_host.rules import new_game
from firmware_host.rules.simulation import policy_421

TOPIC = "dicetower/towers/{}/actions"


def _game_actions(seed: int, players: list[str]) -> list[tuple[int, dict]]:
    """A whole journaled game (as a tower's hub writes it), numbered from 1."""
    hub, mirror, rng = GameHub(), new_game("tim-11", players), random.Random(seed)
    actions: list[dict] = []
    hub.subscribe(lambda action, result: actions.append(action))
    hub.start_game("tim-11", players)
    while not mirror.is_over:
        event = policy_421(mirror, rng)
        hub.apply(event)
        mirror.apply(event)
    return list(enumerate(actions, start=1))


def _feed(store: LeagueStore, tower: str, actions: list[tuple[int, dict]]) -> list[str]:
    outcomes = []
    for action_id, action in actions:
        kind, message = parse("dicetower", TOPIC.format(tower),
                              action_payload(tower, action_id, action_id - 1, action))
        outcomes.append(store.take(kind, message))
    return outcomes


def test_each_action_once_and_late_ones_in_order(tmp_path) -> None:
    actions = _game_actions(3, ["Ana", "Ben", "Cleo"])
    in_order = LeagueStore(tmp_path / "a.sqlite3")
    _feed(in_order, "t1", actions)
    shuffled = LeagueStore(tmp_path / "b.sqlite3")
    swapped = [*actions[:5], actions[6], actions[5], *actions[7:]]
    outcomes = _feed(shuffled, "t1", swapped + actions[:10])
    assert outcomes.count("late") == 1 and outcomes.count("duplicate") == 10
    assert shuffled.standings() == in_order.standings()
    assert shuffled.tables()[0]["game"] == in_order.tables()[0]["game"]
    assert sum(r["lost"] for r in in_order.standings()) == 1
    assert [r["played"] for r in in_order.standings()] == [1, 1, 1]


def test_a_reopened_league_rebuilds_every_table(tmp_path) -> None:
    store = LeagueStore(tmp_path / "league.sqlite3")
    _feed(store, "t1", _game_actions(1, ["Ana", "Ben"]))
    _feed(store, "t2", _game_actions(2, ["ana ", "Dan", "Eva"])[:20])
    before, tables = store.standings(), store.tables()
    store.close()
    again = LeagueStore(tmp_path / "league.sqlite3")
    assert again.standings() == before and again.tables() == tables
    assert [g["state"] for g in again.games()] == ["over", "playing"]


def test_names_fold_and_merge(tmp_path) -> None:
    store = LeagueStore(tmp_path / "league.sqlite3", Scoring(win=2, place=1, loss=-1))
    _feed(store, "t1", _game_actions(1, ["Ana", "Ben"]))
    _feed(store, "t2", _game_actions(2, ["ANA", "Benoit"]))
    assert player_key(" Léa  M ") == player_key("lea m")
    assert store.player("ana")["record"]["played"] == 2
    store.register("Benoît")
    store.merge("Ben", "Benoît")
    names = {r["name"]: r for r in store.standings()}
    assert "Ben" not in names and names["Benoît"]["played"] == 2
    assert store.player("Ben")["merged"] == ["ben"]
    with pytest.raises(ValueError):
        store.merge("Benoit", "Ben")  # Ben is Benoit now: no loop
    points = {r["name"]: r["points"] for r in store.standings()}
    assert sum(points.values()) == 2 * (2 - 1)  # two games: one winner, one loser each


def test_outcomes_and_scoring() -> None:
    assert [outcome(s, None, 1) for s in range(3)] == ["won", "lost", "won"]
    assert [outcome(s, 0, 1) for s in range(3)] == ["won", "lost", "placed"]
    assert Scoring().points(2, 0, 1) == 1 and Scoring().points(1, 0, 1) == 0


@pytest.mark.parametrize("topic, payload, reason", [
    ("dicetower/towers/t1/actions", b"nope", "not JSON"),
    ("dicetower/towers/t1/actions", action_payload("t2", 1, 0, {"action": "end"}),
     "claims tower 't2'"),
    ("dicetower/towers/t 1/actions", b"{}", "not a tower name"),
    ("other/towers/t1/actions", b"{}", "not a tower's topic"),
    ("dicetower/towers/t1/status", status_payload("t1", "idle", 0)[:-1], "not JSON"),
    ("dicetower/towers/t1/actions", action_payload("t1", 0, 0, {"action": "end"}), "id"),
])
def test_refused_messages(topic, payload, reason) -> None:
    with pytest.raises(MessageError, match=reason):
        parse("dicetower", topic, payload)


def test_broker_addresses() -> None:
    plain = BrokerAddress.parse("mqtt://bar.local")
    assert (plain.host, plain.port, plain.tls) == ("bar.local", 1883, False)
    secure = BrokerAddress.parse("mqtts://tower1:s%40cret@league.example:9000")
    assert (secure.port, secure.username, secure.password, secure.tls) == (
        9000, "tower1", "s@cret", True)
    assert "s@cret" not in secure.url()
    for wrong in ("http://x", "mqtt://:1883", "mqtt://x:99999"):
        with pytest.raises(ValueError):
            BrokerAddress.parse(wrong)


def test_a_hole_is_held_shown_and_filled(tmp_path) -> None:
    actions = _game_actions(6, ["Ana", "Ben"])
    whole = LeagueStore(tmp_path / "whole.sqlite3")
    _feed(whole, "t1", actions)
    store = LeagueStore(tmp_path / "holed.sqlite3")
    outcomes = _feed(store, "t1", actions[:10] + actions[15:])
    assert outcomes[10:] == ["held"] * (len(actions) - 15)
    assert store.missing_from("t1") == 11 and store.tables()[0]["gaps"] == 1
    assert store.standings() == []  # nothing counted from a game with a hole
    assert _feed(store, "t1", actions[10:15])[-1] == "late"
    assert store.missing_from("t1") is None and store.tables()[0]["gaps"] == 0
    assert store.standings() == whole.standings() != []
    assert store.tables()[0]["game"] == whole.tables()[0]["game"]
