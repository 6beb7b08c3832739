"""The odds advisor: exact 421 odds for every keep, and the best 4D move with the reply.

Pure: it asks the rules engine (``firmware_host.rules``) for rankings, token values, legal
moves and scores, and never ranks or scores anything itself. Results are plain dicts.

    advise([4, 2, 6], preset="tim-11", throws_left=2, to_beat=[5, 5, 3])
    advise_4d([3, 5, 2, 6], near=0, scores=(40, 55))
"""

from __future__ import annotations

from firmware_host.advisor.moves4d import advise_4d
from firmware_host.advisor.odds421 import GOALS, AdvisorError, advise

__all__ = ["GOALS", "AdvisorError", "advise", "advise_4d"]
