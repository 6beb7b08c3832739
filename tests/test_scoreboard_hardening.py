"""The scoreboard under hostile or careless input: closed streams, greedy clients, deep JSON,
disguised names, wrong PINs, unknown paths and fields, and PINs that are not PINs.
"""

from __future__ import annotations

import http.client
import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from helpers import GameMaster, logged_in

from firmware_host.cli import main
from firmware_host.hub import GameHub
from firmware_host.rules import PRESETS, RuleError, new_game
from firmware_host.rules.factory import PLAYER_COUNTS
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.auth import FailureLimiter
from firmware_host.scoreboard.server import BackgroundServer
from firmware_host.scoreboard.sse import CLIENT_FULL, FULL, ClientLimit, StateStream

PIN = "8642"
# Far longer than any test: a slot freed while waiting can only come from seeing the client go.
NEVER = 3600.0
PATIENCE = 20.0  # how long a test waits for the server to notice, before calling it a failure


@pytest.fixture
def store() -> GameHub:
    store = GameHub()
    store.start_game("tim-11", ["Ana", "Ben", "Cleo"])
    return store


@pytest.fixture
def app(store: GameHub) -> Flask:
    return create_app({"TESTING": True, "SCOREBOARD_PIN": PIN}, hub=store)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def gm(client: FlaskClient) -> GameMaster:
    return logged_in(client, PIN)


# ------------------------------------------------------------------ live streams and slots


def open_stream(server: BackgroundServer, source: str = "127.0.0.1") -> Any:
    """An open ``/api/events`` connection from `source` (any 127.x address is this machine)."""
    host, port = server.url.split("//", 1)[1].rstrip("/").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10, source_address=(source, 0))
    conn.request("GET", "/api/events")
    response = conn.getresponse()
    response.conn_ = conn  # keep the connection alive as long as the response
    return response


def read_first_state(response: Any) -> None:
    """Read up to the first state event, so the stream is surely running on the server."""
    while True:
        line = response.readline()
        assert line, "stream closed early"
        if line.startswith(b"event: state"):
            response.readline()  # its data
            return


def close(response: Any) -> None:
    response.close()
    response.conn_.close()


def wait_until(condition: Any) -> bool:
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture
def live(store: GameHub) -> Iterator[tuple[BackgroundServer, ClientLimit]]:
    app = create_app(
        {"SCOREBOARD_PIN": PIN, "SSE_MAX_CLIENTS": 3, "SSE_MAX_PER_CLIENT": 2,
         "SSE_KEEPALIVE": NEVER, "SSE_DISCONNECT_POLL": 0.05},
        hub=store,
    )
    with BackgroundServer(app) as server:
        yield server, app.extensions["dicetower.sse_limit"]


def test_a_closed_stream_frees_its_slot_without_waiting_for_a_keep_alive(
    live: tuple[BackgroundServer, ClientLimit],
) -> None:
    server, limit = live
    streams = [open_stream(server, "127.0.0.1"), open_stream(server, "127.0.0.2"),
               open_stream(server, "127.0.0.3")]
    for stream in streams:
        read_first_state(stream)
    assert limit.count == 3
    refused = open_stream(server, "127.0.0.4")
    assert refused.status == 503 and json.loads(refused.read())["code"] == "too_many_clients"
    close(refused)
    # Phones closing their page: no keep-alive is due for an hour, yet the slots come back.
    close(streams.pop())
    close(streams.pop())
    assert wait_until(lambda: limit.count == 1), f"slots still held: {limit.count}"
    assert limit.count_for("127.0.0.2") == limit.count_for("127.0.0.3") == 0
    again = open_stream(server, "127.0.0.4")
    try:
        assert again.status == 200
        read_first_state(again)
    finally:
        close(again)
        close(streams[0])


def test_a_waking_phone_does_not_hold_two_slots(
    live: tuple[BackgroundServer, ClientLimit], store: GameHub,
) -> None:
    server, limit = live
    old = open_stream(server)
    read_first_state(old)
    for _ in range(5):  # close the old stream, open a new one, as the page does on waking
        close(old)
        assert wait_until(lambda: limit.count_for("127.0.0.1") == 0)
        old = open_stream(server)
        assert old.status == 200
        read_first_state(old)
    try:
        assert limit.count == 1
        store.apply({"type": "throw", "faces": [4]})  # and the live one still gets changes
        read_first_state(old)
    finally:
        close(old)


def test_one_address_cannot_take_every_slot(live: tuple[BackgroundServer, ClientLimit]) -> None:
    server, limit = live
    mine = [open_stream(server), open_stream(server)]
    for stream in mine:
        read_first_state(stream)
    greedy = open_stream(server)
    body = json.loads(greedy.read())
    assert greedy.status == 503 and body["code"] == "too_many_streams"
    assert greedy.getheader("Retry-After") == "10"
    close(greedy)
    neighbour = open_stream(server, "127.0.0.2")  # someone else still gets in
    try:
        assert neighbour.status == 200
        read_first_state(neighbour)
        assert limit.count == 3
    finally:
        close(neighbour)
        for stream in mine:
            close(stream)


def test_client_limit_counts_per_address_and_forgets_released_ones() -> None:
    limit = ClientLimit(3, per_client=2)
    assert limit.acquire("a") is None and limit.acquire("a") is None
    assert limit.acquire("a") == CLIENT_FULL
    assert limit.acquire("b") is None
    assert limit.acquire("c") == FULL and limit.count == 3
    limit.release("a")
    assert limit.count_for("a") == 1 and limit.acquire("c") is None
    for client in ("a", "b", "c"):
        limit.release(client)
    assert limit.count == 0 and limit._by_client == {}


def test_a_stream_ends_as_soon_as_its_client_is_gone(store: GameHub) -> None:
    limit = ClientLimit(5)
    assert limit.acquire("x") is None
    gone = [False]
    stream = StateStream(
        store, limit, None, NEVER, client="x", disconnected=lambda: gone[0], poll=NEVER
    )
    assert next(stream).startswith(b"retry:")
    assert next(stream).startswith(b"id: ")
    gone[0] = True
    with pytest.raises(StopIteration):
        next(stream)  # checked before sleeping: no wait, no keep-alive written
    stream.close()
    stream.close()  # closing twice gives the slot back once
    assert limit.count == 0 and limit.count_for("x") == 0


# ---------------------------------------------------------------------------- JSON bodies


def nested(depth: int) -> bytes:
    return b'{"pin": ' + b"[" * depth + b"]" * depth + b"}"


def test_deeply_nested_json_is_a_clear_400_not_a_crash(
    client: FlaskClient, caplog: pytest.LogCaptureFixture,
) -> None:
    master = GameMaster(client, PIN)
    body = nested(5000)
    assert len(body) < 16 * 1024  # under the size cap: only the nesting is the problem
    with caplog.at_level(logging.ERROR):
        response = master.post_raw("login", body)
    assert response.status_code == 400
    assert response.get_json()["code"] == "bad_json" and "nested" in response.get_json()["error"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("path", ["game", "throw", "turn", "stop", "correct", "pause"])
def test_nesting_that_parses_is_still_refused(gm: GameMaster, path: str) -> None:
    response = gm.post_raw(path, nested(200))
    assert response.status_code == 400 and response.get_json()["code"] == "bad_json"


@pytest.mark.parametrize(
    ("data", "content_type"),
    [(b"{not json", "application/json"), (b"\xff\xfe", "application/json"),
     (b"[1, 2]", "application/json"), (b'{"faces": [3]}', "text/plain")],
)
def test_malformed_bodies_are_400_and_change_nothing(
    gm: GameMaster, store: GameHub, data: bytes, content_type: str,
) -> None:
    before = store.version
    response = gm.post_raw("throw", data, content_type)
    assert response.status_code == 400 and response.get_json()["code"] == "bad_json"
    assert store.version == before


def test_ordinary_bodies_still_work(gm: GameMaster, store: GameHub) -> None:
    assert gm.post("throw", {"faces": [3]}).status_code == 200
    assert store.history()["entries"]
    assert gm.post_raw("pause", b"").status_code == 200  # an empty body is an empty object
    assert store.snapshot()["paused"] is True


# ----------------------------------------------------------------------------- players


@pytest.mark.parametrize(
    "name",
    ["Ana\u202e", "\u202eanA", "A\u200bna", "An\ta", "Ana\nBen", "A\u2028na", "\u2066Ana\u2069",
     "Ana\x00", "\ufeffAna", "A\u200dna"],
)
def test_names_with_hidden_or_control_characters_are_refused(
    gm: GameMaster, store: GameHub, name: str,
) -> None:
    before = store.snapshot()["game"]["players"]
    response = gm.post("game", {"preset": "tim-11", "players": [name, "Ben"]})
    body = response.get_json()
    assert response.status_code == 400 and body["code"] == "bad_input"
    assert "players" in body["error"] and "U+" in body["error"]
    assert name not in body["error"]  # the message shows the name escaped, never raw
    assert store.snapshot()["game"]["players"] == before


def test_names_are_trimmed_and_may_use_any_script(gm: GameMaster, store: GameHub) -> None:
    names = ["  Zoé ", "Ñandú", "Łukasz", "وليد", "美咲 🎲"]
    response = gm.post("game", {"preset": "tim-11", "players": names})
    assert response.status_code == 200, response.get_json()
    shown = [p["name"] for p in store.snapshot()["game"]["players"]]
    assert shown == [n.strip() for n in names]


@pytest.mark.parametrize("players", [["Ana", "   "], ["Ana", ""], ["Ana", 7], "Ana,Ben"])
def test_empty_or_non_text_names_are_refused(gm: GameMaster, players: Any) -> None:
    response = gm.post("game", {"preset": "tim-11", "players": players})
    assert response.status_code == 400 and response.get_json()["code"] == "bad_input"


def test_trimmed_duplicates_are_refused(gm: GameMaster) -> None:
    response = gm.post("game", {"preset": "tim-11", "players": ["Ana", " Ana"]})
    assert response.status_code == 400 and "same name" in response.get_json()["error"]


def engine_accepts(preset: str, names: list[str]) -> bool:
    try:
        new_game(preset, names)
    except RuleError:
        return False
    return True


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_player_counts_are_the_engines(client: FlaskClient, preset: str) -> None:
    gm = logged_in(client, PIN)
    high = max(h for _, h in PLAYER_COUNTS.values())
    for count in range(0, high + 3):
        names = [f"P{i}" for i in range(count)]
        response = gm.post("game", {"preset": preset, "players": names})
        assert (response.status_code == 200) == engine_accepts(preset, names), (count, response)
        if response.status_code != 200:
            body = response.get_json()
            assert body["code"] == "bad_input" and "players" in body["error"], body


# ----------------------------------------------------------------------------- the PIN


def test_a_game_master_gets_back_in_after_a_short_lock(app: Flask, client: FlaskClient) -> None:
    now = [0.0]
    app.extensions["dicetower.limiter"] = FailureLimiter(
        app.config["LOGIN_MAX_FAILURES"], app.config["LOGIN_WINDOW"], clock=lambda: now[0],
        lockout=app.config["LOGIN_LOCKOUT"], max_lockout=app.config["LOGIN_MAX_LOCKOUT"],
    )
    master = GameMaster(client, PIN)
    for _ in range(app.config["LOGIN_MAX_FAILURES"] - 1):
        wrong = master.post("login", {"pin": "0000"})
        assert wrong.status_code == 401 and "Retry-After" not in wrong.headers
    last = master.post("login", {"pin": "0000"})  # this one starts the lock, and says so
    first_lock = app.config["LOGIN_LOCKOUT"]
    assert last.status_code == 401 and last.headers["Retry-After"] == str(int(first_lock) + 1)
    now[0] += first_lock
    wrong = master.post("login", {"pin": "0000"})  # one more mistake: twice as long
    assert wrong.headers["Retry-After"] == str(int(2 * first_lock) + 1)
    assert master.post("login", {"pin": PIN}).status_code == 429
    now[0] += 2 * first_lock
    assert master.post("login", {"pin": PIN}).status_code == 200


def test_a_brute_force_is_slowed_to_the_longest_lock(app: Flask) -> None:
    now = [0.0]
    limiter = FailureLimiter(
        app.config["LOGIN_MAX_FAILURES"], app.config["LOGIN_WINDOW"], clock=lambda: now[0],
        lockout=app.config["LOGIN_LOCKOUT"], max_lockout=app.config["LOGIN_MAX_LOCKOUT"],
    )
    for _ in range(40):
        now[0] += limiter.retry_after("attacker")  # every guess as early as allowed
        limiter.record_failure("attacker")
    assert limiter.retry_after("attacker") == app.config["LOGIN_MAX_LOCKOUT"]


@pytest.mark.parametrize("pin", ["ab", "12", "123", "", " 1234", "12 34", "１２３４", "٤٨٢١", True])
def test_create_app_refuses_a_pin_that_is_not_one(pin: Any) -> None:
    with pytest.raises(ValueError, match=r"SCOREBOARD_PIN.*at least 4 digits"):
        create_app({"SCOREBOARD_PIN": pin})


def test_create_app_keeps_good_pins_as_text() -> None:
    assert create_app({"SCOREBOARD_PIN": "0042"}).config["SCOREBOARD_PIN"] == "0042"
    assert create_app({"SCOREBOARD_PIN": 482193}).config["SCOREBOARD_PIN"] == "482193"
    generated = create_app({}).config["SCOREBOARD_PIN"]
    assert generated.isascii() and generated.isdigit() and len(generated) >= 4


@pytest.mark.parametrize("pin", ["ab", "123", "12a4", "١٢٣٤"])
def test_serve_refuses_a_bad_pin_in_one_line(
    capsys: pytest.CaptureFixture[str], pin: str,
) -> None:
    # The port is bad too: a PIN let through would be reported as the port's error instead.
    assert main(["serve", "--pin", pin, "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PIN" in err and "4 digits" in err and "--port" not in err


def test_serve_refuses_a_bad_pin_from_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DICETOWER_PIN", "secret")
    assert main(["serve", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "DICETOWER_PIN" in err and "4 digits" in err and "--port" not in err


# ------------------------------------------------------------------ paths and unknown values


@pytest.mark.parametrize(
    "path", ["/api", "/api/nope", "/api/state/extra", "/static/../api/nope", "/api/../nope",
             "/api/admin/dispenses/abc/confirm"],
)
def test_api_errors_are_always_json(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404 and response.is_json
    assert response.get_json() == {"error": response.get_json()["error"], "code": "not_found",
                                   "status": 404}


def test_api_errors_are_json_over_a_real_server(store: GameHub) -> None:
    app = create_app({"SCOREBOARD_PIN": PIN}, hub=store)
    with BackgroundServer(app) as server:
        host, port = server.url.split("//", 1)[1].rstrip("/").rsplit(":", 1)
        for path in ("//api/nope", "/static/../api/x", "/api"):
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            conn.request("GET", path)
            response = conn.getresponse()
            assert response.status == 404
            assert json.loads(response.read())["code"] == "not_found", path
            conn.close()


def test_pages_and_their_files_keep_html_errors(client: FlaskClient) -> None:
    for path in ("/static/nope.js", "/nope", "/apiary"):
        response = client.get(path)
        assert response.status_code == 404 and not response.is_json, path


def test_other_api_failures_are_json_too(store: GameHub) -> None:
    app = create_app({"SCOREBOARD_PIN": PIN}, hub=store)  # not TESTING: errors are answered

    def broken() -> str:
        raise RuntimeError("a bug")

    app.add_url_rule("/api/broken", view_func=broken)
    client = app.test_client()
    assert client.post("/api/state").get_json()["code"] == "method_not_allowed"
    failed = client.get("/api/broken")
    assert failed.status_code == 500 and failed.get_json()["code"] == "internal_server_error"


@pytest.mark.parametrize("rotate", ["sideways", "CW", "", 1, ["cw"], {"cw": 1}, True])
def test_unknown_rotations_are_refused(client: FlaskClient, rotate: Any) -> None:
    gm = logged_in(client, PIN)
    assert gm.post("game", {"preset": "4d", "players": ["Ana", "Ben"]}).status_code == 200
    store: GameHub = client.application.extensions["dicetower.hub"]
    opening = gm.post("throw", {"faces": [1, 2, 3, 4], "rotate": rotate})
    assert opening.status_code == 400 and "rotate" in opening.get_json()["error"]
    assert gm.post("throw", {"faces": [1, 2, 3, 4]}).status_code == 200
    before = store.version
    turn = gm.post("turn", {"faces": [1, 1, 3, 4], "rotate": rotate})
    assert turn.status_code == 400 and turn.get_json()["code"] == "bad_input"
    assert "rotate" in turn.get_json()["error"] and store.version == before


def test_a_rotation_on_a_throw_is_refused_even_when_valid(gm: GameMaster, store: GameHub) -> None:
    before = store.version
    response = gm.post("throw", {"faces": [3], "rotate": "cw"})
    assert response.status_code == 400 and "4D turn" in response.get_json()["error"]
    assert store.version == before
