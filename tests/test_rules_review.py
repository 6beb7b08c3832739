"""The engine checked against the rules of docs/rules.md with independent oracles, knob by knob
and preset by preset.

The rankings and the token table are written out here as docs/rules.md prints them (and
compared with the page itself, so the page and the engine cannot drift apart), then random
rounds are played through the engine and their loser, winner and token amount checked against
a few lines of arithmetic from the rules that share no code with the engine.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from firmware_host.rules import PRESETS, new_game
from firmware_host.rules.fourd import best_combination, check_move
from firmware_host.rules.game421 import Game421
from firmware_host.rules.hands import BRELANS_RANKING, FICHES_RANKING, value_table
from firmware_host.rules.scripting import of_kind, open_with, play_round, play_turn

RULES_PAGE = Path(__file__).resolve().parents[1] / "docs" / "rules.md"

# The two rankings, best first, as docs/rules.md prints them.
RULES_FICHES = """
421 111 611 666 511 555 411 444 311 333 211 222 654 543 432 321
665 664 663 662 661 655 653 652 651 644 643 642 641 633 632 631 622 621
554 553 552 551 544 542 541 533 532 531 522 521 443 442 441 433 431 422
332 331 322 221
"""
RULES_BRELANS = """
421 111 666 555 444 333 222 654 543 432 321
665 664 663 662 661 655 653 652 651 644 643 642 641 633 632 631 622 621 611
554 553 552 551 544 542 541 533 532 531 522 521 511 443 442 441 433 431 422 411
332 331 322 311 211 221
"""
RANKING_TEXT = {"fiches": RULES_FICHES.split(), "brelans": RULES_BRELANS.split()}
PRESETS_421 = ["regles-21", "tim-11", "classique-10", "kyt-11"]
NAMES = ["Ana", "Ben", "Cleo", "Dan"]
ANA, BEN, CLEO, DAN = 0, 1, 2, 3


def table_value(hand: str, column: str) -> int:
    """The token table of docs/rules.md, one column per preset family, read cell by cell."""
    x11_is_x = column != "kyt-11"
    if hand == "421":
        return {"regles-21": 10, "classique-10": 10, "tim-11": 8, "kyt-11": 8}[column]
    if hand == "111":
        return 7
    if hand[0] == hand[1] == hand[2]:
        return int(hand[0])
    if hand[1:] == "11":
        return int(hand[0]) if x11_is_x else 1
    if hand in ("654", "543", "432", "321"):
        return 2
    if hand == "221":
        return 1 if column == "kyt-11" else 2
    return 1


# -- rankings and values, literally --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "engine"), [("fiches", FICHES_RANKING), ("brelans", BRELANS_RANKING)]
)
def test_rankings_are_the_written_ones_word_for_word(name: str, engine: tuple[str, ...]) -> None:
    assert list(engine) == RANKING_TEXT[name]
    assert len(set(engine)) == 56


def test_rankings_are_printed_in_the_rules_page() -> None:
    # The page's code blocks made only of three-digit hands are the two rankings.
    blocks, block = [], None
    for line in RULES_PAGE.read_text(encoding="utf-8").splitlines():
        if line.startswith("```") and block is None:
            block = []
        elif line.startswith("```"):
            blocks.append(block)
            block = None
        elif block is not None:
            block.extend(line.split())
    rankings = [b for b in blocks if b and all(re.fullmatch("[1-6]{3}", w) for w in b)]
    assert rankings == [list(FICHES_RANKING), list(BRELANS_RANKING)]


@pytest.mark.parametrize("preset", PRESETS_421)
def test_every_hand_is_worth_its_table_value(preset: str) -> None:
    knobs = PRESETS[preset]
    table = value_table(knobs["ranking"], knobs["value_421"], knobs["nenette"])
    expected = {hand: table_value(hand, preset) for hand in RANKING_TEXT["fiches"]}
    assert table == expected


# -- random rounds against an oracle -------------------------------------------------------


def oracle_keys(knobs: dict[str, Any], made: list[tuple[str, int]]) -> list[tuple[int, int]]:
    """Sort keys of (hand, throws) made in this order: rank, then throws when they count.

    With ``second_nenette = beats`` (regles-21: "il bat la nénette précédente et ainsi de
    suite") each nénette beats every nénette thrown before it, whatever the throws."""
    keys = []
    nenettes_before = 0
    for hand, throws in made:
        rank = RANKING_TEXT[knobs["ranking"]].index(hand)
        if hand == "221" and knobs["second_nenette"] == "beats":
            keys.append((rank, -nenettes_before))
            nenettes_before += 1
        else:
            keys.append((rank, throws if knobs["fewer_throws_breaks_tie"] else 0))
    return keys


def oracle_value(knobs: dict[str, Any], hand: str) -> int:
    return table_value(hand, _column(knobs))


def _column(knobs: dict[str, Any]) -> str:
    """The value column these knobs make (x11 and the nénette follow the knobs)."""
    if (knobs["ranking"], knobs["nenette"], knobs["value_421"]) == ("brelans", "plain", 8):
        return "kyt-11"
    if knobs["ranking"] == "fiches" and knobs["nenette"] != "plain":
        return "regles-21" if knobs["value_421"] == 10 else "tim-11"
    raise AssertionError(f"no value column for {knobs}")


def oracle_amount(knobs: dict[str, Any], loser_hand: str, payer_hand: str, own: bool) -> int:
    """docs/rules.md "Charge", "Décharge" and "Nénette", before the pot / winner limit."""
    nenette = knobs["nenette"]
    if own:  # charge_pays = loser: the loser's own hand, nénette included
        return oracle_value(knobs, loser_hand)
    if loser_hand == "221" and nenette == "fixed-2":
        return 2
    amount = oracle_value(knobs, payer_hand)
    if loser_hand == "221" and nenette == "plus-2":
        amount += 2
    return amount


VARIANTS = [
    ("regles-21", {}),
    ("regles-21", {"charge_pays": "best"}),
    ("tim-11", {}),
    ("tim-11", {"charge_pays": "loser"}),
    ("tim-11", {"nenette": "plus-2"}),
    ("classique-10", {"charge_throws": 1}),
    ("kyt-11", {}),
    ("kyt-11", {"charge_pays": "loser"}),
    ("regles-21", {"second_nenette": "rampo"}),
    ("tim-11", {"second_nenette": "beats"}),
    ("kyt-11", {"second_nenette": "beats", "fewer_throws_breaks_tie": True}),
]
# Weighted towards the hands whose values differ between the knobs.
SPECIAL = ["421", "111", "611", "666", "211", "222", "654", "321", "221", "221", "311"]


def random_hand(rng: random.Random) -> str:
    return rng.choice(SPECIAL) if rng.random() < 0.5 else rng.choice(FICHES_RANKING)


@pytest.mark.parametrize(("preset", "overrides"), VARIANTS)
def test_random_charge_rounds_follow_the_rules(preset: str, overrides: dict[str, Any]) -> None:
    rng = random.Random(f"charge {preset} {overrides}")
    checked = 0
    for _ in range(60):
        players = rng.randint(2, 4)
        pot = rng.choice([3, 11, 21])
        g = new_game(preset, NAMES[:players], {**overrides, "pot": pot, "charge_throws": 1})
        open_with(g, 0)
        knobs = g.knobs
        hands = [random_hand(rng) for _ in range(players)]
        keys = oracle_keys(knobs, [(h, 1) for h in hands])  # Ana opens: seat order
        worst = max(keys)
        if keys.count(worst) > 1:
            continue  # a rampo: checked by the scenario tests
        loser = keys.index(worst)
        best = hands[keys.index(min(keys))]
        own = knobs["charge_pays"] == "loser"
        expected = min(oracle_amount(knobs, hands[loser], best, own), pot)
        effects = play_round(g, *hands)
        assert of_kind(effects, "round_lost")[0]["player"] == loser, hands
        taken = [(e["player"], e["count"]) for e in of_kind(effects, "tokens_from_pot")]
        assert taken[0] == (loser, expected), (hands, knobs)
        checked += 1
    assert checked > 20


def _hands_for(rng: random.Random, final: str, throws: int) -> tuple[str, ...]:
    return (*(rng.choice(FICHES_RANKING) for _ in range(throws - 1)), final)


@pytest.mark.parametrize(("preset", "overrides"), VARIANTS)
def test_random_decharge_rounds_follow_the_rules(preset: str, overrides: dict[str, Any]) -> None:
    rng = random.Random(f"decharge {preset} {overrides}")
    checked = 0
    for _ in range(50):
        players = rng.randint(2, 4)
        private = rng.choice([1, 3, 12])
        knobs_in = {**overrides, "pot": 1, "private_tokens": private, "throw_limit": "free"}
        g = new_game(preset, NAMES[:players], knobs_in)
        open_with(g, 0)
        play_round(g, *(["654"] + ["651"] + ["653"] * (players - 2)))  # Ben takes the pot
        assert g.phase == "decharge" and g.to_move == BEN
        knobs = g.knobs
        order = g.order
        made = [(random_hand(rng), rng.randint(1, 3)) for _ in order]
        keys = oracle_keys(knobs, made)
        if keys.count(max(keys)) > 1 or keys.count(min(keys)) > 1:
            continue
        loser = order[keys.index(max(keys))]
        winner = order[keys.index(min(keys))]
        loser_hand = made[keys.index(max(keys))][0]
        winner_hand = made[keys.index(min(keys))][0]
        holds = g.tokens[winner]
        expected = min(oracle_amount(knobs, loser_hand, winner_hand, own=False), holds)
        effects: list[dict[str, Any]] = []
        for hand, throws in made:
            effects += play_turn(g, *_hands_for(rng, hand, throws))
        assert of_kind(effects, "round_lost")[0]["player"] == loser, made
        assert of_kind(effects, "round_won")[0]["player"] == winner, made
        moved = [(e["from"], e["to"], e["count"]) for e in of_kind(effects, "tokens_between")]
        assert moved == [(winner, loser, expected)], (made, knobs)
        assert bool(of_kind(effects, "player_out")) is (expected == holds)
        checked += 1
    assert checked > 15


# -- end of the charge ---------------------------------------------------------------------


def test_classique10_counts_the_charge_win_as_a_manche_won() -> None:
    g = new_game("classique-10", NAMES[:3], {"pot": 3, "charge_pays": "loser", "charge_throws": 1})
    open_with(g, ANA)
    play_round(g, "654", "651", "653")  # Ben 1
    play_round(g, "651", "654", "653")  # Ben 2
    effects = play_round(g, "654", "651", "653")  # Ben opens; Cleo takes the last one
    assert g.tokens == [0, 2, 1]
    assert of_kind(effects, "charge_won") == [
        {"kind": "charge_won", "player": ANA, "manche_won": True}
    ]
    assert [p["manches_won"] for p in g.view()["players"]] == [1, 0, 0]


@pytest.mark.parametrize("preset", ["regles-21", "tim-11", "kyt-11"])
def test_elsewhere_the_charge_winner_is_shown_only(preset: str) -> None:
    g = new_game(preset, NAMES[:3], {"pot": 3, "charge_pays": "loser"})
    open_with(g, ANA)
    play_round(g, "654", "651", "653")
    play_round(g, "651", "654", "653")
    effects = play_round(g, "654", "651", "653")
    assert of_kind(effects, "charge_won") == [
        {"kind": "charge_won", "player": ANA, "manche_won": False}
    ]
    assert g.view()["charge_winner"] == ANA
    assert [p["manches_won"] for p in g.view()["players"]] == [0, 0, 0]


def test_the_charge_win_knob_is_settable_on_its_own() -> None:
    g = new_game("tim-11", NAMES[:3], {"pot": 3, "charge_pays": "loser", "charge_win_counts": True})
    open_with(g, ANA)
    play_round(g, "654", "651", "653")
    play_round(g, "651", "654", "653")
    play_round(g, "654", "651", "653")
    assert [p["manches_won"] for p in g.view()["players"]] == [1, 0, 0]


# -- throw limits ----------------------------------------------------------------------------


@pytest.mark.parametrize("limit", ["exact", "at-most", "free"])
@pytest.mark.parametrize("charge_throws", [1, 3])
@pytest.mark.parametrize("opener_throws", [1, 2, 3])
def test_throw_limits_bind_the_others_in_charge_and_decharge(
    limit: str, charge_throws: int, opener_throws: int
) -> None:
    knobs = {"throw_limit": limit, "charge_throws": charge_throws, "pot": 1, "private_tokens": 5}
    g = new_game("tim-11", NAMES[:2], knobs)
    open_with(g, ANA)
    # Charge: the opener's allowance is charge_throws; the other is bound by what they did.
    assert g.throws_allowed == charge_throws
    used = min(opener_throws, charge_throws)
    play_turn(g, *(["652", "653", "654"][:used]))
    bound = {"exact": used, "at-most": used, "free": charge_throws}[limit]
    assert (g.to_move, g.throws_allowed, g.throws_required) == (
        BEN,
        bound,
        used if limit == "exact" else 1,
    )
    play_turn(g, *(["651", "651", "651"][:bound]))
    # Décharge (Ben lost): up to 3 for the opener, whatever charge_throws.
    assert g.phase == "decharge" and g.to_move == BEN and g.throws_allowed == 3
    play_turn(g, *(["652", "653", "654"][:opener_throws]))
    bound = {"exact": opener_throws, "at-most": opener_throws, "free": 3}[limit]
    assert (g.to_move, g.throws_allowed) == (ANA, bound)
    assert g.view()["throws_label"] == ["sec", "en 2", "à fond"][opener_throws - 1]


# -- rampo -------------------------------------------------------------------------------------


def test_decharge_rampos_for_worst_then_best_only_among_the_tied() -> None:
    g = new_game("tim-11", NAMES, {"pot": 1, "private_tokens": 10})
    open_with(g, ANA)
    play_round(g, "654", "651", "653", "652")  # Ben takes the pot; Ben opens: Ben Cleo Dan Ana
    effects = play_round(g, "611", "652", "611", "652")
    # Worst tie Cleo/Ana: Ana threw last and starts; only they throw, one coup sec each.
    assert of_kind(effects, "rampo") == [
        {"kind": "rampo", "players": [ANA, CLEO], "stake": "worst"}
    ]
    assert g.throws_allowed == 1
    effects = play_round(g, "421", "432")
    assert of_kind(effects, "round_lost") == []  # the best tie still needs its rampo
    assert of_kind(effects, "rampo") == [{"kind": "rampo", "players": [DAN, BEN], "stake": "best"}]
    effects = play_round(g, "221", "321")
    # Cleo lost, Ben won; the original hands pay: 611 is worth 6 (not the rampo's 321).
    moved = [(e["from"], e["to"], e["count"]) for e in of_kind(effects, "tokens_between")]
    assert moved == [(BEN, CLEO, 6)]
    assert g.to_move == CLEO  # the loser opens the next round


def test_fewer_throws_breaks_the_tie_before_any_rampo() -> None:
    g = new_game("regles-21", NAMES[:2], {"pot": 1, "private_tokens": 10})
    open_with(g, ANA)
    play_round(g, "654", "651")
    effects = play_round(g, ("652", "611"), "611")  # Ben 611 in 2, Ana 611 sec
    assert not of_kind(effects, "rampo")
    assert of_kind(effects, "round_lost")[0]["player"] == BEN
    g = new_game("tim-11", NAMES[:2], {"pot": 1, "private_tokens": 10, "throw_limit": "free"})
    open_with(g, ANA)
    play_round(g, "654", "651")
    effects = play_round(g, ("652", "611"), "611")
    assert of_kind(effects, "rampo")[0]["players"] == [ANA, BEN]


# -- opening, players, manches -----------------------------------------------------------------


def test_lowest_hand_opening_ties_throw_again() -> None:
    g = new_game("kyt-11", NAMES[:3])
    effects: list[dict[str, Any]] = []
    for hand in ("311", "421", "311"):  # brelans only: 311 is among the weakest
        effects += g.apply({"type": "throw", "faces": [int(c) for c in hand]})
    assert of_kind(effects, "opening_tie") == [{"kind": "opening_tie", "players": [ANA, CLEO]}]
    g.apply({"type": "throw", "faces": [6, 5, 4]})
    g.apply({"type": "throw", "faces": [2, 2, 1]})
    assert g.phase == "charge" and g.order == [CLEO, ANA, BEN]


@pytest.mark.parametrize("preset", PRESETS_421)
def test_ten_players_play_a_whole_game(preset: str) -> None:
    from firmware_host.rules.simulation import play

    game, _ = play(preset, [f"P{i}" for i in range(10)], random.Random(3))
    view = game.view()
    assert game.is_over and len(view["players"]) == 10
    assert view["pot"] + sum(p["tokens"] for p in view["players"]) == view["total_tokens"]
    if game.knobs["split_manches"] == "off":
        assert max(p["fiches"] for p in view["players"]) == game.knobs["manches_to_lose"]
    else:
        # classique-10: the last décharge's winner wins, and under a belle the last charge
        # went to nobody or to the same player; no fiche de manche is given.
        assert game.winner == game.decharge_winner is not None
        assert game.charge_winner in (None, game.winner)
        assert max(p["fiches"] for p in view["players"]) == 0
        assert view["players"][game.winner]["manches_won"] >= 1


# -- 4D ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("faces", "combination", "points"),
    [  # the seed's own examples
        ([1, 1, 3, 6], "pair", 4),
        ([4, 5, 6, 2], "trio", 11),
        ([4, 4, 4, 1], "brelan", 10),
        ([4, 4, 2, 2], "double_pair", 11),
        ([5, 5, 5, 5], "carre", 13),
        ([3, 4, 5, 6], "suite", 16),
        ([2, 3, 4, 4], "trio", 9),  # a pair and a trio: the trio is declared
        ([2, 3, 4, 5, 6], "quinte", 18),
    ],
)
def test_4d_scores_the_seed_table(faces: list[int], combination: str, points: int) -> None:
    assert best_combination(faces) == (combination, points)


def test_4d_the_locked_die_moves_round_the_square() -> None:
    g = new_game("4d", NAMES[:2])
    g.apply({"type": "throw", "faces": [1, 1, 1, 1]})
    fars = []
    for _ in range(4):
        view = g.view()
        fars.append(view["square"]["far"]["pos"])
        near = view["square"]["near"]["pos"]
        faces = list(g.faces)
        faces[near] = 2 if faces[near] != 2 else 3
        g.apply({"type": "turn", "faces": faces})
    assert fars == [2, 3, 0, 1]
    assert check_move([1, 2, 3, 4], [1, 2, 3, 4], 0) == {"code": "nothing_changed", "values": {}}


# -- the simulate log, read as a player --------------------------------------------------------


def narrated(preset: str, knobs: dict[str, Any]) -> tuple[Game421, list[str], Any]:
    """A scripted game whose every input is also told to a Narrator; returns its lines."""
    from firmware_host.rules.narrate import Narrator

    lines: list[str] = []
    g = new_game(preset, NAMES[:3], knobs)
    narrator = Narrator(g.players, preset, g.knobs, 0, lines.append)
    narrator.header()
    apply = g.apply

    def told(event: dict[str, Any]) -> list[dict[str, Any]]:
        effects = apply(event)
        narrator(g, event, effects)
        return effects

    g.apply = told  # type: ignore[method-assign]
    return g, lines, narrator


def test_log_header_says_the_opener_binds_the_charge_too() -> None:
    _, lines, _ = narrated("classique-10", {})
    header = "\n".join(lines)
    assert "charge: up to 3 throws" in header
    assert "after the opener: exactly the opener's throws" in header
    assert "décharge exactly" not in header
    assert "the charge winner and the décharge winner each win a manche" in header
    assert "one each: a belle decides" in header
    _, lines, _ = narrated("classique-10", {"split_manches": "off"})
    assert "first to lose 1 manche loses the game · the charge winner wins a manche" in lines[2]
    _, lines, _ = narrated("classique-10", {"one_round": True})
    assert "pot" not in "\n".join(lines) and "single round" in lines[1]


def test_log_tells_a_charge_won_and_a_winner_with_nothing_to_give() -> None:
    g, lines, _ = narrated("regles-21", {"pot": 3})
    open_with(g, ANA)
    play_round(g, "654", "651", "653")  # Ben takes 1 (his own hand's value)
    play_round(g, "651", "654", "653")  # Ben takes 1
    play_round(g, "654", "651", "653")  # Cleo takes the last one; Ana at 0 stays in
    assert "  End of the charge: Ana holds the fewest" in lines
    assert g.order == [CLEO, ANA, BEN]
    play_round(g, "652", "421", "651")
    assert "    Ana (421) has no token to give  │ pot  0 · Ana 0 Ben 2 Cleo 1" in lines
    g, lines, _ = narrated("classique-10", {"pot": 3, "charge_pays": "loser", "charge_throws": 1})
    open_with(g, ANA)
    play_round(g, "654", "651", "653")
    play_round(g, "651", "654", "653")
    play_round(g, "654", "651", "653")
    assert "  End of the charge: Ana holds the fewest and wins a manche" in lines


@pytest.mark.parametrize("split", ["belle", "decharge"])
def test_log_tells_the_decharge_winner_and_what_the_manches_decide(split: str) -> None:
    g, lines, _ = narrated("classique-10", {"pot": 3, "split_manches": split})
    open_with(g, ANA)
    play_round(g, "654", "651", "653")  # Ben takes 2
    play_round(g, "653", "652", "654")  # Cleo takes 1: Ana, at 0, wins the charge
    play_round(g, "654", "651", "652")  # Cleo gives her token to Ana: out first
    play_round(g, "654", "651")  # Ana gives hers to Ben, who holds all 3
    assert "  End of the charge: Ana holds the fewest and wins a manche" in lines
    assert (
        "  End of the décharge: Cleo was the first to give every token away and wins a manche"
        in lines
    )
    if split == "belle":
        assert "  One manche each: a belle, a charge and a décharge again" in lines
        assert not any(line.startswith("Game over") for line in lines)
        assert any(line.startswith("─── Manche 2 · charge · pot 3") for line in lines)
    else:
        assert lines[-1] == "Game over after 4 rounds: Cleo wins the game."


# -- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"knobs": [1]}, "knobs must be"),
        ({"preset": ["tim-11"]}, "unknown preset"),
        ({"knobs": {"pot": "abc"}}, "cannot be 'abc'"),
    ],
)
def test_a_malformed_save_is_refused_with_a_reason(change: dict[str, Any], message: str) -> None:
    from firmware_host.rules import RuleError, game_from_json

    data = {**new_game("tim-11", NAMES[:2]).to_json(), **change}
    with pytest.raises(RuleError, match=message):
        game_from_json(data)


def test_new_game_refuses_knobs_that_are_not_a_mapping() -> None:
    from firmware_host.rules import RuleError

    with pytest.raises(RuleError, match="knobs must be"):
        new_game("tim-11", NAMES[:2], ["pot", 3])  # type: ignore[arg-type]
