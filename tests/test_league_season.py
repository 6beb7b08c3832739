"""A new season: a new league file from the last one, which is kept as it was; the tables,
players and the game under way go on, the standings start again, and the towers are not asked
for their journals from the start."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from firmware_host.cli import main
from firmware_host.hub import GameHub
from firmware_host.league.ingest import LeagueListener
from firmware_host.league.messages import action_payload, parse
from firmware_host.league.season import new_season
from firmware_host.league.simtower import SimTower
from firmware_host.league.store import LeagueError, LeagueStore
from firmware_host.rules.simulation import play
from tests.league_support import (
    FAST,
    broker,  # noqa: F401 - the fixture
    expected_standings,
    journal_counts,
    wait_until,
)

TOPIC = "dicetower/towers/t1/actions"


def _games(seed: int, rosters: list[list[str]]) -> list[tuple[int, dict]]:
    """Whole journaled games one after the other (as a tower's hub writes them), from id 1."""
    hub, rng, actions = GameHub(), random.Random(seed), []
    hub.subscribe(lambda action, result: actions.append(action))
    for players in rosters:
        hub.start_game("tim-11", players)
        play("tim-11", players, rng, observer=lambda game, event, effects: hub.apply(event))
    return list(enumerate(actions, start=1))


def _feed(store: LeagueStore, actions: list[tuple[int, dict]]) -> list[str]:
    outcomes = []
    for action_id, action in actions:
        kind, message = parse("dicetower", TOPIC,
                              action_payload("t1", action_id, action_id - 1, action))
        outcomes.append(store.take(kind, message))
    return outcomes


def test_a_new_season_goes_on_from_the_last_and_keeps_it(tmp_path: Path) -> None:
    actions = _games(8, [["Ana", "Ben"], ["Cleo", "Dan", "Léa"]])
    second = next(i for i, (_, a) in enumerate(actions) if i and a["action"] == "new_game")
    midway = second + 6  # the second game is under way at the switch
    old = LeagueStore(tmp_path / "league.sqlite3")
    _feed(old, actions[:midway])
    old.register("Léa")
    old.merge("Benoit", "Ben")
    before = old.standings()
    assert sum(r["played"] for r in before) == 2  # the first game, counted
    under_way = old.tables()[0]["game"]
    old.close()

    carried = new_season(tmp_path / "league.sqlite3", tmp_path / "autumn.sqlite3", "autumn")
    assert carried == {"tables": 1, "games_under_way": 1, "players": 1, "merged": 1}
    season = LeagueStore(tmp_path / "autumn.sqlite3")
    assert season.setting("season")["name"] == "autumn"
    assert season.standings() == []  # the standings start again
    assert season.tables()[0]["game"] == under_way  # the game under way goes on
    assert season.missing_from("t1") is None  # nothing to ask the tower for
    # What the tower sends again from before the season changes nothing; the rest counts.
    assert set(_feed(season, actions[:midway])) == {"duplicate"}
    assert set(_feed(season, actions[midway:])) == {"new"}
    assert sorted(r["name"] for r in season.standings()) == ["Cleo", "Dan", "Léa"]
    assert season.player("Benoit")["key"] == "ben"  # the merge carried over
    season.close()
    kept = LeagueStore(tmp_path / "league.sqlite3")
    assert kept.standings() == before  # the last season, as it was
    kept.close()


def test_a_season_without_a_game_under_way(tmp_path: Path) -> None:
    actions = _games(9, [["Ana", "Ben"], ["Ana", "Ben"]])
    second = next(i for i, (_, a) in enumerate(actions) if i and a["action"] == "new_game")
    old = LeagueStore(tmp_path / "league.sqlite3")
    _feed(old, actions[:second])
    old.close()
    assert new_season(tmp_path / "league.sqlite3", tmp_path / "s2.sqlite3",
                      "s2")["games_under_way"] == 0
    season = LeagueStore(tmp_path / "s2.sqlite3")
    assert season.tables()[0]["game"] is None and season.tables()[0]["tower"] == "t1"
    # The tower's next action follows the season's floor: taken at once, nothing held.
    assert set(_feed(season, actions[second:])) == {"new"}
    assert sum(r["played"] for r in season.standings()) == 2
    season.close()
    with pytest.raises(LeagueError, match="exists already"):
        new_season(tmp_path / "league.sqlite3", tmp_path / "s2.sqlite3", "s2")
    (tmp_path / "other.sqlite3").write_bytes(b"")
    with pytest.raises(LeagueError, match="not a dicetower league file"):
        new_season(tmp_path / "other.sqlite3", tmp_path / "s3.sqlite3", "s3")


def test_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "league.sqlite3"
    store = LeagueStore(old)
    _feed(store, _games(3, [["Ana", "Ben"]]))
    store.close()
    assert main(["league", "new-season", "2026-autumn", "--league", str(old)]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "league-2026-autumn.sqlite3").is_file()
    assert "season 2026-autumn" in out and "league-2026-autumn.sqlite3" in out
    assert main(["league", "new-season", "2026-autumn", "--league", str(old)]) == 2
    assert "exists already" in capsys.readouterr().err
    assert main(["league", "new-season", "a/b", "--league", str(old)]) == 2
    err = capsys.readouterr().err
    assert "cannot name a season" in err and err.count("\n") == 1
    assert main(["league", "new-season", "x", "--league", str(tmp_path / "none")]) == 2
    assert "no such league file" in capsys.readouterr().err


def test_towers_carry_on_into_a_new_season_over_the_broker(tmp_path: Path, broker) -> None:  # noqa: F811
    def league(file: Path) -> tuple[LeagueStore, LeagueListener]:
        store = LeagueStore(file)
        listener = LeagueListener(store, broker.address, reconnect=FAST)
        listener.start()
        assert listener.wait_connected(10)
        return store, listener

    store, listener = league(tmp_path / "league.sqlite3")
    tower = SimTower("t1", tmp_path, broker.address, seed=6, reconnect=FAST)
    tower.start()
    tower.play_game()
    assert wait_until(lambda: store.counts() == journal_counts([tower]))
    listener.close()
    store.close()
    new_season(tmp_path / "league.sqlite3", tmp_path / "s2.sqlite3", "s2")
    store, listener = league(tmp_path / "s2.sqlite3")
    first_games = len(tower.games_over)
    tower.play_game()
    before = journal_counts([tower])["t1"]
    assert wait_until(lambda: store.tables() and store.tables()[0]["status"] == "idle"
                      and sum(r["played"] for r in store.standings()) == 3)
    # Only this season's game, and the tower was never asked for its journal again.
    tower.games_over = tower.games_over[first_games:]
    assert store.standings() == expected_standings([tower])
    assert listener.taken["held"] == 0 and tower.publisher.published == before
    listener.close()
    store.close()
    tower.close()
