"""4D: the square's geometry, the move checker, the scorer and whole games."""

from __future__ import annotations

import json
import random
import re
from itertools import product

import pytest
from helpers import ListJournal

from firmware_host.rules import RuleError, best_combination, check_move, game_from_json, new_game
from firmware_host.rules.fourd import Game4D, legal_results, next_near, roles
from firmware_host.rules.simulation import choose_presentation, choose_rotation, policy_4d
from firmware_host.rules.texts import render_text


def test_roles_seen_from_the_player_to_move() -> None:
    assert roles(0) == {"near": 0, "left": 1, "right": 3, "far": 2}
    assert roles(1) == {"near": 1, "left": 2, "right": 0, "far": 3}
    assert roles(3)["far"] == 1


OLD = [1, 2, 3, 4]  # near 0 (1), left 1 (2), far 2 (3), right 3 (4)


@pytest.mark.parametrize(
    ("new", "move"),
    [
        ([2, 2, 3, 4], "near"),
        ([5, 2, 3, 4], "near"),
        ([1, 3, 3, 4], "left"),
        ([1, 2, 3, 2], "right"),
        ([3, 6, 3, 4], "left+near"),
        ([4, 2, 3, 6], "right+near"),
    ],
)
def test_the_six_moves_are_legal(new: list[int], move: str) -> None:
    assert check_move(OLD, new, near=0) is None, move


@pytest.mark.parametrize(
    ("new", "code", "english", "french"),
    [
        ([1, 2, 2, 4], "far_locked", "far die .* locked", "dé du fond .* bloqué"),
        ([6, 2, 3, 4], "opposite_face", "near die went from 1 to 6, its opposite face",
         "le dé près est passé de 1 à 6, sa face opposée"),
        ([1, 5, 3, 4], "opposite_face", "left die went from 2 to 5", "dé de gauche est passé"),
        ([1, 2, 3, 4], "nothing_changed", "nothing changed", "rien n'a changé"),
        ([1, 3, 3, 5], "two_moves_sides", "left and right dice both changed",
         "gauche et de droite ont changé"),
        ([2, 3, 3, 5], "two_moves_all", "near, left and right dice all changed",
         "tous les trois"),
        ([1, 2, 3], "move_face_count", "3 faces given; this game has 4 dice",
         "3 face\\(s\\) données ; cette partie a 4 dés"),
        ([0, 2, 3, 4], "die_face", "1 to 6, not 0", "1 à 6, pas 0"),
    ],
)
def test_illegal_moves_say_why(new: list[int], code: str, english: str, french: str) -> None:
    why = check_move(OLD, new, near=0)
    assert why is not None and why["code"] == code, why
    assert re.search(english, render_text(why, "en")), render_text(why, "en")
    assert re.search(french, render_text(why, "fr")), render_text(why, "fr")
    with pytest.raises(RuleError, match=english) as refused:  # the game refuses it alike
        started().apply({"type": "turn", "faces": new})
    assert (refused.value.code, refused.value.values) == (why["code"], why["values"])


def test_the_fifth_die_must_be_turned_every_turn() -> None:
    old = [1, 2, 3, 4, 5]
    assert check_move(old, [2, 2, 3, 4, 5], 0, fifth_die=True) == {
        "code": "fifth_not_turned", "values": {}}
    opposite = check_move(old, [2, 2, 3, 4, 2], 0, fifth_die=True)
    assert render_text(opposite, "en").startswith("the fifth die went from 5 to 2")
    assert render_text(opposite, "fr").startswith("le cinquième dé est passé de 5 à 2")
    assert check_move(old, [2, 2, 3, 4, 6], 0, fifth_die=True) is None


@pytest.mark.parametrize(
    ("faces", "combination", "points"),
    [
        ([1, 1, 3, 6], "pair", 4),  # paire de un = 3 + 1
        ([6, 5, 4, 1], "trio", 11),  # trio à six = 5 + 6
        ([4, 4, 4, 1], "brelan", 10),  # brelan de quatre = 6 + 4
        ([4, 4, 2, 2], "double_pair", 11),  # double paire = 7 + 4
        ([5, 5, 5, 5], "carre", 13),  # carré de cinq = 8 + 5
        ([3, 4, 5, 6], "suite", 16),  # suite à six = 10 + 6
        ([4, 4, 5, 6], "trio", 11),  # a trio and a pair: the trio counts
        # "Lorsqu'un joueur réalise à la fois une paire et un trio, il déclare le trio" (a
        # player who makes both a pair and a trio declares the trio), even where the pair
        # would score more: the pair of sixes is worth 9, the trio 1-2-3 only 8.
        ([6, 6, 1, 2, 3], "trio", 8),
        ([5, 5, 1, 2, 3], "trio", 8),  # a tie on points: the trio too
        ([6, 6, 1, 2, 4], "pair", 9),  # no trio: the pair
        ([2, 2, 3, 3, 4], "double_pair", 10),  # a double pair is no pair: the best counts
        ([1, 3, 5, 5], "pair", 8),
        ([1, 3, 5, 1], "pair", 4),
        ([2, 3, 4, 5, 6], "quinte", 18),
        ([1, 2, 4, 6], None, 0),
    ],
)
def test_best_combination(faces: list[int], combination: str | None, points: int) -> None:
    assert best_combination(faces) == (combination, points)


@pytest.mark.parametrize(("pairs", "expected"), [(True, ("pair", 9)), (False, (None, 0))])
def test_knob_pairs_score(pairs: bool, expected: tuple) -> None:
    assert best_combination([6, 6, 1, 3], pairs_score=pairs) == expected
    assert best_combination([6, 6, 1, 1], pairs_score=pairs) == ("double_pair", 13)
    g = new_game("4d", ["Ana", "Ben"], pairs_score=pairs)
    g.apply({"type": "throw", "faces": [6, 2, 1, 3]})
    effects = g.apply({"type": "turn", "faces": [6, 6, 1, 3]})  # Ben moves first
    assert effects[0] == {
        "kind": "scored",
        "player": 1,
        "combination": expected[0],
        "points": expected[1],
    }


def started(**knobs: object) -> Game4D:
    """Ana has thrown; Ben, facing position 0 (Ana did not present the square), moves first."""
    g = new_game("4d", ["Ana", "Ben"], knobs)
    g.apply({"type": "throw", "faces": [1, 2, 3, 4, 5][: g.size]})
    return g


def test_a_game_turns_the_square_after_each_move() -> None:
    g = started()
    view = g.view()
    assert view["phase"] == "present" and view["to_move"] == 1 and view["presenter"] == 0
    assert view["square"] == {
        "near": {"pos": 0, "face": 1},
        "left": {"pos": 1, "face": 2},
        "right": {"pos": 3, "face": 4},
        "far": {"pos": 2, "face": 3},
    }
    effects = g.apply({"type": "turn", "faces": [3, 2, 3, 4]})  # near 1 -> 3: trio 2-3-4
    assert effects[0] == {"kind": "scored", "player": 1, "combination": "trio", "points": 9}
    assert effects[-1]["kind"] == "turn" and effects[-1]["player"] == 0
    view = g.view()
    assert view["scores"] == [0, 9] and view["to_move"] == 0
    assert view["phase"] == "play" and view["presenter"] is None
    assert view["square"]["far"]["pos"] == 3  # the die Ben could not touch is now free
    assert view["last_move"] == {
        "player": 1,
        "moved": ["near"],
        "combination": "trio",
        "points": 9,
        "rotate": "cw",
    }
    with pytest.raises(RuleError, match="far die"):
        g.apply({"type": "turn", "faces": [3, 2, 3, 5]})
    g.apply({"type": "turn", "faces": [3, 2, 5, 4]})  # pos 2 is Ana's left die now


def test_knob_target_ends_the_game() -> None:
    g = started(target=10)
    effects = g.apply({"type": "turn", "faces": [5, 6, 3, 4]})  # suite 3-6: 16
    assert g.is_over and g.view()["winner"] == 1 and g.view()["loser"] == 0
    assert effects[-1] == {"kind": "game_over", "loser": 0, "winner": 1}
    assert [e["phase"] for e in effects if e["kind"] == "phase"] == ["over"]
    g = started(target=100)
    g.apply({"type": "turn", "faces": [5, 6, 3, 4]})
    assert not g.is_over


@pytest.mark.parametrize("fifth", [False, True])
def test_knob_fifth_die(fifth: bool) -> None:
    g = new_game("4d", ["Ana", "Ben"], fifth_die=fifth)
    with pytest.raises(RuleError, match=f"starts with {5 if fifth else 4} dice"):
        g.apply({"type": "throw", "faces": [1, 2, 3, 4, 5][: 4 if fifth else 5]})
    g.apply({"type": "throw", "faces": [1, 2, 3, 4, 5][: 5 if fifth else 4]})
    assert g.view()["fifth"] == (5 if fifth else None)


def test_illegal_input_changes_nothing() -> None:
    g = started()
    before = g.view()
    for event, reason in (
        ({"type": "throw", "faces": [1, 2, 3, 4]}, "thrown only once"),
        ({"type": "turn", "faces": [1, 2, 3, 4]}, "nothing changed"),
        ({"type": "turn", "faces": [6, 2, 3, 4]}, "opposite"),
        ({"type": "turn", "faces": [2, 2, 3, 4], "player": 0}, "not Ana's turn"),
        ({"type": "stop"}, "unknown event type 'stop'"),
    ):
        with pytest.raises(RuleError, match=reason):
            g.apply(event)
        assert g.view() == before
    fresh = new_game("4d", ["Ana", "Ben"])
    with pytest.raises(RuleError, match="thrown once first"):
        fresh.apply({"type": "turn", "faces": [1, 2, 3, 4]})


def test_undo_json_and_replay() -> None:
    g = started()
    g.apply({"type": "turn", "faces": [3, 2, 3, 4]})
    before = g.view()
    g.apply({"type": "turn", "faces": [3, 2, 5, 4]})
    data = json.loads(json.dumps(g.to_json()))
    assert game_from_json(data).view() == g.view()
    g.undo()
    assert g.view() == before


@pytest.mark.parametrize("near", [0, 1, 2, 3])
def test_legal_results_are_exactly_the_moves_the_checker_accepts(near: int) -> None:
    old = [2, 5, 1, 3]
    results = {tuple(faces) for _, faces in legal_results(old, near)}
    assert len(legal_results(old, near)) == 4 + 4 + 4 + 16 + 16
    accepted = {
        faces for faces in product(range(1, 7), repeat=4) if check_move(old, faces, near) is None
    }
    assert results == accepted


def test_legal_results_with_the_fifth_die() -> None:
    old = [2, 5, 1, 3, 6]
    results = legal_results(old, 0, fifth_die=True)
    assert len(results) == 44 * 4
    assert all(check_move(old, faces, 0, fifth_die=True) is None for _, faces in results)
    g = started(fifth_die=True)
    assert len(g.legal_moves()) == 176


@pytest.mark.parametrize(
    ("rotate", "near", "locked"),
    [(None, 1, 3), ("cw", 1, 3), ("ccw", 3, 1)],
)
def test_the_rotation_picks_the_die_the_opponent_cannot_touch(
    rotate: str | None, near: int, locked: int
) -> None:
    g = started()  # Ben faces position 0: left die 1, right die 3
    event = {"type": "turn", "faces": [3, 2, 3, 4]}
    if rotate is not None:
        event["rotate"] = rotate
    effects = g.apply(event)
    assert effects[-1] == {
        "kind": "turn",
        "player": 0,
        "throws_allowed": 0,
        "near": near,
        "far": locked,
    }
    view = g.view()
    assert view["square"]["near"]["pos"] == near and view["square"]["far"]["pos"] == locked
    assert view["last_move"]["rotate"] == (rotate or "cw")
    # cw locks Ben's right die (position 3) for Ana, ccw his left die (position 1).
    faces = list(g.faces)
    faces[locked] = 1 if faces[locked] != 1 else 3
    with pytest.raises(RuleError, match="far die"):
        g.apply({"type": "turn", "faces": faces})
    faces = list(g.faces)
    other = 4 - locked  # the die Ben's other rotation would have locked is Ana's to turn
    faces[other] = 1 if faces[other] not in (1, 6) else 3
    g.apply({"type": "turn", "faces": faces, "rotate": "ccw"})
    assert g.view()["square"]["near"]["pos"] == next_near(near, "ccw")


@pytest.mark.parametrize("bad", ["left", "CW", "", None, 1, ["cw"]])
def test_a_bad_rotation_is_refused_and_changes_nothing(bad: object) -> None:
    g = started()
    before, history = g.view(), list(g.history)
    with pytest.raises(RuleError, match=r"'rotate' .*'cw', 'ccw', not"):
        g.apply({"type": "turn", "faces": [3, 2, 3, 4], "rotate": bad})
    assert g.view() == before and g.history == history


def test_ccw_is_journaled_saved_replayed_and_undone() -> None:
    g = started()
    g.apply({"type": "turn", "faces": [3, 2, 3, 4], "rotate": "ccw"})
    before = g.view()
    g.apply({"type": "turn", "faces": [3, 2, 1, 4], "rotate": "ccw"})  # Ana faces 3: her right
    assert g.events[1:] == [
        {"type": "turn", "faces": [3, 2, 3, 4], "rotate": "ccw"},
        {"type": "turn", "faces": [3, 2, 1, 4], "rotate": "ccw"},
    ]
    assert g.view()["square"]["near"]["pos"] == 2
    data = json.loads(json.dumps(g.to_json()))
    rebuilt = game_from_json(data)
    assert rebuilt.view() == g.view() and rebuilt.events == g.events
    data["events"][1].pop("rotate")  # played clockwise instead: another game
    with pytest.raises(RuleError, match="stored view"):
        game_from_json(data)
    g.undo()
    assert g.view() == before and g.view()["square"]["near"]["pos"] == 3


@pytest.mark.parametrize(
    ("faces", "rotate", "left_to_ana"),
    [
        # ccw locks Ben's left die (the 1): Ana's best is 14; locking the 4 would leave her 16.
        ([2, 1, 3, 4], "ccw", 14),
        # cw locks Ben's right die (the 1): Ana's best is 14; locking the 2 would leave her 15.
        ([4, 2, 3, 1], "cw", 14),
    ],
)
def test_the_simulated_player_locks_the_die_most_useful_to_the_opponent(
    faces: list[int], rotate: str, left_to_ana: int
) -> None:
    g = started()
    assert choose_rotation(g, faces) == rotate
    g.apply({"type": "turn", "faces": faces, "rotate": rotate})
    assert max(best_combination(new)[1] for _, new in g.legal_moves()) == left_to_ana


def test_the_simulated_player_sends_a_rotation_and_plays_whole_games() -> None:
    rng = random.Random(5)
    for _ in range(5):
        g = new_game("4d", ["Ana", "Ben"], target=60)
        while not g.is_over:
            event = policy_4d(g, rng)
            assert event["type"] in ("throw", "present") or event["rotate"] in ("cw", "ccw")
            g.apply(event)
        assert game_from_json(json.loads(json.dumps(g.to_json()))).view() == g.view()


@pytest.mark.parametrize(("preset", "event", "unused"), [
    ("tim-11", {"type": "stop", "faces": [4, 2, 1]}, "'faces'"),
    ("tim-11", {"type": "throw", "faces": [3], "rotate": "cw"}, "'rotate'"),
    ("tim-11", {"type": "throw", "faces": [3], "note": "x"}, "'note'"),
    ("4d", {"type": "throw", "faces": [1, 2, 3, 4], "keep": [0]}, "'keep'"),
    ("4d", {"type": "throw", "faces": [1, 2, 3, 4], "rotate": "cw"}, "'rotate'"),
])
def test_an_event_with_fields_it_does_not_use_is_refused(preset: str, event: dict,
                                                         unused: str) -> None:
    from firmware_host.hub import GameHub

    journaled = ListJournal()
    store = GameHub()
    store.open_journal(journaled)  # type: ignore[arg-type]
    store.start_game(preset, ["Ana", "Ben"])
    before = store.snapshot()["game"]
    with pytest.raises(RuleError, match=f"takes no {unused}"):
        store.apply(event)
    assert store.snapshot()["game"] == before
    assert [a["action"] for a in journaled] == ["new_game"]  # nothing else was journaled


# -- the first move: the thrower presents the square, the opponent moves first ----------------

SEED_OPENING = (
    "Le premier joueur tourne ce carré de façon à présenter trois dés à son adversaire. "
    "L'adversaire ne pourra modifier la valeur du dé dont il est le plus éloigné."
)
# The first player turns the square so as to present three dice to the opponent. The
# opponent cannot change the value of the die farthest from them.


def test_the_thrower_presents_the_square_and_the_opponent_moves_first() -> None:
    assert "présenter trois dés à son adversaire" in SEED_OPENING
    g = new_game("4d", ["Ana", "Ben"])
    effects = g.apply({"type": "throw", "faces": [6, 5, 3, 2]})
    assert effects == [
        {"kind": "phase", "phase": "present"},
        {"kind": "turn", "player": 1, "throws_allowed": 0, "near": 0, "far": 2},
    ]
    view = g.view()
    assert (view["phase"], view["to_move"], view["presenter"]) == ("present", 1, 0)
    assert view["prompt"] == {"code": "fourd_present",
                              "values": {"thrower": "Ana", "player": "Ben"}}
    assert render_text(view["prompt"], "fr") == (
        "Ana tourne le carré pour présenter trois dés à Ben")
    assert render_text(view["prompt"], "en") == (
        "Ana turns the square to present three dice to Ben")
    # Ana turns the 5 (position 1) towards Ben: the 2 (position 3) is the die farthest from him.
    effects = g.apply({"type": "present", "near": 1})
    assert effects == [
        {"kind": "phase", "phase": "play"},
        {"kind": "turn", "player": 1, "throws_allowed": 0, "near": 1, "far": 3},
    ]
    view = g.view()
    assert (view["phase"], view["to_move"], view["presenter"]) == ("play", 1, None)
    assert {role: spot["face"] for role, spot in view["square"].items()} == {
        "near": 5, "left": 3, "right": 6, "far": 2}
    assert g.events[-1] == {"type": "present", "near": 1, "player": 0}
    before = g.view()
    with pytest.raises(RuleError, match=r"far die \(position 3\) is locked"):
        g.apply({"type": "turn", "faces": [6, 5, 3, 1]})
    assert g.view() == before
    effects = g.apply({"type": "turn", "faces": [4, 5, 3, 2]})  # Ben: his right 6 -> 4, a suite
    assert effects[0] == {"kind": "scored", "player": 1, "combination": "suite", "points": 15}
    assert effects[-1] == {"kind": "turn", "player": 0, "throws_allowed": 0, "near": 2, "far": 0}
    assert g.view()["scores"] == [0, 15]


def test_without_a_presentation_position_0_faces_the_opponent() -> None:
    g = started()
    effects = g.apply({"type": "turn", "faces": [3, 2, 3, 4]})  # Ben, facing position 0
    assert effects == [
        {"kind": "scored", "player": 1, "combination": "trio", "points": 9},
        {"kind": "phase", "phase": "play"},
        {"kind": "turn", "player": 0, "throws_allowed": 0, "near": 1, "far": 3},
    ]
    assert g.events == [{"type": "throw", "faces": [1, 2, 3, 4]},
                        {"type": "turn", "faces": [3, 2, 3, 4]}]


def refused_unchanged(g: Game4D, event: dict, reason: str) -> None:
    before, history = g.view(), list(g.history)
    with pytest.raises(RuleError, match=reason):
        g.apply(event)
    assert g.view() == before and g.history == history


def test_a_presentation_out_of_its_time_is_refused() -> None:
    fresh = new_game("4d", ["Ana", "Ben"])
    refused_unchanged(fresh, {"type": "present", "near": 1}, "thrown once first")
    g = started()
    refused_unchanged(g, {"type": "present", "near": 1, "player": 1},
                      "Ana presents the square, not Ben")
    g.apply({"type": "present", "near": 3, "player": 0})
    refused_unchanged(g, {"type": "present", "near": 1},
                      "already presented to Ben; undo to present it otherwise")
    refused_unchanged(g, {"type": "present", "near": 3}, "already presented")
    g.apply({"type": "turn", "faces": [1, 2, 1, 4]})  # Ben, facing 3, turns his left die
    refused_unchanged(g, {"type": "present", "near": 0}, "presented once, right after the throw")
    over = started(target=10)
    over.apply({"type": "turn", "faces": [5, 6, 3, 4]})
    refused_unchanged(over, {"type": "present", "near": 0}, "game is over")


@pytest.mark.parametrize("bad", [-1, 4, 5, "1", 1.0, True, None, [1]])
def test_a_presentation_names_a_position_of_the_square(bad: object) -> None:
    g = started(fifth_die=True)  # the fifth die (position 4) never faces anyone
    refused_unchanged(g, {"type": "present", "near": bad}, r"'near' from 0 to 3, not")
    refused_unchanged(g, {"type": "present"}, r"'near' from 0 to 3, not None")


@pytest.mark.parametrize(("event", "unused"), [
    ({"type": "present", "near": 1, "faces": [1, 2, 3, 4]}, "'faces'"),
    ({"type": "present", "near": 1, "rotate": "cw"}, "'rotate'"),
    ({"type": "turn", "faces": [3, 2, 3, 4], "near": 1}, "'near'"),
    ({"type": "throw", "faces": [1, 2, 3, 4], "near": 1}, "'near'"),
])
def test_a_presentation_carries_only_its_position(event: dict, unused: str) -> None:
    g = started() if event["type"] != "throw" else new_game("4d", ["Ana", "Ben"])
    refused_unchanged(g, event, f"takes no {unused}")


def test_the_knob_first_move_thrower_keeps_the_older_reading() -> None:
    g = started(first_move="thrower")
    view = g.view()
    assert (view["phase"], view["to_move"], view["presenter"]) == ("play", 0, None)
    assert view["knobs"]["first_move"] == "thrower"
    assert render_text(view["prompt"], "fr") == (
        "Ana tourne un ou deux dés (le dé du fond est bloqué)")
    assert render_text(view["prompt"], "en") == "Ana turns one or two dice (the far die is locked)"
    refused_unchanged(g, {"type": "present", "near": 1}, "first_move 'thrower' Ana moves first")
    effects = g.apply({"type": "turn", "faces": [3, 2, 3, 4]})
    assert effects == [
        {"kind": "scored", "player": 0, "combination": "trio", "points": 9},
        {"kind": "turn", "player": 1, "throws_allowed": 0, "near": 1, "far": 3},
    ]
    assert new_game("4d", ["Ana", "Ben"]).knobs["first_move"] == "opponent"
    with pytest.raises(RuleError, match=r"first_move.*valid values: opponent, thrower"):
        new_game("4d", ["Ana", "Ben"], first_move="seat0")


def test_a_presentation_is_undone_saved_and_replayed() -> None:
    g = started(fifth_die=True)
    at_throw = g.view()
    g.apply({"type": "present", "near": 2})
    presented = g.view()
    g.apply({"type": "turn", "faces": [1, 2, 2, 4, 4]})  # Ben: his near 3 -> 2, and the fifth
    assert g.view()["scores"] == [0, 11] and g.view()["square"]["near"]["pos"] == 3
    data = json.loads(json.dumps(g.to_json()))
    rebuilt = game_from_json(data)
    assert rebuilt.view() == g.view() and rebuilt.events == g.events
    g.undo()
    assert g.view() == presented
    g.undo()
    assert g.view() == at_throw
    data["events"][1]["near"] = 0  # presented otherwise: another game
    with pytest.raises(RuleError, match="event 3 is refused"):
        game_from_json(data)


def test_a_game_saved_before_the_presentation_existed() -> None:
    # Saved when seat 0 moved first: the same events, knobs and view without 'first_move'.
    old = started(first_move="thrower")
    old.apply({"type": "turn", "faces": [3, 2, 3, 4]})
    old.apply({"type": "turn", "faces": [3, 2, 5, 4]})
    saved = json.loads(json.dumps(old.to_json()))
    del saved["knobs"]["first_move"]
    del saved["view"]["knobs"]["first_move"]
    # It replays as it was played: Ana moved first.
    rebuilt = game_from_json(saved)
    assert rebuilt.knobs["first_move"] == "thrower"
    assert rebuilt.view() == old.view() and rebuilt.view()["scores"] == [9, 15]
    # The same events under the seed's rule are another game (Ben moved first).
    saved["knobs"]["first_move"] = "opponent"
    with pytest.raises(RuleError, match="does not replay to its stored view"):
        game_from_json(saved)


def test_the_simulated_thrower_presents_the_square_least_useful_to_the_opponent() -> None:
    for faces, near, left in (([1, 2, 3, 4], 2, 14), ([6, 5, 3, 2], 1, 15)):
        g = new_game("4d", ["Ana", "Ben"])
        g.apply({"type": "throw", "faces": faces})
        assert choose_presentation(g) == near
        event = policy_4d(g, random.Random(0))
        assert event == {"type": "present", "near": near}
        g.apply(event)
        assert max(best_combination(new)[1] for _, new in g.legal_moves()) == left
    # Position 0 already leaves Ben the least (12): no presentation, Ben moves at once.
    g = new_game("4d", ["Ana", "Ben"])
    g.apply({"type": "throw", "faces": [2, 5, 5, 1]})
    assert choose_presentation(g) == 0
    assert policy_4d(g, random.Random(0))["type"] == "turn"
