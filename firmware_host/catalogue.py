"""Sentences by code in every language the tower speaks, read from gettext catalogs.

Each language is one catalog (`firmware_host.locales`: ``<language>/LC_MESSAGES/dicetower.po``):
``msgctxt`` names the table (``rules.prompts``, ``hub.refusals``, ``tower.notices``,
``scoreboard.labels``...), ``msgid`` the code the program decides in, ``msgstr`` the sentence,
a ``str.format`` template filled with the values that go with the code. Babel compiles each
catalog when it is first used, so no compiled ``.mo`` is kept beside it.

A part of the tower decides in codes and values; whoever shows them (the scoreboard in the
page's language, the terminal in English) puts them into words through a `Catalogue`, the
codes of one or more tables. A language missing a sentence falls back to English; an unknown
code comes back as it is, and a template missing a value as it is written, so that a sentence
is never lost. Adding a language is adding its catalog: `problems` (run by the tests) says
where a sentence or a placeholder is missing.
"""

from __future__ import annotations

import io
import string
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from typing import Any

from babel.messages.catalog import Catalog, Message
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

from firmware_host.locales import DOMAIN, FALLBACK, LANGUAGES, catalog_path

__all__ = ["DOMAIN", "FALLBACK", "LANGUAGES", "Catalogue", "catalog", "codes", "placeholders",
           "problems", "translations"]


@cache
def catalog(language: str) -> Catalog:
    """``language``'s catalog as written (for listing codes and checking it)."""
    with catalog_path(language).open("rb") as po:
        return read_po(po, locale=language, domain=DOMAIN)


@cache
def translations(language: str) -> Translations:
    """``language``'s catalog compiled, English behind it for what it lacks (an unknown
    language is English alone)."""
    if language not in LANGUAGES:
        language = FALLBACK
    compiled = io.BytesIO()
    write_mo(compiled, catalog(language))
    compiled.seek(0)
    found = Translations(compiled, domain=DOMAIN)
    if language != FALLBACK:
        found.add_fallback(translations(FALLBACK))
    return found


@cache
def codes(table: str) -> tuple[str, ...]:
    """The codes of one table, in the order of the English catalog."""
    return tuple(message.id for message in catalog(FALLBACK)
                 if message.id and message.context == table)


class Catalogue(Mapping[str, Mapping[str, str]]):
    """The codes of some tables (a later table wins a code two hold), read only, as
    ``code -> {language: template}``; see the module docstring."""

    def __init__(self, *tables: str) -> None:
        self.tables = tables
        self.name = "+".join(tables)
        self._table_of = {code: table for table in tables for code in codes(table)}

    def __getitem__(self, code: str) -> Mapping[str, str]:
        table = self._table_of[code]
        return {language: translations(language).pgettext(table, code)
                for language in LANGUAGES}

    def __iter__(self) -> Iterator[str]:
        return iter(self._table_of)

    def __len__(self) -> int:
        return len(self._table_of)

    def __or__(self, other: Catalogue) -> Catalogue:
        """Both catalogues as one; ``other`` wins a code both hold."""
        return Catalogue(*self.tables, *other.tables)

    def template(self, code: str, language: str) -> str | None:
        """``code``'s template in ``language`` (English when it has none), or None."""
        table = self._table_of.get(code)
        if table is None:
            return None
        return translations(language).pgettext(table, code)

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

    def problems(self) -> list[str]:
        """`problems` of this catalogue's tables."""
        return problems(self.tables)

    def in_language(self, language: str) -> dict[str, str]:
        """Every template in ``language`` (English where it has none), by code: for a page
        that fills them in itself."""
        return {code: self.template(code, language) or "" for code in self._table_of}


def problems(tables: Iterable[str] | None = None) -> list[str]:
    """What keeps a sentence (of ``tables``, else of all) from being said alike in every
    language: a catalog without it, an empty or fuzzy one, placeholders that differ from
    English's."""
    wanted = None if tables is None else set(tables)

    def kept(language: str) -> dict[tuple[str | None, str], Message]:
        return {(m.context, str(m.id)): m for m in catalog(language)
                if m.id and (wanted is None or m.context in wanted)}

    english = {key: str(m.string) for key, m in kept(FALLBACK).items()}
    found = []
    for language in LANGUAGES:
        written = kept(language)
        for key in sorted(english.keys() | written.keys(), key=str):
            table, code = key
            message = written.get(key)
            if key not in english:
                found.append(f"{language}: {table} {code!r} is not in the English catalog")
            elif message is None or not str(message.string).strip():
                found.append(f"{language}: {table} {code!r} has no sentence")
            elif message.fuzzy:
                found.append(f"{language}: {table} {code!r} is marked fuzzy")
            elif placeholders(str(message.string)) != placeholders(english[key]):
                found.append(f"{language}: {table} {code!r} fills "
                             f"{sorted(placeholders(str(message.string)))}, English "
                             f"{sorted(placeholders(english[key]))}")
    return found


def placeholders(template: str) -> set[str]:
    """The names a template fills in (``{player}``, ``{kind!r}``: player, kind)."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}
