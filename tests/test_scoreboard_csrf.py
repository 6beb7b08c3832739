"""CSRF tokens that are not ASCII: every changing route refuses them with a clear 403, and the
log gets no traceback (a visitor with a session could otherwise flood it, one per request).
"""

from __future__ import annotations

import logging

import pytest
from flask import Flask

from firmware_host.hub import GameHub
from firmware_host.scoreboard.app import create_app

PIN = "8642"
# Latin-1 (as a server decodes raw header bytes), beyond it, and a near miss of a real token.
ODD_TOKENS = ["é", "jeton-é", "€uro", "\u00ff" * 32, "\u0301"]


@pytest.fixture
def app() -> Flask:
    store = GameHub()
    store.start_game("tim-11", ["Ana", "Ben", "Cleo"])
    # Not TESTING: an exception becomes the 500 and the logged traceback a tower would give.
    return create_app({"SCOREBOARD_PIN": PIN}, hub=store)


def post_routes(app: Flask) -> list[str]:
    """Every POST route of the application, its path parameters filled in."""
    paths = []
    for rule in app.url_map.iter_rules():
        if "POST" in (rule.methods or ()):
            paths.append(rule.rule.replace("<int:dispense_id>", "1"))
    assert all("<" not in path for path in paths), paths
    return paths


def test_the_routes_checked_are_all_the_changing_ones(app: Flask) -> None:
    paths = post_routes(app)
    assert {"/api/admin/login", "/api/admin/throw", "/api/admin/dispenses/1/confirm",
            "/api/admin/calibration/start"} <= set(paths)


@pytest.mark.parametrize("logged_in", [False, True])
@pytest.mark.parametrize("token", ODD_TOKENS)
def test_a_non_ascii_token_is_a_clear_403_on_every_post_route(
    app: Flask, caplog: pytest.LogCaptureFixture, token: str, logged_in: bool
) -> None:
    client = app.test_client()
    csrf = client.get("/api/session").get_json()["csrf"]
    if logged_in:
        login = client.post("/api/admin/login", json={"pin": PIN}, headers={"X-CSRF-Token": csrf})
        assert login.status_code == 200
    store: GameHub = app.extensions["dicetower.hub"]
    before = store.version
    caplog.set_level(logging.DEBUG)
    for path in post_routes(app):
        response = client.post(f"{path}?lang=en", json={"pin": PIN, "faces": [4, 2, 1]},
                               headers={"X-CSRF-Token": token})
        assert response.status_code == 403, (path, response.get_json())
        body = response.get_json()
        assert body["code"] == "csrf" and "X-CSRF-Token" in body["error"], path
    assert store.version == before
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


def test_the_right_token_still_passes(app: Flask) -> None:
    client = app.test_client()
    csrf = client.get("/api/session").get_json()["csrf"]
    response = client.post("/api/admin/login", json={"pin": PIN}, headers={"X-CSRF-Token": csrf})
    assert response.status_code == 200 and response.get_json()["admin"] is True
