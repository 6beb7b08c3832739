"""Who may change the game: the game master's PIN, the session, CSRF tokens, login throttling.

Everyone can read; every changing request (login included) needs the session's CSRF token in
the ``X-CSRF-Token`` header, and every game action needs a session unlocked with the PIN.
PINs are compared in constant time, and wrong PINs make their client address wait, longer
with each one (`FailureLimiter`).
"""

from __future__ import annotations

import functools
import hmac
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from flask import current_app, request, session

from firmware_host.scoreboard.errors import ApiError
from firmware_host.web_guard import new_csrf_token, pin_matches

F = TypeVar("F", bound=Callable[..., Any])

CSRF_HEADER = "X-CSRF-Token"


PIN_MIN_DIGITS = 4


def check_pin(pin: object) -> str:
    """`pin` as text when it is a PIN (at least `PIN_MIN_DIGITS` digits 0-9); else ValueError."""
    text = str(pin) if isinstance(pin, int) and not isinstance(pin, bool) else pin
    if not isinstance(text, str) or not (
        text.isascii() and text.isdigit() and len(text) >= PIN_MIN_DIGITS
    ):
        raise ValueError(
            f"the PIN must be at least {PIN_MIN_DIGITS} digits (0-9), not {pin!r}"
        )
    return text


def is_admin() -> bool:
    return bool(session.get("admin"))


def check_csrf() -> None:
    """Refuse a changing request without the session's CSRF token."""
    expected = session.get("csrf")
    given = request.headers.get(CSRF_HEADER, "")
    if not expected or not given or not hmac.compare_digest(
        _token_bytes(given), _token_bytes(expected)
    ):
        raise ApiError(403, "csrf", "csrf", header=CSRF_HEADER)


def _token_bytes(token: str) -> bytes:
    # compare_digest refuses str with non-ASCII characters (a TypeError, so a 500 per request
    # from anyone with a session); as bytes any header compares, and a replaced character can
    # never match a token, which is URL-safe ASCII.
    return token.encode("utf-8", "replace")


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
            raise ApiError(401, "login", "login_first")
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class FailureLimiter:
    """Wrong PINs per client address, answered by a wait that grows with each one.

    The first `max_failures` wrong PINs in a row cost nothing; the last of them starts a
    `lockout` (seconds), and each further one doubles it, up to `max_lockout`. A brute force
    is slowed to one guess per `max_lockout`, while a game master who mistyped a few times
    waits seconds, not minutes. The count starts afresh after a right PIN, or once the wait
    is over and `window` more seconds have passed without a wrong PIN.
    """

    def __init__(
        self,
        max_failures: int,
        window: float,
        clock: Callable[[], float] = time.monotonic,
        *,
        lockout: float = 5.0,
        max_lockout: float = 300.0,
    ) -> None:
        self.max_failures = max_failures
        self.window = window
        self.lockout = lockout
        self.max_lockout = max_lockout
        self._clock = clock
        self._failures: dict[str, tuple[int, float]] = {}  # client: (count, last failure)
        self._lock = threading.Lock()

    def failures(self, client: str) -> int:
        """Wrong PINs in a row from `client` that still count."""
        with self._lock:
            return self._current(client, self._clock())[0]

    def lock_for(self, failures: int) -> float:
        """The wait (s) after `failures` wrong PINs in a row."""
        extra = failures - self.max_failures
        if extra < 0:
            return 0.0
        # min() on the exponent first: a long siege must not build a huge float.
        return min(self.lockout * 2.0 ** min(extra, 64), self.max_lockout)

    def retry_after(self, client: str) -> float:
        """Seconds until `client` may try again (0 when it may try now)."""
        with self._lock:
            now = self._clock()
            count, last = self._current(client, now)
            return max(0.0, last + self.lock_for(count) - now) if count else 0.0

    def record_failure(self, client: str) -> None:
        with self._lock:
            now = self._clock()
            count, _ = self._current(client, now)
            self._failures[client] = (count + 1, now)
            self._forget_stale(now)

    def reset(self, client: str) -> None:
        with self._lock:
            self._failures.pop(client, None)

    def _current(self, client: str, now: float) -> tuple[int, float]:
        count, last = self._failures.get(client, (0, 0.0))
        if count and now - last >= self._memory(count):
            self._failures.pop(client, None)
            return 0, 0.0
        return count, last

    def _memory(self, count: int) -> float:
        # The quiet window starts when the wait ends: forgetting sooner would hand a patient
        # guesser a fresh set of free tries after each longest wait.
        return self.lock_for(count) + self.window

    def _forget_stale(self, now: float) -> None:
        # Addresses that stopped trying are dropped, so the table cannot grow without end.
        stale = [c for c, (n, last) in self._failures.items() if now - last >= self._memory(n)]
        for client in stale:
            del self._failures[client]


def log_in(pin: str) -> None:
    """Unlock the session with the PIN, or raise 401/429."""
    limiter: FailureLimiter = current_app.extensions["dicetower.limiter"]
    client = request.remote_addr or "unknown"
    wait = limiter.retry_after(client)
    if wait > 0:
        raise ApiError(
            429, "rate_limited", "too_many_pins", headers={"Retry-After": str(int(wait) + 1)},
            seconds=int(wait) + 1,
        )
    if not pin_matches(pin, current_app.config["SCOREBOARD_PIN"]):
        limiter.record_failure(client)
        wait = limiter.retry_after(client)
        if wait > 0:
            seconds = int(wait) + 1
            raise ApiError(
                401, "wrong_pin", "wrong_pin_wait", headers={"Retry-After": str(seconds)},
                seconds=seconds,
            )
        raise ApiError(401, "wrong_pin", "wrong_pin")
    limiter.reset(client)
    session["admin"] = True
    new_csrf_token()


def log_out() -> None:
    session.pop("admin", None)
