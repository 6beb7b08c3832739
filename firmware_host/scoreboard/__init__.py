"""The scoreboard: a Flask application showing the game live on every phone in the bar.

`create_app(config=None, hub=None, *, tower=None)` builds it around the game's hub
(`firmware_host.hub.GameHub`) and the running tower, if any; `serve_app` runs it with
waitress. Imported lazily so that the command line stays quick to start.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app", "serve_app"]


def __getattr__(name: str) -> Any:
    # Flask and waitress load with the first use, not with the package (which the command
    # line's benchmarks import at start).
    if name == "create_app":
        from firmware_host.scoreboard.app import create_app

        return create_app
    if name == "serve_app":
        from firmware_host.scoreboard.server import serve_app

        return serve_app
    raise AttributeError(name)
