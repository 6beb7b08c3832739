"""Test helpers shared by several test files: the game master's client of the scoreboard's
API, the pin-map text of a small tower, a journal kept in a list, and the start-up lines of
a scoreboard started in a process of its own."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from typing import Any

from flask.testing import FlaskClient


class GameMaster:
    """A test client holding a session, its CSRF token and, after `login`, the PIN's rights.

    Every request asks for English (``?lang=en``), as the English page does, so that
    refusals come back in English."""

    def __init__(self, client: FlaskClient, pin: str) -> None:
        self.client = client
        self.pin = pin
        self.csrf = client.get("/api/session").get_json()["csrf"]

    def post(self, path: str, body: Any = None, **kwargs: Any) -> Any:
        headers = {"X-CSRF-Token": self.csrf, **kwargs.pop("headers", {})}
        return self.client.post(f"/api/admin/{path}?lang=en", json=body, headers=headers,
                                **kwargs)

    def post_raw(self, path: str, data: bytes, content_type: str = "application/json") -> Any:
        return self.client.post(f"/api/admin/{path}?lang=en", data=data,
                                content_type=content_type, headers={"X-CSRF-Token": self.csrf})

    def login(self, pin: str | None = None) -> Any:
        """Log in with ``pin`` (the client's own by default); the response, as it came."""
        response = self.post("login", {"pin": self.pin if pin is None else pin})
        if response.status_code == 200:
            self.csrf = response.get_json()["csrf"]
        return response


def logged_in(client: FlaskClient, pin: str) -> GameMaster:
    """A `GameMaster` already logged in with ``pin``."""
    master = GameMaster(client, pin)
    response = master.login()
    assert response.status_code == 200, response.get_data(as_text=True)
    return master


def pinmap_text(seats: Sequence[tuple[int, int, int | None]], *, ring: int = 4,
                buttons: tuple[int, int, int] = (2, 3, 8), status: int | None = None,
                dispenser: str = "") -> str:
    """The TOML of a per-seat tower: ``seats`` as (led, servo, beam or None) in seat order,
    the ring light's pin, the stop/undo/new-game buttons, an optional status LED and extra
    lines for the ``[dispenser]`` table."""
    lines: list[str] = []
    for number, (led, servo, beam) in enumerate(seats, start=1):
        lines += [f"[seats.{number}]", f"led = {led}", f"servo = {servo}"]
        if beam is not None:
            lines.append(f"beam = {beam}")
    if status is not None:
        lines += ["[status]", f"led = {status}"]
    stop, undo, new_game = buttons
    lines += ["[ring]", f"pin = {ring}",
              "[buttons]", f"stop = {stop}", f"undo = {undo}", f"new_game = {new_game}",
              "[dispenser]", 'layout = "per_seat"']
    if dispenser:
        lines.append(dispenser.strip())
    return "\n".join(lines) + "\n"


class ListJournal(list):
    """A journal that keeps the actions a hub gives it in a list (no file, no replay)."""

    def record(self, action: dict[str, Any], dispenses: Any = ()) -> int:
        self.append(action)
        return len(self)

    def actions_since_last_game(self) -> list[tuple[int, dict[str, Any]]]:
        return []


def lines_until_ready(serve: subprocess.Popen) -> list[str]:
    """What a started `dicetower serve` printed, up to its "Ctrl+C" line (it is then
    serving)."""
    lines = []
    for line in serve.stdout:  # type: ignore[union-attr]
        lines.append(line)
        if line.startswith("Ctrl+C"):
            break
    return lines
