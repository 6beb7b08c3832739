"""Server-Sent Events: the full state pushed to every open page, within moments of a change.

Each event carries the whole snapshot (a few kilobytes), so a client that missed some simply
takes the next one, and a reconnecting client (``Last-Event-ID``) gets the current state at once
unless it already has it. Event ids are ``<store instance>-<version>``, so an id from before a
restart never matches. Keep-alive comments make dead connections fail within seconds, which
frees their server thread. The store lock is only held to read the cached snapshot, never
while writing to a socket.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from firmware_host.scoreboard.store import GameStore, StreamsEnded

RECONNECT_MS = 2000


class ClientLimit:
    """Bounds the open streams: each one holds a server thread for as long as it is open."""

    def __init__(self, maximum: int) -> None:
        self.maximum = maximum
        self._count = 0
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        with self._lock:
            return self._count

    def acquire(self) -> bool:
        with self._lock:
            if self._count >= self.maximum:
                return False
            self._count += 1
            return True

    def release(self) -> None:
        with self._lock:
            self._count = max(0, self._count - 1)


def event_id(store: GameStore, version: int) -> str:
    return f"{store.instance}-{version}"


def format_event(event: str, data: str, ident: str | None = None) -> bytes:
    """One SSE message; `data` must be a single line (compact JSON is)."""
    lines = [f"id: {ident}"] if ident is not None else []
    lines += [f"event: {event}", f"data: {data}"]
    return ("\n".join(lines) + "\n\n").encode()


class StateStream:
    """The body of one ``/api/events`` response; releases its client slot when closed.

    A class rather than a bare generator because WSGI servers call ``close()`` even when the
    body was never iterated (client gone before the first byte), and the slot must come back.
    """

    def __init__(
        self, store: GameStore, limit: ClientLimit, last_event_id: str | None, keepalive: float
    ) -> None:
        self._store = store
        self._limit = limit
        self._closed = False
        self._events = self._generate(last_event_id, keepalive)

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        return next(self._events)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._events.close()
            self._limit.release()

    def _generate(self, last_event_id: str | None, keepalive: float) -> Iterator[bytes]:
        store = self._store
        yield f"retry: {RECONNECT_MS}\n\n".encode()
        version, text = store.snapshot_json()
        if last_event_id != event_id(store, version):
            yield format_event("state", text, event_id(store, version))
        while True:
            try:
                changed = store.wait_for_change(version, timeout=keepalive)
            except StreamsEnded:
                return
            if changed is None:
                yield b": keep-alive\n\n"
                continue
            version, text = store.snapshot_json()
            yield format_event("state", text, event_id(store, version))
