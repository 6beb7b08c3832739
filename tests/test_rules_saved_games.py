"""Games saved or journaled before a rule's reading changed replay as they were played.

The two saved games in tests/data were written by the version whose knobs had no
`second_nenette` (two nénettes were a rampo) and no `first_move` (the thrower moved first in
4D). A game in progress when the tower is updated must not change its rules half-way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from firmware_host.hub import GameHub
from firmware_host.hub.journal import Journal
from firmware_host.rules import RuleError, game_from_json, new_game
from firmware_host.rules.knobs import EARLIER_READINGS, PRESETS, saved_knobs

DATA = Path(__file__).parent / "data"


def saved(name: str) -> dict:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def test_an_earlier_regles21_save_keeps_its_rampo_between_two_nenettes() -> None:
    data = saved("regles21_two_nenettes_v1.json")
    assert "second_nenette" not in data["knobs"]
    game = game_from_json(data)
    assert game.knobs["second_nenette"] == "rampo"
    assert game.view()["phase"] == "rampo"
    # The same throws under today's regles-21: the later nénette beats the earlier one.
    today = new_game("regles-21", data["players"])
    for event in data["events"]:
        today.apply(event)
    assert today.view()["phase"] != "rampo"


def test_an_earlier_4d_save_keeps_the_thrower_moving_first() -> None:
    data = saved("fourd_thrower_first_v1.json")
    game = game_from_json(data)
    assert game.knobs["first_move"] == "thrower"
    assert game.view()["to_move"] == data["view"]["to_move"]


def test_a_tampered_earlier_save_is_still_refused() -> None:
    data = saved("regles21_two_nenettes_v1.json")
    data["view"]["pot"] += 1
    with pytest.raises(RuleError, match="stored view"):
        game_from_json(data)


def test_a_view_of_something_else_is_refused() -> None:
    data = saved("regles21_two_nenettes_v1.json")
    data["view"] = {"phase": data["view"]["phase"]}
    with pytest.raises(RuleError, match="stored view"):
        game_from_json(data)


def test_todays_saves_replay_with_their_own_knobs() -> None:
    game = new_game("classique-10", ["Ana", "Ben"], {"split_manches": "decharge"})
    game.apply({"type": "throw", "faces": [2, 2, 1]})
    rebuilt = game_from_json(json.loads(json.dumps(game.to_json())))
    assert rebuilt.knobs == game.knobs


@pytest.mark.parametrize("preset", sorted(EARLIER_READINGS))
def test_knobs_given_in_full_are_kept_and_bare_ones_get_the_earlier_readings(
    preset: str,
) -> None:
    assert saved_knobs(preset, dict(PRESETS[preset])) == PRESETS[preset]
    assert saved_knobs(preset, None) == EARLIER_READINGS[preset]


def test_a_journal_written_with_overrides_only_replays_under_the_earlier_readings(
    tmp_path: Path,
) -> None:
    # The earlier store journaled only the overrides given (here none) at a new game.
    data = saved("regles21_two_nenettes_v1.json")
    with Journal(tmp_path / "tower.db") as journal:
        journal.record({"action": "new_game", "preset": "regles-21",
                        "players": data["players"], "knobs": None})
        for event in data["events"]:
            journal.record({"action": "event", "event": event})
        store = GameHub()
        store.open_journal(journal)
    game = store.game_json()
    assert game["knobs"]["second_nenette"] == "rampo"
    assert game["view"]["phase"] == "rampo"


def test_todays_journal_holds_the_full_knobs(tmp_path: Path) -> None:
    with Journal(tmp_path / "tower.db") as journal:
        store = GameHub()
        store.open_journal(journal, replay=False)
        store.start_game("regles-21", ["Ana", "Ben"])
        (_, action), = journal.actions_since_last_game()
    assert action["knobs"] == PRESETS["regles-21"]
