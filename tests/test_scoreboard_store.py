"""The scoreboard's game store: one real game, a change counter, atomic corrections."""

from __future__ import annotations

import threading
import time

import pytest
from helpers import ListJournal

from firmware_host.hub import GameHub, HubError, StreamsEnded
from firmware_host.hub.stats import hands_completed
from firmware_host.rules import RuleError

PLAYERS = ["Ana", "Ben", "Cleo"]
# tim-11 opens with one die each: the lowest die (Cleo's 2) opens the charge, coup sec.
OPENING = [[3], [5], [2]]


def play(store: GameHub, *throws: list[int]) -> None:
    for faces in throws:
        store.apply({"type": "throw", "faces": faces})


@pytest.fixture
def journal() -> ListJournal:
    return ListJournal()


@pytest.fixture
def store(journal: ListJournal) -> GameHub:
    store = GameHub()
    store.open_journal(journal)  # type: ignore[arg-type]
    store.start_game("tim-11", PLAYERS)
    return store


def test_empty_store_has_no_game() -> None:
    store = GameHub()
    snap = store.snapshot()
    assert snap["game"] is None and snap["version"] == 0 and snap["stats"] is None
    with pytest.raises(HubError, match="no game"):
        store.apply({"type": "throw", "faces": [3]})
    assert store.version == 0


def test_every_accepted_change_counts_and_is_journaled(
    store: GameHub, journal: list[dict]
) -> None:
    assert store.version == 1
    play(store, *OPENING)
    assert store.version == 4
    assert [entry["action"] for entry in journal] == ["new_game", "event", "event", "event"]
    assert [entry["version"] for entry in journal] == [1, 2, 3, 4]
    assert journal[-1]["event"] == {"type": "throw", "faces": [2]}


def test_refused_input_changes_nothing(store: GameHub, journal: list[dict]) -> None:
    play(store, *OPENING)
    before = store.snapshot()
    with pytest.raises(RuleError):
        store.apply({"type": "throw", "faces": [4, 2, 7]})
    assert store.snapshot() == before
    assert len(journal) == 4


def test_snapshot_is_the_engine_view_plus_metadata(store: GameHub) -> None:
    play(store, *OPENING, [4, 2, 1])
    snap = store.snapshot()
    assert snap["game"]["phase"] == "charge"
    assert hands_of(snap["game"]["round"]) == [(2, "421")]
    assert snap["last_input"] == {"type": "throw", "faces": [4, 2, 1]}
    assert snap["history_length"] == 4
    assert snap["paused"] is False and snap["camera"] is False


def test_history_says_who_threw(store: GameHub) -> None:
    play(store, *OPENING, [4, 2, 1])
    entries = store.history()["entries"]
    assert [e["player"] for e in entries] == [0, 1, 2, 2]
    assert entries[-1]["hands"] == [{"player": 2, "hand": "421"}]
    assert entries[-1]["effects"][0] == {"kind": "flourish", "name": "421"}


def test_statistics_count_hands_421s_and_nenettes(store: GameHub) -> None:
    # Cleo 421, Ana nénette, Ben 653: the round ends on Ben's throw.
    play(store, *OPENING, [4, 2, 1], [2, 2, 1], [6, 5, 3])
    stats = {row["name"]: row for row in store.snapshot()["stats"]}
    assert stats["Cleo"] == {"name": "Cleo", "throws": 2, "hands": 1, "421": 1, "nenette": 0}
    assert stats["Ana"]["nenette"] == 1 and stats["Ana"]["hands"] == 1
    assert stats["Ben"]["hands"] == 1 and stats["Ben"]["421"] == 0


def test_hands_completed_when_the_round_ends() -> None:
    before = {"game": "421", "round": [{"player": 2, "hand": "421", "throws": 1}]}
    after = {
        "game": "421",
        "round": [],
        "last_round": {
            "hands": [
                {"player": 2, "hand": "421", "throws": 1},
                {"player": 0, "hand": "653", "throws": 2},
            ]
        },
    }
    assert hands_completed(before, after) == [{"player": 0, "hand": "653"}]


def test_undo_goes_back_and_forgets_the_notes(store: GameHub) -> None:
    play(store, *OPENING, [4, 2, 1])
    store.undo()
    snap = store.snapshot()
    assert snap["game"]["round"] == [] and snap["history_length"] == 3
    assert all(row["421"] == 0 for row in snap["stats"])


def test_correction_replaces_the_last_throw(store: GameHub, journal: list[dict]) -> None:
    play(store, *OPENING, [4, 2, 1])
    store.correct_last([6, 6, 6])
    snap = store.snapshot()
    assert snap["last_input"] == {"type": "throw", "faces": [6, 6, 6]}
    assert hands_of(snap["game"]["round"]) == [(2, "666")]
    assert snap["history_length"] == 4
    assert journal[-1] == {**journal[-1], "action": "correct", "faces": [6, 6, 6]}


def test_refused_correction_changes_nothing(store: GameHub) -> None:
    play(store, *OPENING, [4, 2, 1])
    before = store.snapshot()
    with pytest.raises(RuleError):
        store.correct_last([4, 2, 9])
    assert store.snapshot() == before


def test_a_rotation_is_corrected_only_on_a_4d_turn(store: GameHub) -> None:
    play(store, *OPENING, [4, 2, 1])
    before = store.snapshot()
    with pytest.raises(HubError, match="rotation"):
        store.correct_last([4, 2, 1], rotate="ccw")
    assert store.snapshot() == before
    store.start_game("4d", ["Ana", "Ben"])
    play(store, [1, 2, 3, 4])
    store.apply({"type": "turn", "faces": [1, 1, 3, 4]})
    store.correct_last([1, 1, 3, 4], rotate="ccw")
    assert store.snapshot()["last_input"]["rotate"] == "ccw"
    assert store.snapshot()["game"]["square"]["near"]["pos"] == 3


def test_only_throws_can_be_corrected() -> None:
    store = GameHub()
    store.start_game("classique-10", ["Ana", "Ben"])
    with pytest.raises(HubError, match="nothing to correct"):
        store.correct_last([1, 1, 1])
    # Opening with three dice each (Ben's 322 is lowest), then Ben throws once and stops.
    play(store, [6, 5, 3], [3, 2, 2], [6, 4, 1])
    store.apply({"type": "stop"})
    with pytest.raises(HubError, match="stop"):
        store.correct_last([6, 4, 2])
    store.set_paused(True)
    with pytest.raises(HubError, match="paused"):
        store.undo()


def test_pause_refuses_inputs_until_resumed(store: GameHub) -> None:
    store.set_paused(True)
    assert store.snapshot()["paused"] is True
    with pytest.raises(HubError, match="paused"):
        store.apply({"type": "throw", "faces": [3]})
    store.set_paused(False)
    store.apply({"type": "throw", "faces": [3]})
    assert store.snapshot()["history_length"] == 1


def test_ended_game_stays_visible_but_read_only(store: GameHub) -> None:
    play(store, *OPENING)
    store.end_game()
    snap = store.snapshot()
    assert snap["ended"] is True and snap["game"]["players"][0]["name"] == "Ana"
    with pytest.raises(HubError, match="over"):
        store.apply({"type": "throw", "faces": [4, 2, 1]})
    with pytest.raises(HubError, match="over"):
        store.set_paused(True)
    store.start_game("4d", ["Ana", "Ben"])
    assert store.snapshot()["ended"] is False
    assert store.snapshot()["game"]["game"] == "4d"


def test_reading_is_published_with_its_image(store: GameHub) -> None:
    assert store.frame() is None
    dice = [{"value": 4, "center": [10, 20], "confidence": 0.6, "alternatives": [5, 6]}]
    version = store.publish_reading(b"\xff\xd8jpeg", dice)
    snap = store.snapshot()
    assert snap["camera"] is True and snap["reading"]["dice"] == dice
    assert snap["reading"]["version"] == version == snap["version"]
    assert store.frame() == (version, b"\xff\xd8jpeg")


def test_snapshot_json_is_cached_per_version(store: GameHub) -> None:
    first = store.snapshot_json()
    assert store.snapshot_json() is first
    play(store, [3])
    assert store.snapshot_json()[0] == first[0] + 1


def test_wait_for_change_wakes_on_change_and_times_out(store: GameHub) -> None:
    version = store.version
    assert store.wait_for_change(version, timeout=0.01) is None
    timer = threading.Timer(0.05, play, args=(store, [3]))
    timer.start()
    started = time.monotonic()
    assert store.wait_for_change(version, timeout=5) == version + 1
    assert time.monotonic() - started < 2
    timer.join()


def test_end_streams_wakes_waiting_streams_only(store: GameHub) -> None:
    threading.Timer(0.05, store.end_streams).start()
    with pytest.raises(StreamsEnded):
        store.wait_for_change(store.version, timeout=5)
    # Streams opened afterwards work as before.
    assert store.wait_for_change(store.version, timeout=0.01) is None
    play(store, [3])
    assert store.wait_for_change(store.version - 1, timeout=0.01) == store.version


def test_bad_game_setup_is_refused(store: GameHub) -> None:
    version = store.version
    with pytest.raises(RuleError):
        store.start_game("tim-11", PLAYERS, {"pot": "lots"})
    assert store.version == version


def test_four_dice_moves_count_as_hands() -> None:
    store = GameHub()
    store.start_game("4d", ["Ana", "Ben"])
    store.apply({"type": "throw", "faces": [1, 2, 3, 4]})
    # Ana threw; Ben, her opponent, moves first: his left die 2 -> 1 makes a pair.
    store.apply({"type": "turn", "faces": [1, 1, 3, 4]})
    snap = store.snapshot()
    assert snap["game"]["scores"][0] == 0 and snap["game"]["scores"][1] > 0
    assert [row["hands"] for row in snap["stats"]] == [0, 1]
    store.correct_last([2, 2, 3, 4])  # it was a trio
    assert store.snapshot()["game"]["last_move"]["combination"] == "trio"
    assert [row["hands"] for row in store.snapshot()["stats"]] == [0, 1]
    store.apply({"type": "turn", "faces": [2, 2, 1, 4]})  # then Ana turns her left die 3 -> 1
    assert [row["hands"] for row in store.snapshot()["stats"]] == [1, 1]


def hands_of(round_entries: list[dict]) -> list[tuple[int, str]]:
    """(player, hand) of each hand in a view's round list (entries may carry more)."""
    return [(entry["player"], entry["hand"]) for entry in round_entries]
