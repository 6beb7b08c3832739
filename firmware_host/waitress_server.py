"""A Flask app served by waitress from a daemon thread: the scoreboard beside the camera
loop, the league board beside its broker client, both in tests.

Each open live page (SSE) holds one waitress thread for as long as it stays open, so the
pool is sized from the live pages allowed, with a few spare threads for ordinary requests.
Waitress flushes every write at once (``send_bytes`` is 1 by default), so each event leaves
as soon as the stream yields it. Channels stay readable while a request runs
(``channel_request_lookahead``), so waitress sees a client close its connection at once and
``waitress.client_disconnected`` turns true: a live stream then ends and frees its thread
and its slot without waiting for a write to fail.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from flask import Flask
from waitress import create_server, wasyncore

SPARE_THREADS = 8
POLL_SECONDS = 0.1  # how long `BackgroundServer.stop` may wait for the poll loop


def make_server(app: Flask, host: str, port: int, *, live_pages: int, ident: str,
                **adjustments: Any) -> Any:
    """A waitress server for ``app``, bound but not running yet (port 0: any free port)."""
    threads = live_pages + SPARE_THREADS
    options: dict[str, Any] = {
        "threads": threads,
        "connection_limit": threads + 50,
        "ident": ident,
        "clear_untrusted_proxy_headers": True,
        "channel_request_lookahead": 1,  # see the module docstring
    }
    options.update(adjustments)
    return create_server(app, host=host, port=port, **options)


class BackgroundServer:
    """A server from `make_server` polled in a daemon thread; ``end_streams`` wakes the app's
    live streams, which sleep between events, so that stopping does not wait for them.

    ``with Subclass(app) as server: urlopen(server.url + "api/state")``
    """

    def __init__(self, app: Flask, server: Any, end_streams: Callable[[], None],
                 name: str) -> None:
        self.app = app
        self._server = server
        self._end_streams = end_streams
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def _loop(self) -> None:
        # waitress's own `run` polls until its socket map is empty; sockets may only be
        # closed by the thread that polls them, so this loop checks for `stop` between polls.
        server = self._server
        while not self._stopping.is_set():
            wasyncore.loop(timeout=POLL_SECONDS, map=server._map,
                           use_poll=server.adj.asyncore_use_poll, count=1)
        wasyncore.close_all(server._map)

    @property
    def port(self) -> int:
        """The port really served (the one asked for, or the free one picked for 0)."""
        return int(self._server.effective_port)

    @property
    def url(self) -> str:
        host = self._server.effective_host
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.port}/"

    def start(self) -> BackgroundServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the live streams, then the server; returns once its threads have finished."""
        self._end_streams()
        # Worker threads finish their responses while the loop still runs (they signal it),
        # then the loop closes every socket from its own thread.
        self._server.task_dispatcher.shutdown(timeout=2)
        self._stopping.set()
        self._thread.join(timeout=5)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
