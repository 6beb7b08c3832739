"""The one exception of the rules engine: illegal input, with a human reason."""

from __future__ import annotations


class RuleError(ValueError):
    """Input the rules refuse (wrong turn, impossible dice, unknown knob...).

    ``str(err)`` is a sentence a player can read. The game that raised it is unchanged.
    """
