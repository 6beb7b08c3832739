"""Properties over thousands of random games: tokens conserved, games end, JSON and replay.

Randomness is seeded (``random.Random(seed)``) and hypothesis runs derandomized, so every
run checks the same games.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_host.rules import KNOBS_421, PRESETS, RuleError, game_from_json, new_game
from firmware_host.rules.base import GameBase
from firmware_host.rules.game421 import Game421
from firmware_host.rules.simulation import policy_4d

PRESETS_421 = ["regles-21", "tim-11", "classique-10", "kyt-11"]
NAMES = ["Ana", "Ben", "Cleo", "Dan", "Eve", "Fred", "Gil", "Hana", "Ines", "Jo"]
MAX_EVENTS = 50_000

SETTINGS = settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def random_event(game: GameBase, rng: random.Random) -> dict[str, Any]:
    """A legal input chosen at random: any keep, any stop (not a sensible player)."""
    if not isinstance(game, Game421):
        return policy_4d(game, rng)
    if game.throw_number == 0:
        count = game.opening_dice if game.phase == "opening" else 3
        return {"type": "throw", "faces": [rng.randint(1, 6) for _ in range(count)]}
    if game.throw_number >= game.throws_required and rng.random() < 0.4:
        return {"type": "stop"}
    keep = sorted(rng.sample(range(3), rng.randint(0, 2)))
    return {
        "type": "throw",
        "faces": [rng.randint(1, 6) for _ in range(3 - len(keep))],
        "keep": keep,
    }


def conserved(game: GameBase) -> bool:
    if not isinstance(game, Game421):
        return True
    return (
        game.pot + sum(game.tokens) == game.total_tokens and game.pot >= 0 and min(game.tokens) >= 0
    )


def play_out(game: GameBase, rng: random.Random) -> int:
    """Play to the end, checking conservation after every event; return the event count."""
    for count in range(1, MAX_EVENTS + 1):
        game.apply(random_event(game, rng))
        assert conserved(game), game.view()
        if game.is_over:
            return count
    raise AssertionError(f"game not over after {MAX_EVENTS} events")


def check_rebuilds(game: GameBase) -> None:
    view = game.view()
    assert game_from_json(json.loads(json.dumps(game.to_json()))).view() == view
    fresh = new_game(game.preset, game.players, game.knobs)
    for entry in game.history:
        fresh.apply(entry["event"])
    assert fresh.view() == view


@pytest.mark.parametrize("preset", [*PRESETS_421, "4d"])
def test_seeded_games_conserve_tokens_end_and_rebuild(preset: str) -> None:
    rng = random.Random(f"dicetower-{preset}")
    games = 200 if preset == "4d" else 800
    lengths = []
    for number in range(games):
        players = 2 if preset == "4d" else 2 + number % 5
        game = new_game(preset, NAMES[:players])
        lengths.append(play_out(game, rng))
        assert game.view()["phase"] == "over"
        if number % 40 == 0:
            check_rebuilds(game)
    assert min(lengths) > 1


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    preset=st.sampled_from(list(PRESETS)),
    players=st.integers(2, 10),
    stop_at=st.floats(0, 1),
)
def test_random_games_json_replay_and_undo(
    seed: int, preset: str, players: int, stop_at: float
) -> None:
    rng = random.Random(seed)
    game = new_game(preset, NAMES[: 2 if preset == "4d" else players])
    total = play_out(game, rng)
    check_rebuilds(game)
    # Undo from any point gives back the state before the last input.
    cut = max(1, int(total * stop_at))
    partial = new_game(game.preset, game.players, game.knobs)
    for event in game.events[: cut - 1]:
        partial.apply(event)
    before = partial.view()
    partial.apply(game.events[cut - 1])
    partial.undo()
    assert partial.view() == before
    check_rebuilds(partial)


knob_sets = st.fixed_dictionaries(
    {
        **{name: st.sampled_from(values) for name, values in KNOBS_421.items()},
        "pot": st.integers(1, 30),
        "private_tokens": st.integers(0, 4),
        "manches_to_lose": st.integers(1, 3),
    }
)


@SETTINGS
@given(knobs=knob_sets, seed=st.integers(0, 2**32 - 1), players=st.integers(2, 6))
def test_any_house_rules_conserve_tokens_and_end(
    knobs: dict[str, Any], seed: int, players: int
) -> None:
    game = new_game("tim-11", NAMES[:players], knobs)
    play_out(game, random.Random(seed))
    check_rebuilds(game)


junk_events = st.fixed_dictionaries(
    {"type": st.sampled_from(["throw", "stop", "turn", "roll"])},
    optional={
        "faces": st.lists(st.integers(-1, 8), max_size=7),
        "keep": st.lists(st.integers(-1, 3), max_size=4),
        "player": st.integers(-1, 3),
    },
)


@SETTINGS
@given(
    preset=st.sampled_from(list(PRESETS)),
    seed=st.integers(0, 1000),
    warmup=st.integers(0, 40),
    events=st.lists(junk_events, min_size=1, max_size=8),
)
def test_any_input_is_accepted_or_refused_without_change(
    preset: str, seed: int, warmup: int, events: list[dict[str, Any]]
) -> None:
    rng = random.Random(seed)
    game = new_game(preset, NAMES[:3] if preset != "4d" else NAMES[:2])
    for _ in range(warmup):
        if game.is_over:
            break
        game.apply(random_event(game, rng))
    for event in events:
        before, history = game.view(), len(game.history)
        try:
            game.apply(event)
        except RuleError as err:
            assert str(err)
            assert game.view() == before and len(game.history) == history
        else:
            assert conserved(game)
    check_rebuilds(game)


@pytest.mark.parametrize("split", ["belle", "decharge"])
@pytest.mark.parametrize("zero", ["stays", "wins"])
def test_manches_of_their_own_credit_each_winner_and_decide_the_game(split: str, zero: str) -> None:
    rng = random.Random(f"manches {split} {zero}")
    splits = 0
    for number in range(150):
        players = 2 + number % 4
        knobs = {"split_manches": split, "zero_after_charge": zero, "pot": rng.choice([3, 7, 21])}
        game = new_game("classique-10", NAMES[:players], knobs)
        credited = [0] * players
        belles = 0
        while not game.is_over:
            charge_winner = game.charge_winner
            effects = game.apply(random_event(game, rng))
            for effect in effects:
                if effect["kind"] == "charge_won":
                    assert effect["manche_won"]
                    credited[effect["player"]] += 1
                    charge_winner = effect["player"]
                elif effect["kind"] == "decharge_won":
                    credited[effect["player"]] += 1
                    split_now = charge_winner not in (None, effect["player"])
                    splits += split_now
                    # A new manche follows a décharge only as a belle, after a split.
                    assert any(e["kind"] == "manche" for e in effects) is (
                        split_now and split == "belle"
                    )
                    belles += any(e["kind"] == "manche" for e in effects)
                assert effect["kind"] != "manche_lost"
        view = game.view()
        assert [p["manches_won"] for p in view["players"]] == credited
        assert game.winner == game.decharge_winner is not None
        if split == "belle":
            assert game.charge_winner in (None, game.winner)
        others = [p for p in range(players) if p != game.winner]
        assert game.loser == (others[0] if players == 2 else None)
        assert game.manche == belles + 1 and max(game.fiches) == 0
    assert splits > 10  # the split case was played, not only the easy one
