"""The demo's virtual players: by default they stop on a hand worth keeping, as people at a bar
do (nobody throws a 421 away); ``--strategy random`` keeps the table's old habits, which stop
only at random, even holding 421.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from firmware_host.rules import new_game
from firmware_host.rules.scripting import open_with
from firmware_host.simulation.table import Habits, VirtualTable, worth_keeping
from firmware_host.simulation.tray import SimulatedTray

NO_RANDOM_STOP = replace(Habits.clean(), stop=0.0)  # stops only when a rule says so
OLD_HABITS = replace(Habits.clean(), keep_good_hands=False)


def holding(hand: list[int], preset: str = "tim-11", **knobs: Any) -> dict[str, Any]:
    """The view of a game where Ana has thrown ``hand`` once, with throws left."""
    game = new_game(preset, ["Ana", "Ben", "Cleo"], {"charge_throws": 3, **knobs})
    open_with(game, 0)
    game.apply({"type": "throw", "faces": hand})
    view = game.view()
    assert view["throw_number"] == 1 < view["throws_allowed"] and view["to_move"] == 0
    return view


def table(habits: Habits, seed: int = 1) -> tuple[VirtualTable, list[str]]:
    pressed: list[str] = []
    return VirtualTable(SimulatedTray(seed=seed), seed=seed, habits=habits,
                        press=pressed.append), pressed


@pytest.mark.parametrize("preset", ["tim-11", "kyt-11", "regles-21", "classique-10"])
@pytest.mark.parametrize("hand", [[4, 2, 1], [1, 2, 4], [1, 1, 1]])
def test_a_player_holding_421_or_111_stops(preset: str, hand: list[int]) -> None:
    view = holding(hand, preset)
    players, pressed = table(NO_RANDOM_STOP)
    assert players.play_421(view, retry=False) == "Ana stops"
    assert pressed == ["stop"] and players.last is None  # no die thrown


def test_a_mediocre_hand_is_still_played_on() -> None:
    view = holding([6, 5, 3])
    assert not worth_keeping(view)
    players, pressed = table(NO_RANDOM_STOP)
    assert players.play_421(view, retry=False).startswith("Ana throws")
    assert pressed == [] and players.last is not None


def test_the_exact_rule_still_makes_a_good_hand_throw_again() -> None:
    game = new_game("classique-10", ["Ana", "Ben"])  # throw_limit exact
    open_with(game, 0)
    game.apply({"type": "throw", "faces": [6, 5, 3]})
    game.apply({"type": "throw", "faces": [5, 2], "keep": [0]})
    game.apply({"type": "stop"})  # Ana stopped after two: Ben must throw twice
    game.apply({"type": "throw", "faces": [4, 2, 1]})
    players, pressed = table(NO_RANDOM_STOP)
    line = players.play_421(game.view(), retry=False)
    assert line.startswith("Ben throws") and ", keeps 4-2" in line and pressed == []


def test_random_habits_throw_421_away_as_before() -> None:
    """The line the issue's watcher saw: holding 421, keep 4-2 and throw again."""
    players, pressed = table(replace(OLD_HABITS, stop=0.0))
    line = players.play_421(holding([4, 2, 1]), retry=False)
    assert line.startswith("Ana throws") and line.endswith(", keeps 4-2") and pressed == []


class PaperTray:
    """A tray that draws nothing: the choices are counted, not the pictures."""

    def throw(self, faces: list[int], **_: Any) -> Any:
        return SimpleNamespace(clean=True, faces=faces)


def count_stops(habits: Habits, hand: list[int], tries: int = 40) -> int:
    view = holding(hand)
    stops = 0
    for seed in range(tries):
        pressed: list[str] = []
        players = VirtualTable(PaperTray(), seed=seed, habits=habits,  # type: ignore[arg-type]
                               press=pressed.append)
        line = players.play_421(view, retry=False)
        assert (line == "Ana stops") is (pressed == ["stop"])
        stops += line == "Ana stops"
    return stops


def test_random_habits_stop_at_random_whatever_the_hand() -> None:
    old_421, old_653 = count_stops(OLD_HABITS, [4, 2, 1]), count_stops(OLD_HABITS, [6, 5, 3])
    # The same draws decide, whatever the hand: about a third of the time (stop = 0.35).
    assert old_421 == old_653 and 5 <= old_421 <= 25
    assert count_stops(Habits.clean(), [4, 2, 1]) == 40
    assert count_stops(Habits.clean(), [6, 5, 3]) == old_653  # mediocre hands: as before


def test_the_demo_maps_its_strategy_to_the_table(tmp_path: Path) -> None:
    from firmware_host.simulation.demo import Demo, DemoOptions

    for strategy, keeps_good in [(None, True), ("random", False), ("simple", True)]:
        demo = Demo(DemoOptions(journal=tmp_path / f"{strategy}.sqlite3", serve=False,
                                strategy=strategy), say=lambda _: None)
        try:
            assert demo.table.habits.keep_good_hands is keeps_good, strategy
            named = demo.table.strategy.name if demo.table.strategy is not None else None
            assert named == ("simple" if strategy == "simple" else None)
        finally:
            demo.close()
