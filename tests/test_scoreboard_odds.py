"""The odds advice on the scoreboard: in the state, per page as the setting says, computed once
per game version however many clients read it, and tapped open in a real browser."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from firmware_host.advisor.moves4d import advise_4d
from firmware_host.advisor.odds421 import Turn, analyse
from firmware_host.advisor.round_model import best_action
from firmware_host.advisor.strategies import faces_by_position, situation_from_view
from firmware_host.hub import GameHub
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.odds import ODDS_LABELS, advice_for_view

PIN = "2468"
PLAYERS = ["Ana", "Ben", "Cleo"]


def decision_store(last: list[int] | None = None) -> GameHub:
    """tim-11 with three throws in the charge: Ana opens (653 in two throws), Ben makes 321
    in one, and Cleo, to move, holds ``last`` after her first throw (two throws allowed)."""
    store = GameHub()
    store.start_game("tim-11", PLAYERS, {"charge_throws": 3})
    for faces in ([3], [5], [6]):
        store.apply({"type": "throw", "faces": faces})
    store.apply({"type": "throw", "faces": [6, 5, 1]})
    store.apply({"type": "throw", "faces": [3], "keep": [0, 1]})
    store.apply({"type": "stop"})
    store.apply({"type": "throw", "faces": [3, 2, 1]})
    store.apply({"type": "stop"})
    store.apply({"type": "throw", "faces": last or [6, 4, 2]})
    return store


def make_app(store: GameHub, **config: Any) -> Flask:
    return create_app({"TESTING": True, "SCOREBOARD_PIN": PIN, **config}, hub=store)


def settled_state(app: Flask, client: FlaskClient) -> dict[str, Any]:
    """The state once the advice of its game version is computed."""
    first = client.get("/api/state").get_json()
    assert app.extensions["dicetower.odds"].wait_idle()
    state = client.get("/api/state").get_json()
    if first["odds"] is not None:
        assert first["odds"] == {"pending": True} or first["odds"] == state["odds"]
    return state


def login(client: FlaskClient) -> None:
    token = client.get("/api/session").get_json()["csrf"]
    response = client.post("/api/admin/login", json={"pin": PIN},
                           headers={"X-CSRF-Token": token})
    assert response.status_code == 200


# ------------------------------------------------------------------------- the advice


def test_the_advice_is_the_advisors_for_the_views_turn() -> None:
    store = decision_store()
    app = make_app(store)
    state = settled_state(app, app.test_client())
    view, odds = state["game"], state["odds"]
    assert odds["player"] == view["to_move"] == 2 and odds["dice"] == [6, 4, 2]
    # The hand to beat is the round's best so far, the hand to avoid its weakest.
    assert odds["to_beat"] == {"hand": "321", "throws": 1, "own": False}
    assert odds["avoid"] == {"hand": "653", "throws": 2}
    assert odds["throws_left"] == 1
    situation = situation_from_view(view)
    assert situation is not None
    table = analyse(situation.knobs, situation.dice, Turn(1, 2, 1), ("321", 1), ("653", 2))
    assert [k["keep"] for k in odds["keeps"]] == [k["keep"] for k in table["keeps"]]
    for ours, theirs in zip(odds["keeps"], table["keeps"], strict=True):
        assert ours["p_beat"] == pytest.approx(theirs["p_beat"], abs=1e-4)
        assert ours["p_worst"] == pytest.approx(theirs["p_worst"], abs=1e-4)
    assert odds["best"]["p_beat"] == table["best"]["beat"]
    advised, _ = best_action(situation)
    assert odds["advice"] == {"keep": list(advised or situation.dice), "stop": advised is None}
    # 642 is below the weakest hand so far: stopping would lose the round for sure.
    stop = next(k for k in odds["keeps"] if k["stop"])
    assert stop["p_worst"] == 1.0 and odds["advice"]["stop"] is False


def test_a_421_in_hand_is_advised_to_stop() -> None:
    store = decision_store([4, 2, 1])
    app = make_app(store)
    odds = settled_state(app, app.test_client())["odds"]
    assert odds["advice"] == {"keep": [4, 2, 1], "stop": True}
    assert next(k for k in odds["keeps"] if k["stop"])["p_beat"] == 1.0


def test_no_advice_without_a_choice() -> None:
    store = GameHub()
    app = make_app(store)
    client = app.test_client()
    assert client.get("/api/state").get_json()["odds"] is None  # no game
    store.start_game("tim-11", PLAYERS)
    for faces in ([3], [5], [6], [5, 5, 3]):  # the opening, then a coup sec of the charge
        store.apply({"type": "throw", "faces": faces})
        assert settled_state(app, client)["odds"] is None
    assert advice_for_view(None) is None


def test_4d_best_move_is_the_advisors() -> None:
    store = GameHub()
    store.start_game("4d", ["Ana", "Ben"])
    store.apply({"type": "throw", "faces": [3, 5, 2, 6]})
    app = make_app(store)
    state = settled_state(app, app.test_client())
    view, odds = state["game"], state["odds"]
    me = view["to_move"]
    expected = advise_4d(faces_by_position(view), near=view["square"]["near"]["pos"],
                         scores=(view["scores"][me], view["scores"][1 - me]))
    assert odds["game"] == "4d" and odds["player"] == me
    assert odds["count"] == len(expected["moves"]) and len(odds["moves"]) == 5
    best = expected["best"]
    assert (odds["best"]["move"], odds["best"]["rotate"], odds["best"]["points"]) == (
        best["move"], best["rotate"], best["points"])
    # The faces the best move turns, by the role of each die for the player to move.
    for role, face in odds["best"]["to"].items():
        assert best["faces"][view["square"][role]["pos"]] == face


# ------------------------------------------------------------------------- who sees it


def test_public_setting_shows_it_on_both_pages() -> None:
    app = make_app(decision_store())
    client = app.test_client()
    settled_state(app, client)
    for path in ("/", "/admin"):
        html = client.get(path + "?lang=en").get_data(as_text=True)
        assert '"odds":"public"' in html.replace(" ", "")
        assert '"to_beat":' in html  # the advice rides in the embedded state
        assert "odds.js" in html and 'id="odds-line"' in html


def test_admin_only_setting_keeps_it_off_the_public_board() -> None:
    app = make_app(decision_store(), SCOREBOARD_ODDS="admin-only")
    public = app.test_client()
    state = settled_state(app, public)
    assert state["odds"] is None and state["game"]["to_move"] == 2
    assert '"to_beat":' not in public.get("/").get_data(as_text=True)
    assert _first_stream_state(public)["odds"] is None
    master = app.test_client()
    assert '"to_beat":' not in master.get("/admin").get_data(as_text=True)  # not unlocked
    login(master)
    assert master.get("/api/state").get_json()["odds"]["to_beat"]["hand"] == "321"
    assert '"to_beat":' in master.get("/admin").get_data(as_text=True)
    assert _first_stream_state(master)["odds"]["avoid"]["hand"] == "653"
    # The public reader still gets none, on the same version.
    assert public.get("/api/state").get_json()["odds"] is None


def _first_stream_state(client: FlaskClient) -> dict[str, Any]:
    import json

    response = client.get("/api/events", buffered=False)
    try:
        for chunk in response.response:
            text = chunk.decode()
            if text.startswith("id:"):
                return json.loads(text.split("data: ", 1)[1])
    finally:
        response.close()
    raise AssertionError("no state event")


def test_bad_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="SCOREBOARD_ODDS must be one of public, admin-only"):
        make_app(GameHub(), SCOREBOARD_ODDS="sometimes")


def test_labels_exist_in_both_languages() -> None:
    assert ODDS_LABELS.problems() == []


# ------------------------------------------------------------------------- once per version


def test_one_computation_per_game_version_with_many_clients() -> None:
    store = decision_store()
    app = make_app(store)
    service = app.extensions["dicetower.odds"]
    seen: set[int] = set()

    def read(clients: int, reads: int) -> None:
        def one() -> None:
            client = app.test_client()
            for _ in range(reads):
                seen.add(client.get("/api/state").get_json()["game_version"])

        threads = [threading.Thread(target=one) for _ in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert service.wait_idle()

    read(20, 5)  # 100 reads of one game version, from 20 clients at once
    read(5, 1)  # and more once its advice is ready
    assert service.computations == 1 and len(seen) == 1
    store.apply({"type": "throw", "faces": [5], "keep": [0, 1]})  # the round is over
    read(20, 5)
    assert service.computations == 1 and len(seen) == 2  # no choice: nothing to compute
    store.apply({"type": "throw", "faces": [6, 5, 2]})  # the next round's opener
    read(20, 5)
    assert service.computations == 2 and len(seen) == 3
    # A camera reading is a new version but the same game: nothing more to compute.
    store.publish_reading(None, [])
    read(5, 2)
    assert service.computations == 2


# ------------------------------------------------------------------------- in a browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WAIT = 10  # seconds; the update itself takes milliseconds


@pytest.fixture
def browser() -> Iterator[Any]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip(f"headless browser tests need {CHROMIUM} and {CHROMEDRIVER} "
                    "(Debian: apt install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory(prefix="dicetower-chromium-") as profile:
        options = Options()
        options.binary_location = str(CHROMIUM)
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--no-first-run", f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.add_experimental_option(
            "mobileEmulation", {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2}})
        driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)),
                                  options=options)
        driver.set_page_load_timeout(WAIT)
        try:
            yield driver
        finally:
            driver.quit()


@pytest.mark.browser
def test_tapping_the_line_opens_the_table(browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from firmware_host.scoreboard.server import BackgroundServer

    store = decision_store()
    app = make_app(store)
    with BackgroundServer(app) as server:
        browser.get(server.url + "?lang=fr")
        line = browser.find_element(By.ID, "odds-line")
        WebDriverWait(browser, WAIT).until(lambda d: "battre 3-2-1" in line.text,
                                           "no odds line")
        assert "sous 6-5-3" in line.text and line.text.startswith("garder ")
        table = browser.find_element(By.ID, "odds-table")
        assert not table.is_displayed()
        line.click()
        assert table.is_displayed() and line.get_attribute("aria-expanded") == "true"
        rows = table.find_elements(By.CSS_SELECTOR, "tr.odds-row")
        assert len(rows) == len(store.snapshot()["odds"]["keeps"]) == 8
        assert len(table.find_elements(By.CSS_SELECTOR, "tr.advised")) == 1
        assert table.find_elements(By.CSS_SELECTOR, "td.best")  # the best per goal marked
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 390, "the table makes the page scroll sideways"
        # The next throw: the line follows, the table stays open.
        store.apply({"type": "throw", "faces": [1], "keep": [1, 2]})
        WebDriverWait(browser, WAIT).until(
            lambda d: not d.find_element(By.ID, "odds-card").is_displayed(),
            "the advice stayed after the turn ended")


# ------------------------------------------------------------------------- configuration


def test_tower_config_and_serve_option(tmp_path: Path) -> None:
    from firmware_host.cli import build_parser
    from firmware_host.controller.config import (
        EXAMPLE_CONFIG,
        ConfigError,
        config_from_dict,
        load_config,
    )
    from firmware_host.scoreboard.odds import ODDS_MODES

    file = tmp_path / "tower.toml"
    assert load_config(EXAMPLE_CONFIG).odds == "public"
    for mode in ODDS_MODES:
        assert config_from_dict({"scoreboard": {"odds": mode}}, file).odds == mode
    with pytest.raises(ConfigError, match=r"\[scoreboard\] odds must be one of public, "
                                          r"admin-only, not 'never'"):
        config_from_dict({"scoreboard": {"odds": "never"}}, file)
    parser = build_parser()
    assert parser.parse_args(["serve"]).odds == "public"
    assert parser.parse_args(["serve", "--odds", "admin-only"]).odds == "admin-only"
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--odds", "never"])
