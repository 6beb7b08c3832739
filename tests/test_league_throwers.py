"""Who threw: the tower names the player of every input it publishes, the league checks it
against its own replay and refuses a message that names someone else."""

from __future__ import annotations

import random

from firmware_host.hub import GameHub, Journal
from firmware_host.league.messages import action_payload, parse
from firmware_host.league.store import LeagueStore
from firmware_host.league.throwers import GameFollower
from firmware_host.rules.simulation import play

TOPIC = "dicetower/towers/t1/actions"


def _journaled_games(tmp_path, games: int = 2, seed: int = 5) -> tuple[GameHub, Journal]:
    """A tower's hub and journal after ``games`` whole games and a corrected throw."""
    journal = Journal(tmp_path / "tower.sqlite3", exclusive=True)
    hub = GameHub()
    hub.open_journal(journal, replay=False, tokens=False)
    rng = random.Random(seed)
    for number in range(games):
        players = ["Ana", "Ben", "Cleo"] if number % 2 == 0 else ["Dan", "Eva"]
        hub.start_game("tim-11", players)
        play("tim-11", players, rng, observer=lambda game, event, effects: hub.apply(event))
    hub.start_game("tim-11", ["Ana", "Ben"])
    hub.apply({"type": "throw", "faces": [5]})  # the opening: one die each
    hub.apply({"type": "throw", "faces": [3]})
    hub.correct_last([2])  # Ben's throw, corrected
    return hub, journal


def _named(journal: Journal, start: int = 0) -> dict[int, dict | None]:
    follower = GameFollower(journal)
    names, prev = {}, start
    for action_id, action in journal.actions_after(start, 100_000):
        names[action_id] = follower.name(action_id, prev, action)
        prev = action_id
    return names


def test_every_input_names_the_player_the_tower_saw(tmp_path) -> None:
    hub, journal = _journaled_games(tmp_path)
    names = _named(journal)
    actions = dict(journal.actions_after(0, 100_000))
    inputs = [i for i, a in actions.items() if a["action"] in ("event", "correct")]
    assert inputs and all(names[i] is not None for i in inputs)
    assert all(names[i] is None for i, a in actions.items() if a["action"] == "new_game")
    # The last game, as the tower's own hub noted who made each of its inputs.
    history = hub.history()
    last_game = [i for i in inputs if i > max(i for i, a in actions.items()
                                              if a["action"] == "new_game")]
    assert [names[i]["name"] for i in last_game] == ["Ana", "Ben", "Ben"]
    assert [history["players"][e["player"]] for e in history["entries"]] == ["Ana", "Ben"]
    journal.close()


def test_a_follower_started_midway_names_the_same_players(tmp_path) -> None:
    _, journal = _journaled_games(tmp_path)
    whole = _named(journal)
    # As a tower restarted with its cursor in the middle of a game, or asked to resend.
    for start in (7, 23, len(whole) - 2):
        assert _named(journal, start) == {i: n for i, n in whole.items() if i > start}
    journal.close()


def _messages(journal: Journal) -> list[tuple[int, dict]]:
    """The actions as the publisher sends them: with who made each input."""
    follower, prev, sent = GameFollower(journal), 0, []
    for action_id, action in journal.actions_after(0, 100_000):
        who = follower.name(action_id, prev, action)
        sent.append((action_id, action if who is None else {**action, "who": who}))
        prev = action_id
    return sent


def _take(store: LeagueStore, action_id: int, action: dict) -> str:
    kind, message = parse("dicetower", TOPIC, action_payload("t1", action_id, action_id - 1,
                                                               action))
    return store.take(kind, message)


def test_the_league_takes_inputs_that_name_the_right_player(tmp_path) -> None:
    _, journal = _journaled_games(tmp_path, games=1)
    messages = _messages(journal)
    store = LeagueStore(tmp_path / "league.sqlite3")
    assert {_take(store, i, a) for i, a in messages} == {"new"}
    assert store.refused == []
    assert sum(g["state"] == "over" for g in store.games()) == 1
    # Without the names (a tower of an earlier version): the same league.
    bare = LeagueStore(tmp_path / "bare.sqlite3")
    for action_id, action in journal.actions_after(0, 100_000):
        _take(bare, action_id, action)
    assert bare.standings() == store.standings()
    assert bare.tables()[0]["game"] == store.tables()[0]["game"]
    journal.close()


def test_an_input_naming_another_player_is_refused_and_listed(tmp_path) -> None:
    _, journal = _journaled_games(tmp_path, games=1)
    messages = _messages(journal)
    # Ben's first throw claimed by Cleo.
    target = next(i for i, (_, a) in enumerate(messages)
                  if a.get("who") and a["who"]["name"] == "Ben")
    action_id, action = messages[target]
    lie = {**action, "who": {"player": 2, "name": "Cleo"}}
    store = LeagueStore(tmp_path / "league.sqlite3")
    honest = LeagueStore(tmp_path / "honest.sqlite3")
    for i, a in messages[:target]:
        _take(store, i, a)
        _take(honest, i, a)
    before = store.tables()[0]["game"]
    assert _take(store, action_id, lie) == "refused"
    assert store.tables()[0]["game"] == before  # not applied
    assert any(f"action {action_id} refused" in reason and "'Cleo'" in reason
               and "'Ben'" in reason for reason in store.refused)
    assert _take(store, action_id, lie) == "duplicate"  # delivered again: changes nothing
    assert _take(honest, action_id, action) == "new"
    assert honest.tables()[0]["game"] != before
    # A name that is right but a seat that is not is refused as well.
    seat_lie = {**action, "who": {"player": 0, "name": "Ben"}}
    other = LeagueStore(tmp_path / "other.sqlite3")
    for i, a in messages[:target]:
        _take(other, i, a)
    assert _take(other, action_id, seat_lie) == "refused"
    journal.close()


def test_the_check_holds_when_the_file_is_opened_again(tmp_path) -> None:
    _, journal = _journaled_games(tmp_path, games=1)
    messages = _messages(journal)
    target = next(i for i, (_, a) in enumerate(messages) if a.get("who"))
    action_id, action = messages[target]
    store = LeagueStore(tmp_path / "league.sqlite3")
    for i, a in messages[:target]:
        _take(store, i, a)
    wrong = (action["who"]["player"] + 1) % 3
    _take(store, action_id, {**action, "who": {"player": wrong, "name": ["Ana", "Ben",
                                                                           "Cleo"][wrong]}})
    game = store.tables()[0]["game"]
    store.close()
    again = LeagueStore(tmp_path / "league.sqlite3")
    assert again.tables()[0]["game"] == game
    assert any(f"action {action_id} refused" in reason for reason in again.refused)
    again.close()
    journal.close()
