"""The league board in a phone's headless Chromium: it goes live, follows the league without
a reload, and fits the phone's width."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from firmware_host.league.board import create_app
from firmware_host.league.server import BoardServer
from firmware_host.league.store import LeagueStore
from tests.test_league_store import _feed, _game_actions

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
PHONE = {"width": 390, "height": 844, "pixelRatio": 2}
WAIT = 10  # seconds at most; an update takes milliseconds


@pytest.fixture
def phone() -> Iterator[object]:
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
                     "--disable-dev-shm-usage", "--no-first-run",
                     "--disable-background-networking", f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": PHONE})
        driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)),
                                  options=options)
        driver.set_page_load_timeout(WAIT)
        try:
            yield driver
        finally:
            driver.quit()


def test_the_board_is_live_on_a_phone(tmp_path, phone) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    store = LeagueStore(tmp_path / "league.sqlite3")
    actions = _game_actions(4, ["Ana", "Ben", "Cleo"])
    for tower in ("bar-1", "bar-2", "bar-3"):
        _feed(store, tower, actions[:10])
    with BoardServer(create_app(store)) as server:
        phone.get(server.url + "?lang=en")
        wait = WebDriverWait(phone, WAIT)
        wait.until(lambda d: d.find_element("id", "conn").get_attribute("data-state") == "live")
        assert len(phone.find_elements("css selector", ".table")) == 3
        _feed(store, "bar-2", actions[10:])  # the game goes on to its end
        wait.until(lambda d: "game over" in d.find_element(
            "css selector", '[data-tower="bar-2"]').text)
        rows = phone.find_elements("css selector", "#standings tbody tr")
        assert len(rows) == 3
        assert phone.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth")
    store.close()
