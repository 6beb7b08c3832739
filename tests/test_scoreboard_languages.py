"""The engine's words on the scoreboard, in the page's language: the prompt (what happens
next) and the reason an input is refused, in French and in English."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_scoreboard_browser import browser, text_of, wait_for  # noqa: F401 (a fixture)

from firmware_host.hub import GameHub
from firmware_host.rules.simulation import play
from firmware_host.rules.texts import PROMPTS, render_text
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.i18n import LABELS, labels
from firmware_host.scoreboard.server import BackgroundServer

PIN = "1357"
PLAYERS = ["Ana", "Ben"]


@pytest.fixture
def store() -> GameHub:
    store = GameHub()
    store.start_game("tim-11", PLAYERS)
    return store


@pytest.fixture
def app(store: GameHub) -> Flask:
    return create_app({"TESTING": True, "SCOREBOARD_PIN": PIN}, hub=store)


def logged_in(client: FlaskClient) -> str:
    """Log the client in; its CSRF token."""
    csrf = client.get("/api/session").get_json()["csrf"]
    response = client.post("/api/admin/login", json={"pin": PIN}, headers={"X-CSRF-Token": csrf})
    assert response.status_code == 200
    return response.get_json()["csrf"]


def test_the_page_gets_every_prompt_from_the_engines_table() -> None:
    for lang in ("fr", "en"):
        given = labels(lang)
        assert {key: given[key] for key in LABELS} == LABELS.in_language(lang)
        for code, table in PROMPTS.items():
            assert given[f"prompt_{code}"] == table[lang]
    assert labels("de") == labels("fr")


def test_the_state_carries_a_prompt_not_a_sentence(app: Flask) -> None:
    game = app.test_client().get("/api/state").get_json()["game"]
    assert "message" not in game
    assert game["prompt"] == {"code": "opening_die", "values": {"player": "Ana"}}


@pytest.mark.parametrize(("page", "sentence"), [
    ("/admin?lang=en", "Ana has not thrown yet: throw before stopping"),
    ("/admin?lang=fr", "Ana n'a pas encore lancé : lancez avant de vous arrêter"),
    ("/admin", "Ana n'a pas encore lancé : lancez avant de vous arrêter"),  # French by default
])
def test_a_refusal_comes_in_the_language_of_the_page(
    app: Flask, store: GameHub, page: str, sentence: str
) -> None:
    client = app.test_client()
    assert client.get(page).status_code == 200  # remembers the language chosen, if any
    csrf = logged_in(client)
    before = store.snapshot()
    response = client.post("/api/admin/stop", json={}, headers={"X-CSRF-Token": csrf})
    assert response.status_code == 400
    data = response.get_json()
    assert data["code"] == "rule" and data["error"] == sentence
    assert data["rule"] == {"code": "stop_before_throw", "values": {"player": "Ana"}}
    assert store.snapshot()["game"] == before["game"]


def test_the_language_asked_with_the_request_wins_over_the_remembered_one(app: Flask) -> None:
    client = app.test_client()
    client.get("/?lang=fr")
    csrf = logged_in(client)
    response = client.post("/api/admin/throw?lang=en", json={"faces": [3], "player": 1},
                           headers={"X-CSRF-Token": csrf})
    assert response.status_code == 400
    assert response.get_json()["error"] == "it is not Ben's turn: Ana is to move"
    response = client.post("/api/admin/throw", json={"faces": [3], "player": 1},
                           headers={"X-CSRF-Token": csrf})
    assert response.get_json()["error"] == "ce n'est pas à Ben de jouer : c'est à Ana"


def test_an_english_config_answers_in_english_without_a_choice(store: GameHub) -> None:
    client = create_app({"TESTING": True, "SCOREBOARD_PIN": PIN, "SCOREBOARD_LANG": "en"},
                        hub=store).test_client()
    csrf = logged_in(client)
    response = client.post("/api/admin/stop", json={}, headers={"X-CSRF-Token": csrf})
    assert response.get_json()["error"] == "Ana has not thrown yet: throw before stopping"


# ---------------------------------------------------------------------- in a real browser


@pytest.fixture
def server(store: GameHub) -> Iterator[BackgroundServer]:
    with BackgroundServer(create_app({"SCOREBOARD_PIN": PIN}, hub=store)) as running:
        yield running


@pytest.mark.browser
def test_the_page_speaks_its_language(
    browser: object, server: BackgroundServer, store: GameHub  # noqa: F811
) -> None:
    from selenium.webdriver.common.by import By

    driver = browser
    driver.get(server.url + "admin?lang=en")  # type: ignore[attr-defined]
    driver.find_element(By.ID, "pin").send_keys(PIN)  # type: ignore[attr-defined]
    driver.find_element(By.CSS_SELECTOR, "#login-form button").click()  # type: ignore[attr-defined]
    wait_for(driver, lambda d: d.find_element(By.ID, "controls").is_displayed(),
             "the PIN did not unlock the controls")
    assert text_of(driver, "banner") == "Ana throws one die to decide who starts"
    # A stop before any throw: the engine refuses it, the page says why in English.
    driver.find_element(By.ID, "btn-stop").click()  # type: ignore[attr-defined]
    wait_for(driver, lambda d: text_of(d, "admin-error"), "the refusal was not shown")
    assert text_of(driver, "admin-error") == "Ana has not thrown yet: throw before stopping"
    store.apply({"type": "throw", "faces": [3]})
    wait_for(driver, lambda d: "Ben" in text_of(d, "banner"), "the page did not follow")
    assert text_of(driver, "banner") == "Ben throws one die to decide who starts"

    driver.get(server.url + "admin?lang=fr")  # type: ignore[attr-defined]
    wait_for(driver, lambda d: d.find_element(By.ID, "controls").is_displayed(), "no controls")
    assert text_of(driver, "banner") == "Ben lance un dé pour désigner qui commence"
    driver.find_element(By.ID, "btn-stop").click()  # type: ignore[attr-defined]
    wait_for(driver, lambda d: text_of(d, "admin-error"), "the refusal was not shown")
    assert text_of(driver, "admin-error") == (
        "Ben n'a pas encore lancé : lancez avant de vous arrêter")

    # 4D: the presentation of the square reads as a sentence in the history.
    store.start_game("4d", PLAYERS)
    store.apply({"type": "throw", "faces": [6, 5, 3, 2]})
    store.apply({"type": "present", "near": 1})
    driver.get(server.url + "?lang=en")  # type: ignore[attr-defined]
    wait_for(driver, lambda d: "Ben turns" in text_of(d, "banner"), "no 4D prompt")
    assert text_of(driver, "banner") == "Ben turns one or two dice (the far die is locked)"
    driver.find_element(By.CSS_SELECTOR, "#history-card summary").click()  # type: ignore[attr-defined]
    wait_for(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#history li")) == 2,
             "the history did not load")
    assert "Ana presents position 1 (the 5) to Ben" in text_of(driver, "history")

    # classique-10: the décharge's winner is named in the history, the end in the banner.
    played, _ = play("classique-10", PLAYERS, random.Random(4))
    store.start_game("classique-10", PLAYERS)
    for event in played.events:
        store.apply(event)
    won = [effect["player"] for entry in store.history()["entries"]
           for effect in entry["effects"] if effect["kind"] == "decharge_won"]
    assert won, "the game has no décharge won"
    driver.get(server.url + "?lang=fr")  # type: ignore[attr-defined]
    prompt = store.snapshot()["game"]["prompt"]
    wait_for(driver, lambda d: text_of(d, "banner") == render_text(prompt, "fr"),
             "the end of the game is not said in French")
    driver.find_element(By.CSS_SELECTOR, "#history-card summary").click()  # type: ignore[attr-defined]
    wait_for(driver, lambda d: "gagne la décharge" in text_of(d, "history"),
             "the décharge's winner is not in the history")
    assert f"{PLAYERS[won[0]]} gagne la décharge" in text_of(driver, "history")
