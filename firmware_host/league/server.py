"""The league board served by waitress in a background thread (`dicetower league serve`,
the demo, the bench, the tests; `firmware_host.waitress_server`): one thread per open live
page, the pool sized for a bar's phones.
"""

from __future__ import annotations

from typing import Any

from flask import Flask

from firmware_host import waitress_server

LIVE_PAGES = 100


def make_server(app: Flask, host: str, port: int) -> Any:
    return waitress_server.make_server(app, host, port, live_pages=LIVE_PAGES,
                                       ident="dicetower-league")


class BoardServer(waitress_server.BackgroundServer):
    """The board in a daemon thread: ``with BoardServer(app) as server: server.url``."""

    def __init__(self, app: Flask, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(app, make_server(app, host, port),
                         app.extensions["dicetower.league"].end_streams, "league-board")
