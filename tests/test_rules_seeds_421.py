"""421 scenarios for sentences of the rule texts, each quoted, with exact dice.

regles-21's text on two nénettes, and classique-10's charge and décharge as two manches won
by their winners; the knob values that keep the older readings are checked beside them.
"""

from __future__ import annotations

from typing import Any

import pytest

from firmware_host.rules import new_game
from firmware_host.rules.game421 import Game421
from firmware_host.rules.scripting import of_kind, open_with, play_round, play_turn

NAMES = ["Ana", "Ben", "Cleo"]
ANA, BEN, CLEO = 0, 1, 2

Effects = list[dict[str, Any]]


def game(preset: str, players: int = 2, **knobs: Any) -> Game421:
    """A game past its opening, Ana to move."""
    g = new_game(preset, NAMES[:players], knobs)
    open_with(g, ANA)
    return g


def losers(effects: Effects) -> list[int]:
    return [e["player"] for e in of_kind(effects, "round_lost")]


def given(effects: Effects) -> list[tuple[int, int, int]]:
    return [(e["from"], e["to"], e["count"]) for e in of_kind(effects, "tokens_between")]


def manches_won(g: Game421) -> list[int]:
    return [p["manches_won"] for p in g.view()["players"]]


# -- regles-21: "il bat la nénette précédente" ---------------------------------------------
# "Dans le cas où un autre joueur ferait nénette, il bat la nénette précédente et ainsi de
# suite." A later nénette beats the earlier one: the first nénette thrown is the weakest hand.


def test_regles21_a_later_nenette_beats_the_earlier_one_in_the_charge() -> None:
    g = game("regles-21")
    effects = play_round(g, "221", "221")
    assert not of_kind(effects, "rampo")
    assert losers(effects) == [ANA]
    # regles-21's loser takes its own hand's value: the nénette's 2.
    assert of_kind(effects, "tokens_from_pot") == [
        {"kind": "tokens_from_pot", "player": ANA, "count": 2}
    ]


def test_regles21_and_so_on_the_first_of_three_nenettes_loses_the_last_wins() -> None:
    g = game("regles-21", players=3, pot=1, private_tokens=10)
    play_round(g, "654", "651", "653")  # Ben empties the pot and opens the décharge
    assert g.phase == "decharge" and g.order == [BEN, CLEO, ANA]
    effects = play_round(g, "221", "221", "221")
    assert not of_kind(effects, "rampo")
    assert losers(effects) == [BEN]
    assert of_kind(effects, "round_won")[0]["player"] == ANA
    # "les jetons obtenus par la nénette se cumule avec les jetons de la plus haute
    # combinaison dans la phase de décharge": the winning nénette's 2, plus 2.
    assert given(effects) == [(ANA, BEN, 4)]


def test_regles21_the_throwing_order_decides_between_nenettes_not_the_throws() -> None:
    g = game("regles-21", pot=1, private_tokens=10)
    play_round(g, "654", "651")  # Ben opens the décharge
    play_turn(g, "221")  # Ben: nénette sec
    assert g.view()["worst"] == {"player": BEN, "hand": "221"}
    effects = play_turn(g, "653", "221")  # Ana: nénette in two throws, thrown later
    assert not of_kind(effects, "rampo")
    assert losers(effects) == [BEN]


def test_regles21_a_later_nenette_beats_the_earlier_one_in_a_rampo() -> None:
    g = game("regles-21", players=3)
    effects = play_round(g, "652", "654", "652")
    rampo = {"kind": "rampo", "players": [CLEO, ANA], "stake": "worst"}
    assert of_kind(effects, "rampo") == [rampo]
    effects = play_round(g, "221", "221")  # Cleo then Ana, one coup sec each
    assert losers(effects) == [CLEO]


@pytest.mark.parametrize("fewer", [False, True])
def test_knob_second_nenette_rampo_makes_two_nenettes_a_tie(fewer: bool) -> None:
    g = game("regles-21", second_nenette="rampo", fewer_throws_breaks_tie=fewer)
    effects = play_round(g, "221", "221")
    assert of_kind(effects, "rampo") == [{"kind": "rampo", "players": [BEN, ANA], "stake": "worst"}]
    # In the décharge the same two nénettes, one made in fewer throws, tie only when the
    # throws do not count.
    g = game("regles-21", second_nenette="rampo", fewer_throws_breaks_tie=fewer, pot=1,
             private_tokens=10)
    play_round(g, "654", "651")
    effects = play_round(g, "221", ("653", "221"))
    assert bool(of_kind(effects, "rampo")) is not fewer
    if fewer:
        assert losers(effects) == [ANA]  # the same nénette in more throws


@pytest.mark.parametrize(
    ("preset", "sentence"),
    [
        ("tim-11", "En cas d'égalité, chaque joueur relance un tour de dés"),
        ("kyt-11", "En cas d'égalité entre deux joueurs ou plus pour désigner le plus faible"),
        ("classique-10", ""),  # the text says nothing of ties: equal hands stay equal
    ],
)
def test_other_presets_make_two_nenettes_a_rampo(preset: str, sentence: str) -> None:
    assert new_game(preset, NAMES[:2]).knobs["second_nenette"] == "rampo", sentence
    g = game(preset, charge_throws=1)
    effects = play_round(g, "221", "221")
    assert of_kind(effects, "rampo")[0]["players"] == [BEN, ANA]


def test_knob_second_nenette_beats_works_in_any_preset() -> None:
    g = game("tim-11", players=3, second_nenette="beats")
    effects = play_round(g, "654", "221", "221")
    assert losers(effects) == [BEN]


# -- classique-10: the charge and the décharge are two manches --------------------------------
# "Celui qui a le moins de jetons à la fin de la "charge" est gagnant de cette manche."
# "Celui qui n'a plus de jetons à la fin de la "décharge" est gagnant de cette manche."


def charge_to_ana(**knobs: Any) -> Game421:
    """Pot 3: Ben takes 2, then Ana 1; Ana has the fewest when the pot is empty."""
    g = game("classique-10", pot=3, **knobs)
    play_round(g, "654", "651")  # Ben takes the suite's 2
    effects = play_round(g, "653", "652")  # Ben opens, Ana takes 1
    assert g.tokens == [1, 2] and g.phase == "decharge"
    assert of_kind(effects, "charge_won") == [
        {"kind": "charge_won", "player": ANA, "manche_won": True}
    ]
    return g


def charge_all_to_ben(**knobs: Any) -> tuple[Game421, Effects]:
    """Pot 3: Ben takes every token of the charge."""
    g = game("classique-10", pot=3, **knobs)
    play_round(g, "654", "651")  # Ben takes 2
    effects = play_round(g, "652", "653")  # Ben opens and takes the last one
    return g, effects


def test_classique10_the_fewest_tokens_win_the_charge_a_manche() -> None:
    g = charge_to_ana()
    assert manches_won(g) == [1, 0]
    assert g.view()["charge_winner"] == ANA and not g.is_over


def test_classique10_the_same_player_winning_both_manches_wins_the_game() -> None:
    g = charge_to_ana()
    assert g.to_move == ANA  # the last loser opens the décharge
    effects = play_round(g, "654", "651")  # Ana gives her only token away
    assert given(effects) == [(ANA, BEN, 1)]
    assert of_kind(effects, "decharge_won") == [{"kind": "decharge_won", "player": ANA}]
    assert manches_won(g) == [2, 0] and g.view()["decharge_winner"] == ANA
    assert of_kind(effects, "game_over") == [{"kind": "game_over", "loser": BEN, "winner": ANA}]
    assert not of_kind(effects, "manche_lost") and g.fiches == [0, 0]


def test_classique10_the_decharge_is_played_after_a_charge_that_gave_one_player_every_token(
) -> None:
    g, effects = charge_all_to_ben()
    # The text knows no exception: Ana, at 0, wins the charge and plays the décharge.
    assert g.tokens == [0, 3] and not g.is_over and not of_kind(effects, "manche_lost")
    assert g.phase == "decharge" and g.order == [BEN, ANA]
    assert manches_won(g) == [1, 0] and not g.out[ANA]
    effects = play_round(g, "654", "651")  # Ben gives 2 to Ana
    assert given(effects) == [(BEN, ANA, 2)] and not g.is_over
    effects = play_round(g, "652", "653")  # Ana opens; Ben gives his last one
    assert given(effects) == [(BEN, ANA, 1)]
    assert of_kind(effects, "decharge_won") == [{"kind": "decharge_won", "player": BEN}]
    assert manches_won(g) == [1, 1]


def test_classique10_a_winner_with_no_token_gives_nothing_and_the_decharge_goes_on() -> None:
    g, _ = charge_all_to_ben()
    effects = play_round(g, "651", "654")  # Ana best with no token: nothing moves
    assert given(effects) == [] and g.tokens == [0, 3] and g.phase == "decharge"


def test_classique10_manches_split_play_a_belle_that_decides() -> None:
    g, _ = charge_all_to_ben()
    play_round(g, "654", "651")
    effects = play_round(g, "652", "653")  # Ben wins the décharge, Ana the charge
    assert not g.is_over
    assert {"kind": "manche", "manche": 2} in effects
    assert {"kind": "tokens_to_pot", "player": ANA, "count": 3} in effects
    assert g.phase == "charge" and g.pot == 3 and g.tokens == [0, 0]
    assert g.to_move == ANA  # the holder of every token lost the last round: Ana opens
    assert g.view()["charge_winner"] is None
    # The belle: Ana wins its charge and its décharge, and the game.
    play_round(g, "654", "651")  # Ben takes 2
    play_round(g, "653", "652")  # Ana takes 1
    effects = play_round(g, "654", "651")  # Ana gives her token away
    assert manches_won(g) == [3, 1]
    assert of_kind(effects, "game_over") == [{"kind": "game_over", "loser": BEN, "winner": ANA}]


def test_classique10_a_split_belle_calls_another_belle() -> None:
    g, _ = charge_all_to_ben()
    play_round(g, "654", "651")
    play_round(g, "652", "653")  # one manche each: belle, Ana opens
    play_round(g, "654", "651")  # Ben takes 2
    play_round(g, "653", "652")  # Ana takes 1: Ana wins the belle's charge
    play_round(g, "651", "654")  # Ana opens; Ben best gives 2: Ben is out
    assert manches_won(g) == [2, 2] and not g.is_over and g.manche == 3


def test_knob_split_manches_decharge_the_decharge_winner_wins() -> None:
    g, _ = charge_all_to_ben(split_manches="decharge")
    play_round(g, "654", "651")
    effects = play_round(g, "652", "653")
    assert manches_won(g) == [1, 1]
    assert of_kind(effects, "game_over") == [{"kind": "game_over", "loser": ANA, "winner": BEN}]


@pytest.mark.parametrize(("split", "over"), [("belle", False), ("decharge", True)])
def test_classique10_three_players_the_first_out_wins_the_decharge(split: str, over: bool) -> None:
    g = game("classique-10", players=3, pot=3, split_manches=split)
    play_round(g, "654", "651", "653")  # Ben takes 2
    play_round(g, "653", "652", "654")  # Ben opens: Cleo takes the last one
    assert g.tokens == [0, 2, 1] and manches_won(g) == [1, 0, 0]
    assert g.order == [CLEO, ANA, BEN]  # Ana at 0 plays the décharge
    effects = play_round(g, "654", "651", "652")  # Cleo gives her only token to Ana
    assert of_kind(effects, "player_out") == [{"kind": "player_out", "player": CLEO, "rank": 1}]
    effects = play_round(g, "654", "651")  # Ana opens and gives hers: Ben holds all 3
    assert given(effects) == [(ANA, BEN, 1)]
    assert of_kind(effects, "decharge_won") == [{"kind": "decharge_won", "player": CLEO}]
    assert manches_won(g) == [1, 0, 1]
    assert g.is_over is over
    if over:
        # The text names winners only: among three players nobody is named the loser.
        assert (g.winner, g.loser) == (CLEO, None)


def test_knob_split_manches_off_is_the_older_reading() -> None:
    # The charge's winner is a tally only, and whoever ends holding every token loses.
    g, effects = charge_all_to_ben(split_manches="off", zero_after_charge="wins")
    assert of_kind(effects, "manche_lost") == [{"kind": "manche_lost", "player": BEN, "manche": 1}]
    assert of_kind(effects, "game_over") == [{"kind": "game_over", "loser": BEN, "winner": ANA}]
    assert manches_won(g) == [0, 0] and not of_kind(effects, "charge_won")
    g = charge_to_ana(split_manches="off", zero_after_charge="wins")
    effects = play_round(g, "654", "651")
    assert not of_kind(effects, "decharge_won")
    assert of_kind(effects, "manche_lost") == [{"kind": "manche_lost", "player": BEN, "manche": 1}]
    assert manches_won(g) == [1, 0] and g.loser == BEN


def test_knob_zero_after_charge_wins_decides_the_decharge_at_once_when_nobody_can_play() -> None:
    g, effects = charge_all_to_ben(zero_after_charge="wins")
    # Ana, at 0, is out as a winner: the décharge has its winner before a throw.
    assert of_kind(effects, "player_out") == [{"kind": "player_out", "player": ANA, "rank": 1}]
    assert of_kind(effects, "decharge_won") == [{"kind": "decharge_won", "player": ANA}]
    assert manches_won(g) == [2, 0]
    assert g.is_over and (g.winner, g.loser) == (ANA, BEN)


@pytest.mark.parametrize(
    ("preset", "sentence"),
    [
        ("regles-21", "Si un joueur a déjà récupéré l'entièreté des jetons à la fin de la phase "
         "de Charge, il est déclaré perdant"),
        ("tim-11", "Si un joueur a reçu les 11 fiches de la banque, il est déclaré perdant"),
        ("kyt-11", "Le vainqueur est le premier qui parvient à ne plus avoir de jetons"),
    ],
)
def test_elsewhere_taking_the_whole_pot_still_loses_the_manche_at_once(
    preset: str, sentence: str
) -> None:
    assert new_game(preset, NAMES[:2]).knobs["split_manches"] == "off", sentence
    g = game(preset, pot=1)
    effects = play_round(g, "654", "651")
    assert of_kind(effects, "manche_lost") == [
        {"kind": "manche_lost", "player": BEN, "manche": 1}
    ]
    assert not of_kind(effects, "charge_won") and not of_kind(effects, "decharge_won")
