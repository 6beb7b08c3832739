"""Every text table of the tower is a catalogue said alike in every language: each code has a
sentence in each, filling the same placeholders; and the one mechanism falls back as told."""

from __future__ import annotations

import pytest

from firmware_host.catalogue import LANGUAGES, Catalogue
from firmware_host.controller.messages import MESSAGES
from firmware_host.rules.texts import TEXTS
from firmware_host.scoreboard.i18n import LABELS
from firmware_host.scoreboard.odds import ODDS_LABELS
from firmware_host.scoreboard.texts import REFUSALS

CATALOGUES = [TEXTS, REFUSALS, MESSAGES, LABELS, ODDS_LABELS]


@pytest.mark.parametrize("catalogue", CATALOGUES, ids=lambda c: c.name)
def test_every_code_is_said_in_every_language_with_the_same_placeholders(
    catalogue: Catalogue,
) -> None:
    assert len(catalogue) > 5
    assert catalogue.problems() == []


def test_problems_name_a_missing_sentence_and_a_placeholder_that_differs() -> None:
    broken = Catalogue("test", {"a": {"fr": "{x} ici", "en": "{y} here"}, "b": {"en": "b"}})
    problems = broken.problems()
    assert any("'a' in fr fills ['x'], English ['y']" in p for p in problems)
    assert any("'b' has no fr sentence" in p for p in problems)
    assert set(LANGUAGES) >= {"fr", "en"}


def test_say_falls_back_to_english_and_keeps_what_it_cannot_fill() -> None:
    texts = Catalogue.by_language("test", {"fr": {"hi": "salut {name}"},
                                           "en": {"hi": "hello {name}", "bye": "bye"}})
    assert texts.say("hi", {"name": "Ana"}, "fr") == "salut Ana"
    assert texts.say("bye", {}, "fr") == "bye"  # no French sentence: the English one
    assert texts.say("hi", {}, "en") == "hello {name}"  # a value missing: as written
    assert texts.say("nope", {}, "fr") == "nope"  # an unknown code: the code itself
    assert (texts | Catalogue("more", {"hi": {"en": "hey"}})).say("hi", {}, "en") == "hey"
