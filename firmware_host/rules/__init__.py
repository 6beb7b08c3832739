"""The rules engine: 421 in every preset and 4D, as pure state machines.

    game = new_game("tim-11", ["Ana", "Ben", "Cleo"])
    effects = game.apply({"type": "throw", "faces": [4, 2, 1]})
    game.view()          # display snapshot
    game_from_json(game.to_json())

No I/O and no hardware here: inputs in, state and effects out. See docs/rules.md.
"""

from __future__ import annotations

from firmware_host.rules.base import GameBase as Game
from firmware_host.rules.errors import RuleError
from firmware_host.rules.factory import game_from_json, new_game
from firmware_host.rules.fourd import Game4D, best_combination, check_move, legal_results
from firmware_host.rules.game421 import Game421
from firmware_host.rules.hands import hand_name, hand_value, rank_table
from firmware_host.rules.knobs import KNOBS, KNOBS_4D, KNOBS_421, PRESETS

__all__ = [
    "KNOBS",
    "KNOBS_4D",
    "KNOBS_421",
    "PRESETS",
    "Game",
    "Game4D",
    "Game421",
    "RuleError",
    "best_combination",
    "check_move",
    "game_from_json",
    "hand_name",
    "hand_value",
    "legal_results",
    "new_game",
    "rank_table",
]
