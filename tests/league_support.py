"""Shared pieces of the league's tests: a real Mosquitto on a free port, a link that can be
cut between a tower and the broker, and the standings the towers' own games make."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from firmware_host.league.broker import BrokerAddress, LocalBroker, find_mosquitto
from firmware_host.league.simtower import SimTower
from firmware_host.league.standings import Scoring, standings

# Reconnection is tried every second in the tests (a tower's default waits up to 30 s).
FAST = (0.2, 1.0)
# How long a test waits for the league to catch up before it looks (a bound, not a measure).
PATIENCE = 30.0


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[LocalBroker]:
    """A real Mosquitto for one test; skipped with the reason when it is not installed."""
    program = find_mosquitto()
    if program is None:
        pytest.skip("mosquitto is not installed: `make broker` (Debian: apt-get install "
                    "mosquitto) runs the league's broker tests")
    local = LocalBroker(tmp_path / "broker", program=program)
    local.start()
    try:
        yield local
    finally:
        local.stop()


def wait_until(condition: Callable[[], bool], timeout: float = PATIENCE) -> bool:
    """Wait for ``condition``; the test then asserts the condition itself."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def expected_standings(towers: list[SimTower]) -> list[dict]:
    """The standings the towers' own finished games make (what the league must show)."""
    games = [{"state": "over", **game} for tower in towers for game in tower.games_over]
    return [record.to_json() for record in standings(games, Scoring(), {})]


def journal_counts(towers: list[SimTower]) -> dict[str, int]:
    return {tower.name: tower.journal.last_action_id() for tower in towers}


class Link:
    """A TCP relay between towers and the broker that the test can cut and restore, as a
    bar's Wi-Fi drops: cutting closes every connection through it and refuses new ones."""

    def __init__(self, target: BrokerAddress) -> None:
        self.target = target
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(16)
        self.address = BrokerAddress(host="127.0.0.1", port=self._server.getsockname()[1])
        self._up = True
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        with self._lock:
            self._up = False
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._open.clear()

    def restore(self) -> None:
        with self._lock:
            self._up = True

    def close(self) -> None:
        self.cut()
        self._server.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                if not self._up:
                    client.close()
                    continue
                try:
                    upstream = socket.create_connection((self.target.host, self.target.port))
                except OSError:
                    client.close()
                    continue
                self._open += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
