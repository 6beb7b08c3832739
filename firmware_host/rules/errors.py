"""The one exception of the rules engine: illegal input, with a code and its values."""

from __future__ import annotations

from typing import Any

from firmware_host.rules.texts import RuleText, render


class RuleError(ValueError):
    """Input the rules refuse (wrong turn, impossible dice, unknown knob...).

    ``RuleError("not_your_turn", player="Ben", mover="Ana")``: ``code`` names a sentence of
    `firmware_host.rules.texts`, ``values`` fill it in. ``str(err)`` is the English sentence
    (command line, logs); ``err.text("fr")`` the French one. The game that raised it is
    unchanged.
    """

    def __init__(self, code: str, **values: Any) -> None:
        self.code = code
        self.values = values
        super().__init__(render(code, values, "en"))

    def text(self, language: str) -> str:
        """The sentence in ``language`` ("fr" or "en")."""
        return render(self.code, self.values, language)

    def as_text(self) -> RuleText:
        """The code and values, as JSON (a `RuleText`)."""
        return {"code": self.code, "values": dict(self.values)}

    def __reduce__(self) -> tuple[Any, ...]:
        # The default would call RuleError(sentence): rebuild from the code and values.
        return (_rebuild, (self.code, self.values))


def _rebuild(code: str, values: dict[str, Any]) -> RuleError:
    return RuleError(code, **values)
