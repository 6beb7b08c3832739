"""The 4D square tracker: positions numbered on the throw, the square presented to the
opponent read as the engine's `present`, moves read as its `turn`, rotations told apart,
illegal moves refused with the engine's reason; every input it makes is applied to a real game
through the scoreboard's store, which must accept it."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from firmware_host.controller import messages
from firmware_host.controller.referee import Call
from firmware_host.controller.square import SquareTracker, clockwise_order, split_fifth
from firmware_host.hub import GameHub
from firmware_host.rules import check_move, legal_results
from vision import Die

SIDE = 36.0
GAP = 80.0  # between the centres of two neighbouring dice of the square
CENTRE = (230.0, 240.0)
# Positions 0..3 clockwise on the picture (y down) from the bottom-left corner.
CORNERS = [(-1, 1), (-1, -1), (1, -1), (1, 1)]
FIFTH_SPOT = (CENTRE[0] + 2.2 * GAP, CENTRE[1])


def die(value: int | None, at: tuple[float, float], reason: str | None = None) -> Die:
    x, y = at
    h = SIDE / 2
    return Die(value, (x, y), ((x - h, y - h), (x + h, y - h), (x + h, y + h), (x - h, y + h)),
               0.9 if value else 0.2, reason)


def spot(s: int, centre: tuple[float, float] = CENTRE) -> tuple[float, float]:
    u, v = CORNERS[s % 4]
    return centre[0] + u * GAP / 2, centre[1] + v * GAP / 2


def reading(at_spots: Sequence[int], fifth: int | None = None, *, seed: int = 0,
            centre: tuple[float, float] = CENTRE) -> list[Die]:
    """The dice the camera reads: ``at_spots[s]`` on spot s, placed by hand (a few pixels off),
    listed in no particular order."""
    rng = random.Random(seed)
    dice = []
    for s, value in enumerate(at_spots):
        x, y = spot(s, centre)
        dice.append(die(value, (x + rng.uniform(-3, 3), y + rng.uniform(-3, 3))))
    if fifth is not None:
        dice.append(die(fifth, (FIFTH_SPOT[0] + rng.uniform(-3, 3), FIFTH_SPOT[1])))
    rng.shuffle(dice)
    return dice


def turned(faces: Sequence[int], quarter: int) -> list[int]:
    """What lies on each spot once the square of ``faces`` (by position, on their spots) is
    turned ``quarter`` quarters clockwise: the die of position p goes to spot p + quarter."""
    at_spots = [0, 0, 0, 0]
    for p in range(4):
        at_spots[(p + quarter) % 4] = faces[p]
    return at_spots + list(faces[4:])


class Table:
    """A 4D game on the scoreboard's store, read through a tracker as the controller does."""

    def __init__(self, knobs: dict[str, object] | None = None) -> None:
        self.store = GameHub()
        self.store.start_game("4d", ["Ana", "Ben"], knobs)
        self.tracker = SquareTracker()

    @property
    def view(self) -> dict[str, object]:
        view = self.store.snapshot()["game"]
        assert view is not None
        return view

    def faces(self) -> list[int]:
        square = self.view["square"]
        faces = [0] * 4
        for role in ("near", "left", "right", "far"):
            faces[square[role]["pos"]] = square[role]["face"]
        return faces + ([self.view["fifth"]] if self.view["fifth"] is not None else [])

    def near(self) -> int:
        return int(self.view["square"]["near"]["pos"])

    def judge(self, dice: list[Die]) -> Call:
        return self.tracker.judge(dice, self.view)

    def play(self, dice: list[Die]) -> Call:
        """Judge ``dice`` and carry the call out as the controller does."""
        call = self.judge(dice)
        assert call.refusal is None, call
        if call.event is not None:
            last = self.store.snapshot()["last_input"] or {}
            if call.event["type"] == "present" and last.get("type") == "present":
                self.store.undo()  # presented anew: the newer presentation replaces the older
            self.store.apply(call.event)
        elif call.correction is not None:
            self.store.correct_last(call.correction["faces"])
        elif call.rotation is not None:
            last = self.store.snapshot()["last_input"]
            if last["type"] == "turn" and last.get("rotate", "cw") != call.rotation:
                self.store.correct_last(list(last["faces"]), rotate=call.rotation)
        if call.accepted or call.correction or call.rotation:
            self.tracker.accept_call(dice, call)
        return call


# ---------------------------------------------------------------------- geometry


def test_clockwise_order_starts_bottom_left() -> None:
    points = [spot(2), spot(0), spot(3), spot(1)]
    assert clockwise_order(points) == [1, 3, 0, 2]


def test_the_fifth_die_is_the_one_apart() -> None:
    points = [spot(0), FIFTH_SPOT, spot(1), spot(2), spot(3)]
    assert split_fifth(points) == ([0, 2, 3, 4], 1)
    assert split_fifth(points[:1] + points[2:]) == ([0, 1, 2, 3], None)


# ---------------------------------------------------------------------- the throw


def test_the_throw_numbers_positions_clockwise_from_bottom_left() -> None:
    table = Table()
    assert table.view["phase"] == "start"
    call = table.play(reading([1, 2, 3, 5], seed=1))
    assert call.event == {"type": "throw", "faces": [1, 2, 3, 5]}
    assert table.faces() == [1, 2, 3, 5] and table.view["phase"] == "present"


def test_an_unchanged_square_is_no_input() -> None:
    table = Table()
    table.play(reading([1, 2, 3, 5], seed=1))
    version = table.store.version
    for seed in (2, 3):  # read again, the dice a few pixels elsewhere each time
        assert table.play(reading([1, 2, 3, 5], seed=seed)) == Call()
    assert table.store.version == version


def test_wrong_count_and_unsure_dice() -> None:
    table = Table()
    call = table.judge(reading([1, 2, 3]))
    assert (call.refusal, call.values) == ("dice_count", {"expected": 4, "seen": 3})
    call = table.judge(reading([1, 2, 3, 4], fifth=6))
    assert (call.refusal, call.values) == ("dice_count", {"expected": 4, "seen": 5})
    cocked = [*reading([1, 2, 3]), die(None, spot(3), "cocked")]
    assert table.judge(cocked).refusal == "cocked"
    assert table.tracker.places is None  # nothing numbered on a refused reading


def test_an_empty_tray_is_nothing_to_do() -> None:
    table = Table()
    assert table.judge([]) == Call()
    table.play(reading([1, 2, 3, 5]))
    assert table.judge([]) == Call()


# ---------------------------------------------------------------------- moves


def test_a_legal_move_is_a_turn_with_faces_by_position() -> None:
    table = Table()
    table.play(reading([1, 2, 3, 5]))
    assert table.near() == 0
    # The near die (position 0) turned from 1 to 4, the square not turned (yet).
    call = table.play(reading([4, 2, 3, 5], seed=4))
    assert call.event == {"type": "turn", "faces": [4, 2, 3, 5]}
    assert table.faces() == [4, 2, 3, 5] and table.view["moves"] == 1


def test_a_move_and_a_quarter_turn_read_at_once() -> None:
    table = Table()
    table.play(reading([1, 2, 3, 4]))
    # The near die 1 -> 2, then the square turned clockwise: the reading as it lies is not a
    # legal move (the far die would have changed); turned back a quarter, it is.
    after = [2, 2, 3, 4]
    at_spots = turned(after, 1)
    assert check_move([1, 2, 3, 4], at_spots, 0) is not None
    call = table.play(reading(at_spots, seed=5))
    assert call.event == {"type": "turn", "faces": after, "rotate": "cw"}
    assert table.faces() == after and table.near() == 1
    # The same square read again: nothing more happened.
    assert table.play(reading(at_spots, seed=6)) == Call()


@pytest.mark.parametrize("rotation, quarter", [("cw", 1), ("ccw", 3)])
def test_a_rotation_alone_is_told_apart(rotation: str, quarter: int) -> None:
    table = Table()
    table.play(reading([1, 2, 3, 4]))
    table.play(reading([5, 2, 3, 4]))  # the near die 1 -> 5
    assert table.view["last_move"]["rotate"] == "cw"  # the engine's default, for now
    call = table.play(reading(turned([5, 2, 3, 4], quarter), seed=7))
    assert call == Call(rotation=rotation)
    assert table.view["last_move"]["rotate"] == rotation
    assert table.near() == (1 if rotation == "cw" else 3)
    assert table.faces() == [5, 2, 3, 4]  # positions follow the dice, not the spots


def test_a_rotation_both_ways_fit_is_left_as_given() -> None:
    table = Table()
    table.play(reading([2, 5, 2, 1]))
    table.play(reading([2, 5, 2, 5], seed=3))  # Ben's right die (position 3) 1 -> 5
    # Either way Ana faces a 5 between two 2s: the rotation stays as the engine has it.
    assert table.judge(reading(turned([2, 5, 2, 5], 1))) == Call(rotation="cw")
    assert table.judge(reading(turned([2, 5, 2, 5], 2))) == Call()
    table.store.correct_last([2, 5, 2, 5], rotate="ccw")  # the stop button, say
    assert table.judge(reading(turned([2, 5, 2, 5], 3))) == Call(rotation="ccw")


def test_an_illegal_move_is_refused_with_the_engines_reason() -> None:
    table = Table()
    table.play(reading([1, 2, 3, 4]))
    far = [1, 2, 2, 4]  # position 2 is the far die for the player facing position 0
    call = table.judge(reading(far))
    assert call.refusal == "illegal_move"
    assert call.values == {"reason": check_move([1, 2, 3, 4], far, 0)}
    # The table reads the engine's reason in the page's language, the terminal in English.
    notice = messages.notice(call.refusal, call.values)
    assert notice["en"] == ("Move refused: the far die (position 2) is locked and cannot be "
                            "turned. Put the dice back.")
    assert notice["fr"] == ("Coup refusé : le dé du fond (position 2) est bloqué et ne peut pas "
                            "être tourné. Remettez les dés.")
    opposite = [6, 2, 3, 4]  # 1 -> 6: a quarter turn never shows the opposite face
    call = table.judge(reading(opposite))
    assert call.values == {"reason": check_move([1, 2, 3, 4], opposite, 0)}
    notice = messages.notice(call.refusal, call.values)
    assert "the near die went from 1 to 6, its opposite face" in notice["en"]
    assert "le dé près est passé de 1 à 6, sa face opposée" in notice["fr"]
    assert table.view["moves"] == 0


# ---------------------------------------------------------------------- presenting the square


@pytest.mark.parametrize(("quarter", "near"), [(1, 3), (2, 2), (3, 1)])
def test_the_square_turned_after_the_throw_is_presented(quarter: int, near: int) -> None:
    table = Table()
    table.play(reading([1, 2, 3, 5]))
    assert table.view["phase"] == "present" and table.near() == 0
    # Ana turns the whole square: Ben, at the corner of position 0, now faces another die.
    call = table.play(reading(turned([1, 2, 3, 5], quarter), seed=3))
    assert call == Call(event={"type": "present", "near": near})
    assert table.near() == near and table.view["to_move"] == 1 and table.view["moves"] == 0
    assert table.faces() == [1, 2, 3, 5]  # positions follow the dice
    assert table.play(reading(turned([1, 2, 3, 5], quarter), seed=4)) == Call()
    # Ben's move is read against the dice where they lie now: his near die turned.
    move = [1, 2, 3, 5]
    move[near] = 2 if move[near] == 3 else 4
    call = table.play(reading(turned(move, quarter), seed=5))
    assert call.event == {"type": "turn", "faces": move}
    assert table.view["last_move"]["player"] == 1


def test_turned_again_before_the_first_move_is_presented_anew() -> None:
    table = Table()
    table.play(reading([1, 2, 3, 5]))
    table.play(reading(turned([1, 2, 3, 5], 1), seed=3))
    assert table.near() == 3
    call = table.play(reading(turned([1, 2, 3, 5], 3), seed=4))  # a half turn further
    assert call == Call(event={"type": "present", "near": 1})
    events = [e["event"]["type"] for e in table.store.history()["entries"]]
    assert events == ["throw", "present"] and table.near() == 1
    call = table.play(reading([1, 2, 3, 5], seed=5))  # back as it was thrown
    assert call == Call(event={"type": "present", "near": 0}) and table.near() == 0


def test_repeated_faces_turned_either_way_present_the_same_dice() -> None:
    table = Table()
    table.play(reading([2, 5, 2, 5]))
    # A quarter either way fits the picture: both put a 5 before Ben and a 5 out of his reach.
    call = table.play(reading(turned([2, 5, 2, 5], 1), seed=3))
    assert call == Call(event={"type": "present", "near": 3})
    square = table.view["square"]
    assert (square["near"]["face"], square["far"]["face"]) == (5, 5)
    # The half turn shows the square as it was: nothing the camera can see, nothing changes.
    table = Table()
    table.play(reading([2, 5, 2, 5]))
    assert table.play(reading(turned([2, 5, 2, 5], 2), seed=3)) == Call()


@pytest.mark.parametrize("touched", [False, True])
def test_a_first_move_that_looks_like_the_square_turned(touched: bool) -> None:
    table = Table()
    table.play(reading([1, 1, 1, 2]))
    places = list(table.tracker.places or [])
    # Ben turns his near die 1 -> 2 and his right die 2 -> 1: 2-1-1-1, which is also what
    # the square turned a quarter would show. A move leaves the two other dice in place.
    moved = [2, 1, 1, 1]
    dice = []
    for p, value in enumerate(moved):
        x, y = places[p]
        if touched or p in (0, 3):
            x, y = x + 9.0 * (1 if p % 2 else -1), y + 7.0
        dice.append(die(value, (x + 0.4, y - 0.3)))
    call = table.play(dice)
    if touched:
        assert call == Call(event={"type": "present", "near": 3})
    else:
        assert call == Call(event={"type": "turn", "faces": moved})
        assert table.view["last_move"]["player"] == 1


def test_a_presentation_entered_by_the_game_master_is_followed() -> None:
    table = Table()
    table.play(reading([1, 2, 3, 5]))
    table.store.apply({"type": "present", "near": 3})  # from the scoreboard
    # The camera then sees the square turned the quarter that presents position 3: no input,
    # the tracker only follows the dice, and Ben's move is read where they lie.
    assert table.play(reading(turned([1, 2, 3, 5], 1), seed=3)) == Call()
    call = table.play(reading(turned([1, 2, 3, 1], 1), seed=4))  # Ben's near die 5 -> 1
    assert call.event == {"type": "turn", "faces": [1, 2, 3, 1]}
    assert table.view["scores"] == [0, 8]  # the trio 1-2-3


def test_a_presentation_is_found_again_after_a_restart() -> None:
    table = Table()
    table.play(reading([1, 2, 3, 5]))
    table.play(reading(turned([1, 2, 3, 5], 1), seed=3))
    table.tracker = SquareTracker()  # the controller restarts: the journal replayed
    assert table.play(reading(turned([1, 2, 3, 5], 1), seed=4)) == Call()
    call = table.play(reading(turned([1, 2, 3, 5], 2), seed=5))  # one quarter more
    assert call == Call(event={"type": "present", "near": 2})


def test_with_the_thrower_moving_first_a_turned_square_is_no_presentation() -> None:
    table = Table({"first_move": "thrower"})
    table.play(reading([1, 2, 3, 5]))
    # No move to turn the square after, nobody to present it to: the thrown square lies
    # otherwise, so its positions are numbered again from the bottom-left, where Ana's near
    # die lies (as when the dice are set down elsewhere before the first move).
    call = table.play(reading(turned([1, 2, 3, 5], 1), seed=3))
    assert call == Call(correction={"faces": turned([1, 2, 3, 5], 1)})
    assert table.faces() == [5, 1, 2, 3] and table.near() == 0 and table.view["moves"] == 0
    call = table.play(reading([4, 1, 2, 3], seed=4))  # Ana: near 5 -> 4
    assert call.event == {"type": "turn", "faces": [4, 1, 2, 3]}


def test_an_old_journal_of_a_game_in_progress_replays(tmp_path: Path) -> None:
    """A journal written when seat 0 moved first (its new game names only the overrides
    given) replays as it was played; today's journal, with full knobs, under the seed's rule."""
    from firmware_host.hub.journal import Journal
    from firmware_host.rules import PRESETS

    moves = ([1, 2, 3, 4], [3, 2, 3, 4], [3, 2, 5, 4])
    for knobs, scores, to_move in ((None, [9, 15], 0), ({"target": 100}, [9, 15], 0),
                                   (PRESETS["4d"], [15, 9], 1)):
        with Journal(tmp_path / f"{len(knobs or {})}.sqlite3") as journal:
            journal.record({"action": "new_game", "preset": "4d", "players": ["Ana", "Ben"],
                            "knobs": knobs})
            journal.record({"action": "event", "event": {"type": "throw", "faces": moves[0]}})
            for faces in moves[1:]:
                journal.record({"action": "event", "event": {"type": "turn", "faces": faces}})
            store = GameHub()
            assert len(store.open_journal(journal)) == 4
        view = store.snapshot()["game"]
        assert (view["scores"], view["to_move"]) == (scores, to_move), knobs
        assert view["dice"] == [3, 2, 5, 4] and view["square"]["near"]["pos"] == 2


# ---------------------------------------------------------------------- lost, corrected, over


def test_rearranged_before_the_first_move_renumbers_the_throw() -> None:
    table = Table()
    table.play(reading([1, 2, 3, 4]))
    elsewhere = (CENTRE[0] - 120.0, CENTRE[1] + 100.0)
    call = table.play(reading([3, 1, 4, 2], centre=elsewhere))
    assert call == Call(correction={"faces": [3, 1, 4, 2]})
    assert table.faces() == [3, 1, 4, 2] and table.view["moves"] == 0
    assert table.play(reading([3, 1, 4, 2], centre=elsewhere, seed=9)) == Call()


def test_a_square_moved_away_after_a_move_is_lost() -> None:
    table = Table()
    table.play(reading([1, 2, 3, 4]))
    table.play(reading([5, 2, 3, 4]))
    call = table.judge(reading([5, 2, 3, 4], centre=(CENTRE[0] - 120.0, CENTRE[1])))
    assert call.refusal == "square_lost"


def test_a_finished_game_refuses() -> None:
    table = Table({"target": 10})
    table.play(reading([1, 2, 3, 5]))
    table.play(reading([5, 2, 3, 5]))  # Ben makes a pair of 5: 3 + 5 = 8
    table.play(reading(turned([5, 2, 3, 5], 1)))  # turned clockwise: Ana faces position 1
    table.play(reading(turned([5, 5, 3, 5], 1)))  # Ana's near die 2 -> 5: a brelan of 5
    assert table.view["phase"] == "over"
    assert table.judge(reading(turned([5, 5, 3, 5], 1))).refusal == "game_over"


# ---------------------------------------------------------------------- the fifth die


def test_the_fifth_die() -> None:
    table = Table({"fifth_die": True})
    call = table.judge(reading([1, 2, 3, 4]))
    assert (call.refusal, call.values) == ("dice_count", {"expected": 5, "seen": 4})
    call = table.play(reading([1, 2, 3, 4], fifth=6))
    assert call.event == {"type": "throw", "faces": [1, 2, 3, 4, 6]}
    # A move turns the fifth die too.
    call = table.play(reading([5, 2, 3, 4], fifth=3))
    assert call.event == {"type": "turn", "faces": [5, 2, 3, 4, 3]}
    call = table.judge(reading([5, 2, 3, 3], fifth=3))
    assert call.refusal == "illegal_move"


# ---------------------------------------------------------------------- a restart


@pytest.mark.parametrize("quarter", [0, 1, 2, 3])
def test_resumed_after_a_restart(quarter: int) -> None:
    table = Table()
    table.play(reading([1, 2, 3, 4]))
    table.play(reading([5, 2, 3, 4]))
    # The controller restarts: a new tracker with no spots, the game replayed from the
    # journal. The square may have been turned any number of quarters since the throw.
    table.tracker = SquareTracker()
    assert table.tracker.places is None
    now = turned([5, 2, 3, 4], quarter)
    assert table.play(reading(now, seed=11)) == Call()
    assert table.tracker.places is not None
    # The next move is read against the positions found again.
    near = table.near()
    # Only the near die turned (the one move whose changed position says where near is).
    move = next(new for _, new in legal_results([5, 2, 3, 4], near)
                if [p for p in range(4) if new[p] != [5, 2, 3, 4][p]] == [near])
    call = table.play(reading(turned(move, quarter), seed=12))
    assert call.event == {"type": "turn", "faces": move}


def test_resumed_with_other_faces_is_lost() -> None:
    table = Table()
    table.play(reading([1, 2, 3, 4]))
    table.tracker = SquareTracker()
    assert table.judge(reading([1, 2, 3, 6])).refusal == "square_lost"
    assert table.tracker.places is None


# ---------------------------------------------------------------------- a whole game


def test_a_seeded_game_moves_and_rotations_all_accepted() -> None:
    """Random legal moves, each followed by a random quarter turn of the square: every input
    the tracker makes is accepted by the engine and is the move really made."""
    rng = random.Random(21)
    table = Table({"target": 1000})
    faces = [rng.randint(1, 6) for _ in range(4)]
    table.play(reading(faces, seed=0))
    where = 0  # quarters the physical square has turned since the throw
    for k in range(16):
        near = table.near()
        options = [new for _, new in legal_results(faces, near)
                   if not (new[0] == new[2] and new[1] == new[3])]  # a turn must show
        new = rng.choice(options)
        call = table.play(reading(turned(new, where), seed=2 * k + 1))
        assert call.event == {"type": "turn", "faces": new}, (faces, new, near)
        rotation = rng.choice(["cw", "ccw"])
        where = (where + {"cw": 1, "ccw": 3}[rotation]) % 4
        call = table.play(reading(turned(new, where), seed=2 * k + 2))
        assert call == Call(rotation=rotation)
        assert table.view["last_move"]["rotate"] == rotation
        assert table.near() == (near + (1 if rotation == "cw" else -1)) % 4
        assert table.faces() == new
        faces = new
    assert table.view["moves"] == 16
