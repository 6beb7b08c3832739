"""The tower's gettext catalogs, one per language: ``<language>/LC_MESSAGES/dicetower.po``.

Which languages the tower speaks is which catalogs lie here, found without loading Babel, so
that a command line can offer them at once; `firmware_host.catalogue` reads and compiles them.
"""

from __future__ import annotations

from pathlib import Path

DOMAIN = "dicetower"
LOCALES = Path(__file__).parent
FALLBACK = "en"  # the language of a sentence another catalog lacks
# A French bar game: French comes first wherever the languages are listed.
FIRST = "fr"


def catalog_path(language: str) -> Path:
    """Where ``language``'s catalog lies."""
    return LOCALES / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def languages_in(folder: Path) -> tuple[str, ...]:
    """The languages whose catalog lies in ``folder``: French first, then by code."""
    found = sorted(path.parent.parent.name for path in folder.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))
    return tuple(sorted(found, key=lambda language: language != FIRST))


LANGUAGES = languages_in(LOCALES)
