"""`dicetower serve` stops on the first Ctrl+C once it says "Ctrl+C to stop"."""

from __future__ import annotations

import os
import signal

import pytest

from firmware_host.hub import GameHub
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.server import make_server, run_until_stopped


def test_ready_is_said_only_once_ctrl_c_stops_the_server() -> None:
    app = create_app({"TESTING": True}, hub=GameHub())
    server = make_server(app, "127.0.0.1", 0)
    before = signal.getsignal(signal.SIGINT)
    # A process started in the background inherits SIGINT ignored: only the server's own
    # handler, set before "ready", makes Ctrl+C stop it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    seen = []

    def ready() -> None:
        seen.append(signal.getsignal(signal.SIGINT))
        os.kill(os.getpid(), signal.SIGINT)  # the installer's Ctrl+C, at once

    try:
        with pytest.raises(KeyboardInterrupt):
            run_until_stopped(app, server, ready=ready)
        assert seen and seen[0] not in (signal.SIG_IGN, signal.SIG_DFL)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # put back as it was
    finally:
        signal.signal(signal.SIGINT, before)
        server.close()
