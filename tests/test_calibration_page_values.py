"""The dice's values given on the game master's page during a calibration (POST values).

A real `Controller` runs tim-11 on the simulated tray (`test_calibration_page.RunningTower`);
after each throw of the dice step and of the check, the job shows the throw read, its dice
numbered left to right, and waits for their values. Checked through the Flask test client:
the state's dice, the values given reaching the learning exactly as given (a die corrected, one
not to learn from, one that is no die: the terminal's answers; a die the reading missed, added
where it lies and cut as patches of its value), every wrong input refused with the blueprint's
400 (or 409) and nothing changed, cancel while the values are asked, a calibration started
without values asking none; and once in headless Chromium, a die tapped on the picture, its
value corrected with its buttons, a die added by a tap where none was read (and another added
then taken away) and the calibration going on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from test_calibration_page import (  # noqa: F401 - tower: the fixture
    STUCK,
    RunningTower,
    asked,
    make_app,
    open_calibration,
    press,
    profiles,
    state,
    tower,
    until,
)
from test_scoreboard_browser import browser, save_screenshots, wait_for  # noqa: F401
from test_scoreboard_tower import GameMaster, error_of, game_master, not_disabled

import calibration.adapt as adapt
from calibration.labels import Labelled
from firmware_host.scoreboard.server import BackgroundServer
from vision import Profile

Given = list[tuple[int, tuple[float, float]]]


class Cuts(list[Given]):
    """The values each throw's patches were cut with (`adapt.cut`), throw by throw, and in
    ``patches`` the patches cut from each."""

    def __init__(self) -> None:
        super().__init__()
        self.patches: list[adapt.Patches] = []


@pytest.fixture
def learnt(monkeypatch: pytest.MonkeyPatch) -> Cuts:
    """What the learning used (`Cuts`); the session cuts one throw at a time."""
    seen = Cuts()
    cut = adapt.cut

    def spy(images: Any, labelled: Any, *args: Any, **kwargs: Any) -> adapt.Patches:
        assert len(images) == 1
        seen.extend([(d.value, d.center) for d in dice] for dice in labelled)
        seen.patches.append(cut(images, labelled, *args, **kwargs))
        return seen.patches[-1]

    monkeypatch.setattr(adapt, "cut", spy)
    return seen


def until_values(master: GameMaster) -> dict[str, Any]:
    """Next pressed (tray emptied, dice thrown) until the job asks for values, or ends."""
    current = asked(master)
    while current["active"] and current["waiting"] != "values":
        current = press(master)
    return current


def answer(master: GameMaster, body: dict[str, Any]) -> dict[str, Any]:
    """POST values and wait for the job's next question."""
    version = state(master)["version"]
    response = master.post("calibration/values", body)
    assert response.status_code == 200, response.get_json()
    until(lambda: state(master)["version"] != version, "the values went unheard")
    return asked(master)


def corrected(dice: list[dict[str, Any]], throw: int
              ) -> tuple[list[int | None], list[list[float]]]:
    """The installer's answer, values and dice added: the values read (an unsure die: not
    sure); on the first throw, the first die another value, the second not to learn from,
    the third no die (a mark taken for one); on the second, the first die as if the reading
    had missed it: no die where read, added by hand a little off its centre."""
    values: list[int | None] = [d["value"] or 0 for d in dice]
    if throw == 1:
        values[0] = (dice[0]["value"] or 0) % 6 + 1
        if len(values) > 1:
            values[1] = 0
        if len(values) > 2:
            values[2] = None
    if throw == 2:
        values[0] = None
        x, y = dice[0]["center"]
        return values, [[x + 1.5, y - 1.0, dice[0]["value"] or 3]]
    return values, []


def empty_spot(dice: list[dict[str, Any]], taken: list[tuple[int, int]]
               ) -> tuple[int, int]:
    """A point of the picture's middle (640 x 480) farthest from every die read and every
    point ``taken``: where a tap adds a die."""
    side = max((d["side"] for d in dice), default=40.0)
    near = [tuple(d["center"]) for d in dice] + taken
    spot = max(((x, y) for x in range(160, 481, 8) for y in range(120, 361, 8)),
               key=lambda p: min((np.hypot(p[0] - c[0], p[1] - c[1]) for c in near),
                                 default=0.0))
    assert all(np.hypot(spot[0] - c[0], spot[1] - c[1]) > 2 * side for c in near)
    return spot


def test_the_values_given_are_the_ones_learnt(tower: RunningTower,  # noqa: F811
                                              private_data_home: Path,
                                              learnt: Cuts) -> None:
    master = game_master(make_app(tower))
    assert master.post("calibration/start", {"expect": 3, "name": "bar"}).status_code == 200
    given: list[Given] = []
    seen: list[tuple[int, int, int]] = []
    current = until_values(master)
    while current["active"] and current["waiting"] == "values":
        dice, message = current["dice"], current["message"]
        assert message["code"] == "values" and message["values"]["count"] == len(dice)
        seen.append((current["step"], message["values"]["k"], message["values"]["of"]))
        assert current["preview"]["name"] == f"{current['step']}-values-{message['values']['k']}"
        # Numbered left to right, each with its centre and side in image pixels.
        assert [d["index"] for d in dice] == list(range(1, len(dice) + 1))
        assert [d["center"][0] for d in dice] == sorted(d["center"][0] for d in dice)
        assert all(0 <= d["center"][0] < 640 and 0 <= d["center"][1] < 480 and d["side"] > 10
                   and d["value"] in (None, 1, 2, 3, 4, 5, 6) for d in dice)
        picture = master.client.get(current["preview"]["url"])
        image = cv2.imdecode(np.frombuffer(picture.data, np.uint8), cv2.IMREAD_COLOR)
        assert image.shape == (480, 640, 3)
        values, added = corrected(dice, len(given) + 1)
        given.append([(v, tuple(d["center"])) for v, d in zip(values, dice, strict=True)
                      if v is not None] + [(v, (x, y)) for x, y, v in added])
        current = answer(master, {"values": values, "ask": current["ask"], "added": added})
        current = until_values(master) if current["waiting"] != "values" else current
    assert seen == [(3, 1, 2), (3, 2, 2), (4, 1, 1)]
    result = current["result"]
    assert result["outcome"] == "saved", result
    # The learning used exactly the values given, throw by throw (the centres as shown).
    assert len(learnt) == len(given) == len(seen)
    for used, told in zip(learnt, given, strict=True):
        assert [v for v, _ in used] == [v for v, _ in told]
        assert np.allclose([c for _, c in used], [c for _, c in told], atol=0.06)
    assert given[0][0][0] != 0 and any(v == 0 for v, _ in given[0])
    # The die added on the second throw, where the reading found none: cut at its centre
    # as patches of its value, as any die given a value.
    value, (x, y) = given[1][-1]
    patches = learnt.patches[1]
    die = patches.described.index(f"throw 2 at {x:.0f},{y:.0f}")
    labels = [label for label, d in zip(patches.labels, patches.die, strict=True) if d == die]
    assert len(labels) >= len(adapt.SIZES) and set(labels) == {value}
    # The faces were judged with those values, and the page and the profile's notes say so.
    faces = result["faces"]
    assert faces is not None and faces["with"]["dice"] > 0
    assert faces["kept"] == (Profile.load(result["path"]).adaptation is not None)
    notes = json.loads(Path(result["path"]).with_name("bar.calibration.json").read_text())
    assert notes["faces"] == faces
    # The die side is judged by the values only when the count chose one; said alike.
    assert notes["die_side"] == result["die_side"]
    if result["die_side"] is not None:
        assert result["die_side"]["kept"] == (Profile.load(result["path"]).die_side is not None)


def test_wrong_values_are_refused_and_cancel_works_while_they_are_asked(
    tower: RunningTower, private_data_home: Path  # noqa: F811
) -> None:
    master = game_master(make_app(tower))
    master.post("calibration/start", {"expect": 3})
    first = asked(master)
    assert first["waiting"] == "clear" and first["dice"] is None
    # Values while none are asked: the job's own refusal.
    assert error_of(master.post("calibration/values", {"values": [1, 2, 3]})) == (
        409, "calibration")
    current = until_values(master)
    assert current["waiting"] == "values"
    count, ask = len(current["dice"]), current["ask"]
    for body in ({}, {"values": "1 2 3"}, {"values": [1] * (count - 1)},
                 {"values": [1] * (count + 1)}, {"values": [7] * count},
                 {"values": [-1] * count}, {"values": [True] * count},
                 {"values": ["3"] * count}, {"values": [1.5] * count},
                 {"values": [1] * count, "ask": "x"}, {"values": [1] * 100},
                 *({"values": [1] * count, "added": added} for added in (
                     "1 2 3", [1, 2, 3], [[100, 100]], [[100, 100, 7]], [[100, 100, -1]],
                     [[100, 100, None]], [[100, 100, True]], [[100, 100, 2.0]],
                     [["100", 100, 2]], [[100, 100, 2, 2]], [{"x": 100, "y": 100, "v": 2}],
                     [[100, 100, 2]] * 17, [[-1, 100, 2]], [[100, 480, 2]],
                     [[640, 10, 2]]))):
        response = master.post("calibration/values", body)
        assert error_of(response) == (400, "bad_input"), body
        assert response.get_json()["error"].startswith(("values", "ask", "added")), body
    outside = master.post("calibration/values", {"values": [1] * count, "added": [[700, 5, 1]]})
    assert "640x480" in outside.get_json()["error"]
    not_a_number = master.post_raw("calibration/values", json.dumps(
        {"values": [1] * count, "added": [[float("nan"), 100, 2]]}).encode())
    assert error_of(not_a_number) == (400, "bad_input")
    wrong_count = master.post("calibration/values", {"values": [1] * (count + 1)})
    assert f"{count} values" in wrong_count.get_json()["error"]
    stale = master.post("calibration/values", {"values": [1] * count, "ask": ask - 1})
    assert error_of(stale) == (409, "calibration") and "another throw" in stale.get_json()[
        "error"]
    french = master.client.post("/api/admin/calibration/values?lang=fr",
                                json={"values": [9] * count},
                                headers={"X-CSRF-Token": master.csrf})
    assert "une valeur par dé" in french.get_json()["error"]
    still = state(master)
    assert (still["waiting"], still["ask"], len(still["dice"])) == ("values", ask, count)
    # Cancel while the values are asked: the dice were thrown, so the tray is emptied first.
    finish = press(master, "calibration/cancel")
    assert finish["waiting"] == "finish" and finish["result"] == {"outcome": "cancelled"}
    assert finish["dice"] is None
    assert error_of(master.post("calibration/values", {"values": [1] * count})) == (
        409, "calibration")
    over = press(master)
    assert not over["active"] and over["result"] == {"outcome": "cancelled"}
    assert profiles(private_data_home) == [] and tower.controller.profile is None
    assert not tower.store.snapshot()["paused"]


def test_without_values_none_are_asked(tower: RunningTower,  # noqa: F811
                                       private_data_home: Path,
                                       learnt: Cuts) -> None:
    master = game_master(make_app(tower))
    assert error_of(master.post("calibration/start", {"expect": 3, "values": "yes"})) == (
        400, "bad_input")
    assert master.post("calibration/start", {"expect": 3, "values": False}).status_code == 200
    current = asked(master)
    while current["active"]:
        assert current["waiting"] != "values" and current["dice"] is None
        current = press(master)
    assert current["result"]["outcome"] == "saved" and current["result"]["faces"] is None
    assert learnt == []


@pytest.mark.browser
@not_disabled
def test_a_die_corrected_in_a_browser(browser: Any, tower: RunningTower,  # noqa: F811
                                      private_data_home: Path, learnt: Cuts) -> None:
    """Start, Next to the first throw's values, tap its first die on the picture, pick
    another value, tap where no die was read and give the die added there a value (and
    another added, taken away again), "These values are right": the calibration goes on
    with those values, the die added where it was tapped, in the picture's pixels."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = browser
    app = make_app(tower)

    def job() -> dict[str, Any]:
        return app.extensions["dicetower.calibration"].state()

    def shown_code() -> str:
        return driver.find_element(By.ID, "calib-message").get_attribute("data-code")

    def click(element_id: str) -> None:
        element = driver.find_element(By.ID, element_id)
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        element.click()

    def offered(code: str) -> Callable[[Any], bool]:
        return lambda d: (shown_code() == code
                          and d.find_element(By.ID, "btn-calib-next").is_enabled())

    with BackgroundServer(app) as server:
        open_calibration(driver, server.url)
        assert driver.find_element(By.ID, "calib-values").is_selected()
        def press_next(waiting: str, version: int) -> None:
            WebDriverWait(driver, STUCK).until(offered(waiting), f"{waiting} never offered")
            click("btn-calib-next")
            until(lambda: job()["version"] != version, "Next went unheard")
            until(lambda: job()["waiting"] or not job()["active"], "never asked")

        click("btn-calib-start")
        until(lambda: "dicetower.calibration" in app.extensions and job()["waiting"],
              "never asked")
        while job()["active"] and job()["waiting"] != "values":
            press_next(job()["waiting"], job()["version"])
        asking = job()
        assert asking["waiting"] == "values"
        dice, ask = asking["dice"], asking["ask"]
        image = driver.find_element(By.ID, "calib-preview")
        WebDriverWait(driver, STUCK).until(
            lambda d: offered("values")(d)
            and len(d.find_elements(By.CSS_SELECTOR, "#calib-die-list button")) == len(dice)
            and len(d.find_elements(By.CSS_SELECTOR, ".calib-die-mark")) == len(dice)
            and image.get_attribute("src").endswith(f"v={asking['preview']['version']}")
            and d.execute_script("return arguments[0].complete", image),
            "the dice to confirm are not shown")
        assert driver.find_element(By.ID, "btn-calib-next").text == "These values are right"
        buttons = driver.find_elements(By.CSS_SELECTOR, "#calib-die-list button")
        read = dice[0]["value"]
        assert buttons[0].text == f"Die 1: {read if read is not None else '?'}"
        # Tap the first die on the picture (its centre, from the picture's centre).
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", image)
        width, height = image.size["width"], image.size["height"]
        scale = width / 640
        assert scale < 0.95  # the picture is shown smaller than its pixels: taps are scaled

        def tap(x: float, y: float) -> None:
            # Wholly in view: an offset counts from the centre of the part in view.
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", image)
            ActionChains(driver).move_to_element_with_offset(
                image, round(x * scale - width / 2), round(y * scale - height / 2)
            ).click().perform()

        def title() -> str:
            return driver.find_element(By.ID, "calib-choice-title").text

        tap(*dice[0]["center"])
        choice = driver.find_element(By.ID, "calib-choice")
        wait_for(driver, lambda d: choice.is_displayed(), "tapping the die offered no values")
        assert driver.find_element(By.ID, "calib-choice-title").text == "Die 1: its value"
        assert buttons[0].get_attribute("aria-expanded") == "true"
        value = (read or 0) % 6 + 1
        choice.find_element(By.CSS_SELECTOR, f'button[data-value="{value}"]').click()
        wait_for(driver, lambda d: not choice.is_displayed(), "the choice did not close")
        assert buttons[0].text == f"Die 1: {value}"
        assert "changed" in buttons[0].get_attribute("class")
        # A tap where no die was read: a die added there, numbered after the others, its
        # value offered; then another added and taken away again ("Not a die").
        missed, extra = len(dice) + 1, 4
        spot = empty_spot(dice, [])
        tap(*spot)
        wait_for(driver, lambda d: choice.is_displayed() and title() == f"Die {missed}: its value",
                 "tapping where no die was read added none")
        # Read in one script: the page draws the list and the marks anew after each change,
        # and an element found before may be gone by the time its text is asked.
        def texts(selector: str) -> list[str]:
            return driver.execute_script(
                "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent"
                ".trim())", selector)

        assert texts("#calib-die-list button")[len(dice):] == [f"Die {missed}: ?"]
        assert texts(".calib-added") == [str(missed)]
        choice.find_element(By.CSS_SELECTOR, f'button[data-value="{extra}"]').click()
        wait_for(driver, lambda d: not choice.is_displayed(), "the choice did not close")
        assert texts("#calib-die-list button")[-1] == f"Die {missed}: {extra}"
        tap(*empty_spot(dice, [spot]))
        wait_for(driver, lambda d: choice.is_displayed()
                 and title() == f"Die {missed + 1}: its value", "the second tap added no die")
        choice.find_element(By.CSS_SELECTOR, 'button[data-value="none"]').click()
        wait_for(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#calib-die-list button"))
                 == missed, "the die added was not taken away")
        assert len(driver.find_elements(By.CSS_SELECTOR, ".calib-added")) == 1
        save_screenshots(driver, "calibration-values")
        click("btn-calib-next")
        until(lambda: job()["ask"] != ask or not job()["active"], "the values went unheard")
        assert job()["active"]  # the calibration goes on: the next throw's values
        following = job()["ask"]
        WebDriverWait(driver, STUCK).until(
            lambda d: offered("values")(d) and d.find_element(By.ID, "calib-dice")
            .get_attribute("data-ask") == str(following), "the next values never asked")
        assert driver.find_element(By.ID, "calib-die-list").find_element(
            By.TAG_NAME, "button").text.startswith("Die 1: ")
        click("btn-calib-next")  # as read
        until(lambda: learnt, "nothing learnt from the values given")
        assert [v for v, _ in learnt[0]] == [value, *((d["value"] or 0) for d in dice[1:]),
                                             extra]
        assert learnt[0][0][1] == pytest.approx(tuple(dice[0]["center"]), abs=0.06)
        # The die added, where it was tapped in the photo's own pixels (a tap is whole CSS
        # pixels on a picture shown smaller).
        assert learnt[0][-1][1] == pytest.approx(spot, abs=3)
        until(lambda: job()["waiting"] or not job()["active"], "never asked")
        # The page redraws when its poll brings the new question (the values' panel folds
        # away, the buttons move up): a click made before that may land where the button was.
        WebDriverWait(driver, STUCK).until(
            lambda d: not job()["active"] or shown_code() == job()["waiting"],
            "the page never showed the question")
        click("btn-calib-cancel")
        try:
            until(lambda: job()["waiting"] == "finish" or not job()["active"], "cancel unheard")
        except AssertionError as exc:  # what the job and the page were at, to tell why
            error = driver.find_element(By.ID, "calib-error").text
            raise AssertionError(f"{exc}; the job: {job()}; the page's error: {error!r}") from None
        if job()["active"]:
            WebDriverWait(driver, STUCK).until(offered("finish"), "finish never offered")
            click("btn-calib-next")
        until(lambda: not job()["active"], "the calibration did not end")
    assert profiles(private_data_home) == []


def test_the_terminal_and_the_page_give_values_alike() -> None:
    """`faces.given_values`, the answer both share: None confirms the reading (an unsure
    die then a die not learnt from), else 1-6, 0 (not sure) or None (no die) per die."""
    from calibration.faces import given_values
    from calibration.web import AskingLabeller, numbered
    from vision import Die

    def die(value: int | None, x: float) -> Die:
        corners = ((x - 10, 90.0), (x + 10, 90.0), (x + 10, 110.0), (x - 10, 110.0))
        return Die(value, (x, 100.0), corners, 0.9, None if value else "not a pip face")

    shown = [die(None, 100.0), die(2, 200.0), die(4, 300.0)]
    assert given_values(shown, None) == [Labelled(0, (100.0, 100.0)), Labelled(2, (200.0, 100.0)),
                                         Labelled(4, (300.0, 100.0))]
    assert given_values(shown, [5, None, 0]) == [Labelled(5, (100.0, 100.0)),
                                                 Labelled(0, (300.0, 100.0))]
    for wrong in ([1, 2], [1, 2, 7], [1, 2, 3, 4]):
        with pytest.raises(ValueError, match="3 answers"):
            given_values(shown, wrong)
    # A die the reading missed, added: labelled where it lies, after the dice shown.
    assert given_values(shown, [5, None, 0], [(150.0, 40.5, 3), (20, 30, 0)]) == [
        Labelled(5, (100.0, 100.0)), Labelled(0, (300.0, 100.0)), Labelled(3, (150.0, 40.5)),
        Labelled(0, (20.0, 30.0))]
    assert given_values(shown, None, [(150.0, 40.5, 6)])[-1] == Labelled(6, (150.0, 40.5))
    for bad in ((1.0, 2.0), (1.0, 2.0, 7), (1.0, 2.0, None), (float("nan"), 2.0, 1),
                ("1", 2.0, 1)):
        with pytest.raises(ValueError, match="added"):
            given_values(shown, None, [bad])  # type: ignore[list-item]
    # The page's labeller asks about the reading (here: no die) and counts its questions.
    image = np.full((200, 400, 3), 90, np.uint8)
    asked_about: list[tuple[str, list[Die]]] = []

    def ask(name: str, picture: np.ndarray, dice: list[Die]
            ) -> tuple[None, list[tuple[float, float, int]]]:
        asked_about.append((name, dice))
        return None, [(50.0, 60.0, 2)]  # the reading missed one

    labeller = AskingLabeller(ask)
    assert labeller("throw 1", image, None) == [Labelled(2, (50.0, 60.0))]
    assert asked_about == [("throw 1", [])] and labeller.asked == 1
    drawn = numbered(image, shown)
    assert drawn.shape == image.shape and (drawn != image).any()
    assert (drawn[:80] == image[:80]).all()  # the outlines and numbers only, nothing above
