"""The league board's words, French (the default: it is a French bar game) and English.

They are the table ``league.labels`` of the tower's gettext catalogs (`firmware_host.locales`,
one per language), read through the one text mechanism (`firmware_host.catalogue`); the page's
script gets the same table to render live updates.
"""

from __future__ import annotations

from firmware_host.catalogue import LANGUAGES, Catalogue

DEFAULT_LANGUAGE = "fr"
LABELS = Catalogue("league.labels")

__all__ = ["DEFAULT_LANGUAGE", "LABELS", "LANGUAGES", "labels"]


def labels(language: str) -> dict[str, str]:
    """Every label in ``language`` (the default language for one the league does not speak)."""
    return LABELS.in_language(language if language in LANGUAGES else DEFAULT_LANGUAGE)
