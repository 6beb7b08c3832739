"""The 421 odds advisor: exact against brute force, in line with the engine's own games."""

from __future__ import annotations

import copy
import json
import math
import random
from fractions import Fraction
from functools import cache
from itertools import combinations, product
from typing import Any

import pytest

from firmware_host.advisor import AdvisorError, advise
from firmware_host.advisor.odds421 import Turn, analyse, opener_outlook
from firmware_host.rules import new_game
from firmware_host.rules.hands import NENETTE, hand_name, value_table
from firmware_host.rules.knobs import resolve_knobs
from firmware_host.rules.round_judge import RoundJudge
from firmware_host.rules.scripting import open_with, play_turn

FIELDS = ("p_beat", "p_tie", "p_worst", "p_421", "p_nenette", "expected_tokens", "balance")
# Four and a half standard deviations: a seeded run this far off is a real disagreement.
Z = 4.5


def brute_force(
    knobs: dict[str, Any],
    dice: list[int],
    turn: Turn,
    to_beat: tuple[str, int] | None,
    avoid: tuple[str, int] | None,
) -> dict[tuple[int, ...], dict[str, Fraction]]:
    """Every keep's value for every goal, by enumerating every ordered throw of the dice and
    every subset of dice positions to keep, with the engine's judge deciding each ending."""
    judge = RoundJudge(knobs)
    values = value_table(knobs["ranking"], knobs["value_421"], knobs["nenette"])

    def versus(other: tuple[str, int], hand: str, made: int) -> tuple[bool, bool]:
        hands = [{"player": 0, "hand": other[0], "throws": other[1]},
                 {"player": 1, "hand": hand, "throws": made}]
        return judge.extreme(hands, weakest=False) == [1], judge.extreme(hands, weakest=True)

    def ending(hand: str, made: int) -> dict[str, Fraction]:
        out = {"p_421": Fraction(hand == "421"), "p_nenette": Fraction(hand == NENETTE),
               "expected_tokens": Fraction(values[hand])}
        if to_beat:
            beats, weakest = versus(to_beat, hand, made)
            out["p_beat"] = Fraction(beats)
            out["p_tie"] = Fraction(weakest == [0, 1] or weakest == [1, 0])
        if avoid:
            out["p_worst"] = Fraction(versus(avoid, hand, made)[1] == [1])
        if to_beat and avoid:
            out["balance"] = out["p_beat"] - out["p_worst"]
        return out

    minimise = {"p_worst", "p_nenette"}

    def options(hand: tuple[int, ...], made: int) -> list[tuple[tuple[int, ...], dict]]:
        """(kept faces, goal values with every later choice made for that goal)."""
        found = []
        if made >= turn.required or made == turn.allowed:
            found.append((hand, ending(hand_name(hand), made)))
        if made < turn.allowed:
            for size in range(3):
                for kept in combinations(range(3), size):
                    faces = tuple(hand[i] for i in kept)
                    total: dict[str, Fraction] = {}
                    throws = list(product(range(1, 7), repeat=3 - size))
                    for thrown in throws:
                        after = best(tuple(sorted(faces + thrown)), made + 1)
                        for goal, value in after.items():
                            total[goal] = total.get(goal, Fraction(0)) + value
                    found.append((faces, {g: v / len(throws) for g, v in total.items()}))
        return found

    @cache
    def best(hand: tuple[int, ...], made: int) -> dict[str, Fraction]:
        found = options(hand, made)
        out = {}
        for goal in found[0][1]:
            chosen = [v[goal] for _, v in found]
            out[goal] = min(chosen) if goal in minimise else max(chosen)
        return out

    result: dict[tuple[int, ...], dict[str, Fraction]] = {}
    for faces, goal_values in options(tuple(dice), turn.made):
        result.setdefault(tuple(sorted(faces)), goal_values)
    return result


def _cases() -> list[tuple[str, list[int], Turn, Any, Any]]:
    rng = random.Random(421)
    cases = []
    for preset, rule_exact in (("regles-21", False), ("tim-11", False), ("classique-10", True),
                               ("kyt-11", False), ("regles-21", True)):
        for left in (1, 2):
            made = rng.randint(1, 3 - left)
            allowed = made + left
            dice = [rng.randint(1, 6) for _ in range(3)]

            def target() -> tuple[str, int]:
                return hand_name([rng.randint(1, 6) for _ in range(3)]), rng.randint(1, 3)

            cases.append((preset, dice, Turn(made, allowed, allowed if rule_exact else 1),
                          target(), target()))
    # Nénettes on both sides, where regles-21 makes the later one better.
    cases.append(("regles-21", [2, 2, 1], Turn(1, 2, 1), ("221", 1), ("221", 2)))
    cases.append(("tim-11", [2, 2, 1], Turn(1, 2, 1), ("221", 1), ("221", 2)))
    return cases


@pytest.mark.parametrize(("preset", "dice", "turn", "to_beat", "avoid"), _cases())
def test_every_keep_matches_brute_force(preset: str, dice: list[int], turn: Turn,
                                        to_beat: Any, avoid: Any) -> None:
    knobs = resolve_knobs(preset)
    exact = brute_force(knobs, dice, turn, to_beat, avoid)
    result = analyse(knobs, dice, turn, to_beat, avoid)
    assert {tuple(sorted(k["keep"])) for k in result["keeps"]} == set(exact)
    assert len(result["keeps"]) == len(exact)
    for keep in result["keeps"]:
        expected = exact[tuple(sorted(keep["keep"]))]
        for field in FIELDS:
            assert keep[field] == pytest.approx(float(expected[field]), abs=1e-12), field


@pytest.mark.parametrize(("preset", "dice", "turn", "to_beat", "avoid"), _cases()[:4])
def test_best_keeps_are_the_best_rows(preset: str, dice: list[int], turn: Turn,
                                      to_beat: Any, avoid: Any) -> None:
    result = analyse(resolve_knobs(preset), dice, turn, to_beat, avoid)
    for goal, field, sign in (("beat", "p_beat", 1), ("tie", "p_tie", 1),
                              ("avoid_worst", "p_worst", -1), ("421", "p_421", 1),
                              ("nenette", "p_nenette", -1), ("tokens", "expected_tokens", 1),
                              ("balance", "balance", 1)):
        top = max(sign * k[field] for k in result["keeps"])
        chosen = next(k for k in result["keeps"] if k["keep"] == result["best"][goal])
        assert sign * chosen[field] == pytest.approx(top, abs=1e-12)


def _position(preset: str, knobs: dict[str, Any], opener_hands: tuple[str, ...],
              first: list[int]) -> Any:
    """A two-player round: Ana opens with ``opener_hands``, Ben has thrown ``first``."""
    game = new_game(preset, ["Ana", "Ben"], knobs)
    open_with(game, 0)
    play_turn(game, *opener_hands)
    game.apply({"type": "throw", "faces": first})
    return game


def _monte_carlo(game: Any, keep: list[int], goal: str, target: tuple[str, int],
                 runs: int, seed: int) -> tuple[int, int]:
    """Ben keeps ``keep`` now, then follows the advisor for ``goal``; the engine judges.

    Returns (runs where the engine names the goal's outcome, runs)."""
    rng = random.Random(seed)
    hits = 0
    for _ in range(runs):
        play = copy.deepcopy(game)
        kept: list[int] | None = list(keep)
        effects: list[dict[str, Any]] = []
        ana_made = play.last_hand
        while play.last_hand is ana_made:  # until Ben's turn ends
            if kept is not None:
                faces, kept = kept, None
            else:
                turn = Turn(play.throw_number, play.throws_allowed, play.throws_required)
                kwargs = {"avoid" if goal == "avoid_worst" else "to_beat": target}
                faces = analyse(play.knobs, play.hand, turn, **kwargs)["best"][goal]
            if len(faces) == 3:
                effects += play.apply({"type": "stop"})
                continue
            indices: list[int] = []
            for face in faces:
                indices.append(next(i for i, f in enumerate(play.hand)
                                    if f == face and i not in indices))
            thrown = [rng.randint(1, 6) for _ in range(3 - len(faces))]
            effects += play.apply({"type": "throw", "faces": thrown, "keep": indices})
        rampo = any(e["kind"] == "rampo" for e in effects)
        lost = [e["player"] for e in effects if e["kind"] == "round_lost"]
        if goal == "beat":
            hits += lost == [0] and not rampo
        elif goal == "avoid_worst":
            hits += lost == [1] and not rampo
        else:
            hits += play.last_hand["hand"] == "421"
    return hits, runs


@pytest.mark.parametrize(("preset", "knobs", "opener", "first", "keep", "goal"), [
    ("tim-11", {"charge_throws": 3}, ("542", "553"), [4, 2, 6], [4, 2], "beat"),
    ("regles-21", {"charge_throws": 3}, ("631", "632", "632"), [6, 3, 1], [6], "avoid_worst"),
    ("classique-10", {}, ("655", "654"), [5, 5, 2], [], "beat"),
    ("kyt-11", {"charge_throws": 3}, ("332", "331", "321"), [1, 4, 5], [1, 4], "421"),
])
def test_agrees_with_the_engine_played_many_times(
    preset: str, knobs: dict[str, Any], opener: tuple[str, ...], first: list[int],
    keep: list[int], goal: str,
) -> None:
    game = _position(preset, knobs, opener, first)
    made = game.round_hands[0]
    target = (made["hand"], made["throws"])
    turn = Turn(game.throw_number, game.throws_allowed, game.throws_required)
    kwargs = {"avoid" if goal == "avoid_worst" else "to_beat": target}
    rows = analyse(game.knobs, game.hand, turn, **kwargs)["keeps"]
    field = {"beat": "p_beat", "avoid_worst": "p_worst", "421": "p_421"}[goal]
    expected = next(r[field] for r in rows if sorted(r["keep"]) == sorted(keep))
    hits, runs = _monte_carlo(game, keep, goal, target, runs=1500, seed=7)
    tolerance = Z * math.sqrt(expected * (1 - expected) / runs)
    assert abs(hits / runs - expected) <= tolerance, (hits / runs, expected)


def test_keeps_are_the_distinct_sub_multisets() -> None:
    rows = advise([4, 4, 2], preset="tim-11", throws_left=2)["keeps"]
    assert [r["keep"] for r in rows] == [[4, 4, 2], [4, 4], [4, 2], [4], [2], []]
    assert [r["throw"] for r in rows] == [0, 1, 1, 2, 2, 3]
    rows = advise([6, 6, 6], preset="tim-11", throws_left=1)["keeps"]
    assert [r["keep"] for r in rows] == [[6, 6, 6], [6, 6], [6], []]


def test_no_throw_left_is_the_hand_itself() -> None:
    result = advise([1, 2, 4], preset="tim-11", throws_left=0, to_beat=[1, 1, 1],
                    avoid=[2, 2, 1])
    assert [r["keep"] for r in result["keeps"]] == [[1, 2, 4]]
    row = result["keeps"][0]
    assert (row["p_beat"], row["p_tie"], row["p_worst"], row["p_421"]) == (1.0, 0.0, 0.0, 1.0)
    assert row["expected_tokens"] == 8  # tim-11's 421


def test_exact_rule_binds_all_but_the_opener() -> None:
    bound = advise([6, 5, 4], preset="classique-10", throws_left=2)
    assert not bound["may_stop"] and all(not r["stop"] for r in bound["keeps"])
    opener = advise([6, 5, 4], preset="classique-10", throws_left=2, opener=True)
    assert opener["may_stop"] and opener["keeps"][0]["stop"]


def test_fewer_throws_break_ties_in_regles_21() -> None:
    # The same hand in fewer throws beats it; in more throws it loses.
    early = advise([5, 5, 3], preset="regles-21", throws_made=1, throws_left=0,
                   to_beat=([5, 5, 3], 2))
    late = advise([5, 5, 3], preset="regles-21", throws_made=3, throws_left=0,
                  to_beat=([5, 5, 3], 2))
    same = advise([5, 5, 3], preset="tim-11", throws_made=1, throws_left=0,
                  to_beat=([5, 5, 3], 2))
    assert early["keeps"][0]["p_beat"] == 1.0
    assert late["keeps"][0]["p_beat"] == 0.0 and late["keeps"][0]["p_tie"] == 0.0
    assert same["keeps"][0]["p_tie"] == 1.0


def test_opener_outlook_adds_up_and_matches_the_beat_goal() -> None:
    knobs = resolve_knobs("tim-11")
    turn = Turn(1, 3, 1)
    outlook = opener_outlook(knobs, [6, 3, 2], turn)
    again = outlook["throw_again"]
    assert outlook["stop"] == {"hand": "632", "rank": 31, "throws": 1}
    assert again["p_better"] + again["p_same"] + again["p_worse"] == pytest.approx(1)
    assert sum(h["p"] for h in again["hands"]) == pytest.approx(1)
    assert sum(again["kinds"].values()) == pytest.approx(1)
    rows = analyse(knobs, [6, 3, 2], turn, to_beat=("632", 1))["keeps"]
    throws = [r for r in rows if not r["stop"]]
    top = max(r["p_beat"] for r in throws)
    chosen = next(r for r in throws if sorted(r["keep"]) == sorted(again["keep"]))
    assert chosen["p_beat"] == pytest.approx(top) == pytest.approx(again["p_better"])
    assert advise([6, 3, 2], preset="tim-11", throws_left=0, opener=True)["outlook"] is None


def test_result_is_plain_json() -> None:
    result = advise([4, 2, 6], preset="kyt-11", to_beat=[5, 5, 3], avoid=[3, 2, 1], opener=True)
    assert json.loads(json.dumps(result)) == result


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"dice": [4, 2, 7]}, "1 to 6, not 7"),
    ({"dice": [4, 2]}, "3 dice, not 2"),
    ({"dice": [4, 2, 6], "preset": "4d"}, "not a 421 preset"),
    ({"dice": [4, 2, 6], "preset": "poker"}, "unknown preset"),
    ({"dice": [4, 2, 6], "throws_left": 3}, "0 to 2"),
    ({"dice": [4, 2, 6], "throws_left": 1, "charge": True}, "must be 0"),
    ({"dice": [4, 2, 6], "rule": "sometimes"}, "exact, at-most, free"),
    ({"dice": [4, 2, 6], "to_beat": ([5, 5, 3], 4)}, "1 to 3 throws"),
    ({"dice": [True, 2, 6]}, "1 to 6"),
])
def test_bad_questions_are_refused_with_a_reason(kwargs: dict[str, Any], words: str) -> None:
    dice = kwargs.pop("dice")
    with pytest.raises(AdvisorError, match=words):
        advise(dice, **kwargs)
