"""A tournament night: the bracket's seeding and byes, and a whole night over a real broker
(matches proposed to free tables, taken with one tap, results advancing the bracket)."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware_host.league.bracket import Tournament, bracket, ready
from firmware_host.league.runner import LeagueOptions, LeagueRunner
from firmware_host.league.simtower import SimTower
from firmware_host.league.standings import player_key
from tests.league_support import FAST, broker, wait_until  # noqa: F401 - the fixture


def test_seeding_byes_and_advancing() -> None:
    night = Tournament(entrants=["A", "B", "C", "D", "E"])
    rounds = bracket(night)
    assert [len(r) for r in rounds] == [4, 2, 1]
    first = rounds[0]
    assert [m.players for m in first] == [["A", None], ["D", "E"], ["B", None], ["C", None]]
    assert [m.winner for m in first] == ["A", None, "B", "C"]
    assert [m.id for m in ready(rounds)] == ["r1-1", "r2-1"]
    night.results["r1-1"] = "E"
    rounds = bracket(night)
    assert rounds[1][0].players == ["A", "E"] and [m.id for m in ready(rounds)] == [
        "r2-0", "r2-1"]
    night.results.update({"r2-0": "E", "r2-1": "C", "r3-0": "C"})
    assert bracket(night)[-1][0].winner == "C" and ready(bracket(night)) == []


def test_a_night_over_the_broker(tmp_path: Path, broker) -> None:  # noqa: F811
    runner = LeagueRunner(LeagueOptions(broker=broker.address, file=tmp_path / "l.sqlite3",
                                        reconnect=FAST))
    runner.start(serve=False)
    towers = [SimTower(f"t{i}", tmp_path, broker.address, seed=i, reconnect=FAST)
              for i in range(2)]
    for tower in towers:
        tower.start()
    assert wait_until(lambda: {t["status"] for t in runner.store.tables()} == {"online"}
                      and len(runner.store.tables()) == 2)
    runner.desk.create(["Ana", "Ben", "Cleo", "Dan"])
    played = []
    while runner.desk.view()["champion"] is None:
        assert wait_until(lambda: any(t.publisher.proposal for t in towers)), "no offer"
        tower = next(t for t in towers if t.publisher.proposal)
        offer = tower.publisher.proposal
        assert tower.accept_proposal()
        while tower.playing:
            tower.step()
        game = tower.games_over[-1]
        played.append((offer["match"], game))
        match = offer["match"]
        assert wait_until(lambda match=match: match in runner.desk.current().results)
        assert len(played) <= 3
    results = runner.desk.current().results
    assert sorted(match for match, _ in played) == sorted(results) and len(played) == 3
    for match, game in played:
        loser = player_key(game["players"][game["loser"]])
        assert player_key(results[match]) != loser
        assert player_key(results[match]) in map(player_key, game["players"])
    assert runner.desk.view()["champion"] == results["r2-0"]
    for tower in towers:
        tower.close()
    runner.close()


def test_a_tournament_needs_different_names(tmp_path: Path, broker) -> None:  # noqa: F811
    runner = LeagueRunner(LeagueOptions(broker=broker.address, file=tmp_path / "l.sqlite3"))
    for entrants in (["Ana"], ["Ana", "ana "]):
        with pytest.raises(ValueError):
            runner.desk.create(entrants)
    runner.close()
