"""The 4D square tracker, the dice as evidence: where the dice lie tells a move made with the
square left as it lay from one made with the square turned, including when dice land by chance
where others lay, when both turns fit, and when the stop button turns the square back."""

from __future__ import annotations

import copy
import itertools
import math
import random
from collections.abc import Sequence

import pytest
from test_controller_square import Table, die, reading, turned

from firmware_host.controller.referee import Call
from firmware_host.controller.square import SquareTracker
from firmware_host.rules import check_move, game_from_json, legal_results, new_game
from firmware_host.rules.fourd import Game4D
from vision import Die


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


# ---------------------------------------------------------------------- the dice as evidence


def set_down(places: Sequence[tuple[float, float]], at_spots: Sequence[int],
             still: Sequence[int] = (), seed: int = 0) -> list[Die]:
    """The dice after a hand went over the square: ``at_spots[s]`` on the spot where the die
    of position s lay at the last reading (``places[s]``). The dice on the ``still`` spots
    lie exactly there (the reading's jitter only, as a die nobody touched, or a die that
    happens to land where another lay); the others are set down a few pixels off."""
    rng = random.Random(seed)
    dice = []
    for s, value in enumerate(at_spots[:4]):
        x, y = places[s]
        if s in still:
            x, y = x + rng.uniform(-0.5, 0.5), y + rng.uniform(-0.5, 0.5)
        else:
            reach, angle = rng.uniform(7.0, 13.0), rng.uniform(0.0, 6.283)
            x, y = x + reach * math.cos(angle), y + reach * math.sin(angle)
        dice.append(die(value, (x, y)))
    if len(at_spots) > 4:
        dice.append(die(at_spots[4], places[4]))
    rng.shuffle(dice)
    return dice


def faced(faces: Sequence[int], near: int) -> list[int]:
    """The square as the player facing ``near`` sees it: near, left, far, right, then the
    fifth die. Two numberings of the same dice in the same places give the same list."""
    return [faces[(near + k) % 4] for k in range(4)] + list(faces[4:])


def test_a_turned_square_two_dice_of_which_land_where_others_lay() -> None:
    table = Table()
    table.play(reading([6, 6, 6, 6]))
    places = list(table.tracker.places or [])
    # Ben turns his near and right dice to 2 (2-6-6-2) and the square a quarter clockwise.
    # The spots then show 2-2-6-6, which as the square lay would be his near and left dice
    # turned, and two dice happen to land exactly where dice lay. But that move would have
    # left position 3 alone, and the die there moved: the square was turned.
    call = table.play(set_down(places, turned([2, 6, 6, 2], 1), still=(0, 2)))
    assert call.event == {"type": "turn", "faces": [2, 6, 6, 2], "rotate": "cw"}
    assert faced(table.faces(), table.near()) == faced([2, 6, 6, 2], 1)


def test_a_move_read_as_unturned_needs_every_untouched_die_in_place() -> None:
    table = Table()
    table.play(reading([4, 1, 1, 3]))
    places = list(table.tracker.places or [])
    # Ben turns near (4 -> 1) and right (3 -> 6) and the square clockwise: the spots show
    # 6-1-1-1, also his near and right dice turned as the square lay, which would have left
    # positions 1 and 2 in place. Positions 2 and 3 hold dice exactly where dice lay, 1 not.
    call = table.play(set_down(places, turned([1, 1, 1, 6], 1), still=(2, 3), seed=1))
    assert call.event == {"type": "turn", "faces": [1, 1, 1, 6], "rotate": "cw"}
    # The same move made with the square left as it lay: read as such, the turn to come.
    table = Table()
    table.play(reading([4, 1, 1, 3]))
    call = table.play(set_down(places, [6, 1, 1, 1], still=(1, 2), seed=1))
    assert call.event == {"type": "turn", "faces": [6, 1, 1, 1]}


def test_a_presentation_two_dice_of_which_land_where_others_lay() -> None:
    table = Table()
    table.play(reading([1, 1, 1, 2]))
    places = list(table.tracker.places or [])
    # Ana turns the square a quarter: 2-1-1-1, also Ben's near and right dice turned. Two
    # dice land where dice lay, but not position 2, which such a move would leave alone.
    call = table.play(set_down(places, turned([1, 1, 1, 2], 1), still=(0, 1)))
    assert call == Call(event={"type": "present", "near": 3})


def test_a_move_that_shows_the_square_turned_is_a_move_when_the_dice_stayed() -> None:
    table = Table({"first_move": "thrower"})
    table.play(reading([1, 1, 1, 1]))
    places = list(table.tracker.places or [])
    table.play(set_down(places, [2, 1, 1, 1], still=(1, 2, 3)))  # Ana: near 1 -> 2
    assert table.near() == 1  # clockwise, until the camera sees the square turned
    # Ben turns his right die 2 -> 1 and his near die 1 -> 2: 1-2-1-1, just what the square
    # turned a quarter would show. Positions 2 and 3 lie exactly where they lay: a move.
    call = table.play(set_down(places, [1, 2, 1, 1], still=(2, 3), seed=1))
    assert call == Call(event={"type": "turn", "faces": [1, 2, 1, 1]})
    assert table.view["last_move"]["player"] == 1
    # Had every die moved, it would be the square turned after Ana's move.
    table = Table({"first_move": "thrower"})
    table.play(reading([1, 1, 1, 1]))
    table.play(set_down(places, [2, 1, 1, 1], still=(1, 2, 3)))
    assert table.play(set_down(places, [1, 2, 1, 1], seed=1)) == Call(rotation="cw")


def test_a_turn_both_ways_fit_keeps_following_the_dice() -> None:
    table = Table()
    table.play(reading([2, 5, 2, 1]))
    places = list(table.tracker.places or [])
    table.play(set_down(places, [2, 5, 2, 5], still=(0, 1, 2)))  # Ben: right 1 -> 5
    # The square turned: a quarter either way shows 5-2-5-2, and either way Ana faces a 5
    # with a 2 on each side. The rotation stays as the engine has it, and the tracker
    # follows the dice that way.
    call = table.play(set_down(places, turned([2, 5, 2, 5], 1), seed=3))
    assert call == Call(rotation="cw")
    assert table.near() == 1
    # Ana turns her near die 5 -> 4 and the square clockwise, seen at once: the square now
    # lies two quarters from the throw.
    call = table.play(set_down(places, turned([2, 4, 2, 5], 2), seed=4))
    assert call.event is not None and call.event["type"] == "turn"
    assert faced(table.faces(), table.near()) == faced([2, 4, 2, 5], 2)


@pytest.mark.parametrize("first_move", ["opponent", "thrower"])
def test_every_move_and_turn_reads_as_the_game_it_makes(first_move: str) -> None:
    """Seeded squares, every legal first move, the square left as it lay or turned either
    way, and every set of dice that happen to land exactly where dice lay: the tower reads
    the game that was played (the same dice before the next player, the same one locked).
    Left out: a turned square whose coincidences are the very picture of a move made as the
    square lay (every die that move leaves alone exactly in place), which nothing tells."""
    rng = random.Random(13)
    checked = 0
    for _ in range(12):
        start = [rng.randint(1, 6) for _ in range(4)]
        game = new_game("4d", ["Ana", "Ben"], {"target": 1000, "first_move": first_move})
        game.apply({"type": "throw", "faces": start})
        view = game.view()
        thrown = SquareTracker()
        dice = reading(start, seed=1)
        thrown.accept_call(dice, thrown.judge(dice, view))
        places = list(thrown.places or [])
        games: dict[str, list[int]] = {}

        for _, new in legal_results(start, game.near):
            for quarter in (0, 1, 3):
                at_spots = turned(new, quarter)
                alone = {p for p in range(4) if at_spots[p] == start[p]}
                as_it_lay = check_move(start, at_spots, game.near) is None
                for size in range(5):
                    for still in map(set, itertools.combinations(range(4), size)):
                        if quarter == 0 and not alone <= still:
                            continue  # a move leaves every die it did not turn in place
                        if quarter and as_it_lay and alone <= still:
                            continue  # the picture of a move made as the square lay
                        tracker = copy.deepcopy(thrown)
                        call = tracker.judge(set_down(places, at_spots, sorted(still)), view)
                        where = (start, new, quarter, sorted(still), call)
                        assert call.event is not None and call.event["type"] == "turn", where
                        if quarter == 0:
                            assert call.event == {"type": "turn", "faces": new}, where
                        truth = {"type": "turn", "faces": new,
                                 "rotate": {0: "cw", 1: "cw", 3: "ccw"}[quarter]}
                        assert played(game, call.event, games) == played(game, truth, games), where
                        checked += 1
    assert checked > 1000, checked


def played(game: Game4D, event: dict[str, object], memo: dict[str, list[int]]) -> list[int]:
    """The square as the next player faces it once ``game`` took ``event`` (on a copy)."""
    key = repr(event)
    if key not in memo:
        copied = game_from_json(game.to_json())
        assert isinstance(copied, Game4D)
        copied.apply(event)
        memo[key] = faced(copied.faces, copied.near)
    return memo[key]


@pytest.mark.parametrize("renumbered", [True, False])
def test_the_stop_button_turning_the_square_back_renumbers_the_dice(renumbered: bool) -> None:
    table = Table()
    table.play(reading([2, 5, 2, 1]))
    places = list(table.tracker.places or [])
    table.play(set_down(places, [2, 5, 2, 5], still=(0, 1, 2)))  # Ben: right 1 -> 5
    # Ben really turned the square counter-clockwise; a quarter either way shows 5-2-5-2,
    # so the tower took the engine's clockwise, and Ben presses the stop button to say so.
    assert table.play(set_down(places, turned([2, 5, 2, 5], 3), seed=3)) == Call(rotation="cw")
    last = table.store.snapshot()["last_input"]
    table.store.correct_last(list(last["faces"]), rotate="ccw")
    if renumbered:
        table.tracker.renumber("cw", "ccw")  # as the controller's stop button does
    near = table.near()
    faces = table.faces()
    assert faces[near] == 5
    # Ana turns the die she faces 5 -> 4 and the square counter-clockwise again: the dice
    # now lie two quarters from the throw.
    faces[near] = 4
    call = table.judge(set_down(places, turned(faces, 2), seed=4))
    assert call.event is not None and call.event["faces"] == faces
    # Renumbered, the tower sees the counter-clockwise turn she made; left a half turn off,
    # it would take her turn for a clockwise one and lock the wrong die for Ben.
    assert call.event["rotate"] == ("ccw" if renumbered else "cw")
