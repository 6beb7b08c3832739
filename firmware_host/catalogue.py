"""Sentences by code in every language the tower speaks: the one mechanism of every text table.

Each part keeps its own table (the rules engine's prompts and refusals, the hub's and the
scoreboard's refusals, the tower's notices, the page's labels and odds labels) as a
`Catalogue`: a code names a ``str.format`` template per language, and `say` fills it in. The
part decides in codes and values; whoever shows them picks the language. A language missing
a sentence falls back to English; an unknown code comes back as it is, and a template missing
a value as it is written, so that a sentence is never lost. Adding a language is adding its
column to each table and its code to `LANGUAGES`: `problems` (run by the tests over every
catalogue) says where a sentence or a placeholder is missing.
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Mapping
from typing import Any

LANGUAGES = ("fr", "en")
FALLBACK = "en"


class Catalogue(Mapping[str, Mapping[str, str]]):
    """``code -> {language: template}``, read only; see the module docstring."""

    def __init__(self, name: str, table: Mapping[str, Mapping[str, str]]) -> None:
        self.name = name
        self._table = {code: dict(templates) for code, templates in table.items()}

    @classmethod
    def by_language(cls, name: str, table: Mapping[str, Mapping[str, str]]) -> Catalogue:
        """A catalogue from ``{language: {code: template}}`` (the pages' labels are kept so)."""
        codes: dict[str, dict[str, str]] = {}
        for language, templates in table.items():
            for code, template in templates.items():
                codes.setdefault(code, {})[language] = template
        return cls(name, codes)

    def __getitem__(self, code: str) -> Mapping[str, str]:
        return self._table[code]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __or__(self, other: Catalogue) -> Catalogue:
        """Both catalogues as one; ``other`` wins a code both hold."""
        return Catalogue(f"{self.name}+{other.name}", {**self._table, **other._table})

    def template(self, code: str, language: str) -> str | None:
        """``code``'s template in ``language`` (English when it has none), or None."""
        templates = self._table.get(code)
        if templates is None:
            return None
        return templates.get(language) or templates.get(FALLBACK)

    def say(self, code: str, values: Mapping[str, Any] | None = None,
            language: str = FALLBACK) -> str:
        """The sentence for ``code`` in ``language``, ``values`` filled in."""
        template = self.template(code, language)
        if template is None:
            return code
        try:
            return template.format(**(values or {}))
        except (KeyError, IndexError):
            return template

    def in_language(self, language: str) -> dict[str, str]:
        """Every template in ``language`` (English where it has none), by code: for a page
        that fills them in itself."""
        return {code: self.template(code, language) or "" for code in self._table}

    def problems(self) -> list[str]:
        """What keeps a code from being said alike in every language: a language without it,
        an empty sentence, placeholders that differ from English's."""
        found = []
        for code, templates in self._table.items():
            english = placeholders(templates.get(FALLBACK, ""))
            for language in LANGUAGES:
                text = templates.get(language, "")
                if not text.strip():
                    found.append(f"{self.name}: {code!r} has no {language} sentence")
                elif placeholders(text) != english:
                    found.append(f"{self.name}: {code!r} in {language} fills "
                                 f"{sorted(placeholders(text))}, English {sorted(english)}")
            for language in set(templates) - set(LANGUAGES):
                found.append(f"{self.name}: {code!r} has a sentence in {language!r}, which "
                             "is not among LANGUAGES")
        return found


def placeholders(template: str) -> set[str]:
    """The names a template fills in (``{player}``, ``{kind!r}``: player, kind)."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}
