"""Live updates over a real waitress server: events, catch-up, keep-alive, client limit.

Also the two commands built on it: `dicetower bench scoreboard` (tiny run) and `serve`.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator

import pytest

from firmware_host.cli import main
from firmware_host.figures import p95
from firmware_host.hub import GameHub
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.benchmark import run_benchmark, state_arrival
from firmware_host.scoreboard.server import BackgroundServer


class EventReader:
    """A minimal SSE client: reads one event (or comment) at a time from a live stream."""

    def __init__(self, url: str, last_event_id: str | None = None) -> None:
        host, port = url.split("//", 1)[1].rstrip("/").rsplit(":", 1)
        self.conn = http.client.HTTPConnection(host, int(port), timeout=5)
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        self.conn.request("GET", "/api/events", headers=headers)
        self.response = self.conn.getresponse()

    def next_block(self) -> dict[str, str]:
        """The next non-empty block of lines, as field -> value (comments under ':')."""
        block: dict[str, str] = {}
        while True:
            line = self.response.readline().decode()
            if not line:
                raise EOFError("stream closed")
            if line == "\n":
                if block:
                    return block
                continue
            field, _, value = line.rstrip("\n").partition(":")
            block[field] = value.strip()

    def next_state(self) -> tuple[str, dict]:
        while True:
            block = self.next_block()
            if block.get("event") == "state":
                return block["id"], json.loads(block["data"])

    def close(self) -> None:
        self.response.close()  # the response holds the socket, not the connection
        self.conn.close()


@pytest.fixture
def store() -> GameHub:
    store = GameHub()
    store.start_game("tim-11", ["Ana", "Ben", "Cleo"])
    return store


@pytest.fixture
def server(store: GameHub) -> Iterator[BackgroundServer]:
    app = create_app(
        {"SCOREBOARD_PIN": "1234", "SSE_MAX_CLIENTS": 3, "SSE_KEEPALIVE": 0.2}, hub=store
    )
    with BackgroundServer(app) as running:
        yield running


def test_stream_headers_and_first_state(server: BackgroundServer, store: GameHub) -> None:
    reader = EventReader(server.url)
    try:
        assert reader.response.status == 200
        assert reader.response.getheader("Content-Type").startswith("text/event-stream")
        assert reader.response.getheader("X-Accel-Buffering") == "no"
        assert reader.next_block() == {"retry": "2000"}
        ident, state = reader.next_state()
        assert ident == f"{store.instance}-{store.version}"
        assert state["game"]["players"][0]["name"] == "Ana"
    finally:
        reader.close()


def test_change_arrives_live(server: BackgroundServer, store: GameHub) -> None:
    reader = EventReader(server.url)
    try:
        reader.next_state()
        store.apply({"type": "throw", "faces": [3]})
        ident, state = reader.next_state()
        assert state["version"] == store.version and ident.endswith(f"-{store.version}")
        assert state["game"]["dice"] == [3]
    finally:
        reader.close()


def test_keep_alive_comments_flow(server: BackgroundServer) -> None:
    reader = EventReader(server.url)
    try:
        reader.next_state()
        assert reader.next_block() == {"": "keep-alive"}
    finally:
        reader.close()


def test_reconnecting_client_catches_up(server: BackgroundServer, store: GameHub) -> None:
    seen = f"{store.instance}-{store.version}"
    store.apply({"type": "throw", "faces": [3]})
    store.apply({"type": "throw", "faces": [5]})
    reader = EventReader(server.url, last_event_id=seen)
    try:
        _, state = reader.next_state()
        assert state["version"] == store.version and state["history_length"] == 2
    finally:
        reader.close()


def test_client_already_up_to_date_gets_no_repeat(
    server: BackgroundServer, store: GameHub
) -> None:
    reader = EventReader(server.url, last_event_id=f"{store.instance}-{store.version}")
    try:
        reader.next_block()  # retry
        assert reader.next_block() == {"": "keep-alive"}
    finally:
        reader.close()


def test_client_limit_answers_503_then_frees_slots(server: BackgroundServer) -> None:
    readers = [EventReader(server.url) for _ in range(3)]
    for reader in readers:
        reader.next_state()
    extra = EventReader(server.url)
    assert extra.response.status == 503
    assert json.loads(extra.response.read())["code"] == "too_many_clients"
    extra.close()
    readers.pop().close()
    # The server notices the closed stream at its next keep-alive, then takes a new client.
    for _ in range(50):
        again = EventReader(server.url)
        if again.response.status == 200:
            again.close()
            break
        again.response.read()
        again.close()
        time.sleep(0.1)
    else:
        pytest.fail("the closed stream never gave its slot back")
    for reader in readers:
        reader.close()


def test_benchmark_measures_every_client() -> None:
    result = run_benchmark(clients=3, updates=5, interval=0.01, seed=1)
    assert result["clients_failed"] == 0
    assert result["changes_seen"] == result["changes_expected"] == 15
    assert result["missed"] == 0 and 0 <= result["coalesced"] < 15
    assert 0 < result["p50_ms"] <= result["p95_ms"] <= result["max_ms"]


def test_bench_scoreboard_json_has_the_other_benches_keys(capsys) -> None:

    status = main(["bench", "scoreboard", "--clients", "2", "--updates", "3",
                   "--interval", "0.01", "--seed", "5", "--json"])
    out = capsys.readouterr().out
    assert status == 0 and len(out.splitlines()) == 1  # the JSON object alone
    result = json.loads(out)
    assert {"p50_ms", "p95_ms", "max_ms", "clients", "missed", "seed"} <= set(result)
    assert "median_ms" not in result
    assert (result["clients"], result["updates"], result["missed"], result["seed"]) == (2, 3, 0, 5)
    assert 0 < result["p50_ms"] <= result["p95_ms"] <= result["max_ms"]


def test_a_skipped_change_arrives_with_the_next_state() -> None:
    received = {3: 10.0, 5: 12.0, 6: 13.0}
    assert state_arrival(received, 3) == 10.0
    assert state_arrival(received, 4) == 12.0  # the stream went straight to version 5
    assert state_arrival(received, 7) is None


def test_the_benches_95th_percentile_is_nearest_rank() -> None:
    assert p95([float(v) for v in range(1, 101)]) == 95.0
    assert p95([float(v) for v in range(1, 11)]) == 10.0  # a delay seen, not 9.55 between two
    assert p95([7.0]) == 7.0


def test_bench_command_rejects_nonsense(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "scoreboard", "--clients", "0"]) == 2
    assert "--clients" in capsys.readouterr().err


def test_serve_command_rejects_bad_port_and_empty_pin(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--port", "70000"]) == 2
    assert main(["serve", "--pin", " "]) == 2
    assert main(["serve", "--max-clients", "0"]) == 2
    err = capsys.readouterr().err
    assert "--port" in err and "PIN" in err and "--max-clients" in err


def test_serve_command_serves_until_interrupted() -> None:
    """`dicetower serve` for real: prints URL, PIN and QR code, serves, stops on Ctrl+C."""
    import signal
    import socket
    import subprocess
    import sys
    from urllib.request import urlopen

    with socket.socket() as probe:  # a free port; the tiny race with other jobs is acceptable
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "firmware_host.cli", "serve", "--host", "127.0.0.1",
               "--port", str(port), "--pin", "9753", "--lang", "en"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        while not lines or not lines[-1].startswith("Ctrl+C"):
            line = process.stdout.readline()  # type: ignore[union-attr]
            assert line, f"serve exited early: {process.stderr.read()}"  # type: ignore[union-attr]
            lines.append(line.rstrip("\n"))
        printed = "\n".join(lines)
        assert f"http://127.0.0.1:{port}/" in printed and "9753" in printed
        assert "█" in printed  # the QR code, drawn with block characters
        with urlopen(f"http://127.0.0.1:{port}/api/state", timeout=5) as response:
            assert json.load(response)["game"] is None
        with urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
            assert "Scan to follow the game" in response.read().decode()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
