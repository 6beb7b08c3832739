"""The league board in a phone's headless Chromium: it goes live, follows the league without
a reload, and fits the phone's width."""

from __future__ import annotations

import pytest
from test_scoreboard_browser import browser  # noqa: F401 (a fixture)

from firmware_host.league.board import create_app
from firmware_host.league.server import BoardServer
from firmware_host.league.store import LeagueStore
from tests.test_league_store import _feed, _game_actions

pytestmark = pytest.mark.browser

WAIT = 10  # seconds at most; an update takes milliseconds


@pytest.fixture
def phone(browser: object) -> object:  # noqa: F811 (the fixture imported above)
    return browser  # the scoreboard's headless Chromium, a phone's screen


def test_the_board_is_live_on_a_phone(tmp_path, phone) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    store = LeagueStore(tmp_path / "league.sqlite3")
    actions = _game_actions(4, ["Ana", "Ben", "Cleo"])
    for tower in ("bar-1", "bar-2", "bar-3"):
        _feed(store, tower, actions[:10])
    with BoardServer(create_app(store)) as server:
        phone.get(server.url + "?lang=en")
        # The board redraws a table when it changes: an element found a moment ago may be gone.
        wait = WebDriverWait(phone, WAIT, ignored_exceptions=(StaleElementReferenceException,))
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
