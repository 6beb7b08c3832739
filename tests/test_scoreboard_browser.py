"""The scoreboard in a real browser: headless Chromium at a phone's size, live over SSE.

Screenshots go to artifacts/ at the repository root (git-ignored), for people to look at.
"""

from __future__ import annotations

import base64
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware_host.hub import GameHub
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.server import BackgroundServer

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
PIN = "2468"
PHONE = {"width": 390, "height": 844, "pixelRatio": 2}
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
WAIT = 10  # seconds; the update itself takes milliseconds


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip(
            f"headless browser tests need {CHROMIUM} and {CHROMEDRIVER} "
            "(Debian: apt install chromium chromium-driver, or run tools/install-browser.sh)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory(prefix="dicetower-chromium-") as profile:
        options = Options()
        options.binary_location = str(CHROMIUM)
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": PHONE})
        driver = webdriver.Chrome(
            service=Service(executable_path=str(CHROMEDRIVER)), options=options
        )
        driver.set_page_load_timeout(WAIT)
        try:
            yield driver
        finally:
            driver.quit()


@pytest.fixture
def store() -> GameHub:
    store = GameHub()
    store.start_game("tim-11", ["Ana", "Ben", "Cleo"])
    return store


@pytest.fixture
def server(store: GameHub) -> Iterator[BackgroundServer]:
    app = create_app({"SCOREBOARD_PIN": PIN}, hub=store)
    with BackgroundServer(app) as running:
        yield running


def wait_for(driver: object, condition: object, message: str) -> object:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT).until(condition, message)


def text_of(driver: object, element_id: str) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, element_id).text  # type: ignore[attr-defined]


def save_screenshots(driver: object, name: str) -> Path:
    """What the phone shows (viewport), and the whole page as one tall image."""
    ARTIFACTS.mkdir(exist_ok=True)
    driver.execute_script("window.scrollTo(0, 0)")  # type: ignore[attr-defined]
    viewport = ARTIFACTS / f"scoreboard-{name}.png"
    driver.save_screenshot(str(viewport))  # type: ignore[attr-defined]
    full = driver.execute_cdp_cmd(  # type: ignore[attr-defined]
        "Page.captureScreenshot", {"captureBeyondViewport": True, "fromSurface": True}
    )
    (ARTIFACTS / f"scoreboard-{name}-full.png").write_bytes(base64.b64decode(full["data"]))
    return viewport


def test_phone_sees_the_state_and_a_live_update(
    browser: object, server: BackgroundServer, store: GameHub
) -> None:
    driver = browser
    driver.get(server.url + "?lang=fr")  # type: ignore[attr-defined]
    wait_for(driver, lambda d: "live" in text_of(d, "conn") or "direct" in text_of(d, "conn"),
             "the live stream never opened")
    assert "Ana" in text_of(driver, "players") and "Cleo" in text_of(driver, "players")
    assert "désigner qui commence" in text_of(driver, "banner")
    assert text_of(driver, "no-camera") == "pas de caméra"
    width = driver.execute_script("return document.documentElement.scrollWidth")  # type: ignore[attr-defined]
    assert width <= PHONE["width"], "the page scrolls sideways on a phone"
    # A marker that a reload would wipe out.
    driver.execute_script("window.notReloaded = true")  # type: ignore[attr-defined]

    for faces in ([3], [5], [2], [4, 2, 1], [2, 2, 1]):
        store.apply({"type": "throw", "faces": faces})
    wait_for(driver, lambda d: "Ben" in text_of(d, "banner"), "the update never arrived")
    assert driver.execute_script("return window.notReloaded === true")  # type: ignore[attr-defined]
    dice = driver.execute_script(  # type: ignore[attr-defined]
        "return [...document.querySelectorAll('#dice svg.die')]"
        ".map(d => d.getAttribute('aria-label'))"
    )
    assert dice == ["2", "2", "1"]
    assert "421" in text_of(driver, "round") and "221" in text_of(driver, "round")
    path = save_screenshots(driver, "phone")
    # History and statistics, folded by default.
    from selenium.webdriver.common.by import By

    driver.find_element(By.CSS_SELECTOR, "#history-card summary").click()  # type: ignore[attr-defined]
    driver.find_element(By.CSS_SELECTOR, "#stats-card summary").click()  # type: ignore[attr-defined]
    wait_for(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#history li")) == 5,
             "the history did not load")
    assert "4 2 1" in text_of(driver, "history")
    stats_rows = driver.find_elements(By.CSS_SELECTOR, "#stats tr")  # type: ignore[attr-defined]
    assert [row.text.split() for row in stats_rows[1:]] == [
        ["Ana", "2", "1", "0", "1"],
        ["Ben", "1", "0", "0", "0"],
        ["Cleo", "2", "1", "1", "0"],
    ]
    save_screenshots(driver, "phone-history")
    assert path.stat().st_size > 10_000
    # Ben's coup sec ends the round: the nénette pays 2 (tim-11), said in one line.
    store.apply({"type": "throw", "faces": [6, 5, 2]})
    wait_for(driver, lambda d: "perd avec" in text_of(d, "last-round"), "no round summary")
    summary = text_of(driver, "last-round")
    assert "Ana perd avec 221 (2 jetons)" in summary and "Cleo gagne avec 421" in summary
    assert "2 jetons" in driver.find_elements(By.CSS_SELECTOR, "#players li")[0].text  # type: ignore[attr-defined]


def test_page_reconnects_by_itself_and_catches_up(browser: object, store: GameHub) -> None:
    """The tower's server goes away (like a phone losing Wi-Fi), a throw happens meanwhile."""
    app = create_app({"SCOREBOARD_PIN": PIN}, hub=store)
    first = BackgroundServer(app).start()
    port = int(first.url.rstrip("/").rsplit(":", 1)[1])
    driver = browser
    try:
        driver.get(first.url + "?lang=fr")  # type: ignore[attr-defined]
        wait_for(driver, lambda d: text_of(d, "conn") == "en direct", "never live")
        driver.execute_script("window.notReloaded = true")  # type: ignore[attr-defined]
    finally:
        first.stop()
    wait_for(driver, lambda d: text_of(d, "conn") != "en direct", "the drop went unnoticed")
    store.apply({"type": "throw", "faces": [3]})
    with BackgroundServer(app, port=port):
        wait_for(driver, lambda d: "Ben" in text_of(d, "banner"), "no catch-up after reconnecting")
        assert text_of(driver, "conn") == "en direct"
        assert driver.execute_script("return window.notReloaded === true")  # type: ignore[attr-defined]


def test_game_master_enters_a_throw_by_hand(
    browser: object, server: BackgroundServer, store: GameHub
) -> None:
    from selenium.webdriver.common.by import By

    driver = browser
    driver.get(server.url + "admin?lang=en")  # type: ignore[attr-defined]
    driver.find_element(By.ID, "pin").send_keys(PIN)  # type: ignore[attr-defined]
    driver.find_element(By.CSS_SELECTOR, "#login-form button").click()  # type: ignore[attr-defined]
    wait_for(driver, lambda d: d.find_element(By.ID, "controls").is_displayed(),
             "the PIN did not unlock the controls")
    # Ana's opening die: one face button row, then "Throw".
    assert driver.find_element(By.ID, "dice-count").get_attribute("value") == "1"  # type: ignore[attr-defined]
    driver.find_element(  # type: ignore[attr-defined]
        By.CSS_SELECTOR, '#face-rows button.face[data-face="3"]'
    ).click()
    driver.find_element(By.ID, "btn-throw").click()  # type: ignore[attr-defined]
    wait_for(driver, lambda d: store.snapshot()["history_length"] == 1, "the throw was not sent")
    assert store.history()["entries"][0]["event"] == {"type": "throw", "faces": [3]}
    wait_for(driver, lambda d: "Ben" in text_of(d, "banner"), "the page did not follow")
    # A camera reading with an unsure die: its likely values come first in the correction.
    store.publish_reading(_tiny_jpeg(), [{"value": 3, "confidence": 0.55, "alternatives": [5]}])
    wait_for(driver, lambda d: d.find_element(By.ID, "frame").is_displayed(), "no camera image")
    order = driver.execute_script(  # type: ignore[attr-defined]
        "return [...document.querySelectorAll('#correct-rows button.face')]"
        ".map(b => +b.dataset.face)"
    )
    assert order[:2] == [3, 5] and sorted(order) == [1, 2, 3, 4, 5, 6]
    save_screenshots(driver, "game-master")
    # A new game of 4D with a house rule, from the form.
    from selenium.webdriver.support.ui import Select

    driver.find_element(By.CSS_SELECTOR, "#new-game > summary").click()  # type: ignore[attr-defined]
    Select(driver.find_element(By.ID, "preset")).select_by_value("4d")  # type: ignore[attr-defined]
    driver.find_element(By.ID, "players-input").send_keys("Zoé\nYann")  # type: ignore[attr-defined]
    driver.find_element(By.CSS_SELECTOR, "#new-game-form .knobs > summary").click()  # type: ignore[attr-defined]
    target = driver.find_element(By.CSS_SELECTOR, '[data-knob="target"]')  # type: ignore[attr-defined]
    target.clear()
    target.send_keys("50")
    driver.find_element(By.CSS_SELECTOR, "#new-game-form button[type=submit]").click()  # type: ignore[attr-defined]
    wait_for(driver, lambda d: (store.snapshot()["game"] or {}).get("game") == "4d",
             "the new game did not start")
    game = store.snapshot()["game"]
    assert [p["name"] for p in game["players"]] == ["Zoé", "Yann"] and game["target"] == 50


def test_four_dice_square(browser: object, server: BackgroundServer, store: GameHub) -> None:
    store.start_game("4d", ["Ana", "Ben"])
    store.apply({"type": "throw", "faces": [1, 2, 3, 4]})
    driver = browser
    driver.get(server.url + "?lang=fr")  # type: ignore[attr-defined]
    wait_for(driver, lambda d: d.find_element("id", "square-card").is_displayed(),
             "the 4D square is not shown")
    locked = driver.execute_script(  # type: ignore[attr-defined]
        "return document.querySelectorAll('#square svg.die.locked').length"
    )
    assert locked == 1
    save_screenshots(driver, "4d")


def test_game_master_turns_a_4d_die_and_the_square(
    browser: object, server: BackgroundServer, store: GameHub
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    store.start_game("4d", ["Ana", "Ben"])
    store.apply({"type": "throw", "faces": [1, 2, 3, 4]})
    driver = browser
    driver.get(server.url + "admin?lang=fr")  # type: ignore[attr-defined]
    if driver.find_element(By.ID, "login-form").is_displayed():  # type: ignore[attr-defined]
        driver.find_element(By.ID, "pin").send_keys(PIN)  # type: ignore[attr-defined]
        driver.find_element(By.CSS_SELECTOR, "#login-form button").click()  # type: ignore[attr-defined]
    wait_for(driver, lambda d: d.find_element(By.ID, "btn-turn").is_displayed(),
             "no turn button for 4D")
    # Ana threw: she may present the square, and Ben, her opponent, moves first. The rows
    # start from the dice as they lie, labelled with their role for Ben.
    assert driver.find_element(By.ID, "present-row").is_displayed()  # type: ignore[attr-defined]
    chosen = driver.execute_script(  # type: ignore[attr-defined]
        "return [...document.querySelectorAll('#face-rows button.face.chosen')]"
        ".map(b => +b.dataset.face)"
    )
    assert chosen == [1, 2, 3, 4]
    labels = text_of(driver, "face-rows")
    assert "près" in labels and "bloqué" in labels
    # Ben turns his left die (position 1) from 2 to 1 and turns the square anticlockwise.
    driver.find_element(  # type: ignore[attr-defined]
        By.CSS_SELECTOR, '#face-rows button.face[data-row="1"][data-face="1"]'
    ).click()
    Select(driver.find_element(By.ID, "rotate")).select_by_value("ccw")  # type: ignore[attr-defined]
    driver.find_element(By.ID, "btn-turn").click()  # type: ignore[attr-defined]
    wait_for(driver, lambda d: store.snapshot()["history_length"] == 2, "the turn was not sent")
    assert store.history()["entries"][1]["event"] == {
        "type": "turn", "faces": [1, 1, 3, 4], "rotate": "ccw"
    }
    # Anticlockwise: Ana faces position 3, and the page shows the move without reloading.
    assert store.snapshot()["game"]["square"]["near"]["pos"] == 3
    assert store.snapshot()["game"]["last_move"]["player"] == 1
    wait_for(driver, lambda d: "antihoraire" in text_of(d, "last-move"), "no last move shown")
    assert "Ana" in text_of(driver, "banner")
    assert not driver.find_element(By.ID, "present-row").is_displayed()  # type: ignore[attr-defined]
    save_screenshots(driver, "4d-game-master")
    # The square was turned the other way: the correction offers the rotation too.
    rotation = Select(driver.find_element(By.ID, "correct-rotate"))  # type: ignore[attr-defined]
    assert rotation.first_selected_option.get_attribute("value") == "ccw"
    rotation.select_by_value("cw")
    driver.find_element(By.ID, "btn-correct").click()  # type: ignore[attr-defined]
    wait_for(driver, lambda d: store.snapshot()["game"]["square"]["near"]["pos"] == 1,
             "the rotation was not corrected")
    assert store.snapshot()["last_input"]["faces"] == [1, 1, 3, 4]
    # 4D statistics: throws and scoring moves, no 421 or nénette columns.
    driver.find_element(By.CSS_SELECTOR, "#stats-card summary").click()  # type: ignore[attr-defined]
    rows = [r.text for r in driver.find_elements(By.CSS_SELECTOR, "#stats tr")]  # type: ignore[attr-defined]
    assert rows[0].split() == ["lancers", "coups", "qui", "marquent"]
    assert rows[1].split() == ["Ana", "1", "0"] and rows[2].split() == ["Ben", "1", "1"]


def _tiny_jpeg() -> bytes:
    """A real JPEG (a green tray with one outlined die), made without any file."""
    import cv2
    import numpy as np

    image = np.full((240, 320, 3), (40, 90, 40), np.uint8)
    cv2.rectangle(image, (130, 90), (190, 150), (250, 250, 250), -1)
    cv2.rectangle(image, (126, 86), (194, 154), (0, 200, 255), 3)
    cv2.putText(image, "3", (196, 86), cv2.FONT_HERSHEY_SIMPLEX, 1, (0, 200, 255), 2)
    ok, data = cv2.imencode(".jpg", image)
    assert ok
    return data.tobytes()


if os.environ.get("DICETOWER_NO_BROWSER"):
    pytestmark = [pytest.mark.browser, pytest.mark.skip("DICETOWER_NO_BROWSER is set")]
