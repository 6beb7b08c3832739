"""The league board served by waitress, in a background thread (the demo, the bench, the
tests) or in the foreground until Ctrl-C (`dicetower league serve`).

Each open live page holds one waitress thread while it stays open: the pool is sized for a
bar's phones and a few spare threads for ordinary requests.
"""

from __future__ import annotations

import threading
from typing import Any

from flask import Flask
from waitress import create_server, wasyncore

LIVE_PAGES = 100
SPARE_THREADS = 8


def make_server(app: Flask, host: str, port: int) -> Any:
    threads = LIVE_PAGES + SPARE_THREADS
    return create_server(app, host=host, port=port, threads=threads,
                         connection_limit=threads + 50, ident="dicetower-league",
                         clear_untrusted_proxy_headers=True, channel_request_lookahead=1)


class BoardServer:
    """The board in a daemon thread: ``with BoardServer(app) as server: server.url``."""

    def __init__(self, app: Flask, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self._server = make_server(app, host, port)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="league-board", daemon=True)

    def _loop(self) -> None:
        # Sockets may only be closed by the thread that polls them: stop is checked between
        # polls, then that thread closes them all.
        server = self._server
        while not self._stopping.is_set():
            wasyncore.loop(timeout=0.1, map=server._map, use_poll=server.adj.asyncore_use_poll,
                           count=1)
        wasyncore.close_all(server._map)

    @property
    def port(self) -> int:
        return int(self._server.effective_port)

    @property
    def url(self) -> str:
        return f"http://{self._server.effective_host}:{self.port}/"

    def start(self) -> BoardServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the live streams, then the server."""
        self.app.extensions["dicetower.league"].end_streams()
        self._server.task_dispatcher.shutdown(timeout=2)
        self._stopping.set()
        self._thread.join(timeout=5)

    def __enter__(self) -> BoardServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
