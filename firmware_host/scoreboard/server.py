"""Running the scoreboard with waitress, in the foreground or in a background thread
(`firmware_host.waitress_server`: the pool sized from ``SSE_MAX_CLIENTS``)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

from flask import Flask

from firmware_host import waitress_server


def make_server(app: Flask, host: str = "0.0.0.0", port: int = 8000, **adjustments: Any) -> Any:
    """A waitress server for `app`, bound but not running yet (port 0: any free port)."""
    return waitress_server.make_server(app, host, port, ident="dicetower",
                                       live_pages=int(app.config["SSE_MAX_CLIENTS"]),
                                       **adjustments)


def serve_app(app: Flask, host: str = "0.0.0.0", port: int = 8000) -> None:
    """Serve `app` until Ctrl+C or SIGTERM."""
    run_until_stopped(app, make_server(app, host, port))


def run_until_stopped(app: Flask, server: Any, ready: Callable[[], None] | None = None
                      ) -> None:
    """Run a server from `make_server` until Ctrl+C or SIGTERM, then stop cleanly.

    Live streams sleep between events, so they are woken (`end_streams`) before waitress
    waits for its threads; otherwise stopping would hang until their next keep-alive.
    ``ready`` is called once the signals are handled (to say "Ctrl+C to stop" only when it
    does: a process started in the background inherits SIGINT ignored until then).
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
        if ready is not None:
            ready()
        server.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        hub.end_streams()


class BackgroundServer(waitress_server.BackgroundServer):
    """The scoreboard served from a daemon thread, e.g. next to the camera loop or in tests.

    ``with BackgroundServer(app) as server: urlopen(server.url + "api/state")``
    """

    def __init__(self, app: Flask, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(app, make_server(app, host, port),
                         app.extensions["dicetower.hub"].end_streams, "scoreboard")
