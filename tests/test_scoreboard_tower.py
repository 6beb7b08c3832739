"""What the tower tells the scoreboard, and what the game master answers it.

The tower publishes its state with `GameHub.set_tower` (status, notice in both languages,
token dispenses under way); the pages show it live, and the game master confirms how many
tokens fell for a dispense cut off mid-way (`POST /api/admin/dispenses/<id>/confirm`).
API tests use Flask's test client with a fake tower that checks counts as the controller does,
and once the real `Controller` over a real SQLite journal; browser tests drive headless
Chromium at a phone's size (see tests/test_scoreboard_browser.py).
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from helpers import GameMaster, logged_in
from test_scoreboard_browser import browser, text_of, wait_for  # noqa: F401 (a fixture)

from firmware_host.controller import messages
from firmware_host.hub import GameHub, HubError
from firmware_host.rules.simulation import play
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.server import BackgroundServer

PIN = "5731"
PLAYERS = ["Ana", "Ben", "Cleo"]
not_disabled = pytest.mark.skipif(
    bool(os.environ.get("DICETOWER_NO_BROWSER")), reason="DICETOWER_NO_BROWSER is set"
)


def dispense(id_: int, seat: int, requested: int, delivered: int, state: str) -> dict[str, Any]:
    return {"id": id_, "seat": seat, "requested": requested, "delivered": delivered,
            "state": state, "note": "", "player": PLAYERS[seat]}


class FakeTower:
    """Holds dispenses and checks a confirmed count as the controller does; records calls.

    Like the controller, it publishes its state to the store after each change, and resumes
    the game once no dispense waits for a count.
    """

    def __init__(self, store: GameHub, dispenses: list[dict[str, Any]]) -> None:
        self.store = store
        self.dispenses = {d["id"]: dict(d) for d in dispenses}
        self.calls: list[tuple[int, int]] = []
        self.publish()

    def doubts(self) -> list[dict[str, Any]]:
        return [d for d in self.dispenses.values() if d["state"] == "doubt"]

    def publish(self) -> None:
        doubts = self.doubts()
        notice = None
        if doubts:
            first = doubts[0]
            notice = messages.notice("dispense_doubt", {
                "player": first["player"], "requested": first["requested"],
                "delivered": first["delivered"], "dispense": first["id"]}, "error")
        self.store.set_tower({
            "status": "error" if doubts else "ready", "notice": notice, "camera": "ok",
            "dispenses": [d for d in self.dispenses.values() if d["state"] != "done"],
        })

    def confirm_dispense(self, dispense_id: int, delivered: int) -> dict[str, Any]:
        self.calls.append((dispense_id, delivered))
        row = self.dispenses[dispense_id]  # KeyError for an unknown id, as the journal
        if row["state"] != "doubt":
            raise HubError(f"dispense {dispense_id} is not waiting for a count")
        if not 0 <= delivered <= row["requested"]:
            raise HubError(f"between 0 and {row['requested']} tokens can have fallen")
        row.update(delivered=delivered,
                   state="done" if delivered >= row["requested"] else "intended")
        self.publish()
        if not self.doubts() and self.store.snapshot()["paused"]:
            self.store.set_paused(False)
        return dict(row)

    def resume(self) -> None:
        """As the controller: refused while a dispense waits for a count."""
        self.calls.append((-1, -1))
        if self.doubts():
            raise HubError("count the tokens of the dispense cut off first")
        if self.store.snapshot()["paused"]:
            self.store.set_paused(False)


@pytest.fixture
def store() -> GameHub:
    store = GameHub()
    store.start_game("tim-11", PLAYERS)
    return store


@pytest.fixture
def tower(store: GameHub) -> FakeTower:
    fake = FakeTower(store, [dispense(4, 0, 3, 1, "doubt"), dispense(5, 1, 2, 0, "intended")])
    store.set_paused(True)  # the controller pauses the game until the count is confirmed
    return fake


def make_app(store: GameHub, tower: Any) -> Flask:
    return create_app({"TESTING": True, "SCOREBOARD_PIN": PIN}, hub=store, tower=tower)


def game_master(app: Flask) -> GameMaster:
    return logged_in(app.test_client(), PIN)


def error_of(response: Any) -> tuple[int, str]:
    body = response.get_json()
    assert set(body) == {"error", "code", "status"} and body["error"]
    return response.status_code, body["code"]


# ------------------------------------------------------------------------- the snapshot


def test_set_tower_reaches_the_state_and_clears(store: GameHub) -> None:
    client = make_app(store, None).test_client()
    assert client.get("/api/state").get_json()["tower"] is None
    tower = {"status": "reroll", "camera": "ok", "dispenses": [dispense(7, 2, 3, 2, "started")],
             "notice": messages.notice("cocked", None, "warn")}
    before = client.get("/api/state").get_json()["version"]
    store.set_tower(tower)
    state = client.get("/api/state").get_json()
    assert state["version"] > before
    assert state["tower"] == tower
    assert state["tower"]["notice"]["fr"].startswith("Dé cassé")
    store.set_tower(None)  # the tower stopped
    assert client.get("/api/state").get_json()["tower"] is None


def test_pages_embed_the_tower_state(store: GameHub, tower: FakeTower) -> None:
    client = make_app(store, tower).test_client()
    html = client.get("/?lang=en").get_data(as_text=True)
    assert 'id="tower-notice"' in html and "Dispense cut off: Ana was due 3" in html
    assert "tower.js" in html
    assert client.get("/static/tower.js").status_code == 200


# ------------------------------------------------------------------------- confirm endpoint


def test_confirm_needs_the_csrf_token_then_the_pin(store: GameHub, tower: FakeTower) -> None:
    app = make_app(store, tower)
    master = GameMaster(app.test_client(), PIN)
    no_token = master.client.post("/api/admin/dispenses/4/confirm", json={"delivered": 2})
    assert error_of(no_token) == (403, "csrf")
    assert error_of(master.post("dispenses/4/confirm", {"delivered": 2})) == (401, "login")
    assert tower.calls == []
    assert store.snapshot()["tower"]["dispenses"][0]["state"] == "doubt"


def test_confirm_without_a_tower_is_a_conflict(store: GameHub) -> None:
    master = game_master(make_app(store, None))
    response = master.post("dispenses/4/confirm", {"delivered": 2})
    assert error_of(response) == (409, "no_tower")
    assert "no tower is running" in response.get_json()["error"]


@pytest.mark.parametrize("body", [
    {}, {"delivered": None}, {"delivered": "2"}, {"delivered": True}, {"delivered": 2.0},
    {"delivered": -1}, {"delivered": [2]},
])
def test_confirm_refuses_a_malformed_count(
    store: GameHub, tower: FakeTower, body: dict[str, Any]
) -> None:
    master = game_master(make_app(store, tower))
    response = master.post("dispenses/4/confirm", body)
    assert error_of(response) == (400, "bad_input")
    assert "delivered" in response.get_json()["error"]
    assert tower.calls == []


def test_confirm_refuses_a_body_that_is_not_an_object(
    store: GameHub, tower: FakeTower
) -> None:
    master = game_master(make_app(store, tower))
    assert error_of(master.post("dispenses/4/confirm", [2])) == (400, "bad_json")
    assert tower.calls == []


def test_the_towers_refusals_are_clear_400s(store: GameHub, tower: FakeTower) -> None:
    master = game_master(make_app(store, tower))
    before = store.snapshot()["tower"]
    too_many = master.post("dispenses/4/confirm", {"delivered": 4})
    assert error_of(too_many) == (400, "dispense")
    assert too_many.get_json()["error"] == "between 0 and 3 tokens can have fallen"
    not_waiting = master.post("dispenses/5/confirm", {"delivered": 1})
    assert error_of(not_waiting) == (400, "dispense")
    assert "not waiting" in not_waiting.get_json()["error"]
    assert tower.calls == [(4, 4), (5, 1)]
    assert store.snapshot()["tower"] == before and store.snapshot()["paused"]


def test_unknown_dispense_is_404(store: GameHub, tower: FakeTower) -> None:
    master = game_master(make_app(store, tower))
    assert error_of(master.post("dispenses/99/confirm", {"delivered": 0})) == (404, "no_dispense")
    assert tower.calls == [(99, 0)]
    # Past SQLite's largest id, nothing can match: not even asked.
    huge = master.post(f"dispenses/{2**70}/confirm", {"delivered": 0})
    assert error_of(huge) == (404, "no_dispense")
    assert error_of(master.post("dispenses/abc/confirm", {"delivered": 0}))[0] == 404
    assert tower.calls == [(99, 0)]


def test_confirm_passes_the_count_to_the_tower(store: GameHub, tower: FakeTower) -> None:
    master = game_master(make_app(store, tower))
    response = master.post("dispenses/4/confirm", {"delivered": 2})
    assert response.status_code == 200
    body = response.get_json()
    assert body["ok"] is True and body["version"] == store.version
    assert body["dispense"]["delivered"] == 2 and body["dispense"]["state"] == "intended"
    assert tower.calls == [(4, 2)]
    state = master.client.get("/api/state").get_json()
    assert state["paused"] is False and state["tower"]["notice"] is None
    assert [(d["id"], d["state"]) for d in state["tower"]["dispenses"]] == [
        (4, "intended"), (5, "intended")
    ]
    # Counted once: a second count is refused by the tower.
    assert error_of(master.post("dispenses/4/confirm", {"delivered": 3})) == (400, "dispense")


def test_the_real_controller_answers_through_the_endpoint(tmp_path: Path) -> None:
    """The hook's contract with the controller over a real journal: a dispense left
    *started* by a crash becomes *doubt*; the game master's count settles it."""
    from firmware_host.controller.controller import Controller
    from firmware_host.hub.journal import Journal
    from firmware_host.simulation.camera import SimulatedCamera
    from firmware_host.simulation.tray import SimulatedTray
    from hardware import EXAMPLE_PINMAP, SimulatedTower, load_pinmap, simulated_pinmap

    store = GameHub()
    store.start_game("tim-11", PLAYERS)
    journal = Journal(tmp_path / "journal.sqlite3")
    hardware = SimulatedTower(simulated_pinmap(load_pinmap(EXAMPLE_PINMAP)), tokens=10)
    try:
        controller = Controller(SimulatedCamera(SimulatedTray(seed=3)), hardware, store, journal)
        journal.record({"action": "event", "event": {"type": "throw"}}, [(1, 3)])
        row = journal.dispenses()[0]
        journal.mark(row.id, "started", delivered=1)
        assert [d.id for d in journal.mark_cut_off()] == [row.id]
        store.set_paused(True)
        master = game_master(make_app(store, controller))
        assert error_of(master.post(f"dispenses/{row.id}/confirm", {"delivered": 4})) == (
            400, "dispense")
        assert error_of(master.post(f"dispenses/{row.id + 1}/confirm", {"delivered": 0})) == (
            404, "no_dispense")
        response = master.post(f"dispenses/{row.id}/confirm", {"delivered": 2})
        assert response.status_code == 200
        assert response.get_json()["dispense"] == {
            "id": row.id, "seat": 1, "requested": 3, "delivered": 2, "state": "intended",
            "note": "counted by hand"}
        assert journal.dispense(row.id).state == "intended"
        assert store.snapshot()["paused"] is False
        assert error_of(master.post(f"dispenses/{row.id}/confirm", {"delivered": 2})) == (
            400, "dispense")
    finally:
        hardware.close()
        journal.close()


# ------------------------------------------------------------------------- in the browser


@pytest.fixture
def server(store: GameHub, tower: FakeTower) -> Iterator[BackgroundServer]:
    with BackgroundServer(make_app(store, tower)) as running:
        yield running


def open_page(driver: Any, url: str) -> None:
    """Open `url` as a first visit: no language remembered from another test."""
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.get(url)
    wait_for(driver, lambda d: d.find_element("id", "conn").get_attribute("data-state") == "live",
             "the live stream never opened")


def shown(driver: Any, element_id: str) -> bool:
    return driver.find_element("id", element_id).is_displayed()


@pytest.mark.browser
@not_disabled
def test_notice_follows_the_page_language_and_goes_away(
    browser: Any, server: BackgroundServer, store: GameHub, tower: FakeTower  # noqa: F811
) -> None:
    driver = browser
    open_page(driver, server.url)
    notice = text_of(driver, "tower-notice")
    assert "Distribution interrompue : Ana devait recevoir 3 jeton(s), 1 compté(s)" in notice
    assert "notice-error" in driver.find_element("id", "tower-notice").get_attribute("class")
    assert text_of(driver, "tower-status") == "tour : erreur"
    open_page(driver, server.url + "?lang=en")
    assert "Dispense cut off: Ana was due 3 token(s), 1 counted" in text_of(driver, "tower-notice")
    # A warning replaces it live, then the tower clears it.
    store.set_tower({**store.snapshot()["tower"], "status": "reroll",
                     "notice": messages.notice("cocked", None, "warn")})
    wait_for(driver, lambda d: "A die is cocked" in text_of(d, "tower-notice"), "no new notice")
    assert "notice-warn" in driver.find_element("id", "tower-notice").get_attribute("class")
    assert text_of(driver, "tower-status") == "tower : throw again"
    store.set_tower({**store.snapshot()["tower"], "status": "ready", "notice": None})
    wait_for(driver, lambda d: not shown(d, "tower-notice"), "the notice stayed")
    store.set_tower(None)
    wait_for(driver, lambda d: not shown(d, "tower-status"), "the status stayed without a tower")


@pytest.mark.browser
@not_disabled
def test_dispenses_show_and_follow_each_token(
    browser: Any, server: BackgroundServer, store: GameHub, tower: FakeTower  # noqa: F811
) -> None:
    driver = browser
    open_page(driver, server.url + "?lang=fr")
    assert shown(driver, "tokens-card")
    rows = driver.find_elements("css selector", "#dispenses li")
    assert [" ".join(r.text.split()) for r in rows] == [
        "Ana : 1 sur 3 jetons interrompue, à compter", "Ben : 0 sur 2 jetons à distribuer"]
    store.set_tower({**store.snapshot()["tower"], "camera": "down", "dispenses": [
        dispense(5, 1, 2, 1, "started")]})
    wait_for(driver, lambda d: "Ben : 1 sur 2 jetons" in text_of(d, "dispenses"),
             "the token count did not follow")
    assert "Ana" not in text_of(driver, "dispenses")
    assert text_of(driver, "tower-status").endswith("caméra en panne")
    assert text_of(driver, "no-camera") == "caméra en panne"
    width = driver.execute_script("return document.documentElement.scrollWidth")
    assert width <= 390, "the page scrolls sideways on a phone"
    store.set_tower({**store.snapshot()["tower"], "dispenses": []})
    wait_for(driver, lambda d: not shown(d, "tokens-card"), "the tokens card stayed")


def decharge_steps(seed: int) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Every view of a seeded game, with the tokens_between effect of the input, if any."""
    steps: list[tuple[dict[str, Any], dict[str, Any] | None]] = []

    def observe(game: Any, event: dict[str, Any], effects: list[dict[str, Any]]) -> None:
        moved = [e for e in effects if e["kind"] == "tokens_between"]
        assert len(moved) <= 1
        steps.append((game.view(), moved[0] if moved else None))

    play("tim-11", PLAYERS, random.Random(seed), observer=observe)
    return steps


@pytest.mark.browser
@not_disabled
def test_handover_is_said_exactly_after_the_input_that_moved_tokens(
    browser: Any, server: BackgroundServer, store: GameHub  # noqa: F811
) -> None:
    """The page reads who gives whom from the view alone; it must agree with the effects."""
    driver = browser
    open_page(driver, server.url)
    steps = [step for seed in (1, 2) for step in decharge_steps(seed)]
    said = driver.execute_script(
        "return arguments[0].map(v => DicetowerTower.handover(v))", [v for v, _ in steps])
    expected = [
        None if e is None else {"from": e["from"], "to": e["to"], "count": e["count"]}
        for _, e in steps
    ]
    assert sum(e is not None for e in expected) >= 5  # the décharges did move tokens
    assert said == expected
    # Live: the store plays the same game until the first hand-over, then one more input.
    inputs: list[dict[str, Any]] = []
    play("tim-11", PLAYERS, random.Random(1), observer=lambda g, e, f: inputs.append(e))
    store.start_game("tim-11", PLAYERS)
    moved: list[dict[str, Any]] = []
    step = 0
    while not moved:
        moved = [e for e in store.apply(inputs[step]) if e["kind"] == "tokens_between"]
        step += 1
    giver, taker = PLAYERS[moved[0]["from"]], PLAYERS[moved[0]["to"]]
    sentence = f"{giver} donne {moved[0]['count']} jeton"
    wait_for(driver, lambda d: sentence in text_of(d, "handover"), "no hand-over shown")
    assert text_of(driver, "handover").endswith(f" à {taker}")
    store.apply(inputs[step])
    wait_for(driver, lambda d: not shown(d, "handover"), "the hand-over stayed")


def log_in(driver: Any) -> None:
    driver.find_element("id", "pin").send_keys(PIN)
    driver.find_element("css selector", "#login-form button").click()
    wait_for(driver, lambda d: shown(d, "controls"), "the PIN did not unlock the controls")


@pytest.mark.browser
@not_disabled
def test_game_master_counts_the_tokens_that_fell(
    browser: Any, server: BackgroundServer, store: GameHub, tower: FakeTower  # noqa: F811
) -> None:
    driver = browser
    open_page(driver, server.url + "admin?lang=en")
    log_in(driver)
    forms = driver.find_elements("css selector", "#doubts form.doubt")
    assert len(forms) == 1 and "Ana was due 3 tokens, 1 counted" in forms[0].text
    field = forms[0].find_element("name", "delivered")
    assert field.get_attribute("max") == "3"
    # Out of range: the browser itself refuses, nothing is sent.
    field.clear()
    field.send_keys("7")
    forms[0].find_element("css selector", "button").click()
    assert tower.calls == []
    # The tower refuses (the dispense moved on meanwhile): said beside the form.
    tower.dispenses[4]["state"] = "started"
    field.clear()
    field.send_keys("2")
    forms[0].find_element("css selector", "button").click()
    error = forms[0].find_element("css selector", ".error")
    wait_for(driver, lambda d: "not waiting" in error.text, "the refusal was not shown")
    assert tower.calls == [(4, 2)]
    tower.dispenses[4]["state"] = "doubt"
    forms[0].find_element("css selector", "button").click()
    wait_for(driver, lambda d: tower.calls == [(4, 2), (4, 2)], "the count was not sent")
    wait_for(driver, lambda d: not shown(d, "tower-admin"), "the form stayed after the count")
    assert not shown(driver, "tower-notice") and not store.snapshot()["paused"]
    assert text_of(driver, "admin-error") == ""  # the refusal was cleared by the success


@pytest.mark.browser
@not_disabled
def test_game_master_resumes_after_a_jam(
    browser: Any, server: BackgroundServer, store: GameHub, tower: FakeTower  # noqa: F811
) -> None:
    driver = browser
    tower.dispenses[4]["state"] = "intended"
    tower.publish()
    store.set_tower({**store.snapshot()["tower"], "status": "error", "notice": messages.notice(
        "jam", {"detail": "hopper 2 empty", "missing": 2, "player": "Ana"}, "error")})
    open_page(driver, server.url + "admin?lang=fr")
    log_in(driver)
    assert not driver.find_elements("css selector", "#doubts form")
    assert "Distributeur bloqué (hopper 2 empty)" in text_of(driver, "tower-notice")
    driver.find_element("id", "btn-resume-jam").click()
    wait_for(driver, lambda d: not store.snapshot()["paused"], "the game did not resume")
    wait_for(driver, lambda d: not shown(d, "btn-resume-jam"), "the resume button stayed")
