"""The scoreboard's languages through Flask-Babel: French by default (a French bar game).

Flask-Babel picks each request's language (`request_language`: ``?lang=``, then the cookie,
then the configured default) and serves the tower's gettext catalogs
(`firmware_host.catalogue`, compiled in memory) to the templates and to the error handlers.
The page's labels (table ``scoreboard.labels``) serve the templates and the page's script,
which renders live updates; what the rules engine says (its prompt: what happens next) comes
from the engine's own table (``rules.prompts``), added under ``prompt_<code>``. Game words
with no good English equivalent (charge, décharge, nénette, fiche) stay French.
"""

from __future__ import annotations

from babel.support import Translations
from flask import Flask, current_app, request
from flask_babel import Babel, Domain, get_locale

from firmware_host.catalogue import DOMAIN, LANGUAGES, Catalogue, translations
from firmware_host.rules.texts import PROMPTS

__all__ = ["DEFAULT_LANGUAGE", "LABELS", "LANGUAGES", "LANGUAGE_COOKIE", "init_languages",
           "labels", "page_language", "pick_language", "request_language"]

DEFAULT_LANGUAGE = "fr"
LANGUAGE_COOKIE = "lang"  # the page's language, remembered by the browser

LABELS = Catalogue("scoreboard.labels")


class CatalogueDomain(Domain):
    """Flask-Babel's translations for a request: the tower's catalogs, compiled in memory,
    rather than ``.mo`` files looked for beside the application."""

    def __init__(self) -> None:
        super().__init__(domain=DOMAIN)

    def get_translations(self) -> Translations:
        return translations(page_language())


def init_languages(app: Flask) -> None:
    """Let Flask-Babel choose each request's language and say it from the catalogs."""
    Babel(app, locale_selector=request_language, default_locale=DEFAULT_LANGUAGE,
          default_domain=DOMAIN)
    domain = CatalogueDomain()
    app.before_request(domain.as_default)


def page_language() -> str:
    """The language Flask-Babel chose for this request (`request_language`)."""
    locale = get_locale()
    return DEFAULT_LANGUAGE if locale is None else str(locale)


def pick_language(requested: str | None, cookie: str | None, default: str) -> str:
    """The query parameter wins, then the remembered choice, then the configured default."""
    for candidate in (requested, cookie, default):
        if candidate in LANGUAGES:
            return candidate
    return DEFAULT_LANGUAGE


def request_language() -> str:
    """The language of the page a request comes from: ``?lang=``, then the cookie, then the
    scoreboard's configured default (as the pages pick theirs)."""
    return pick_language(
        request.args.get("lang"),
        request.cookies.get(LANGUAGE_COOKIE),
        current_app.config.get("SCOREBOARD_LANG", DEFAULT_LANGUAGE),
    )


def labels(language: str) -> dict[str, str]:
    """The page's labels in ``language``, with the engine's prompts (``prompt_<code>``)."""
    if language not in LANGUAGES:
        language = DEFAULT_LANGUAGE
    prompts = {f"prompt_{code}": text for code, text in PROMPTS.in_language(language).items()}
    return {**LABELS.in_language(language), **prompts}
