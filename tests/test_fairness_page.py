"""The game master's page warns when the tower's dice look biased (from its journal)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient
from test_scoreboard_browser import browser, text_of, wait_for  # noqa: F401 (a fixture)

from firmware_host.fairness.analysis import DEFAULT_QUESTION
from firmware_host.fairness.watch import REFRESH_EVERY
from firmware_host.hub import GameHub
from firmware_host.hub.journal import Journal
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.server import BackgroundServer

PIN = "8642"


class TowerWithJournal:
    """What the page needs of the running tower here: its journal (the controller's)."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.journal_path = journal.path

    def confirm_dispense(self, dispense_id: int, delivered: int) -> Any:
        raise KeyError(dispense_id)


def record_throws(journal: Journal, seed: int, throws: int, dice: list[float]) -> None:
    """Throws of three dice falling by ``dice``, journaled as the store journals them."""
    rng = np.random.default_rng(seed)
    for _ in range(throws):
        faces = (rng.choice(6, 3, p=dice) + 1).tolist()
        journal.record({"action": "event", "event": {"type": "throw", "faces": faces}})


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal(tmp_path / "journal.sqlite3", exclusive=True) as journal:
        journal.record({"action": "new_game", "preset": "tim-11",
                        "players": ["Ana", "Ben", "Cleo"], "knobs": None})
        yield journal


def make_app(journal: Journal | None) -> Flask:
    store = GameHub()
    store.start_game("tim-11", ["Ana", "Ben", "Cleo"])
    tower = TowerWithJournal(journal) if journal is not None else None
    return create_app({"TESTING": True, "SCOREBOARD_PIN": PIN}, hub=store, tower=tower)


def logged_in(app: Flask) -> FlaskClient:
    client = app.test_client()
    csrf = client.get("/api/session").get_json()["csrf"]
    response = client.post("/api/admin/login", json={"pin": PIN},
                           headers={"X-CSRF-Token": csrf})
    assert response.status_code == 200
    return client


def fairness(client: FlaskClient) -> Any:
    response = client.get("/api/admin/fairness")
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    return response.get_json()["fairness"]


def test_the_game_master_hears_that_loaded_dice_look_biased(journal: Journal) -> None:
    record_throws(journal, 1, DEFAULT_QUESTION.dice_needed(), DEFAULT_QUESTION.loaded_die(6))
    summary = fairness(logged_in(make_app(journal)))
    assert summary["verdict"] == "biased"
    assert summary["overall"]["face"] == 6 and summary["overall"]["face_share"] > 0.2
    assert summary["overall"]["p_value"] < DEFAULT_QUESTION.alpha


def test_the_real_controller_gives_the_page_its_journal(journal: Journal) -> None:
    from firmware_host.controller.controller import Controller
    from firmware_host.simulation.camera import SimulatedCamera
    from firmware_host.simulation.tray import SimulatedTray
    from hardware import EXAMPLE_PINMAP, SimulatedTower, load_pinmap, simulated_pinmap

    record_throws(journal, 6, DEFAULT_QUESTION.dice_needed(), DEFAULT_QUESTION.loaded_die(2))
    store = GameHub()
    hardware = SimulatedTower(simulated_pinmap(load_pinmap(EXAMPLE_PINMAP)), tokens=10)
    try:
        controller = Controller(SimulatedCamera(SimulatedTray(seed=3)), hardware, store, journal)
        app = create_app({"TESTING": True, "SCOREBOARD_PIN": PIN}, hub=store,
                         tower=controller)
        summary = fairness(logged_in(app))
    finally:
        hardware.close()
    assert (summary["verdict"], summary["overall"]["face"]) == ("biased", 2)


def test_fair_dice_bring_no_warning(journal: Journal) -> None:
    client = logged_in(make_app(journal))
    assert fairness(client)["verdict"] == "too-few"
    record_throws(journal, 2, DEFAULT_QUESTION.dice_needed(), [1 / 6] * 6)
    summary = fairness(client)
    assert summary["verdict"] == "fair" and summary["throws"] == DEFAULT_QUESTION.dice_needed()


def test_the_journal_is_read_again_only_as_it_grows(journal: Journal) -> None:
    client = logged_in(make_app(journal))
    first = fairness(client)
    assert (first["throws"], first["inputs"]) == (0, 1)
    record_throws(journal, 3, REFRESH_EVERY - 1, [1 / 6] * 6)
    assert fairness(client) == first  # the report made before those throws
    record_throws(journal, 4, 1, [1 / 6] * 6)
    again = fairness(client)
    assert (again["throws"], again["inputs"]) == (REFRESH_EVERY, REFRESH_EVERY + 1)


def test_only_the_game_master_asks_and_only_a_tower_has_a_journal(journal: Journal) -> None:
    app = make_app(journal)
    response = app.test_client().get("/api/admin/fairness")
    assert response.status_code == 401 and response.get_json()["code"] == "login"
    assert fairness(logged_in(make_app(None))) is None  # `dicetower serve` alone


def test_only_the_game_masters_page_carries_the_warning(journal: Journal) -> None:
    client = make_app(journal).test_client()
    admin = client.get("/admin").get_data(as_text=True)
    assert 'id="fairness-warning"' in admin and "fairness.js" in admin
    board = client.get("/").get_data(as_text=True)
    assert "fairness-warning" not in board and "fairness.js" not in board
    script = client.get("/static/fairness.js")
    assert script.status_code == 200 and b"/api/admin/fairness" in script.data
    script.close()


@pytest.mark.browser
def test_the_warning_shows_on_the_game_masters_phone(
    browser: Any, journal: Journal  # noqa: F811
) -> None:
    from selenium.webdriver.common.by import By

    record_throws(journal, 5, 2 * DEFAULT_QUESTION.dice_needed(), DEFAULT_QUESTION.loaded_die(6))
    app = make_app(journal)
    app.config["TESTING"] = False
    with BackgroundServer(app) as server:
        driver = browser
        driver.get(server.url + "admin?lang=fr")
        warning = driver.find_element(By.ID, "fairness-warning")
        assert not warning.is_displayed()  # behind the PIN, like every control
        driver.find_element(By.ID, "pin").send_keys(PIN)
        driver.find_element(By.CSS_SELECTOR, "#login-form button").click()
        wait_for(driver, lambda d: d.find_element(By.ID, "fairness-warning").is_displayed(),
                 "no warning about the dice")
        text = text_of(driver, "fairness-warning")
        assert text.startswith("Les dés semblent déséquilibrés : le 6 sort ")
        assert f"({6 * DEFAULT_QUESTION.dice_needed()} dés lus" in text
