"""The players' strategies: the same choice from a game and from its view, the demo's table
playing them, and the advisor against simple players (a seeded sample)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest

from firmware_host.advisor.strategies import Strategy, faces_by_position, make_strategy
from firmware_host.cli import main
from firmware_host.rules.fourd import best_combination, legal_results
from firmware_host.rules.simulation import play
from firmware_host.simulation.table import Habits, VirtualTable
from firmware_host.simulation.tray import SimulatedTray

PLAYERS = ["Ana", "Ben", "Cleo"]


def decisions(preset: str, strategy: Strategy, games: int, seed: int = 5
              ) -> Iterator[tuple[Any, dict[str, Any], dict[str, Any]]]:
    """(game, its view, the event the strategy chose from the game) at every choice of seeded
    games (421: a keep or a stop; 4D: a move). The game has moved on since: read the view."""
    found: list[tuple[Any, dict[str, Any], dict[str, Any]]] = []

    def watching(game: Any, rng: random.Random) -> dict[str, Any]:
        event = strategy(game, rng)
        choosing = (game.kind == "421" and game.throw_number > 0) or (
            game.kind == "4d" and event["type"] == "turn")
        if choosing:
            found.append((game, game.view(), event))
        return event

    rng = random.Random(seed)
    for _ in range(games):
        play(preset, PLAYERS[:2] if preset == "4d" else PLAYERS, rng, strategy=watching)
        yield from found
        found.clear()


@pytest.mark.parametrize("preset", ["tim-11", "classique-10", "regles-21"])
@pytest.mark.parametrize("name", ["simple", "advisor"])
def test_a_view_gives_the_choice_the_game_gives(preset: str, name: str) -> None:
    strategy = make_strategy(name)
    seen = 0
    for _, view, event in decisions(preset, strategy, games=2):
        kept = strategy.keep_from_view(view, random.Random(0))
        if event["type"] == "stop":
            assert kept is None
        else:
            assert sorted(kept or []) == sorted(event.get("keep", []))
        seen += 1
    assert seen > 20


def test_4d_moves_from_a_view() -> None:
    advisor, simple = make_strategy("advisor"), make_strategy("simple")
    seen = 0
    for _, view, event in decisions("4d", advisor, games=2):
        assert advisor.move_from_view(view, random.Random(0)) == (event["faces"],
                                                                  event["rotate"])
        faces, _ = simple.move_from_view(view, random.Random(0))
        # The simple player's move scores the most any legal move scores.
        moves = legal_results(faces_by_position(view), view["square"]["near"]["pos"])
        top = max(best_combination(new, True)[1] for _, new in moves)
        assert best_combination(faces, True)[1] == top
        seen += 1
    assert seen > 10


@pytest.mark.parametrize("name", ["advisor", "simple", "random"])
def test_the_virtual_table_plays_its_strategy(name: str) -> None:
    strategy = make_strategy(name)
    pressed: list[str] = []
    table = VirtualTable(SimulatedTray(seed=1), seed=1, habits=Habits.clean(),
                         press=pressed.append, strategy=strategy)
    stops = keeps = 0
    for _, view, _ in decisions("tim-11", make_strategy("simple"), games=1):
        if stops + keeps >= 12:
            break  # each throw renders the tray: a dozen choices are enough
        if name == "random" and stops + keeps + len(pressed) >= 4:
            break
        wanted = strategy.keep_from_view(view, random.Random(0))  # rng unused but by random
        before = len(pressed)
        line = table.play_421(view, retry=False)
        if name == "random":
            assert line.endswith(" stops") or table.last is not None
            keeps += 1
            continue  # its own draw: only that it plays
        if wanted is None:
            assert pressed[before:] == ["stop"] and line.endswith(" stops")
            stops += 1
        else:
            assert table.last is not None
            assert table.last.truth.faces("keep") == sorted(view["dice"][i] for i in wanted)
            keeps += 1
    assert keeps and (stops or name == "random")


def test_the_table_keeps_its_habits_without_a_strategy() -> None:
    table = VirtualTable(SimulatedTray(seed=1), seed=1, press=lambda _: None)
    assert table.strategy is None


def test_demo_takes_a_strategy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from firmware_host.simulation.demo import Demo, DemoOptions

    demo = Demo(DemoOptions(journal=tmp_path / "d.sqlite3", serve=False, strategy="advisor"),
                say=lambda _: None)
    try:
        assert demo.table.strategy is not None and demo.table.strategy.name == "advisor"
    finally:
        demo.close()
    with pytest.raises(SystemExit) as refused:
        main(["demo", "--journal", str(tmp_path / "j.sqlite3"), "--strategy", "clever"])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'clever'" in err and "advisor" in err


@pytest.mark.parametrize("preset", ["tim-11", "kyt-11"])
def test_one_advisor_player_loses_less_than_its_share(preset: str) -> None:
    """One advisor player among two simple ones, each seat in turn, 450 seeded games (the
    presets where the advisor once lost more than its share). The test holds when the exact
    binomial 95% confidence interval of its loss rate lies wholly below an even third: with
    450 games that interval is about 8 points wide, so a strategy no better than the simple
    players (a third) fails it, as the earlier advisor (37 to 38%) did."""
    advisor, simple = make_strategy("advisor"), make_strategy("simple")
    rng = random.Random(11)
    lost = decided = 0
    for number in range(450):
        seat = number % 3

        def strategy(game: Any, r: random.Random, seat: int = seat) -> dict[str, Any]:
            return (advisor if game.to_move == seat else simple)(game, r)

        _, stats = play(preset, PLAYERS, rng, strategy=strategy)
        if stats.loser is not None:
            decided += 1
            lost += stats.loser == seat
    assert decided == 450
    low, high = binomtest(lost, decided).proportion_ci(0.95)
    assert high < 1 / 3, f"lost {lost} of {decided} (95% CI {low:.1%} to {high:.1%})"


def test_under_the_exact_rule_the_table_stops_only_when_the_rule_lets_it() -> None:
    from firmware_host.rules import new_game
    from firmware_host.rules.scripting import open_with

    presses: list[str] = []
    table = VirtualTable(SimulatedTray(seed=1), seed=1, habits=Habits(stop=1.0),
                         press=presses.append)
    game = new_game("classique-10", ["Ana", "Ben"])  # throw_limit exact
    open_with(game, 0)
    game.apply({"type": "throw", "faces": [6, 5, 3]})
    # The opener sets the number of throws: stopping after the first is hers to choose.
    assert table.play_421(game.view(), retry=False) == "Ana stops"
    # She throws again instead and stops after two: Ben must make two throws as well.
    game.apply({"type": "throw", "faces": [5, 2], "keep": [0]})
    game.apply({"type": "stop"})
    game.apply({"type": "throw", "faces": [6, 4, 2]})
    assert game.view()["throws_required"] == 2
    assert table.play_421(game.view(), retry=False).startswith("Ben throws")
    assert presses == ["stop"]
