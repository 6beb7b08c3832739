"""What the tower's two web sites (the scoreboard, the league board) share to keep them safe:
a session key for the process, the security headers, the game master's PIN and the
session's CSRF token."""

from __future__ import annotations

import hmac
import secrets

from flask import Flask, Response, session

# Everything from the site itself: no inline script or style, no framing.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


def guard(app: Flask) -> None:
    """A session key when the configuration gives none (sessions then last as long as the
    process: a restart logs the game master out), and the security headers on every
    response."""
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = secrets.token_hex(32)

    @app.after_request
    def security_headers(response: Response) -> Response:
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        return response


def generate_pin(digits: int = 6) -> str:
    """A random numeric PIN, easy to type on a phone."""
    return "".join(secrets.choice("0123456789") for _ in range(digits))


def pin_matches(given: str, expected: str) -> bool:
    """Constant-time comparison, so timing tells nothing about how many digits were right."""
    return hmac.compare_digest(given.encode(), expected.encode())


def csrf_token() -> str:
    """The session's CSRF token, created on first use (it also starts the session)."""
    token = session.get("csrf")
    if not token:
        token = new_csrf_token()
    return token


def new_csrf_token() -> str:
    """A fresh CSRF token for the session (after a privilege change, one seen before is
    worth nothing)."""
    token = secrets.token_hex(24)
    session["csrf"] = token
    return token
