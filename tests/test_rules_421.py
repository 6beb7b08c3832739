"""421 scenarios: the rule texts' own examples, and each knob's values changing the outcome."""

from __future__ import annotations

import json
from typing import Any

import pytest

from firmware_host.rules import RuleError, game_from_json, new_game
from firmware_host.rules.game421 import Game421
from firmware_host.rules.scripting import of_kind, open_with, play_round, play_turn
from firmware_host.rules.texts import render_text

NAMES3 = ["Ana", "Ben", "Cleo"]
ANA, BEN, CLEO = 0, 1, 2


def game(preset: str, players: int = 2, opener: int = ANA, **knobs: Any) -> Game421:
    """A game past its opening, ``opener`` to move."""
    g = new_game(preset, NAMES3[:players], knobs)
    open_with(g, opener)
    assert g.to_move == opener
    return g


def at_decharge(preset: str, players: int = 2, **knobs: Any) -> Game421:
    """A game whose one-token pot is emptied by a first round Ben loses: Ben opens the décharge."""
    knobs = {"pot": 1, "private_tokens": 5, **knobs}
    g = game(preset, players, **knobs)
    play_round(g, "654", "651", *(["653"] if players == 3 else []))
    assert g.phase == "decharge" and g.to_move == BEN
    return g


def pot_taken(effects: list[dict[str, Any]]) -> list[tuple[int, int]]:
    return [(e["player"], e["count"]) for e in of_kind(effects, "tokens_from_pot")]


def given(effects: list[dict[str, Any]]) -> list[tuple[int, int, int]]:
    return [(e["from"], e["to"], e["count"]) for e in of_kind(effects, "tokens_between")]


# -- the rule texts' own examples ----------------------------------------------------------


def test_tim11_554_against_333_costs_3() -> None:
    g = game("tim-11")
    effects = play_round(g, "554", "333")
    assert of_kind(effects, "round_lost") == [{"kind": "round_lost", "player": ANA, "hand": "554"}]
    assert pot_taken(effects) == [(ANA, 3)]
    assert g.pot == 8
    assert g.to_move == ANA  # the loser opens the next round


def test_tim11_nenette_takes_2_whatever_the_best_hand() -> None:
    effects = play_round(game("tim-11"), "421", "221")
    assert pot_taken(effects) == [(BEN, 2)]
    assert {"kind": "flourish", "name": "nenette"} in effects


def test_regles21_666_winner_against_a_nenette_gives_8_in_decharge() -> None:
    g = at_decharge("regles-21", private_tokens=10)
    effects = play_round(g, "221", "666")
    assert given(effects) == [(ANA, BEN, 8)]


def test_regles21_charge_loser_takes_the_value_of_its_own_hand() -> None:
    assert pot_taken(play_round(game("regles-21"), "421", "655")) == [(BEN, 1)]
    assert pot_taken(play_round(game("regles-21"), "421", "221")) == [(BEN, 2)]
    assert pot_taken(play_round(game("regles-21"), "654", "222")) == [(ANA, 2)]


def test_kyt11_652_beats_651_and_loses_to_653() -> None:
    g = game("kyt-11", players=3)
    effects = play_round(g, "652", "651", "653")
    assert of_kind(effects, "round_lost")[0]["player"] == BEN
    g = game("kyt-11", players=2)
    assert of_kind(play_round(g, "652", "653"), "round_lost")[0]["player"] == ANA


def test_classique10_others_play_exactly_the_openers_throws() -> None:
    g = game("classique-10")
    play_turn(g, "652", "654")  # Ana stops after 2: "en 2"
    assert g.view()["throws_label"] == "en 2"
    assert g.to_move == BEN and g.throws_allowed == 2
    g.apply({"type": "throw", "faces": [4, 2, 1]})
    with pytest.raises(RuleError, match="exactly 2 times"):
        g.apply({"type": "stop"})
    effects = g.apply({"type": "throw", "faces": [1], "keep": [0, 1]})
    assert of_kind(effects, "round_lost")  # the second throw ended the turn and the round


def test_classique10_one_round_mode_best_hand_wins() -> None:
    g = game("classique-10", players=3, one_round=True)
    assert g.phase == "round"
    effects = play_round(g, ("543",), ("611",), ("222",))
    assert g.is_over and g.winner == BEN and g.loser is None
    assert of_kind(effects, "game_over") == [{"kind": "game_over", "loser": None, "winner": BEN}]
    assert not pot_taken(effects)


# -- the round ------------------------------------------------------------------------------


def test_charge_never_takes_more_than_the_pot_and_a_full_hand_loses_the_manche() -> None:
    g = game("tim-11", pot=5)
    effects = play_round(g, "421", "652")
    assert pot_taken(effects) == [(BEN, 5)]
    assert of_kind(effects, "manche_lost")[0]["player"] == BEN
    assert g.fiches == [0, 1] and g.pot == 5 and g.tokens == [0, 0]
    assert g.manche == 2 and g.phase == "charge" and g.to_move == BEN


def test_decharge_winner_gives_never_more_than_it_holds_and_goes_out_at_zero() -> None:
    g = at_decharge("tim-11", players=3, private_tokens=1)
    # Tokens: Ana 1, Ben 2, Cleo 1. Ben opens "sec"; Cleo 421 gives 1 (all she has) to Ana.
    effects = play_round(g, "653", "421", "652")
    assert given(effects) == [(CLEO, ANA, 1)]
    assert of_kind(effects, "player_out") == [{"kind": "player_out", "player": CLEO, "rank": 1}]
    assert g.to_move == ANA and g.order == [ANA, BEN]  # Cleo is out of the next rounds


def test_manche_ends_when_one_player_holds_every_token() -> None:
    g = game("kyt-11", pot=2, charge_pays="loser")
    play_round(g, "654", "651")  # Ben takes 1
    play_round(g, "654", "651")  # Ben opens, Ana takes the last one
    assert g.tokens == [1, 1] and g.phase == "decharge" and g.to_move == ANA
    effects = play_round(g, "421", "652")
    assert given(effects) == [(ANA, BEN, 1)]
    assert of_kind(effects, "player_out") == [{"kind": "player_out", "player": ANA, "rank": 1}]
    assert of_kind(effects, "manche_lost") == [{"kind": "manche_lost", "player": BEN, "manche": 1}]
    assert g.is_over and g.loser == BEN and g.winner == ANA


def test_rampo_only_the_tied_players_starting_with_the_last_to_throw() -> None:
    g = game("tim-11", players=3)
    effects = play_round(g, "654", "651", "651")
    rampo = {"kind": "rampo", "players": [CLEO, BEN], "stake": "worst"}
    assert of_kind(effects, "rampo") == [rampo]
    assert g.phase == "rampo" and g.to_move == CLEO and g.throws_allowed == 1
    effects = play_round(g, "221", "655")
    # Cleo loses the rampo; the original hands set the amount: best 654 -> 2 (not nénette's 2).
    assert pot_taken(effects) == [(CLEO, 2)]
    assert of_kind(effects, "round_lost")[0]["hand"] == "651"


def test_rampo_is_repeated_until_the_tie_is_broken() -> None:
    g = game("tim-11", players=3)
    play_round(g, "651", "651", "651")
    assert g.order == [CLEO, ANA, BEN]
    effects = play_round(g, "543", "652", "652")
    # Ana and Ben tie again: Ben threw last, so Ben starts.
    assert of_kind(effects, "rampo")[0]["players"] == [BEN, ANA]
    effects = play_round(g, "663", "664")
    assert of_kind(effects, "round_lost")[0]["player"] == BEN
    assert pot_taken(effects) == [(BEN, 1)]


def test_a_tie_for_best_needs_no_rampo_in_charge() -> None:
    effects = play_round(game("tim-11", players=3), "654", "654", "651")
    assert not of_kind(effects, "rampo")
    assert pot_taken(effects) == [(CLEO, 2)]


def test_decharge_tie_for_best_is_a_rampo_and_the_original_hand_pays() -> None:
    g = at_decharge("tim-11", players=3, private_tokens=10)
    effects = play_round(g, "611", "611", "652")
    # Cleo threw after Ben, so Cleo starts the rampo.
    assert of_kind(effects, "rampo") == [{"kind": "rampo", "players": [CLEO, BEN], "stake": "best"}]
    effects = play_round(g, "432", "431")
    assert given(effects) == [(CLEO, ANA, 6)]


def test_opening_ties_throw_again_only_the_tied_players() -> None:
    g = new_game("tim-11", NAMES3)
    effects: list[dict[str, Any]] = []
    for face in (2, 2, 5):
        effects += g.apply({"type": "throw", "faces": [face]})
    assert {"kind": "opening_tie", "players": [ANA, BEN]} in effects
    assert g.phase == "opening" and g.order == [ANA, BEN]
    g.apply({"type": "throw", "faces": [4]})
    g.apply({"type": "throw", "faces": [3]})
    assert g.phase == "charge" and g.to_move == BEN and g.order == [BEN, CLEO, ANA]


# -- each knob, each value -------------------------------------------------------------------


@pytest.mark.parametrize(("ranking", "loser"), [("fiches", BEN), ("brelans", ANA)])
def test_knob_ranking(ranking: str, loser: int) -> None:
    effects = play_round(game("tim-11", ranking=ranking), "611", "665")
    assert of_kind(effects, "round_lost")[0]["player"] == loser


@pytest.mark.parametrize("value", [10, 8])
def test_knob_value_421(value: int) -> None:
    effects = play_round(game("tim-11", pot=21, value_421=value), "421", "652")
    assert pot_taken(effects) == [(BEN, value)]


@pytest.mark.parametrize(("fewer", "rampo"), [(True, False), (False, True)])
def test_knob_fewer_throws_breaks_tie(fewer: bool, rampo: bool) -> None:
    g = game("classique-10", throw_limit="free", fewer_throws_breaks_tie=fewer)
    effects = play_round(g, ("652", "651"), ("651",))
    assert bool(of_kind(effects, "rampo")) is rampo
    if not rampo:
        assert pot_taken(effects) == [(ANA, 1)]  # same 651, one more throw: Ana loses


@pytest.mark.parametrize(("opener", "dice"), [("lowest-hand", 3), ("lowest-die", 1)])
def test_knob_opener(opener: str, dice: int) -> None:
    g = new_game("tim-11", NAMES3, {"opener": opener})
    wrong = 4 - dice
    with pytest.raises(RuleError, match=f"throws {dice} di"):
        g.apply({"type": "throw", "faces": [3] * wrong})
    throws = {1: ([3], [1], [5]), 3: ([4, 2, 1], [2, 2, 1], [6, 5, 4])}[dice]
    for faces in throws:
        g.apply({"type": "throw", "faces": faces})
    assert g.phase == "charge" and g.to_move == BEN


@pytest.mark.parametrize(("throws", "still_ana"), [(1, False), (3, True)])
def test_knob_charge_throws(throws: int, still_ana: bool) -> None:
    g = game("tim-11", charge_throws=throws)
    g.apply({"type": "throw", "faces": [6, 5, 2]})
    assert (g.to_move == ANA) is still_ana
    assert g.view()["throws_allowed"] == (throws if still_ana else 1)


@pytest.mark.parametrize(
    ("limit", "stop_after_1", "turn_over_after_2"),
    [("exact", False, True), ("at-most", True, True), ("free", True, False)],
)
def test_knob_throw_limit(limit: str, stop_after_1: bool, turn_over_after_2: bool) -> None:
    g = at_decharge("tim-11", throw_limit=limit)
    play_turn(g, "652", "653")  # Ben opens and stops "en 2"
    assert g.to_move == ANA
    g.apply({"type": "throw", "faces": [6, 6, 2]})
    if stop_after_1:
        probe = game_from_json(g.to_json())
        probe.apply({"type": "stop"})
        assert probe.last_round["round"] == 2  # Ana's stop ended the décharge round
    else:
        with pytest.raises(RuleError, match="exactly 2"):
            g.apply({"type": "stop"})
    g.apply({"type": "throw", "faces": [1], "keep": [0, 1]})
    assert (g.throw_number == 0) is turn_over_after_2


@pytest.mark.parametrize(("pays", "count"), [("best", 3), ("loser", 1)])
def test_knob_charge_pays(pays: str, count: int) -> None:
    effects = play_round(game("tim-11", charge_pays=pays), "554", "333")
    assert pot_taken(effects) == [(ANA, count)]


@pytest.mark.parametrize(("nenette", "count"), [("fixed-2", 2), ("plus-2", 8), ("plain", 6)])
def test_knob_nenette_in_charge(nenette: str, count: int) -> None:
    effects = play_round(game("tim-11", nenette=nenette), "666", "221")
    assert pot_taken(effects) == [(BEN, count)]


@pytest.mark.parametrize(("nenette", "count"), [("fixed-2", 2), ("plus-2", 2), ("plain", 1)])
def test_knob_nenette_when_the_loser_pays_its_own_hand(nenette: str, count: int) -> None:
    effects = play_round(game("regles-21", nenette=nenette), "666", "221")
    assert pot_taken(effects) == [(BEN, count)]


@pytest.mark.parametrize(("nenette", "count"), [("fixed-2", 2), ("plus-2", 7), ("plain", 5)])
def test_knob_nenette_in_decharge(nenette: str, count: int) -> None:
    g = at_decharge("tim-11", nenette=nenette, private_tokens=10)
    assert given(play_round(g, "221", "555")) == [(ANA, BEN, count)]


@pytest.mark.parametrize("pot", [11, 21])
def test_knob_pot(pot: int) -> None:
    g = game("tim-11", pot=pot)
    assert g.view()["pot"] == pot == g.view()["total_tokens"]
    effects = play_round(g, "421", "652")
    assert pot_taken(effects) == [(BEN, 8)]
    assert bool(of_kind(effects, "manche_lost")) is (pot <= 8)


@pytest.mark.parametrize("private", [0, 3])
def test_knob_private_tokens(private: int) -> None:
    g = game("kyt-11", players=3, private_tokens=private)
    view = g.view()
    assert [p["tokens"] for p in view["players"]] == [private] * 3
    assert view["total_tokens"] == 11 + 3 * private
    # Taking the whole pot loses the manche only when nobody else holds a token.
    g = game("tim-11", pot=5, private_tokens=private)
    effects = play_round(g, "421", "652")
    assert bool(of_kind(effects, "manche_lost")) is (private == 0)
    assert g.phase == ("charge" if private == 0 else "decharge")


@pytest.mark.parametrize(("mode", "cleo_plays"), [("stays", True), ("wins", False)])
def test_knob_zero_after_charge(mode: str, cleo_plays: bool) -> None:
    g = game("tim-11", players=3, pot=2, charge_pays="loser", zero_after_charge=mode)
    play_round(g, "654", "651", "653")  # Ben takes 1
    effects = play_round(g, "651", "654", "653")  # Ben opens and takes the last one
    # Ben holds every token: that manche is lost at once, whatever the mode.
    assert of_kind(effects, "manche_lost")[0]["player"] == BEN
    g = game("tim-11", players=3, pot=2, charge_pays="loser", zero_after_charge=mode)
    play_round(g, "654", "651", "653")  # Ben takes 1
    effects = play_round(g, "654", "653", "651")  # Ben opens, Ana takes the last one
    assert g.tokens == [1, 1, 0] and g.phase == "decharge"
    assert bool(of_kind(effects, "player_out")) is not cleo_plays
    assert (CLEO in g.order) is cleo_plays
    assert g.view()["players"][CLEO]["out"] is not cleo_plays


@pytest.mark.parametrize(("manches", "over"), [(1, True), (2, False)])
def test_knob_manches_to_lose(manches: int, over: bool) -> None:
    g = game("tim-11", pot=1, manches_to_lose=manches)
    effects = play_round(g, "654", "651")
    assert of_kind(effects, "manche_lost")
    assert g.is_over is over
    if not over:
        assert g.manche == 2 and g.fiches == [0, 1] and g.pot == 1
        assert {"kind": "tokens_to_pot", "player": BEN, "count": 1} in effects


def test_a_second_manche_lost_ends_the_game() -> None:
    g = game("tim-11", pot=1)
    play_round(g, "654", "651")
    effects = play_round(g, "651", "654")
    assert g.is_over and g.loser == BEN and g.fiches == [0, 2]
    assert of_kind(effects, "game_over") == [{"kind": "game_over", "loser": BEN, "winner": ANA}]
    with pytest.raises(RuleError, match="game is over"):
        g.apply({"type": "throw", "faces": [1, 2, 4]})


@pytest.mark.parametrize(("one_round", "over"), [(True, True), (False, False)])
def test_knob_one_round(one_round: bool, over: bool) -> None:
    g = game("tim-11", one_round=one_round)
    play_round(g, "654", "651")
    assert g.is_over is over
    assert g.view()["winner"] == (ANA if over else None)


# -- illegal input ----------------------------------------------------------------------------


def started() -> Game421:
    g = at_decharge("tim-11")
    g.apply({"type": "throw", "faces": [6, 5, 2]})
    return g


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ({"type": "throw", "faces": [1], "keep": [0, 1], "player": ANA}, "not Ana's turn"),
        ({"type": "throw", "faces": [1, 2, 3, 4, 5, 6, 1]}, "7 dice landed"),
        ({"type": "throw", "faces": [0], "keep": [0, 1]}, "1 to 6, not 0"),
        ({"type": "throw", "faces": [2], "keep": [0, 5]}, "distinct dice"),
        ({"type": "throw", "faces": [2], "keep": [1, 1]}, "distinct dice"),
        ({"type": "throw", "faces": [], "keep": [0, 1, 2]}, "at least one die"),
        ({"type": "throw", "faces": ["3"], "keep": [0, 1]}, "whole numbers"),
        ({"type": "throw", "faces": [3, 3], "keep": [0, 1]}, "a hand is 3 dice"),
        ({"type": "roll"}, "unknown event type 'roll'"),
        ({"type": "throw", "faces": [3], "keep": [0, 1], "player": 7}, "seat from 0 to 1"),
    ],
)
def test_illegal_input_is_refused_and_changes_nothing(event: dict, reason: str) -> None:
    g = started()
    before, events = g.view(), g.events
    with pytest.raises(RuleError, match=reason):
        g.apply(event)
    assert g.view() == before and g.events == events


def test_a_fourth_throw_is_refused() -> None:
    g = at_decharge("tim-11")
    play_turn(g, "652", "653", "654")  # three throws: the turn ended by itself
    assert g.to_move == ANA
    with pytest.raises(RuleError, match="nothing to keep"):
        g.apply({"type": "throw", "faces": [4], "keep": [0, 1]})
    with pytest.raises(RuleError, match="not Ben's turn"):
        g.apply({"type": "throw", "faces": [4, 2, 1], "player": BEN})


def test_stop_before_throwing_is_refused() -> None:
    g = game("tim-11")
    with pytest.raises(RuleError, match="throw before stopping"):
        g.apply({"type": "stop"})


def test_events_must_be_dicts() -> None:
    with pytest.raises(RuleError, match="a dict"):
        game("tim-11").apply(["throw"])  # type: ignore[arg-type]


# -- undo, JSON, replay, view ------------------------------------------------------------------


def test_undo_restores_the_state_and_puts_the_tokens_back() -> None:
    g = game("tim-11")
    play_turn(g, "554")
    before = g.view()
    play_turn(g, "333")
    effects = g.apply({"type": "undo"})
    assert g.view() == before
    assert {"kind": "tokens_to_pot", "player": ANA, "count": 3} in effects
    assert effects[0]["kind"] == "undone"
    assert effects[-1] == {"kind": "turn", "player": BEN, "throws_allowed": 1}


def test_undo_with_nothing_to_undo() -> None:
    with pytest.raises(RuleError, match="nothing to undo"):
        new_game("tim-11", NAMES3).undo()


def test_json_round_trip_and_replay() -> None:
    g = at_decharge("regles-21", players=3)
    play_round(g, "221", ("652", "666"), "543")
    data = json.loads(json.dumps(g.to_json()))
    assert game_from_json(data).view() == g.view()
    fresh = new_game("regles-21", NAMES3, g.knobs)
    for entry in g.history:
        assert fresh.apply(entry["event"]) == entry["effects"]
    assert fresh.view() == g.view()


def test_a_tampered_save_is_refused() -> None:
    g = game("tim-11")
    play_round(g, "554", "333")
    data = g.to_json()
    data["view"]["pot"] = 11
    with pytest.raises(RuleError, match="does not replay"):
        game_from_json(data)
    with pytest.raises(RuleError, match="not a saved game"):
        game_from_json({"events": []})


def test_view_has_the_contract_keys_and_a_prompt_in_both_languages() -> None:
    g = at_decharge("tim-11")
    play_turn(g, "652", "653")
    view = g.view()
    for key in (
        "game",
        "preset",
        "knobs",
        "players",
        "phase",
        "to_move",
        "throw_number",
        "throws_allowed",
        "throws_label",
        "dice",
        "kept",
        "round",
        "best",
        "worst",
        "pot",
        "total_tokens",
        "manche",
        "last_round",
        "loser",
        "winner",
        "prompt",
    ):
        assert key in view, key
    assert set(view["players"][0]) >= {"name", "seat", "tokens", "fiches", "out", "out_rank"}
    assert "message" not in view  # the engine gives codes and values, never a sentence
    assert view["prompt"] == {"code": "follow_en", "values": {"player": "Ana", "throws": 2}}
    assert render_text(view["prompt"], "fr") == "Ana lance (en 2)"
    assert render_text(view["prompt"], "en") == "Ana throws (en 2: 2 throws)"
    assert view["round"] == [{"player": BEN, "hand": "653", "throws": 2, "dice": [6, 5, 3]}]
    assert view["best"] == view["worst"] == {"player": BEN, "hand": "653"}
    assert view["dice"] == [6, 5, 3] and view["phase"] == "decharge"
    json.dumps(view)


def test_two_players_tied_in_decharge_need_a_single_rampo() -> None:
    g = at_decharge("tim-11")
    effects = play_round(g, "652", "652")
    assert of_kind(effects, "rampo") == [{"kind": "rampo", "players": [ANA, BEN], "stake": "worst"}]
    effects = play_round(g, "111", "653")
    assert not of_kind(effects, "rampo")
    # Ben lost the rampo; Ana's original 652 pays 1.
    assert given(effects) == [(ANA, BEN, 1)]


def test_one_round_tie_for_best_is_a_rampo() -> None:
    g = game("tim-11", players=3, one_round=True)
    effects = play_round(g, "611", "543", "611")
    assert of_kind(effects, "rampo") == [{"kind": "rampo", "players": [CLEO, ANA], "stake": "best"}]
    play_round(g, "651", "652")
    assert g.is_over and g.winner == ANA


def test_phase_and_manche_effects() -> None:
    g = new_game("tim-11", NAMES3[:2], {"pot": 1})
    effects = open_with(g, ANA)
    assert {"kind": "phase", "phase": "charge"} in effects
    effects = play_round(g, "654", "651")
    assert {"kind": "manche", "manche": 2} in effects
    assert g.view()["manche"] == 2


def test_changing_a_view_or_a_save_does_not_touch_the_game() -> None:
    g = game("tim-11")
    play_round(g, "554", "333")
    before = g.view()
    view, data = g.view(), g.to_json()
    view["last_round"]["hands"].clear()
    view["players"][0]["tokens"] = 99
    data["events"][0]["faces"].append(6)
    assert g.view() == before


@pytest.mark.parametrize("seed", range(6))
def test_kyt_11_with_three_or_more_players_names_the_first_out_the_winner(seed: int) -> None:
    # Seed text: "Le vainqueur est le premier qui parvient à ne plus avoir de jetons" (the
    # winner is the first who manages to have no tokens left).
    import random

    from firmware_host.rules.simulation import play

    game, _ = play("kyt-11", ["Ana", "Ben", "Cleo", "Dede"], random.Random(seed), None)
    assert game.is_over and game.loser is not None
    assert game.winner == game.out_rank.index(1) != game.loser
    assert game.view()["winner"] == game.winner


def test_over_several_manches_the_first_out_is_no_game_winner() -> None:
    import random

    from firmware_host.rules.simulation import play

    game, _ = play("regles-21", ["Ana", "Ben", "Cleo"], random.Random(1), None)
    assert game.knobs["manches_to_lose"] > 1 and game.is_over
    assert game.winner is None
