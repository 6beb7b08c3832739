"""Who may change the game: the game master's PIN, the session, CSRF tokens, login throttling.

Everyone can read; every changing request (login included) needs the session's CSRF token in
the ``X-CSRF-Token`` header, and every game action needs a session unlocked with the PIN.
PINs are compared in constant time, and failed attempts are limited per client address.
"""

from __future__ import annotations

import functools
import hmac
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from flask import current_app, request, session

from firmware_host.scoreboard.errors import ApiError

F = TypeVar("F", bound=Callable[..., Any])

CSRF_HEADER = "X-CSRF-Token"


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
        token = secrets.token_urlsafe(24)
        session["csrf"] = token
    return token


def is_admin() -> bool:
    return bool(session.get("admin"))


def check_csrf() -> None:
    """Refuse a changing request without the session's CSRF token."""
    expected = session.get("csrf")
    given = request.headers.get(CSRF_HEADER, "")
    if not expected or not given or not hmac.compare_digest(given, expected):
        raise ApiError(
            403, "csrf", f"missing or wrong CSRF token: GET /api/session, then send {CSRF_HEADER}"
        )


def csrf_protected(view: F) -> F:
    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        check_csrf()
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def admin_required(view: F) -> F:
    """CSRF token and an unlocked game-master session, in that order."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        check_csrf()
        if not is_admin():
            raise ApiError(401, "login", "game master only: log in with the PIN first")
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class FailureLimiter:
    """At most `max_failures` failed logins per client address in a sliding `window` (s)."""

    def __init__(
        self, max_failures: int, window: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_failures = max_failures
        self.window = window
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def retry_after(self, client: str) -> float:
        """Seconds until `client` may try again (0 when it may try now)."""
        with self._lock:
            failures = self._recent(client)
            if len(failures) < self.max_failures:
                return 0.0
            return max(0.0, failures[0] + self.window - self._clock())

    def record_failure(self, client: str) -> None:
        with self._lock:
            self._recent(client).append(self._clock())

    def reset(self, client: str) -> None:
        with self._lock:
            self._failures.pop(client, None)

    def _recent(self, client: str) -> deque[float]:
        failures = self._failures.setdefault(client, deque())
        horizon = self._clock() - self.window
        while failures and failures[0] <= horizon:
            failures.popleft()
        return failures


def log_in(pin: str) -> None:
    """Unlock the session with the PIN, or raise 401/429."""
    limiter: FailureLimiter = current_app.extensions["dicetower.limiter"]
    client = request.remote_addr or "unknown"
    wait = limiter.retry_after(client)
    if wait > 0:
        raise ApiError(
            429, "rate_limited", f"too many wrong PINs: try again in {int(wait) + 1} s",
            headers={"Retry-After": str(int(wait) + 1)},
        )
    if not pin_matches(pin, current_app.config["SCOREBOARD_PIN"]):
        limiter.record_failure(client)
        raise ApiError(401, "wrong_pin", "wrong PIN")
    limiter.reset(client)
    session["admin"] = True
    # A fresh token after a privilege change: one seen before login is worth nothing after.
    session["csrf"] = secrets.token_urlsafe(24)


def log_out() -> None:
    session.pop("admin", None)
