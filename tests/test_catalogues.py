"""Every sentence of the tower lies in one gettext catalog per language, said alike in each:
every message of any catalog is in every other, filling the same placeholders; and the one
mechanism falls back as told."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from babel.messages.pofile import read_po, write_po
from flask import render_template_string

import firmware_host.catalogue as catalogue
from firmware_host import locales
from firmware_host.catalogue import LANGUAGES, Catalogue, catalog, problems
from firmware_host.controller.messages import MESSAGES
from firmware_host.rules.texts import TEXTS
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.i18n import LABELS
from firmware_host.scoreboard.odds import ODDS_LABELS
from firmware_host.scoreboard.texts import REFUSALS

CATALOGUES = [TEXTS, REFUSALS, MESSAGES, LABELS, ODDS_LABELS]


def test_every_message_is_in_every_language_with_the_same_placeholders() -> None:
    assert set(LANGUAGES) >= {"fr", "en"}
    assert problems() == []
    english = {(m.context, m.id) for m in catalog("en") if m.id}
    assert len(english) > 300
    for language in LANGUAGES:
        assert {(m.context, m.id) for m in catalog(language) if m.id} == english, language


@pytest.mark.parametrize("texts", CATALOGUES, ids=lambda c: c.name)
def test_each_table_is_read_from_the_catalogs(texts: Catalogue) -> None:
    assert len(texts) > 5
    assert texts.problems() == []
    for code in texts:
        assert set(texts[code]) == set(LANGUAGES)


@pytest.fixture
def broken_locales(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the catalogs, and a German one made from the French with faults in it."""
    copy = tmp_path / "locales"
    shutil.copytree(locales.LOCALES, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    with (copy / "fr" / "LC_MESSAGES" / "dicetower.po").open("rb") as po:
        german = read_po(po, locale="de")
    german.get("not_your_turn", context="rules.refusals").string = "{player} ist nicht dran"
    german.delete("die_face", context="rules.refusals")
    german.get("cocked", context="tower.notices").flags.add("fuzzy")
    (copy / "de" / "LC_MESSAGES").mkdir(parents=True)
    with (copy / "de" / "LC_MESSAGES" / "dicetower.po").open("wb") as po:
        write_po(po, german)
    monkeypatch.setattr(locales, "LOCALES", copy)
    monkeypatch.setattr(catalogue, "LANGUAGES", ("fr", "en", "de"))
    catalog.cache_clear()
    catalogue.translations.cache_clear()
    yield copy
    catalog.cache_clear()
    catalogue.translations.cache_clear()


def test_a_language_is_a_catalog(broken_locales: Path) -> None:
    assert locales.LANGUAGES == ("fr", "en")
    assert locales.languages_in(broken_locales) == ("fr", "de", "en")


def test_problems_name_a_missing_sentence_a_fuzzy_one_and_a_placeholder_that_differs(
    broken_locales: Path,
) -> None:
    found = problems()
    assert "de: rules.refusals 'die_face' has no sentence" in found
    assert "de: tower.notices 'cocked' is marked fuzzy" in found
    assert ("de: rules.refusals 'not_your_turn' fills ['player'], English ['mover', 'player']"
            in found)
    assert len(found) == 3


def test_a_language_lacking_a_sentence_falls_back_to_english(broken_locales: Path) -> None:
    refusals = Catalogue("rules.refusals")
    assert refusals.say("die_face", {"face": 7}, "de") == "a die shows 1 to 6, not 7"
    assert refusals.say("bad_seat", {"last": 1, "value": 3}, "de") == (
        "player doit être une place de 0 à 1, pas 3")  # the German copy is still French


def test_say_keeps_what_it_cannot_fill_and_a_later_table_wins() -> None:
    notices = Catalogue("tower.notices")
    assert notices.say("refused", {"reason": "x"}, "fr") == "Lancer refusé : x"
    assert notices.say("refused", {}, "en") == "Throw refused: {reason}"  # a value missing
    assert notices.say("nope", {}, "fr") == "nope"  # an unknown code: the code itself
    assert notices.say("paused", {}, "xx") == "Game paused."  # an unknown language: English
    labels = Catalogue("scoreboard.labels")
    assert labels.say("paused", {}, "fr") == "pause"
    assert (notices | labels).say("paused", {}, "fr") == "pause"
    assert (labels | notices).say("paused", {}, "fr") == "Partie en pause."


@pytest.mark.parametrize(("query", "title"), [
    ("?lang=en", "dicetower — scoreboard"),
    ("?lang=fr", "dicetower — tableau des scores"),
    ("", "dicetower — tableau des scores"),  # the scoreboard's default language
])
def test_flask_babel_says_the_catalogs_in_the_pages_language(query: str, title: str) -> None:
    app = create_app({"TESTING": True, "SCOREBOARD_PIN": "1357"})
    with app.test_request_context("/" + query):
        app.preprocess_request()
        said = render_template_string("{{ pgettext('scoreboard.labels', 'title') }}")
    assert said == title
