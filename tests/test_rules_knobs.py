"""Presets and knobs: complete presets, every knob settable alone, clear refusals."""

from __future__ import annotations

import pytest

from firmware_host.rules import KNOBS, KNOBS_4D, KNOBS_421, PRESETS, RuleError, new_game

PRESETS_421 = ["regles-21", "tim-11", "classique-10", "kyt-11"]


def test_the_five_named_presets_exist() -> None:
    assert set(PRESETS) == {"regles-21", "tim-11", "classique-10", "kyt-11", "4d"}


@pytest.mark.parametrize("preset", PRESETS_421)
def test_421_presets_set_every_421_knob_to_an_allowed_value(preset: str) -> None:
    assert set(PRESETS[preset]) == set(KNOBS_421)
    for name, value in PRESETS[preset].items():
        assert value in KNOBS_421[name], name


def test_4d_preset_sets_every_4d_knob() -> None:
    assert set(PRESETS["4d"]) == set(KNOBS_4D)
    assert PRESETS["4d"]["target"] == 100
    assert set(KNOBS) == set(KNOBS_421) | set(KNOBS_4D)


@pytest.mark.parametrize(
    ("preset", "knob", "value"),
    [
        ("regles-21", "charge_pays", "loser"),
        ("regles-21", "throw_limit", "free"),
        ("regles-21", "nenette", "plus-2"),
        ("regles-21", "zero_after_charge", "stays"),
        ("regles-21", "fewer_throws_breaks_tie", True),
        ("tim-11", "opener", "lowest-die"),
        ("tim-11", "pot", 11),
        ("tim-11", "value_421", 8),
        ("tim-11", "manches_to_lose", 2),
        ("classique-10", "throw_limit", "exact"),
        ("classique-10", "charge_throws", 3),
        ("kyt-11", "ranking", "brelans"),
        ("kyt-11", "nenette", "plain"),
        ("kyt-11", "zero_after_charge", "wins"),
        ("kyt-11", "manches_to_lose", 1),
        ("regles-21", "second_nenette", "beats"),
        ("tim-11", "second_nenette", "rampo"),
        ("classique-10", "second_nenette", "rampo"),
        ("kyt-11", "second_nenette", "rampo"),
        ("regles-21", "split_manches", "off"),
        ("tim-11", "split_manches", "off"),
        ("classique-10", "split_manches", "belle"),
        ("classique-10", "zero_after_charge", "stays"),
        ("kyt-11", "split_manches", "off"),
    ],
)
def test_presets_follow_the_documented_table(preset: str, knob: str, value: object) -> None:
    assert PRESETS[preset][knob] == value


@pytest.mark.parametrize("name", sorted(KNOBS_421))
def test_every_421_knob_is_settable_on_its_own(name: str) -> None:
    for value in KNOBS_421[name][:3]:
        game = new_game("tim-11", ["Ana", "Ben"], {name: value})
        assert game.knobs[name] == value
        others = {k: v for k, v in game.knobs.items() if k != name}
        assert others == {k: v for k, v in PRESETS["tim-11"].items() if k != name}


def test_knob_values_may_come_as_text() -> None:
    game = new_game("tim-11", ["Ana", "Ben"], {"pot": "21", "one_round": "true"})
    assert game.knobs["pot"] == 21
    assert game.knobs["one_round"] is True
    assert new_game("4d", ["Ana", "Ben"], target=50).knobs["target"] == 50


def test_unknown_preset_lists_the_valid_ones() -> None:
    with pytest.raises(RuleError, match="valid presets: regles-21, tim-11, classique-10"):
        new_game("yahtzee", ["Ana", "Ben"])


def test_unknown_knob_lists_the_valid_ones() -> None:
    with pytest.raises(RuleError, match=r"unknown knob 'speed'.*valid knobs: ranking"):
        new_game("kyt-11", ["Ana", "Ben"], {"speed": 2})
    with pytest.raises(RuleError, match="valid knobs: target, pairs_score, fifth_die"):
        new_game("4d", ["Ana", "Ben"], {"pot": 21})


@pytest.mark.parametrize(
    ("knob", "value", "listing"),
    [
        ("nenette", "double", "fixed-2, plus-2, plain"),
        ("throw_limit", 2, "exact, at-most, free"),
        ("pot", 0, "an integer from 1 to 99"),
        ("one_round", "maybe", "false, true"),
        ("second_nenette", "later", "rampo, beats"),
        ("split_manches", "charge", "off, belle, decharge"),
    ],
)
def test_bad_knob_values_list_the_valid_ones(knob: str, value: object, listing: str) -> None:
    with pytest.raises(RuleError, match=listing):
        new_game("tim-11", ["Ana", "Ben"], {knob: value})


@pytest.mark.parametrize(
    ("preset", "players", "reason"),
    [
        ("tim-11", ["Ana"], "2 to 10 players, not 1"),
        ("tim-11", [f"P{i}" for i in range(11)], "2 to 10 players, not 11"),
        ("4d", ["Ana", "Ben", "Cleo"], "exactly 2 players"),
        ("tim-11", ["Ana", "Ana"], "must differ"),
        ("tim-11", ["Ana", " "], "needs a name"),
    ],
)
def test_player_lists_are_checked(preset: str, players: list[str], reason: str) -> None:
    with pytest.raises(RuleError, match=reason):
        new_game(preset, players)


def test_ten_players_may_play() -> None:
    game = new_game("regles-21", [f"P{i}" for i in range(10)])
    assert len(game.view()["players"]) == 10
