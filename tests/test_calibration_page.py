"""Calibrating the running tower from the game master's page (/api/admin/calibration).

A real `Controller` plays tim-11 on the simulated camera in a thread of its own, as on the
tower, over a real SQLite journal and mock pins; the game master drives the calibration
through the Flask test client (and once through headless Chromium, clicking the tray's
corners on the preview). The simulated tray makes the throws when "next" is pressed, as the
game master would. Checked: the profile saved with the corners given by hand and read by the
tower from then on; cancel changes nothing (no file, the light as it was); the game resumes
as it was, no calibration throw taken for a player's; the refusals.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from flask import Flask
from test_scoreboard_browser import (  # noqa: F401 (a fixture)
    browser,
    save_screenshots,
    text_of,
    wait_for,
)
from test_scoreboard_tower import GameMaster, error_of, game_master, not_disabled

from calibration.tray import order_corners, propose_zones
from firmware_host.controller.controller import Controller
from firmware_host.hub import GameHub
from firmware_host.hub.journal import Journal
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.server import BackgroundServer
from firmware_host.simulation.camera import SimulatedCamera
from firmware_host.simulation.tray import SimulatedTray
from hardware import EXAMPLE_PINMAP, SimulatedTower, load_pinmap, simulated_pinmap
from vision import Profile

PIN = "5731"  # test_scoreboard_tower's GameMaster logs in with it
PLAYERS = ["Ana", "Ben", "Cleo"]
# A guard against a job that hangs, not a speed limit: the whole run takes a few seconds.
STUCK = 60.0
FIRST = [[30, 30], [610, 30], [610, 450], [30, 450]]
# The simulated tray's outline (roll zone x 16..452, keep zone 476..624), a little outside it.
CORNERS = [[8, 8], [632, 8], [632, 472], [8, 472]]


class RunningTower:
    """The controller's loop in a thread, over the simulated camera, as `dicetower run`."""

    def __init__(self, tmp_path: Path, seed: int = 3) -> None:
        self.tray = SimulatedTray(seed=seed)
        self.camera = SimulatedCamera(self.tray)
        self.camera.open()
        self.store = GameHub()
        self.journal = Journal(tmp_path / "journal.sqlite3")
        self.hardware = SimulatedTower(simulated_pinmap(load_pinmap(EXAMPLE_PINMAP)),
                                       tokens=20)
        self.controller = Controller(self.camera, self.hardware, self.store, self.journal,
                                     hold=0.2, tray=self.tray)
        self.controller.resume_or_start("tim-11", PLAYERS)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.controller.run, args=(self.stop,),
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self.controller.close()
        self.hardware.close()
        self.journal.close()

    def inputs(self) -> list[str]:
        """The kinds of the actions journaled for this game."""
        return [a.get("action", "") for _, a in self.journal.actions_since_last_game()]


@pytest.fixture
def tower(tmp_path: Path) -> Iterator[RunningTower]:
    running = RunningTower(tmp_path)
    try:
        yield running
    finally:
        running.close()


def make_app(tower: RunningTower | None, store: GameHub | None = None,
             **config: Any) -> Flask:
    return create_app({"TESTING": True, "SCOREBOARD_PIN": PIN, "CALIBRATION_THROWS": 2,
                       "CALIBRATION_CHECKS": 1, "CALIBRATION_HOLD": 0.2, **config},
                      hub=tower.store if tower else store,
                      tower=tower.controller if tower else None)


def until(condition: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + STUCK
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"stuck: {what}")


def state(master: GameMaster) -> dict[str, Any]:
    response = master.client.get("/api/admin/calibration")
    assert response.status_code == 200
    return response.get_json()["calibration"]


def asked(master: GameMaster) -> dict[str, Any]:
    """The state once the job waits for the game master, or is over."""
    return until(lambda: (lambda s: s if s["waiting"] or not s["active"] else None)(
        state(master)), "the calibration never asked")


def press(master: GameMaster, path: str = "calibration/next") -> dict[str, Any]:
    """Answer the job (next, cancel) and wait for its next question, or its end."""
    version = state(master)["version"]
    assert master.post(path).status_code == 200
    until(lambda: state(master)["version"] != version, f"{path} went unheard")
    return asked(master)


def open_calibration(driver: Any, url: str) -> None:
    """The game master's page at ``url`` in ``driver``, unlocked with the PIN, its
    calibration panel open."""
    from selenium.webdriver.common.by import By

    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.get(url + "/admin?lang=en")
    driver.find_element(By.ID, "pin").send_keys(PIN)
    driver.find_element(By.CSS_SELECTOR, "#login-form button").click()
    wait_for(driver, lambda d: d.find_element(By.ID, "controls").is_displayed(),
             "the PIN did not unlock the controls")
    driver.find_element(By.CSS_SELECTOR, "#calibration > summary").click()


def profiles(home: Path) -> list[Path]:
    folder = home / "config" / "dicetower" / "profiles"
    return sorted(folder.iterdir()) if folder.exists() else []


def test_a_whole_calibration_from_the_page(tower: RunningTower, private_data_home: Path) -> None:
    master = game_master(make_app(tower))
    before = tower.store.snapshot()["game"]
    inputs = tower.inputs()
    response = master.post("calibration/start", {"expect": 3, "name": "bar"})
    assert response.status_code == 200
    first = asked(master)
    assert (first["step"], first["waiting"], first["message"]["code"]) == (1, "clear", "clear")
    assert tower.store.snapshot()["paused"] is True
    picture = master.client.get(first["preview"]["url"])
    assert picture.mimetype == "image/jpeg"
    image = cv2.imdecode(np.frombuffer(picture.data, np.uint8), cv2.IMREAD_COLOR)
    assert image.shape == (480, 640, 3)
    assert (first["preview"]["width"], first["preview"]["height"]) == (640, 480)
    # Corners outside the picture or of the wrong shape are refused; good ones shown.
    outside = master.post("calibration/corners", {"corners": [[0, 0], [700, 0], [700, 400],
                                                               [0, 400]]})
    assert error_of(outside) == (409, "calibration") and "640x480" in outside.get_json()["error"]
    assert error_of(master.post("calibration/corners", {"corners": [[1, 2]]})) == (
        400, "bad_input")
    assert master.post("calibration/corners", {"corners": FIRST}).status_code == 200
    shown = state(master)
    assert shown["corners"] == [list(map(float, c)) for c in FIRST]
    assert shown["preview"]["version"] > first["preview"]["version"]
    # Step 1 done with the first corners; given again before the first throw, it is redone.
    after_tray = press(master)
    assert after_tray["waiting"] == "throw" and after_tray["step"] == 2
    assert after_tray["preview"]["name"] == "1-tray" and after_tray["corners_open"]
    assert master.post("calibration/corners", {"corners": CORNERS}).status_code == 200
    redone = until(lambda: (lambda s: s if s["waiting"] and s["preview"]["version"]
                            > after_tray["preview"]["version"] + 1 else None)(state(master)),
                   "step 1 was not redone")
    assert redone["preview"]["name"] == "1-tray" and redone["message"]["values"] == {
        "n": 3, "k": 1, "of": 1}
    seen: list[tuple[int, str]] = []
    current = redone
    while current["active"]:
        seen.append((current["step"], current["waiting"]))
        if current["waiting"] == "throw" and current["step"] > 2:
            assert error_of(master.post("calibration/corners", {"corners": CORNERS})) == (
                409, "calibration")
        current = press(master)
    # Next while the dice's values are asked confirms them as read (the terminal's Enter).
    assert seen == [(2, "throw"), (2, "clear"), (3, "throw"), (3, "throw"), (3, "values"),
                    (3, "values"), (4, "throw"), (4, "values"), (4, "finish")]
    result = current["result"]
    assert result["outcome"] == "saved", result
    path = private_data_home / "config" / "dicetower" / "profiles" / "bar.json"
    assert result["path"] == str(path) and result["backup"] is None
    roll, keep = propose_zones(order_corners([tuple(map(float, c)) for c in CORNERS]))
    saved = Profile.load(path)
    assert saved.zones == [roll] and saved.keep_zone == keep
    # The tower reads with it now, and the game is as it was: nothing taken as a throw.
    assert tower.controller.profile.zones == [roll]
    snapshot = tower.store.snapshot()
    assert snapshot["game"] == before and snapshot["paused"] is False
    assert [kind for kind in tower.inputs()[len(inputs):]] == ["pause", "pause"]
    assert tower.controller.stats["accepted"] == 0
    # The next throw is the player's (tim-11 opens with one die each).
    length = snapshot["history_length"]
    tower.tray.throw([5])
    until(lambda: tower.controller.stats["accepted"] == 1,
          f"the game did not go on: {tower.controller.last_result}")
    assert tower.store.snapshot()["history_length"] == length + 1
    assert tower.inputs()[-1] == "event"


def test_cancel_changes_nothing(tower: RunningTower, private_data_home: Path) -> None:
    master = game_master(make_app(tower))
    before = tower.store.snapshot()["game"]
    controls, ring = tower.camera.controls(), tower.tray.ring
    master.post("calibration/start", {"expect": 3})
    asked(master)
    press(master)  # the empty tray
    waiting = press(master)  # a throw: the light is swept on it
    assert (waiting["step"], waiting["waiting"]) == (2, "clear")
    assert tower.tray.ring is not None  # the light step did change the light
    finish = press(master, "calibration/cancel")
    assert finish["waiting"] == "finish" and finish["result"] == {"outcome": "cancelled"}
    assert error_of(master.post("calibration/corners", {"corners": CORNERS})) == (
        409, "calibration")
    over = press(master)  # the tray emptied: the game goes on
    assert not over["active"]
    assert over["result"] == {"outcome": "cancelled"}
    assert profiles(private_data_home) == []
    assert tower.camera.controls() == controls and (tower.tray.ring or 0.0) == (ring or 0.0)
    assert tower.controller.profile is None
    assert tower.store.snapshot()["game"] == before and not tower.store.snapshot()["paused"]
    assert error_of(master.post("calibration/cancel")) == (409, "calibration")


def test_a_paused_game_stays_paused(tower: RunningTower, private_data_home: Path) -> None:
    master = game_master(make_app(tower))
    tower.store.set_paused(True)
    master.post("calibration/start", {"expect": 3})
    assert asked(master)["waiting"] == "clear"
    assert error_of(master.post("calibration/start", {"expect": 3})) == (409, "calibration")
    assert not press(master, "calibration/cancel")["active"]  # no throw yet: over at once
    assert tower.store.snapshot()["paused"] is True
    assert profiles(private_data_home) == []


def test_refusals() -> None:
    store = GameHub()
    store.start_game("tim-11", PLAYERS)
    master = game_master(make_app(None, store))
    no_tower = master.post("calibration/start", {"expect": 3})
    assert error_of(no_tower) == (409, "no_tower")
    assert "dicetower calibrate" in no_tower.get_json()["error"]
    assert error_of(master.post("calibration/next")) == (409, "calibration")
    assert error_of(master.post("calibration/cancel")) == (409, "calibration")
    assert master.client.get("/api/admin/calibration").get_json()["calibration"] is None
    assert error_of(master.client.get("/api/admin/calibration/preview.jpg")) == (
        404, "no_preview")
    stranger = GameMaster(make_app(None, store).test_client(), PIN)
    assert error_of(stranger.post("calibration/start", {"expect": 3})) == (401, "login")
    assert error_of(stranger.client.get("/api/admin/calibration")) == (401, "login")


@pytest.mark.parametrize(("body", "field"), [
    ({}, "expect"), ({"expect": 0}, "expect"), ({"expect": True}, "expect"),
    ({"expect": 3, "name": "../x"}, "name"), ({"expect": 3, "name": 7}, "name"),
])
def test_bad_start_is_refused_before_anything(tower: RunningTower, body: dict[str, Any],
                                              field: str) -> None:
    master = game_master(make_app(tower))
    response = master.post("calibration/start", body)
    assert error_of(response) == (400, "bad_input")
    assert response.get_json()["error"].startswith(field)
    assert state(master) is None and not tower.store.snapshot()["paused"]


@pytest.mark.browser
@not_disabled
def test_the_panel_in_a_browser(browser: Any, tower: RunningTower,  # noqa: F811
                                private_data_home: Path) -> None:
    """Start, tap the tray's four corners on the picture, press Next to the end."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = browser
    app = make_app(tower)

    def job_state() -> dict[str, Any]:
        return app.extensions["dicetower.calibration"].state()

    def shown_code() -> str:
        return driver.find_element(By.ID, "calib-message").get_attribute("data-code")

    with BackgroundServer(app) as server:
        open_calibration(driver, server.url)
        driver.find_element(By.ID, "calib-name").send_keys("browser")
        driver.find_element(By.ID, "btn-calib-start").click()
        image = driver.find_element(By.ID, "calib-preview")
        WebDriverWait(driver, STUCK).until(
            lambda d: shown_code() == "clear" and image.is_displayed()
            and d.execute_script("return arguments[0].naturalWidth", image) == 640,
            "no picture of the tray")
        assert "Step 1/4: the empty tray" in text_of(driver, "calib-step")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", image)
        width, height = image.size["width"], image.size["height"]
        scale = width / 640
        for x, y in CORNERS:  # offsets from the picture's centre, in CSS pixels
            ActionChains(driver).move_to_element_with_offset(
                image, round(x * scale - width / 2), round(y * scale - height / 2)
            ).click().perform()
        until(lambda: job_state()["corners"], "the corners tapped never reached the tower")
        given = job_state()["corners"]
        assert np.allclose(given, order_corners([tuple(map(float, c)) for c in CORNERS]),
                           atol=2 / scale + 1)
        wait_for(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".calib-mark")) == 4,
                 "the corners are not shown")
        assert text_of(driver, "calib-corners") == "Corners: 4/4"
        save_screenshots(driver, "calibration")
        def press_next(waiting: str, version: int) -> None:
            WebDriverWait(driver, STUCK).until(
                lambda d: shown_code() == waiting
                and d.find_element(By.ID, "btn-calib-next").is_enabled(), "Next never offered")
            driver.find_element(By.ID, "btn-calib-next").click()
            until(lambda: job_state()["version"] != version, "Next went unheard")
            until(lambda: job_state()["waiting"] or not job_state()["active"], "never asked")

        while job_state()["active"]:
            press_next(job_state()["waiting"], job_state()["version"])
        result = driver.find_element(By.ID, "calib-result")
        WebDriverWait(driver, STUCK).until(
            lambda d: result.get_attribute("data-outcome") == "saved", "no outcome shown")
        path = private_data_home / "config" / "dicetower" / "profiles" / "browser.json"
        assert f"Profile saved: {path}" in result.text
        assert "The faces learnt" in result.text  # the dice's values, confirmed with Next
        assert Profile.load(path).zones == [propose_zones(given)[0]]
        wait_for(driver, lambda d: d.find_element(By.ID, "calib-form").is_displayed(),
                 "the panel did not offer a new calibration")
        assert f"Profile saved: {path}" in result.text
    assert tower.store.snapshot()["paused"] is False


def test_without_a_name_the_towers_own_profile_is_made_anew(
    tower: RunningTower, tmp_path: Path
) -> None:
    configured = tmp_path / "tower-profile.json"
    master = game_master(make_app(tower, CALIBRATION_PROFILE=configured))
    assert master.post("calibration/start", {"expect": 3}).status_code == 200
    assert asked(master)["target"] == str(configured)
    press(master, "calibration/cancel")
    assert master.post("calibration/start", {"expect": 3, "name": "red"}).status_code == 200
    assert asked(master)["target"].endswith("red.json")
    press(master, "calibration/cancel")
