"""The scoreboard's HTTP API through Flask's test client: pages, reads, PIN, CSRF, bad input."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from helpers import GameMaster, logged_in

import firmware_host.scoreboard as scoreboard_package
from firmware_host.hub import GameHub
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.auth import FailureLimiter
from firmware_host.web_guard import generate_pin, pin_matches

PIN = "4821"
PLAYERS = ["Ana", "Ben", "Cleo"]


@pytest.fixture
def store() -> GameHub:
    return GameHub()


@pytest.fixture
def app(store: GameHub) -> Flask:
    return create_app(
        {"TESTING": True, "SCOREBOARD_PIN": PIN, "SCOREBOARD_PUBLIC_URL": "http://10.0.0.7:8000/"},
        hub=store,
    )


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def gm(client: FlaskClient) -> GameMaster:
    return logged_in(client, PIN)


@pytest.fixture
def playing(gm: GameMaster) -> GameMaster:
    assert gm.post("game", {"preset": "tim-11", "players": PLAYERS}).status_code == 200
    for faces in ([3], [5], [2]):
        assert gm.post("throw", {"faces": faces}).status_code == 200
    return gm


# ------------------------------------------------------------------------- pages and reads


def test_board_page_is_french_by_default_with_qr_and_assets(client: FlaskClient) -> None:
    response = client.get("/")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert '<html lang="fr">' in html and "Caméra" in html
    assert "pas de caméra" in html
    assert 'class="qr"' in html and "http://10.0.0.7:8000/" in html
    assert "/static/scoreboard.js" in html and "/static/scoreboard.css" in html
    assert "http://" not in html.replace("http://10.0.0.7:8000/", "")  # nothing from elsewhere
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]


def test_language_choice_is_remembered(client: FlaskClient) -> None:
    response = client.get("/?lang=en")
    assert '<html lang="en">' in response.get_data(as_text=True)
    assert "lang=en" in response.headers["Set-Cookie"]
    assert '<html lang="en">' in client.get("/").get_data(as_text=True)
    assert '<html lang="en">' in client.get("/?lang=xx").get_data(as_text=True)
    assert '<html lang="fr">' in client.get("/?lang=fr").get_data(as_text=True)
    assert '<html lang="fr">' in client.get("/").get_data(as_text=True)


def test_page_embeds_the_state_safely(client: FlaskClient, gm: GameMaster) -> None:
    gm.post("game", {"preset": "tim-11", "players": ["</script><b>x", "Ben"]})
    html = client.get("/").get_data(as_text=True)
    assert "</script><b>" not in html
    assert "\\u003c/script\\u003e" in html


def test_static_assets_are_served_and_small(client: FlaskClient) -> None:
    js = client.get("/static/scoreboard.js")
    css = client.get("/static/scoreboard.css")
    assert js.status_code == css.status_code == 200
    assert len(js.data) + len(css.data) < 60_000
    assert b"EventSource" in js.data and b"wakeLock" in js.data


def test_state_and_history_before_any_game(client: FlaskClient) -> None:
    state = client.get("/api/state")
    assert state.status_code == 200 and state.get_json()["game"] is None
    assert state.headers["Cache-Control"] == "no-store"
    assert client.get("/api/history").get_json()["entries"] == []
    missing = client.get("/api/game")
    assert missing.status_code == 404 and missing.get_json()["code"] == "no_game"


def test_state_history_and_game_during_play(client: FlaskClient, playing: GameMaster) -> None:
    state = client.get("/api/state").get_json()
    assert state["game"]["phase"] == "charge" and state["game"]["to_move"] == 2
    entries = client.get("/api/history").get_json()["entries"]
    assert [e["event"]["faces"] for e in entries] == [[3], [5], [2]]
    assert [e["player"] for e in entries] == [0, 1, 2]
    assert client.get("/api/game").get_json()["events"][-1] == {"type": "throw", "faces": [2]}


def test_presets_list_every_preset_and_knob(client: FlaskClient) -> None:
    data = client.get("/api/presets").get_json()
    assert {"regles-21", "tim-11", "classique-10", "kyt-11", "4d"} <= set(data["presets"])
    assert "pot" in data["knobs"]


def test_frame_is_404_json_without_camera_then_the_jpeg(
    client: FlaskClient, store: GameHub
) -> None:
    response = client.get("/api/frame.jpg")
    assert response.status_code == 404 and response.get_json()["code"] == "no_frame"
    store.publish_reading(b"\xff\xd8\xff fake jpeg", [{"value": 3, "alternatives": [2]}])
    response = client.get("/api/frame.jpg")
    assert response.status_code == 200 and response.mimetype == "image/jpeg"
    assert response.data == b"\xff\xd8\xff fake jpeg"
    assert client.get("/api/state").get_json()["reading"]["dice"][0]["alternatives"] == [2]


def test_unknown_api_path_and_method_are_json(client: FlaskClient) -> None:
    missing = client.get("/api/nope")
    assert missing.status_code == 404 and missing.get_json()["code"] == "not_found"
    wrong = client.get("/api/admin/throw")
    assert wrong.status_code == 405 and "error" in wrong.get_json()


# ------------------------------------------------------------------------- PIN and CSRF


def test_admin_page_asks_for_the_pin(client: FlaskClient) -> None:
    html = client.get("/admin").get_data(as_text=True)
    assert 'id="login-form"' in html and '"admin": false' in html


def test_post_without_csrf_token_is_refused(client: FlaskClient, store: GameHub) -> None:
    client.get("/api/session")
    response = client.post("/api/admin/login", json={"pin": PIN})
    assert response.status_code == 403 and response.get_json()["code"] == "csrf"
    wrong = client.post("/api/admin/login", json={"pin": PIN}, headers={"X-CSRF-Token": "x"})
    assert wrong.status_code == 403
    assert client.get("/api/session").get_json()["admin"] is False


def test_post_without_session_is_refused(app: Flask) -> None:
    token = app.test_client().get("/api/session").get_json()["csrf"]
    stranger = app.test_client()  # another browser: no session cookie
    response = stranger.post("/api/admin/login", json={"pin": PIN}, headers={"X-CSRF-Token": token})
    assert response.status_code == 403


def test_actions_need_the_pin(client: FlaskClient, store: GameHub) -> None:
    visitor = GameMaster(client, PIN)
    for path, body in [
        ("game", {"preset": "tim-11", "players": PLAYERS}),
        ("throw", {"faces": [3]}),
        ("turn", {"faces": [1, 2, 3, 4]}),
        ("stop", {}),
        ("undo", {}),
        ("correct", {"faces": [3]}),
        ("pause", {"paused": True}),
        ("end", {}),
    ]:
        response = visitor.post(path, body)
        assert response.status_code == 401, path
        assert response.get_json()["code"] == "login"
    assert store.version == 0


def test_wrong_pin_then_right_pin(client: FlaskClient) -> None:
    master = GameMaster(client, PIN)
    wrong = master.login("0000")
    assert wrong.status_code == 401 and wrong.get_json()["code"] == "wrong_pin"
    old_token = master.csrf
    assert master.login().status_code == 200
    assert master.csrf != old_token  # a new token after logging in
    assert client.get("/api/session").get_json()["admin"] is True
    assert '"admin": true' in client.get("/admin").get_data(as_text=True)


def test_logout_takes_the_rights_back(gm: GameMaster) -> None:
    assert gm.post("logout").get_json()["admin"] is False
    assert gm.post("pause", {"paused": True}).status_code == 401


def test_failed_logins_are_rate_limited(app: Flask, client: FlaskClient) -> None:
    now = [1000.0]  # a fake clock: the lock lasts exactly as long as the test says
    app.extensions["dicetower.limiter"] = FailureLimiter(
        app.config["LOGIN_MAX_FAILURES"], app.config["LOGIN_WINDOW"], clock=lambda: now[0],
        lockout=app.config["LOGIN_LOCKOUT"], max_lockout=app.config["LOGIN_MAX_LOCKOUT"],
    )
    master = GameMaster(client, PIN)
    limit = app.config["LOGIN_MAX_FAILURES"]
    for _ in range(limit):
        assert master.login("9999").status_code == 401
    blocked = master.login()  # even the right PIN waits
    assert blocked.status_code == 429 and blocked.get_json()["code"] == "rate_limited"
    assert int(blocked.headers["Retry-After"]) == int(app.config["LOGIN_LOCKOUT"]) + 1
    # Another address is not blocked.
    other = GameMaster(app.test_client(), PIN)
    other.client.environ_base["REMOTE_ADDR"] = "10.0.0.99"
    assert other.login().status_code == 200
    # Once the short first lock is over, the game master gets back in with the right PIN.
    now[0] += app.config["LOGIN_LOCKOUT"]
    assert master.login().status_code == 200


def test_failure_limiter_backs_off_exponentially_up_to_a_cap() -> None:
    now = [1000.0]
    limiter = FailureLimiter(
        max_failures=2, window=60, clock=lambda: now[0], lockout=5, max_lockout=30
    )
    limiter.record_failure("a")
    assert limiter.retry_after("a") == 0  # below the threshold: no wait
    waits = []
    for _ in range(5):
        limiter.record_failure("a")
        waits.append(limiter.retry_after("a"))
        now[0] += waits[-1]  # the client waits exactly as long as told, then fails again
        assert limiter.retry_after("a") == 0
    assert waits == [5, 10, 20, 30, 30]
    assert limiter.retry_after("b") == 0


def test_failure_limiter_forgets_after_a_quiet_window_and_on_success() -> None:
    now = [1000.0]
    limiter = FailureLimiter(
        max_failures=2, window=60, clock=lambda: now[0], lockout=5, max_lockout=300
    )
    for _ in range(4):
        limiter.record_failure("a")
    assert limiter.failures("a") == 4 and limiter.retry_after("a") == pytest.approx(20)
    now[0] += 20 + 59
    assert limiter.failures("a") == 4  # the window starts when the wait is over
    now[0] += 1
    assert limiter.failures("a") == 0 and limiter.retry_after("a") == 0
    for _ in range(3):
        limiter.record_failure("b")
    limiter.reset("b")  # a right PIN
    assert limiter.failures("b") == 0 and limiter.retry_after("b") == 0


def test_failure_limiter_remembers_a_client_while_it_is_locked_out() -> None:
    now = [1000.0]
    limiter = FailureLimiter(
        max_failures=1, window=10, clock=lambda: now[0], lockout=100, max_lockout=100
    )
    limiter.record_failure("a")
    now[0] += 50  # past the window, still inside the lock
    assert limiter.retry_after("a") == pytest.approx(50)


def test_pins_compare_and_generate() -> None:
    assert pin_matches("1234", "1234") and not pin_matches("1235", "1234")
    assert not pin_matches("", "1234")
    pin = generate_pin()
    assert len(pin) == 6 and pin.isdigit()


def test_generated_pin_when_none_is_configured() -> None:
    app = create_app({"TESTING": True})
    assert app.config["SCOREBOARD_PIN"].isdigit()


# ------------------------------------------------------------------------- game master actions


def test_a_whole_turn_through_the_api(client: FlaskClient, playing: GameMaster) -> None:
    response = playing.post("throw", {"faces": [4, 2, 1]})
    assert response.status_code == 200
    assert {"kind": "flourish", "name": "421"} in response.get_json()["effects"]
    state = client.get("/api/state").get_json()
    assert hands_of(state["game"]["round"]) == [(2, "421")]
    assert state["version"] == response.get_json()["version"]


def test_undo_and_correct(client: FlaskClient, playing: GameMaster) -> None:
    playing.post("throw", {"faces": [4, 2, 1]})
    assert playing.post("correct", {"faces": [6, 6, 6]}).status_code == 200
    assert hands_of(client.get("/api/state").get_json()["game"]["round"]) == [(2, "666")]
    assert playing.post("undo").status_code == 200
    assert client.get("/api/state").get_json()["game"]["round"] == []


def test_stop_and_turn_reach_the_engine(client: FlaskClient, gm: GameMaster) -> None:
    gm.post("game", {"preset": "classique-10", "players": ["Ana", "Ben"]})
    for faces in ([6, 5, 3], [3, 2, 2], [6, 4, 1]):
        assert gm.post("throw", {"faces": faces}).status_code == 200
    assert gm.post("stop").status_code == 200
    assert client.get("/api/state").get_json()["game"]["to_move"] == 0
    gm.post("game", {"preset": "4d", "players": ["Ana", "Ben"]})
    assert gm.post("throw", {"faces": [1, 2, 3, 4]}).status_code == 200
    refused = gm.post("turn", {"faces": [6, 6, 6, 6]})  # the far die cannot change
    assert refused.status_code == 400 and refused.get_json()["code"] == "rule"


def test_a_4d_turn_carries_its_rotation_and_its_player(
    client: FlaskClient, gm: GameMaster
) -> None:
    gm.post("game", {"preset": "4d", "players": ["Ana", "Ben"]})
    assert gm.post("throw", {"faces": [1, 2, 3, 4]}).status_code == 200
    # Ana threw: Ben, her opponent, moves first, facing position 0 (not presented otherwise).
    out_of_turn = gm.post("turn", {"faces": [1, 1, 3, 4], "player": 0})
    assert out_of_turn.status_code == 400 and out_of_turn.get_json()["code"] == "rule"
    moved = gm.post("turn", {"faces": [1, 1, 3, 4], "rotate": "ccw", "player": 1})
    assert moved.status_code == 200, moved.get_json()
    game = client.get("/api/state").get_json()["game"]
    assert game["last_move"]["rotate"] == "ccw" and game["last_move"]["player"] == 1
    assert game["to_move"] == 0
    assert game["square"]["near"]["pos"] == 3  # anticlockwise: Ana faces the previous corner
    # Correcting the faces keeps the rotation; correcting the rotation moves the square back.
    assert gm.post("correct", {"faces": [1, 6, 3, 4]}).status_code == 200
    game = client.get("/api/state").get_json()["game"]
    assert game["last_move"]["rotate"] == "ccw" and game["square"]["near"]["pos"] == 3
    assert gm.post("correct", {"faces": [1, 6, 3, 4], "rotate": "cw"}).status_code == 200
    game = client.get("/api/state").get_json()["game"]
    assert game["last_move"]["rotate"] == "cw" and game["square"]["near"]["pos"] == 1
    assert client.get("/api/state").get_json()["history_length"] == 2


def test_a_throw_may_name_its_player(client: FlaskClient, playing: GameMaster) -> None:
    assert playing.post("throw", {"faces": [4, 2, 1], "player": 2}).status_code == 200
    assert client.get("/api/history").get_json()["entries"][-1]["event"]["player"] == 2


def test_pause_and_end(client: FlaskClient, playing: GameMaster) -> None:
    assert playing.post("pause", {"paused": True}).get_json()["paused"] is True
    refused = playing.post("throw", {"faces": [4, 2, 1]})
    assert refused.status_code == 409 and "paused" in refused.get_json()["error"]
    assert playing.post("pause", {"paused": False}).status_code == 200
    assert playing.post("end").status_code == 200
    assert client.get("/api/state").get_json()["ended"] is True
    assert playing.post("throw", {"faces": [4, 2, 1]}).status_code == 409


@pytest.mark.parametrize(
    ("path", "body", "code"),
    [
        ("throw", {"faces": [4, 2, 7]}, "bad_input"),
        ("throw", {"faces": [0, 2, 1]}, "bad_input"),
        ("throw", {"faces": []}, "bad_input"),
        ("throw", {"faces": "421"}, "bad_input"),
        ("throw", {"faces": [4, 2, True]}, "bad_input"),
        ("throw", {"faces": [1] * 7}, "bad_input"),
        ("throw", {}, "bad_input"),
        ("throw", {"faces": [4, 2, 1], "keep": [9]}, "rule"),
        ("throw", {"faces": [4, 2, 1, 3]}, "rule"),
        ("throw", [4, 2, 1], "bad_json"),
        ("throw", {"faces": [4, 2, 1], "player": 0}, "rule"),  # Cleo is to move
        ("throw", {"faces": [4, 2, 1], "player": "Cleo"}, "bad_input"),
        ("stop", {"player": -1}, "bad_input"),
        ("turn", {"faces": [1, 2, 3, 4], "rotate": "left"}, "bad_input"),
        ("correct", {"faces": ["6"]}, "bad_input"),
        ("pause", {"paused": "yes"}, "bad_input"),
        ("game", {"preset": "poker", "players": PLAYERS}, "bad_input"),
        ("game", {"preset": "tim-11", "players": []}, "bad_input"),
        ("game", {"preset": "tim-11", "players": ["Ana", "Ana"]}, "bad_input"),
        ("game", {"preset": "tim-11", "players": ["Ana", "x" * 40]}, "bad_input"),
        ("game", {"preset": "tim-11", "players": PLAYERS, "knobs": [1]}, "bad_input"),
        ("game", {"preset": "tim-11", "players": PLAYERS, "knobs": {"pot": -1}}, "rule"),
        ("game", {"preset": "tim-11", "players": PLAYERS, "knobs": {"colour": 1}}, "rule"),
    ],
)
def test_bad_input_is_a_clear_400_and_changes_nothing(
    client: FlaskClient, playing: GameMaster, path: str, body: Any, code: str
) -> None:
    before = client.get("/api/state").get_json()
    response = playing.post(path, body)
    assert response.status_code == 400, response.get_json()
    data = response.get_json()
    assert data["code"] == code and data["error"]
    assert client.get("/api/state").get_json() == before


def test_malformed_json_and_oversized_bodies(client: FlaskClient, playing: GameMaster) -> None:
    headers = {"X-CSRF-Token": playing.csrf, "Content-Type": "application/json"}
    broken = client.post("/api/admin/throw", data="{faces:", headers=headers)
    assert broken.status_code == 400 and broken.get_json()["code"] == "bad_json"
    huge = client.post("/api/admin/throw", data="[" + "1," * 20000 + "1]", headers=headers)
    assert huge.status_code == 413 and "error" in huge.get_json()


def test_actions_without_a_game_are_conflicts(gm: GameMaster) -> None:
    response = gm.post("throw", {"faces": [3]})
    assert response.status_code == 409 and "no game" in response.get_json()["error"]


def test_both_languages_label_everything() -> None:
    from firmware_host.scoreboard.i18n import LABELS, pick_language

    assert LABELS.problems() == []  # every label in both languages
    # Every label the page's script asks for exists (a missing one would show "undefined").
    script = (Path(scoreboard_package.__file__).parent / "static" / "scoreboard.js").read_text()
    used = set(re.findall(r"\bT\.([a-z_0-9]+)", script))
    assert used and used <= set(LABELS), used - set(LABELS)
    assert pick_language(None, None, "fr") == "fr"
    assert pick_language("en", "fr", "fr") == "en"
    assert pick_language("de", "en", "fr") == "en"


def hands_of(round_entries: list[dict]) -> list[tuple[int, str]]:
    """(player, hand) of each hand in a view's round list (entries may carry more)."""
    return [(entry["player"], entry["hand"]) for entry in round_entries]
