"""Running the scoreboard with waitress, in the foreground or in a background thread.

Each open live page holds one waitress thread for as long as it stays open, so the thread
pool is sized from ``SSE_MAX_CLIENTS`` with a few spare threads for ordinary requests.
Waitress flushes every write at once (``send_bytes`` is 1 by default), so each event leaves
as soon as the stream yields it.

Channels stay readable while a request runs (``channel_request_lookahead``), so waitress sees a
client close its connection at once and ``waitress.client_disconnected`` turns true: a live
stream then ends and frees its thread and its slot without waiting for a write to fail.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from flask import Flask
from waitress import create_server, wasyncore

SPARE_THREADS = 8
POLL_SECONDS = 0.1  # how long `BackgroundServer.stop` may wait for the poll loop


def make_server(app: Flask, host: str = "0.0.0.0", port: int = 8000, **adjustments: Any) -> Any:
    """A waitress server for `app`, bound but not running yet (port 0: any free port)."""
    threads = int(app.config["SSE_MAX_CLIENTS"]) + SPARE_THREADS
    options: dict[str, Any] = {
        "threads": threads,
        "connection_limit": threads + 50,
        "ident": "dicetower",
        "clear_untrusted_proxy_headers": True,
        "channel_request_lookahead": 1,  # see the module docstring
    }
    options.update(adjustments)
    return create_server(app, host=host, port=port, **options)


def serve_app(app: Flask, host: str = "0.0.0.0", port: int = 8000) -> None:
    """Serve `app` until Ctrl+C or SIGTERM."""
    run_until_stopped(app, make_server(app, host, port))


def run_until_stopped(app: Flask, server: Any) -> None:
    """Run a server from `make_server` until Ctrl+C or SIGTERM, then stop cleanly.

    Live streams sleep between events, so they are woken (`end_streams`) before waitress
    waits for its threads; otherwise stopping would hang until their next keep-alive.
    """
    hub = app.extensions["dicetower.hub"]

    def stop(signum: int, frame: object) -> None:
        hub.end_streams()
        raise KeyboardInterrupt  # waitress's loop ends on it and shuts its threads down

    # Signal handlers can only be set from the main thread; elsewhere, stop via the hub.
    in_main = threading.current_thread() is threading.main_thread()
    signals = (signal.SIGINT, signal.SIGTERM) if in_main else ()
    previous = {sig: signal.signal(sig, stop) for sig in signals}
    try:
        server.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        hub.end_streams()


class BackgroundServer:
    """The scoreboard served from a daemon thread, e.g. next to the camera loop or in tests.

    ``with BackgroundServer(app) as server: urlopen(server.url + "api/state")``
    """

    def __init__(self, app: Flask, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self._server = make_server(app, host, port)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="scoreboard", daemon=True)

    def _loop(self) -> None:
        # waitress's own `run` polls until its socket map is empty; sockets may only be
        # closed by the thread that polls them, so this loop checks for `stop` between polls.
        server = self._server
        while not self._stopping.is_set():
            wasyncore.loop(
                timeout=POLL_SECONDS, map=server._map, use_poll=server.adj.asyncore_use_poll,
                count=1,
            )
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
        self.app.extensions["dicetower.hub"].end_streams()
        # Worker threads finish their responses while the loop still runs (they signal it),
        # then the loop closes every socket from its own thread.
        self._server.task_dispatcher.shutdown(timeout=2)
        self._stopping.set()
        self._thread.join(timeout=5)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
