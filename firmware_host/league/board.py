"""The league board: a Flask site over the `LeagueStore`, in the scoreboard's style.

Phone first, French or English (``?lang=``, remembered), every asset served by the league
itself. ``/`` shows every table at a glance (who throws, the hand, tokens, status, offline
tables as such) and the standings, kept live by Server-Sent Events (``/events``: the whole
board, a few kilobytes, at each change); ``/player/NAME`` a player's record and games;
``/join`` lets a player pick their name once; ``/admin`` (the league's PIN) merges two names
and runs a tournament night (`bracket`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import segno
from flask import (
    Blueprint,
    Flask,
    Response,
    abort,
    current_app,
    make_response,
    redirect,
    render_template,
    request,
    session,
    url_for,
)

from firmware_host.league.store import LeagueStore, StreamsEnded
from firmware_host.league.texts import DEFAULT_LANGUAGE, LANGUAGES, labels
from firmware_host.web_guard import csrf_token, generate_pin, guard, pin_matches

DEFAULTS: dict[str, Any] = {
    "LEAGUE_PIN": None,  # None: a random 6-digit PIN, read it from app.config
    "LEAGUE_LANG": DEFAULT_LANGUAGE,
    "LEAGUE_KEEPALIVE": 15.0,  # seconds between keep-alive comments of a live stream
    "LEAGUE_STANDINGS_SHOWN": 30,  # lines of the standings on the live page
    "SESSION_COOKIE_HTTPONLY": True,
    "SESSION_COOKIE_SAMESITE": "Strict",
    "MAX_CONTENT_LENGTH": 16 * 1024,
}
LANGUAGE_COOKIE = "lang"

board = Blueprint("league", __name__)


def create_app(store: LeagueStore, config: Mapping[str, Any] | None = None, *,
               tournament: Any = None) -> Flask:
    """The league's site around ``store``; ``tournament``: a `bracket.TournamentDesk`
    (None: no tournament pages)."""
    app = Flask(__name__)
    app.config.from_mapping(DEFAULTS)
    if config:
        app.config.from_mapping(config)
    guard(app)
    if app.config["LEAGUE_PIN"] is None:
        app.config["LEAGUE_PIN"] = generate_pin()
    app.extensions["dicetower.league"] = store
    snapshots = Snapshots(store, app.config)
    snapshots.tournament = tournament
    app.extensions["dicetower.league.snapshots"] = snapshots
    app.extensions["dicetower.tournament"] = tournament
    app.register_blueprint(board)
    return app


class Snapshots:
    """The board as JSON, made once per version of the store (every stream shares it)."""

    def __init__(self, store: LeagueStore, config: Mapping[str, Any]) -> None:
        self.store = store
        self.shown = int(config["LEAGUE_STANDINGS_SHOWN"])
        self._lock = threading.Lock()
        self._cached: tuple[int, str] | None = None
        self.tournament: Any = None

    def current(self) -> tuple[int, str]:
        version = self.store.version
        with self._lock:
            if self._cached is None or self._cached[0] != version:
                data = {"version": version, "at": time.time(),
                        "tables": self.store.tables(),
                        "standings": self.store.standings()[:self.shown],
                        "refused": len(self.store.refused)}
                if self.tournament is not None:
                    data["tournament"] = self.tournament.view()
                self._cached = (version, json.dumps(data, separators=(",", ":"),
                                                    ensure_ascii=False))
            return self._cached


def _store() -> LeagueStore:
    return current_app.extensions["dicetower.league"]


def _language() -> str:
    for candidate in (request.args.get("lang"), request.cookies.get(LANGUAGE_COOKIE),
                      current_app.config["LEAGUE_LANG"]):
        if candidate in LANGUAGES:
            return candidate
    return DEFAULT_LANGUAGE


def _page(template: str, **values: Any) -> Response:
    language = _language()
    html = render_template(template, lang=language, languages=LANGUAGES,
                           t=labels(language), admin=bool(session.get("admin")),
                           csrf=csrf_token(), **values)
    response = make_response(html)
    response.headers["Cache-Control"] = "no-store"
    if request.args.get("lang") in LANGUAGES:
        response.set_cookie(LANGUAGE_COOKIE, request.args["lang"], max_age=365 * 24 * 3600,
                            samesite="Lax")
    return response


def _check_csrf() -> None:
    if not pin_matches(str(request.form.get("csrf", "")), csrf_token()):
        abort(400)


def _require_admin() -> None:
    _check_csrf()
    if not session.get("admin"):
        abort(403)


@board.get("/")
def home() -> Response:
    preset = request.args.get("preset") or None
    # Inside a <script> element: no "</script>" a player's name could carry may end it.
    snapshot = current_app.extensions["dicetower.league.snapshots"].current()[1].replace(
        "<", "\\u003c")
    presets = sorted({game["preset"] for game in _store().games()})
    return _page("league.html", snapshot=snapshot, presets=presets, preset=preset,
                 standings=_store().standings(preset) if preset else None,
                 tournament=current_app.extensions["dicetower.tournament"])


@board.get("/events")
def events() -> Response:
    snapshots = current_app.extensions["dicetower.league.snapshots"]
    keepalive = float(current_app.config["LEAGUE_KEEPALIVE"])
    last = request.headers.get("Last-Event-ID")
    store = _store()

    def stream() -> Iterator[bytes]:
        yield b"retry: 2000\n\n"
        version, text = snapshots.current()
        if last != str(version):
            yield f"id: {version}\nevent: state\ndata: {text}\n\n".encode()
        while True:
            try:
                changed = store.wait_for_change(version, timeout=keepalive)
            except StreamsEnded:
                return
            if changed is None:
                yield b": keep-alive\n\n"
                continue
            version, text = snapshots.current()
            yield f"id: {version}\nevent: state\ndata: {text}\n\n".encode()

    response = Response(stream(), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"
    return response


@board.get("/api/board")
def board_json() -> Response:
    return Response(current_app.extensions["dicetower.league.snapshots"].current()[1],
                    mimetype="application/json")


@board.get("/player/<path:name>")
def player(name: str) -> Response:
    record = _store().player(name)
    if record["record"] is None and not record["games"]:
        abort(404)
    return _page("player.html", player=record)


@board.route("/join", methods=["GET", "POST"])
def join() -> Response:
    joined = None
    if request.method == "POST":
        _check_csrf()
        name = str(request.form.get("name", ""))[:40]
        try:
            _store().register(name)
            joined = " ".join(name.split())
        except ValueError:
            joined = None
    # The QR code of this page, to print for the tables: a player scans it and picks a name.
    qr = segno.make(request.base_url, error="m").svg_inline(
        scale=4, border=2, dark="#111", light="#fff", svgclass="qr")
    return _page("join.html", joined=joined, qr=qr)


@board.route("/admin", methods=["GET", "POST"])
def admin() -> Response:
    message = None
    if request.method == "POST" and not session.get("admin"):
        _check_csrf()
        if pin_matches(str(request.form.get("pin", "")), str(current_app.config["LEAGUE_PIN"])):
            session["admin"] = True
        else:
            message = labels(_language())["wrong_pin"]
    return _page("admin.html", message=message, refused=_store().refused[-20:],
                 tournament=current_app.extensions["dicetower.tournament"])


@board.post("/admin/merge")
def merge() -> Response:
    _require_admin()
    source, target = str(request.form.get("source", "")), str(request.form.get("target", ""))
    try:
        _store().merge(source, target)
    except ValueError as exc:
        return _page("admin.html", message=str(exc), refused=_store().refused[-20:],
                     tournament=current_app.extensions["dicetower.tournament"])
    text = labels(_language())["merged_done"].format(source=source, target=target)
    return _page("admin.html", message=text, refused=_store().refused[-20:],
                 tournament=current_app.extensions["dicetower.tournament"])


@board.post("/admin/tournament")
def new_tournament() -> Response:
    _require_admin()
    desk = current_app.extensions["dicetower.tournament"]
    if desk is None:
        abort(404)
    names = [line.strip() for line in str(request.form.get("entrants", "")).splitlines()]
    try:
        desk.create([name for name in names if name])
    except ValueError as exc:
        return _page("admin.html", message=str(exc), refused=_store().refused[-20:],
                     tournament=desk)
    return redirect(url_for("league.home"))
