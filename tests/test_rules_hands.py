"""Hands of 421: names, the two rankings and the token values of docs/rules.md."""

from __future__ import annotations

import pytest

from firmware_host.rules import PRESETS
from firmware_host.rules.hands import (
    BRELANS_RANKING,
    FICHES_RANKING,
    hand_name,
    hand_value,
    rank_table,
    throws_label,
    value_table,
)


def better(a: str, b: str, ranking: str) -> bool:
    table = rank_table(ranking)
    return table[a] < table[b]


def test_hand_name_is_faces_in_descending_order() -> None:
    assert hand_name([2, 6, 5]) == "652"
    assert hand_name((1, 2, 4)) == "421"
    with pytest.raises(ValueError, match="three faces"):
        hand_name([0, 1, 2])


@pytest.mark.parametrize("ranking", [FICHES_RANKING, BRELANS_RANKING])
def test_each_ranking_holds_the_56_hands_once(ranking: tuple[str, ...]) -> None:
    every = {hand_name((a, b, c)) for a in range(1, 7) for b in range(1, 7) for c in range(1, 7)}
    assert len(ranking) == 56
    assert set(ranking) == every
    assert ranking[0] == "421"
    assert ranking[-1] == "221"  # tout bat nénette


def test_fiches_rank_just_above_their_brelan() -> None:
    assert better("611", "666", "fiches")
    assert better("666", "511", "fiches")
    assert better("211", "222", "fiches")
    assert better("222", "654", "fiches")
    assert better("321", "665", "fiches")


def test_brelans_only_makes_x11_an_ordinary_hand() -> None:
    # kyt-11: 652 beats 651 and loses to 653.
    assert better("652", "651", "brelans")
    assert better("653", "652", "brelans")
    assert better("665", "611", "brelans")
    assert better("111", "666", "brelans")
    assert better("322", "311", "brelans")


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        ("regles-21", {"421": 10, "111": 7, "611": 6, "666": 6, "211": 2, "654": 2, "221": 2}),
        ("classique-10", {"421": 10, "511": 5, "333": 3, "321": 2, "221": 2, "665": 1}),
        ("tim-11", {"421": 8, "111": 7, "411": 4, "444": 4, "543": 2, "221": 2, "652": 1}),
        ("kyt-11", {"421": 8, "111": 7, "611": 1, "555": 5, "432": 2, "221": 1, "652": 1}),
    ],
)
def test_token_values_follow_the_table(preset: str, expected: dict[str, int]) -> None:
    knobs = PRESETS[preset]
    table = value_table(knobs["ranking"], knobs["value_421"], knobs["nenette"])
    for hand, value in expected.items():
        assert table[hand] == value, hand


def test_every_hand_is_worth_at_least_one_token() -> None:
    for ranking in ("fiches", "brelans"):
        for nenette in ("fixed-2", "plus-2", "plain"):
            assert min(value_table(ranking, 8, nenette).values()) == 1
    assert hand_value("662", "fiches", 10, "plain") == 1


def test_throw_labels() -> None:
    assert [throws_label(n) for n in (1, 2, 3)] == ["sec", "en 2", "à fond"]
    assert throws_label(None) is None
