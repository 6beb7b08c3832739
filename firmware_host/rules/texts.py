"""Everything the rules engine says, in every language: codes and values in, sentences out.

The engine decides in codes (``"not_your_turn"``, ``{"player": "Ben", "mover": "Ana"}``):
``view()["prompt"]`` says what happens next, a `RuleError` why an input is refused and
`check_move` why a 4D move is illegal. Whoever shows them picks the language: the scoreboard
the page's, the command line English. The sentences are the tables ``rules.prompts`` and
``rules.refusals`` of the gettext catalogs (`firmware_host.catalogue`), so every place says
the same thing.

Game words with no good English equivalent stay French in both languages: charge, décharge,
nénette, rampo, manche, and the opener's announcements (sec, en 2, à fond). Player names and
hands are values, never part of a template.
"""

from __future__ import annotations

from typing import Any, TypedDict

from firmware_host.catalogue import LANGUAGES, Catalogue

__all__ = ["LANGUAGES", "PROMPTS", "REFUSALS", "TEXTS", "RuleText", "is_rule_text", "render",
           "render_text", "rule_text"]


class RuleText(TypedDict):
    """A sentence of the engine before it is put into words: its code and its values."""

    code: str
    values: dict[str, Any]


#: What happens next: ``view()["prompt"]["code"]`` is one of these.
PROMPTS = Catalogue("rules.prompts")

#: Why an input is refused: the code of every `RuleError` and of every `check_move` reason
#: (and the dice a 4D reason names, values of ``opposite_face``).
REFUSALS = Catalogue("rules.refusals")

TEXTS = PROMPTS | REFUSALS


def rule_text(code: str, **values: Any) -> RuleText:
    """The code and values of one sentence, to be put into words later (`render_text`)."""
    return {"code": code, "values": values}


def render(code: str, values: dict[str, Any] | None = None, language: str = "en") -> str:
    """The sentence for ``code`` in ``language`` ("fr" or "en"), with ``values`` filled in.

    A value that is itself a `RuleText` is put into words in the same language. An unknown
    code comes back as it is, so that a sentence is never lost for want of a translation.
    """
    shown = {key: _shown(value, language) for key, value in (values or {}).items()}
    return TEXTS.say(code, shown, language)


def render_text(text: RuleText | dict[str, Any], language: str = "en") -> str:
    """`render` for a `RuleText` (``{"code": ..., "values": {...}}``)."""
    return render(str(text.get("code", "")), text.get("values"), language)


def is_rule_text(value: Any) -> bool:
    """Whether ``value`` is a `RuleText` of this table (so it can be put into words)."""
    return isinstance(value, dict) and value.get("code") in TEXTS


def _shown(value: Any, language: str) -> Any:
    if is_rule_text(value):
        return render_text(value, language)
    return value
