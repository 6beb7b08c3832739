"""The read-only JSON API: state, history, live events, the camera frame, the session."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify, request

from firmware_host.hub.ports import HubAccess
from firmware_host.rules import KNOBS, PRESETS
from firmware_host.scoreboard.auth import is_admin
from firmware_host.scoreboard.errors import ApiError
from firmware_host.scoreboard.sse import CLIENT_FULL, ClientLimit, StateStream
from firmware_host.web_guard import csrf_token

api = Blueprint("api", __name__, url_prefix="/api")


def get_hub() -> HubAccess:
    """The game's hub this application shows (handed to `create_app`)."""
    return current_app.extensions["dicetower.hub"]


def _no_store(response: Response) -> Response:
    response.headers["Cache-Control"] = "no-store"
    return response


def odds_shown() -> bool:
    """Whether this request gets the odds advice: always under ``SCOREBOARD_ODDS = public``,
    only in a session unlocked with the game master's PIN under ``admin-only``."""
    return current_app.config["SCOREBOARD_ODDS"] == "public" or is_admin()


@api.get("/state")
def state() -> Response:
    version, text = get_hub().snapshot_json(odds=odds_shown())
    response = current_app.response_class(text, mimetype="application/json")
    response.headers["ETag"] = f'"{version}"'
    return _no_store(response)


@api.get("/history")
def history() -> Response:
    return _no_store(jsonify(get_hub().history()))


@api.get("/game")
def game() -> Response:
    """The whole game as the engine serialises it: enough to rebuild it elsewhere."""
    data = get_hub().game_json()
    if data is None:
        raise ApiError(404, "no_game", "no_game")
    return _no_store(jsonify(data))


@api.get("/presets")
def presets() -> Response:
    return jsonify({"presets": PRESETS, "knobs": {k: list(v) for k, v in KNOBS.items()}})


@api.get("/session")
def session_info() -> Response:
    """The CSRF token to send with every POST, and whether the PIN unlocked this session."""
    return _no_store(jsonify({"csrf": csrf_token(), "admin": is_admin()}))


@api.get("/frame.jpg")
def frame() -> Response:
    latest = get_hub().frame()
    if latest is None:
        raise ApiError(404, "no_frame", "no_frame")
    version, jpeg = latest
    response = current_app.response_class(jpeg, mimetype="image/jpeg")
    response.headers["ETag"] = f'"frame-{version}"'
    return _no_store(response)


@api.get("/events")
def events() -> Response:
    limit: ClientLimit = current_app.extensions["dicetower.sse_limit"]
    client = request.remote_addr or "unknown"
    keepalive = float(current_app.config["SSE_KEEPALIVE"])
    poll = float(current_app.config["SSE_DISCONNECT_POLL"])
    refused = limit.acquire(client)
    if refused == CLIENT_FULL:
        raise ApiError(
            503, "too_many_streams",
            "too_many_streams", headers={"Retry-After": "10"}, most=limit.per_client,
        )
    if refused is not None:
        raise ApiError(
            503, "too_many_clients", "too_many_clients", headers={"Retry-After": "10"},
            most=limit.maximum,
        )
    stream = StateStream(
        get_hub(),
        limit,
        request.headers.get("Last-Event-ID"),
        keepalive,
        client=client,
        # Waitress sets this (see server.py); other servers leave it to the keep-alive writes.
        disconnected=request.environ.get("waitress.client_disconnected"),
        poll=poll,
        odds=odds_shown(),
    )
    response = Response(stream, mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache, no-store"
    response.headers["X-Accel-Buffering"] = "no"  # no proxy buffering when one is in front
    return response
