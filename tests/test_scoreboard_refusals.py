"""The scoreboard's own refusals (no game, paused, wrong PIN, a bad field...) in the page's
language: every sentence in French and English, every raise site naming a sentence that exists
with exactly the values it needs."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest
from flask import Flask

from firmware_host.hub import GameHub, HubError
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.texts import REFUSALS, say

ROOT = Path(__file__).resolve().parents[1]
PIN = "1357"


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("code", sorted(REFUSALS))
def test_every_refusal_has_both_languages_with_the_same_values(code: str) -> None:
    table = REFUSALS[code]
    assert set(table) == {"fr", "en"}
    assert placeholders(table["fr"]) == placeholders(table["en"])
    assert table["fr"] != table["en"]


def raise_sites() -> list[tuple[str, int, str, set[str]]]:
    """(file, line, code, keyword names) of every HubError(...), ApiError(...) and _bad(...)
    call with a literal code, in the hub, the scoreboard and the controller."""
    sites = []
    files = [*(ROOT / "firmware_host" / "hub").glob("*.py"),
             *(ROOT / "firmware_host" / "scoreboard").glob("*.py"),
             *(ROOT / "firmware_host" / "controller").glob("*.py")]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            position = {"HubError": 0, "ApiError": 2, "_bad": 1}.get(node.func.id)
            if position is None or len(node.args) <= position:
                continue
            code = node.args[position]
            if not isinstance(code, ast.Constant):
                continue  # a code passed on from another refusal
            names = {k.arg for k in node.keywords if k.arg and k.arg != "headers"}
            if node.func.id == "_bad":
                names.add("field")
            if any(k.arg is None for k in node.keywords):
                names.add("**")
            sites.append((path.name, node.lineno, code.value, names))
    return sites


def test_every_raise_site_names_a_sentence_and_gives_exactly_its_values() -> None:
    sites = raise_sites()
    assert len(sites) > 30  # the scan sees the raise sites (and would catch a rename)
    for file, line, code, names in sites:
        assert code in REFUSALS, f"{file}:{line}: no sentence {code!r}"
        wanted = placeholders(REFUSALS[code]["en"])
        assert names == wanted, f"{file}:{line}: {code!r} gives {names}, needs {wanted}"


def test_every_sentence_is_used() -> None:
    used = {code for _, _, code, _ in raise_sites()}
    assert set(REFUSALS) - used == set()


def test_a_store_refusal_is_english_on_the_command_line_and_says_its_code() -> None:
    store = GameHub()
    with pytest.raises(HubError) as caught:
        store.apply({"type": "stop"})
    assert str(caught.value) == "no game yet: start one first"
    assert caught.value.text("fr") == say("no_game", language="fr")


@pytest.fixture
def app() -> Flask:
    store = GameHub()
    store.start_game("tim-11", ["Ana", "Ben"])
    store.set_paused(True)
    return create_app({"TESTING": True, "SCOREBOARD_PIN": PIN}, hub=store)


@pytest.mark.parametrize(("lang", "paused", "wrong_pin"), [
    ("fr", "La partie est en pause : reprenez-la d'abord.", "Code erroné."),
    ("en", "the game is paused: resume it first", "wrong PIN"),
])
def test_the_page_hears_a_refusal_in_its_language(
    app: Flask, lang: str, paused: str, wrong_pin: str
) -> None:
    client = app.test_client()
    csrf = client.get("/api/session").get_json()["csrf"]
    refused = client.post(f"/api/admin/login?lang={lang}", json={"pin": "0000"},
                          headers={"X-CSRF-Token": csrf})
    assert refused.status_code == 401
    assert refused.get_json() == {"error": wrong_pin, "code": "wrong_pin", "status": 401}
    logged = client.post(f"/api/admin/login?lang={lang}", json={"pin": PIN},
                         headers={"X-CSRF-Token": csrf})
    csrf = logged.get_json()["csrf"]
    conflict = client.post(f"/api/admin/throw?lang={lang}", json={"faces": [4, 2, 1]},
                           headers={"X-CSRF-Token": csrf})
    assert conflict.status_code == 409
    assert conflict.get_json()["error"] == paused


def test_a_bad_field_names_the_field_in_both_languages(app: Flask) -> None:
    client = app.test_client()
    csrf = client.get("/api/session").get_json()["csrf"]
    csrf = client.post("/api/admin/login", json={"pin": PIN},
                       headers={"X-CSRF-Token": csrf}).get_json()["csrf"]
    answers = {
        lang: client.post(f"/api/admin/game?lang={lang}",
                          json={"preset": "tim-11", "players": ["Ana", "Ana "]},
                          headers={"X-CSRF-Token": csrf}).get_json()
        for lang in ("fr", "en")
    }
    assert answers["en"]["error"] == "players: two players have the same name"
    assert answers["fr"]["error"] == "players : deux joueurs ont le même nom"
    assert answers["fr"]["code"] == answers["en"]["code"] == "bad_input"
