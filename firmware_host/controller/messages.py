"""What the tower says to the table, in every language: codes and values in, sentences out.

The controller decides in codes (``"cocked"``, ``{"count": 1}``); the scoreboard shows the
sentence in the page's language and the terminal in English. One table of the gettext
catalogs (``tower.notices``, `firmware_host.catalogue`), so both always agree. A notice
carries its sentence in each language beside its code and values because the state it rides
in is serialised once for every page, whatever their language.
A ``reason`` from the rules engine (a refused input, an illegal 4D move) is a code and values
of `firmware_host.rules.texts` too, put into words in the same language.
"""

from __future__ import annotations

from typing import Any

from firmware_host.catalogue import LANGUAGES, Catalogue
from firmware_host.rules import RuleError
from firmware_host.rules.texts import RuleText, is_rule_text, render_text

MESSAGES = Catalogue("tower.notices")


def render(code: str, values: dict[str, Any] | None = None, lang: str = "en") -> str:
    """The sentence for ``code`` in ``lang`` ("fr" or "en"), with ``values`` filled in."""
    shown = {key: _shown(value, lang) for key, value in (values or {}).items()}
    return MESSAGES.say(code, shown, lang)


def notice(code: str, values: dict[str, Any] | None = None, level: str = "warn"
           ) -> dict[str, Any]:
    """A notice for the scoreboard: the code, its values and the sentence in each language."""
    values = dict(values or {})
    return {"code": code, "values": values, "level": level,
            **{language: render(code, values, language) for language in LANGUAGES}}


def reason_of(exc: Exception) -> RuleText | str:
    """The ``reason`` value of a refusal: the engine's code and values for a `RuleError` (so
    each language gets its own sentence), else the exception's text."""
    if isinstance(exc, RuleError):
        return exc.as_text()
    return str(exc)


def _shown(value: Any, lang: str) -> Any:
    if is_rule_text(value):
        return render_text(value, lang)
    if isinstance(value, list | tuple):
        return "-".join(str(v) for v in value)
    return value
