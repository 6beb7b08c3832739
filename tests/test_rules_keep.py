"""A 421 throw's ``keep`` must be a list of positions: anything else is refused, not read as
"nothing kept", on a first throw as on a later one, and a refused throw changes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from firmware_host.rules import RuleError, new_game
from firmware_host.rules.game421 import Game421
from firmware_host.rules.scripting import open_with

ANA = 0
NOT_A_LIST = r"'keep' must (be a list of|hold) whole numbers"


def game(thrown: bool) -> Game421:
    """A tim-11 game past its opening, Ana to move with three throws; ``thrown``: she has
    thrown 6-5-2 once."""
    g = new_game("tim-11", ["Ana", "Ben"], {"charge_throws": 3})
    open_with(g, ANA)
    if thrown:
        g.apply({"type": "throw", "faces": [6, 5, 2]})
        assert g.to_move == ANA
    return g


@pytest.mark.parametrize("keep", [0, 1, "", "0", False, True, None, {}, {0: 1}, 0.0, [0.0],
                                  [False], [None]])
@pytest.mark.parametrize("thrown", [False, True])
def test_a_keep_that_is_no_list_of_positions_is_refused(keep: Any, thrown: bool) -> None:
    g = game(thrown)
    before, events = g.view(), g.events
    faces = [1, 2] if thrown else [4, 2, 1]
    with pytest.raises(RuleError, match=NOT_A_LIST):
        g.apply({"type": "throw", "faces": faces, "keep": keep})
    assert g.view() == before and g.events == events


@pytest.mark.parametrize("keep", [[], ()])
def test_an_empty_keep_on_a_first_throw_keeps_nothing(keep: Any) -> None:
    g = game(thrown=False)
    g.apply({"type": "throw", "faces": [4, 2, 1], "keep": keep})
    assert g.events[-1] == {"type": "throw", "faces": [4, 2, 1]}  # journaled as before
    with pytest.raises(RuleError, match="nothing to keep"):
        game(thrown=False).apply({"type": "throw", "faces": [4, 2, 1], "keep": [0]})


def test_a_list_of_positions_still_keeps() -> None:
    g = game(thrown=True)
    g.apply({"type": "throw", "faces": [1], "keep": [1, 2]})
    assert sorted(g.hand) == [1, 2, 5]
