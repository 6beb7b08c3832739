"""The 4D move advisor: every legal move and rotation, checked move by move through the engine."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from firmware_host.advisor import AdvisorError, advise_4d
from firmware_host.rules import best_combination, check_move, new_game
from firmware_host.rules.fourd import ROTATIONS
from firmware_host.rules.simulation import policy_4d


def _positions(fifth: bool, count: int, seed: int) -> list[Any]:
    """Games part-way through, reached by the simple players from seeded throws."""
    rng = random.Random(seed)
    games = []
    while len(games) < count:
        game = new_game("4d", ["Ana", "Ben"], {"fifth_die": fifth, "target": 60})
        for _ in range(rng.randrange(1, 8)):
            if game.is_over:
                break
            game.apply(policy_4d(game, rng))
        if not game.is_over and game.legal_moves():
            games.append(game)
    return games


def _engine_outcomes(game: Any) -> dict[tuple[tuple[int, ...], str], tuple[int, int | None]]:
    """(faces, rotate) -> (points the move scores, the reply's best points or None when the
    move wins), each move played on a copy of the game and judged by the engine."""
    mover = game.to_move
    found = {}
    for _, faces in game.legal_moves():
        for rotate in ROTATIONS:
            play = copy.deepcopy(game)
            effects = play.apply({"type": "turn", "faces": faces, "rotate": rotate})
            points = next(e["points"] for e in effects if e["kind"] == "scored")
            if play.is_over:
                assert play.winner == mover
                found[(tuple(faces), "cw")] = (points, None)
                continue
            pairs = play.knobs["pairs_score"]
            reply = max(best_combination(new, pairs)[1] for _, new in play.legal_moves())
            found[(tuple(faces), rotate)] = (points, reply)
    return found


@pytest.mark.parametrize("fifth", [False, True])
def test_every_move_and_reply_as_the_engine_plays_them(fifth: bool) -> None:
    for game in _positions(fifth, 3 if fifth else 6, seed=11):
        me = game.to_move
        result = advise_4d(game.faces, near=game.near,
                           scores=(game.scores[me], game.scores[1 - me]), knobs=game.knobs)
        engine = _engine_outcomes(game)
        advised = {(tuple(m["faces"]), m["rotate"]): m for m in result["moves"]}
        assert set(advised) == set(engine)
        for key, (points, reply) in engine.items():
            move = advised[key]
            assert move["points"] == points
            assert move["wins"] == (reply is None)
            assert (move["reply"] or {}).get("points") == reply
            assert check_move(game.faces, move["faces"], game.near, fifth) is None
        # Best first: a win, else no winning reply, then the largest margin.
        order = [(not m["wins"], bool(m["reply"] and m["reply"]["wins"]), -m["net"])
                 for m in result["moves"]]
        assert order == sorted(order)
        assert result["best"] == result["moves"][0]


def test_a_winning_move_comes_first_and_a_losing_one_last() -> None:
    # 3,5,2,6 facing position 0: turning the right die from 6 to 4 shows the suite 5432
    # (15 points), the most any move from here scores.
    result = advise_4d([3, 5, 2, 6], near=0, scores=(85, 0))
    assert result["best"]["wins"] and result["best"]["points"] == 15
    assert result["best"]["reply"] is None
    # Close to the target both: moves that let the reply win go after those that do not.
    close = advise_4d([3, 5, 2, 6], near=0, scores=(0, 90))
    flags = [bool(m["reply"]["wins"]) for m in close["moves"]]
    assert flags == sorted(flags) and True in flags


def test_rotation_changes_the_reply() -> None:
    # Some position where the two ways of turning the square leave different best replies.
    for game in _positions(False, 12, seed=3):
        result = advise_4d(game.faces, near=game.near, knobs=game.knobs)
        by_faces: dict[tuple[int, ...], set[int]] = {}
        for move in result["moves"]:
            if move["reply"]:
                by_faces.setdefault(tuple(move["faces"]), set()).add(move["reply"]["points"])
        if any(len(points) > 1 for points in by_faces.values()):
            return
    pytest.fail("the rotation never mattered in twelve positions")


def test_result_is_plain_json() -> None:
    result = advise_4d([1, 2, 3, 4, 5], near=2, scores=(10, 20))
    assert result["fifth_die"] is True
    assert json.loads(json.dumps(result)) == result


@pytest.mark.parametrize(("args", "words"), [
    (([1, 2, 3],), "3 faces given; this game has 4 dice"),
    (([1, 2, 3, 7],), "1 to 6, not 7"),
    (([1, 2, 3, 4], 4), "position 0 to 3"),
    (([1, 2, 3, 4], 0, (100, 0)), "the game is over"),
    (([1, 2, 3, 4], 0, (-1, 0)), "two whole numbers"),
])
def test_bad_positions_are_refused(args: tuple[Any, ...], words: str) -> None:
    faces, *rest = args
    kwargs = dict(zip(("near", "scores"), rest, strict=False))
    with pytest.raises(AdvisorError, match=words):
        advise_4d(faces, **kwargs)
    with pytest.raises(AdvisorError, match="valid knobs"):
        advise_4d([1, 2, 3, 4], knobs={"colour": "red"})
