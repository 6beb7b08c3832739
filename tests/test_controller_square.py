"""The 4D square tracker: positions numbered on the throw, moves read as the engine's `turn`,
rotations told apart, illegal moves refused with the engine's reason; every input it makes is
applied to a real game through the scoreboard's store, which must accept it."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from firmware_host.controller.referee import Call
from firmware_host.controller.square import SquareTracker, clockwise_order, split_fifth
from firmware_host.rules import check_move, legal_results
from firmware_host.scoreboard.store import GameStore
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
        self.store = GameStore()
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
            self.store.apply(call.event)
        elif call.correction is not None:
            self.store.correct_last(call.correction["faces"])
        elif call.rotation is not None:
            last = self.store.snapshot()["last_input"]
            if last["type"] == "turn" and last.get("rotate", "cw") != call.rotation:
                self.store.correct_last(list(last["faces"]), rotate=call.rotation)
        if call.accepted or call.correction or call.rotation:
            quarter = {"cw": 1, "ccw": 3}.get(
                (call.event or {}).get("rotate") or call.rotation or "", 0)
            self.tracker.accept(dice, call.event or call.correction, quarter)
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
    assert table.faces() == [1, 2, 3, 5] and table.view["phase"] == "play"


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
    table.play(reading([2, 5, 2, 5]))
    assert table.judge(reading(turned([2, 5, 2, 5], 1))) == Call(rotation=None)
    assert table.judge(reading(turned([2, 5, 2, 5], 2))) == Call()


def test_an_illegal_move_is_refused_with_the_engines_reason() -> None:
    table = Table()
    table.play(reading([1, 2, 3, 4]))
    far = [1, 2, 2, 4]  # position 2 is the far die for the player facing position 0
    call = table.judge(reading(far))
    assert call.refusal == "illegal_move"
    assert call.values == {"reason": check_move([1, 2, 3, 4], far, 0)}
    assert "far die" in call.values["reason"]
    opposite = [6, 2, 3, 4]  # 1 -> 6: a quarter turn never shows the opposite face
    call = table.judge(reading(opposite))
    assert call.values == {"reason": check_move([1, 2, 3, 4], opposite, 0)}
    assert "opposite face" in call.values["reason"]
    assert table.view["moves"] == 0


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
    table.play(reading([5, 2, 3, 5]))  # a pair of 5: 3 + 5 = 8
    table.play(reading(turned([5, 2, 3, 5], 1)))  # turned clockwise: Ben faces position 1
    table.play(reading(turned([5, 5, 3, 5], 1)))  # Ben's near die 2 -> 5: a brelan of 5
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


def _ambiguous_move() -> tuple[list[int], list[int], int]:
    """(square faces, faces on the spots after a move, quarter) where the move reads as legal
    both with the square left as it was and turned ``quarter`` quarters."""
    rng = random.Random(4)
    for _ in range(5000):
        faces = [rng.randint(1, 6) for _ in range(4)]
        for _, new in legal_results(faces, 0, False):
            for quarter in (1, 3):
                # Spots showing ``new`` unturned also read, turned back, as another move.
                other = [new[(p + quarter) % 4] for p in range(4)]
                if other != faces and check_move(faces, other, 0, False) is None:
                    return faces, list(new), quarter
    raise AssertionError("no ambiguous move found")


@pytest.mark.parametrize("touched", [False, True])
def test_a_move_legal_left_and_turned_is_told_by_the_dice_left_in_place(touched: bool) -> None:
    faces, new, quarter = _ambiguous_move()
    table = Table()
    table.play(reading(faces, seed=2))
    assert table.faces() == faces and table.near() == 0
    places = list(table.tracker.places or [])
    dice = []
    for p, value in enumerate(new):
        x, y = places[p]
        if touched or value != faces[p]:
            # A hand set this die down: a few pixels off where it lay (a turn moves them all).
            x, y = x + 9.0 * (1 if p % 2 else -1), y + 7.0
        dice.append(die(value, (x + 0.4, y - 0.3)))  # a still die reads within a pixel
    call = table.judge(dice)
    assert call.event is not None and call.event["type"] == "turn"
    if touched:
        assert call.event["faces"] == [new[(p + quarter) % 4] for p in range(4)]
        assert call.event["rotate"] == {1: "cw", 3: "ccw"}[quarter]
    else:
        assert call.event["faces"] == new and "rotate" not in call.event
    table.store.apply(call.event)  # the engine takes it
