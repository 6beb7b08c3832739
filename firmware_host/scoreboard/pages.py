"""The HTML pages: the scoreboard everyone watches and the game master's page.

Both are one light page rendered with the current state embedded, then kept live by the
script through Server-Sent Events. Every asset comes from the tower itself (no CDN).
"""

from __future__ import annotations

from flask import Blueprint, Response, current_app, make_response, render_template, request

from firmware_host.scoreboard.api import get_hub, odds_shown
from firmware_host.scoreboard.auth import is_admin
from firmware_host.scoreboard.i18n import LANGUAGE_COOKIE, LANGUAGES, labels, page_language
from firmware_host.scoreboard.network import hostname, qr_svg
from firmware_host.scoreboard.odds import odds_labels
from firmware_host.web_guard import csrf_token

pages = Blueprint("pages", __name__)

ONE_YEAR = 365 * 24 * 3600


def _render(template: str, *, admin_page: bool) -> Response:
    requested = request.args.get("lang")
    language = page_language()
    url = current_app.config.get("SCOREBOARD_PUBLIC_URL") or request.host_url
    # The league's page where a player picks their name once (docs/league.md), if any.
    league = current_app.config.get("SCOREBOARD_LEAGUE_URL")
    league_url = league.rstrip("/") + "/join" if league else None
    text = {**labels(language), **odds_labels(language)}
    page_config = {
        "lang": language,
        "labels": text,
        "admin_page": admin_page,
        "admin": is_admin() if admin_page else False,
        "csrf": csrf_token() if admin_page else None,
        "odds": current_app.config["SCOREBOARD_ODDS"],
    }
    html = render_template(
        template,
        lang=language,
        languages=LANGUAGES,
        t=text,
        state=get_hub().snapshot(odds=odds_shown()),
        page_config=page_config,
        public_url=url,
        hostname=current_app.config.get("SCOREBOARD_HOSTNAME") or hostname(),
        qr=qr_svg(url),
        league_url=league_url,
        league_qr=qr_svg(league_url) if league_url else None,
        admin_page=admin_page,
    )
    response = make_response(html)
    response.headers["Cache-Control"] = "no-store"
    if requested in LANGUAGES:
        response.set_cookie(LANGUAGE_COOKIE, requested, max_age=ONE_YEAR, samesite="Lax")
    return response


@pages.get("/")
def board() -> Response:
    return _render("board.html", admin_page=False)


@pages.get("/admin")
def admin_page() -> Response:
    return _render("board.html", admin_page=True)
