"""The 421 referee: dice read in the tray's zones, against the engine's own view, make one
input or a reasoned refusal; every input it makes is one the engine accepts."""

from __future__ import annotations

import random
from typing import Any

from firmware_host.controller.messages import MESSAGES, render
from firmware_host.controller.referee import Call, judge_421, unsure_refusal, zone_of
from firmware_host.rules import Game421, RuleError, new_game
from firmware_host.rules.simulation import play
from vision import Die, Profile

SIDE = 40.0
ROLL = [(16.0, 16.0), (452.0, 16.0), (452.0, 464.0), (16.0, 464.0)]
KEEP = [(476.0, 16.0), (624.0, 16.0), (624.0, 464.0), (476.0, 464.0)]
PROFILE = Profile(zones=[ROLL], keep_zone=KEEP)


def die(value: int | None, x: float, y: float, reason: str | None = None) -> Die:
    h = SIDE / 2
    corners = ((x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h))
    return Die(value, (x, y), corners, 0.9 if value else 0.3, reason)


def rolled(*values: int) -> list[Die]:
    return [die(v, 100.0 + 90 * k, 240.0) for k, v in enumerate(values)]


def kept(*values: int) -> list[Die]:
    return [die(v, 550.0, 80.0 + 90 * k) for k, v in enumerate(values)]


def game(preset: str = "classique-10", players: int = 2) -> Game421:
    made = new_game(preset, ["Ana", "Ben", "Cleo", "Dom"][:players])
    assert isinstance(made, Game421)
    return made


def charge(first_hand: list[int]) -> Game421:
    """A classique-10 game (three throws a turn in the charge) after its opening, the mover
    having thrown ``first_hand`` once."""
    g = game()
    g.apply({"type": "throw", "faces": [6, 5, 3]})
    g.apply({"type": "throw", "faces": [3, 2, 1]})
    assert g.view()["phase"] == "charge" and g.view()["throws_allowed"] == 3
    g.apply({"type": "throw", "faces": first_hand})
    assert g.view()["throw_number"] == 1
    return g


def accepted(g: Game421, dice: list[Die], profile: Profile | None = PROFILE) -> dict[str, Any]:
    """The referee's input for ``dice``, applied to the real game (which must accept it)."""
    call = judge_421(dice, g.view(), profile)
    assert call.accepted and call.refusal is None, call
    g.apply(call.event)
    return call.event


def refusal(g: Game421, dice: list[Die], profile: Profile | None = PROFILE) -> Call:
    call = judge_421(dice, g.view(), profile)
    assert not call.accepted and call.refusal in MESSAGES, call
    # Every refusal has its sentence with every value filled in, in both languages.
    for lang in ("fr", "en"):
        assert "{" not in render(call.refusal, call.values, lang)
    return call


# ---------------------------------------------------------------------- first throws


def test_opening_with_three_dice() -> None:
    g = game("classique-10")
    event = accepted(g, rolled(2, 6, 4))
    assert event == {"type": "throw", "faces": [6, 4, 2]}
    assert g.view()["dice"] == [6, 4, 2] and g.view()["to_move"] == 1


def test_opening_with_the_lowest_die() -> None:
    g = game("tim-11", players=3)
    assert g.view()["knobs"]["opener"] == "lowest-die"
    assert accepted(g, rolled(5)) == {"type": "throw", "faces": [5]}
    call = refusal(g, rolled(5, 2, 1))
    assert (call.refusal, call.values) == ("dice_count", {"expected": 1, "seen": 3})


def test_first_throw_of_a_turn_needs_three_dice() -> None:
    g = game()
    accepted(g, rolled(6, 5, 3))
    accepted(g, rolled(3, 2, 1))
    view = g.view()
    assert view["phase"] == "charge" and view["dice_player"] != view["to_move"]
    call = refusal(g, rolled(4, 4))
    assert (call.refusal, call.values) == ("dice_count", {"expected": 3, "seen": 2})
    # The dice of the last player still lie in the keep zone? Not on a first throw.
    call = refusal(g, rolled(4) + kept(2, 1))
    assert (call.refusal, call.values) == ("keep_on_first_throw", {"kept": [2, 1]})
    assert accepted(g, rolled(1, 4, 2))["faces"] == [4, 2, 1]


def test_without_a_profile_every_die_is_thrown() -> None:
    g = game()
    assert zone_of(kept(3)[0], None) == "roll"
    assert accepted(g, rolled(1, 1) + kept(1), profile=None)["faces"] == [1, 1, 1]


def test_dice_outside_the_zones_are_not_counted() -> None:
    g = game()
    outside = die(3, 464.0, 240.0)  # between the roll and the keep zone
    assert zone_of(outside, PROFILE) == "outside"
    call = refusal(g, [*rolled(6, 2), outside])
    assert (call.refusal, call.values) == ("dice_count", {"expected": 3, "seen": 2})
    # Out of the tray, a die that cannot be read is missing, not cocked.
    cocked_outside = die(None, 464.0, 240.0, "cocked")
    call = refusal(g, [*rolled(6, 2), cocked_outside])
    assert (call.refusal, call.values) == ("dice_count", {"expected": 3, "seen": 2})
    call = refusal(g, [*rolled(6), die(None, 280.0, 240.0, "cocked"), cocked_outside])
    assert call.refusal == "cocked"


# ---------------------------------------------------------------------- later throws


def test_keeping_dice_of_the_hand() -> None:
    g = charge([6, 6, 2])
    event = accepted(g, rolled(5) + kept(6, 6))
    assert event == {"type": "throw", "faces": [5], "keep": [0, 1]}
    assert sorted(g.view()["dice"]) == [5, 6, 6]


def test_keep_indices_with_repeated_values_point_at_distinct_dice() -> None:
    g = charge([2, 6, 2])
    event = accepted(g, rolled(4) + kept(2, 2))
    assert event["keep"] == [0, 2]
    assert sorted(g.view()["dice"]) == [2, 2, 4]
    # And the third throw, keeping one die of the new hand (kept first, then thrown).
    hand = g.view()["dice"]
    event = accepted(g, rolled(1, 1) + kept(4))
    assert [hand[i] for i in event["keep"]] == [4]


def test_throwing_all_three_again_is_a_new_hand() -> None:
    g = charge([6, 5, 3])
    assert accepted(g, rolled(1, 2, 4)) == {"type": "throw", "faces": [4, 2, 1], "keep": []}


def test_a_kept_die_turned_is_tampering_and_names_it() -> None:
    g = charge([6, 6, 2])
    call = refusal(g, rolled(3) + kept(6, 5))
    assert call.refusal == "keep_tampered"
    assert call.values == {"kept": [6, 5], "hand": [6, 6, 2], "foreign": [5]}
    # A third 6 kept from a hand of two is tampering too: counts matter, not only values.
    call = refusal(g, kept(6, 6, 6))
    assert call.values["foreign"] == [6]


def test_wrong_number_of_dice_after_keeping() -> None:
    g = charge([6, 6, 2])
    call = refusal(g, rolled(3, 4) + kept(6, 6))
    assert (call.refusal, call.values) == ("dice_count", {"expected": 1, "seen": 2})
    call = refusal(g, kept(6))
    assert (call.refusal, call.values) == ("dice_count", {"expected": 2, "seen": 0})


def test_all_kept_nothing_thrown() -> None:
    g = charge([6, 6, 2])
    call = refusal(g, kept(6, 2, 6))
    assert (call.refusal, call.values) == ("nothing_thrown", {})


def test_an_empty_tray_is_nothing_to_do() -> None:
    # The dice picked up between two throws, or before the first: no refusal to show.
    for g in (game(), charge([6, 6, 2])):
        call = judge_421([], g.view(), PROFILE)
        assert call == Call() and not call.accepted and call.refusal is None


# ---------------------------------------------------------------------- unsure dice, game over


def test_unsure_dice_refuse_the_whole_throw() -> None:
    g = game()
    cocked = [die(None, 200.0, 100.0, "cocked")]
    call = refusal(g, rolled(6, 5) + cocked)
    assert (call.refusal, call.values) == ("cocked", {"count": 1})
    blurred = [die(None, 200.0, 100.0, "blurred"), die(None, 300.0, 100.0, "occluded")]
    call = refusal(g, rolled(6) + blurred)
    assert (call.refusal, call.values) == ("unreadable", {"count": 2, "reason": "blurred"})
    # A cocked die is named before any other reason, even when it is not the first unsure.
    call = unsure_refusal([*blurred, *cocked])
    assert call is not None and call.refusal == "cocked"
    assert unsure_refusal(rolled(1, 2)) is None
    assert g.view()["throw_number"] == 0 and g.view()["to_move"] == 0  # nothing applied


def test_a_finished_game_refuses() -> None:
    finished, _ = play("tim-11", ["Ana", "Ben"], random.Random(3))
    view = finished.view()
    assert view["phase"] == "over" and view["to_move"] is None
    assert judge_421(rolled(4, 2, 1), view, PROFILE).refusal == "game_over"
    assert judge_421([], view, PROFILE).refusal == "game_over"


# ---------------------------------------------------------------------- against the engine


def test_a_whole_game_refereed_from_readings() -> None:
    """Readings built from a seeded random game: every call the referee makes is accepted by
    the engine, and the game it plays ends like the engine's own simulation of it."""
    rng = random.Random(11)
    g = game("classique-10", players=3)
    throws = 0
    while not g.is_over and throws < 500:
        view = g.view()
        first = view["throw_number"] == 0
        if not first and view["throw_number"] >= 1 and rng.random() < 0.25:
            try:
                g.apply({"type": "stop"})
                continue
            except RuleError:
                pass
        hand = [] if first else list(view["dice"])
        keep = [] if first else sorted(rng.sample(range(3), rng.randint(0, 2)))
        dice = [rng.randint(1, 6) for _ in range(3 - len(keep))]
        if view["phase"] == "opening" and view["knobs"]["opener"] == "lowest-die":
            dice = dice[:1]
        reading = rolled(*dice) + kept(*[hand[i] for i in keep])
        rng.shuffle(reading)  # the vision pipeline gives the dice in no particular order
        event = accepted(g, reading)
        assert sorted(event["faces"]) == sorted(dice)
        assert sorted(hand[i] for i in event.get("keep", [])) == sorted(hand[i] for i in keep)
        throws += 1
    assert g.is_over, "the game should end"


def test_a_throw_the_engine_refuses_is_said_in_each_language() -> None:
    import pytest

    from firmware_host.controller.messages import notice, reason_of

    with pytest.raises(RuleError) as refused:
        game("tim-11").apply({"type": "stop"})
    said = notice("refused", {"reason": reason_of(refused.value)})
    assert said["values"] == {"reason": {"code": "stop_before_throw", "values": {"player": "Ana"}}}
    assert said["en"] == "Throw refused: Ana has not thrown yet: throw before stopping"
    assert said["fr"] == "Lancer refusé : Ana n'a pas encore lancé : lancez avant de vous arrêter"
