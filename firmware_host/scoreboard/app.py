"""The scoreboard's Flask application factory: blueprints over the hub and the tower it is given.

The pages never hold the game: they read the hub's snapshots, wait for its changes and submit
the game master's inputs through `firmware_host.hub.ports.HubAccess`, and ask the running
tower (if any) for what only it can do through `TowerActions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask

from firmware_host.hub import GameHub
from firmware_host.hub.ports import HubAccess, LeagueSeat, TowerActions
from firmware_host.scoreboard.admin import admin
from firmware_host.scoreboard.api import api
from firmware_host.scoreboard.auth import FailureLimiter, check_pin
from firmware_host.scoreboard.calibration_api import calibration_api
from firmware_host.scoreboard.errors import register_error_handlers
from firmware_host.scoreboard.i18n import DEFAULT_LANGUAGE, init_languages
from firmware_host.scoreboard.odds import DEFAULT_ODDS_MODE, OddsService, check_odds_mode
from firmware_host.scoreboard.pages import pages
from firmware_host.scoreboard.sse import ClientLimit
from firmware_host.web_guard import generate_pin, guard

DEFAULTS: dict[str, Any] = {
    "SCOREBOARD_PIN": None,  # None: a random 6-digit PIN, read it from app.config
    "SCOREBOARD_LANG": DEFAULT_LANGUAGE,
    "SCOREBOARD_PUBLIC_URL": None,  # the URL in the QR code; None: the one the page came from
    "SCOREBOARD_LEAGUE_URL": None,  # the league board's address, for its QR code (or None)
    "SCOREBOARD_HOSTNAME": None,  # shown beside the QR code; None: this machine's hostname
    "SCOREBOARD_ODDS": DEFAULT_ODDS_MODE,  # who sees the odds advice: public or admin-only
    "SSE_MAX_CLIENTS": 100,  # each open page holds one server thread
    "SSE_MAX_PER_CLIENT": 8,  # streams open at once from one address
    "SSE_KEEPALIVE": 15.0,  # seconds between keep-alive comments
    "SSE_DISCONNECT_POLL": 0.5,  # seconds between checks that a stream's client is still there
    "LOGIN_MAX_FAILURES": 5,  # wrong PINs in a row from one address before it must wait
    "LOGIN_LOCKOUT": 5.0,  # seconds of the first wait, doubled with each further wrong PIN
    "LOGIN_MAX_LOCKOUT": 300.0,  # the longest wait
    "LOGIN_WINDOW": 300.0,  # seconds without a wrong PIN after which an address starts afresh
    "SESSION_COOKIE_HTTPONLY": True,
    "SESSION_COOKIE_SAMESITE": "Strict",
    "MAX_CONTENT_LENGTH": 16 * 1024,  # every admin request is a few hundred bytes
    "SEND_FILE_MAX_AGE_DEFAULT": 3600,
}

def create_app(
    config: Mapping[str, Any] | None = None,
    hub: HubAccess | None = None,
    *,
    tower: TowerActions | None = None,
    league: LeagueSeat | None = None,
) -> Flask:
    """Build the scoreboard application around `hub` (a new, empty `GameHub` by default).

    `config` overrides `DEFAULTS` and Flask's own settings (``SECRET_KEY``, ``TESTING``...).
    `tower` is the running tower, if any: without one (``dicetower serve`` alone) the
    game master's tower actions answer 409. `league`: the tower's seat in a league (the match
    the league offers it), if it is in one.
    Raises ValueError for a ``SCOREBOARD_PIN`` that is not a PIN (see `auth.check_pin`) and
    for a ``SCOREBOARD_ODDS`` that is not one of `odds.ODDS_MODES`.
    """
    app = Flask(__name__)
    app.config.from_mapping(DEFAULTS)
    if config:
        app.config.from_mapping(config)
    guard(app)
    if app.config["SCOREBOARD_PIN"] is None:
        app.config["SCOREBOARD_PIN"] = generate_pin()
    try:
        app.config["SCOREBOARD_PIN"] = check_pin(app.config["SCOREBOARD_PIN"])
    except ValueError as err:
        raise ValueError(f"SCOREBOARD_PIN: {err}") from None

    app.config["SCOREBOARD_ODDS"] = check_odds_mode(app.config["SCOREBOARD_ODDS"])

    app.extensions["dicetower.hub"] = hub if hub is not None else GameHub()
    _attach_odds(app, app.extensions["dicetower.hub"])
    app.extensions["dicetower.tower"] = tower
    app.extensions["dicetower.league_seat"] = league
    app.extensions["dicetower.limiter"] = FailureLimiter(
        int(app.config["LOGIN_MAX_FAILURES"]),
        float(app.config["LOGIN_WINDOW"]),
        lockout=float(app.config["LOGIN_LOCKOUT"]),
        max_lockout=float(app.config["LOGIN_MAX_LOCKOUT"]),
    )
    app.extensions["dicetower.sse_limit"] = ClientLimit(
        int(app.config["SSE_MAX_CLIENTS"]), int(app.config["SSE_MAX_PER_CLIENT"])
    )

    init_languages(app)
    app.register_blueprint(api)
    app.register_blueprint(admin)
    app.register_blueprint(calibration_api)
    app.register_blueprint(pages)
    register_error_handlers(app)
    return app


def _attach_odds(app: Flask, hub: HubAccess) -> None:
    """The odds advice, computed once per game version in a worker (see odds.py)."""
    service = OddsService(ready=hub.odds_ready)
    app.extensions["dicetower.odds"] = service
    hub.set_odds_source(service.advice)
