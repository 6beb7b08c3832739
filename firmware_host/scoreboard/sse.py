"""Server-Sent Events: the full state pushed to every open page, within moments of a change.

Each event carries the whole snapshot (a few kilobytes), so a client that missed some simply
takes the next one, and a reconnecting client (``Last-Event-ID``) gets the current state at once
unless it already has it. Event ids are ``<hub instance>-<version>``, so an id from before a
restart never matches. The hub's lock is only held to read the cached snapshot, never while
writing to a socket.

A closed page must give its slot back at once: phones close and reopen their stream each time
they wake up, and a slot held until the next write would keep new pages out for a while. The
server watches the socket of every open stream (waitress's ``client_disconnected``, see
server.py) and the stream checks it every `DISCONNECT_POLL` seconds while it waits. Keep-alive
comments still go out every ``SSE_KEEPALIVE`` seconds for proxies and for servers that cannot
tell (a write to a closed connection fails, which ends the stream too).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

from firmware_host.hub import StreamsEnded
from firmware_host.hub.ports import HubAccess

RECONNECT_MS = 2000
DISCONNECT_POLL = 0.5  # seconds between checks that the client is still there

FULL = "full"  # every slot is taken
CLIENT_FULL = "client_full"  # this client address holds its share of the slots


class ClientLimit:
    """Bounds the open streams, in all and per client address.

    Each stream holds a server thread for as long as it is open, so one address (a script, or
    a phone reopening its page faster than the server notices) may not take them all.
    """

    def __init__(self, maximum: int, per_client: int | None = None) -> None:
        self.maximum = maximum
        self.per_client = per_client if per_client is not None else maximum
        self._count = 0
        self._by_client: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        with self._lock:
            return self._count

    def count_for(self, client: str) -> int:
        with self._lock:
            return self._by_client.get(client, 0)

    def acquire(self, client: str = "") -> str | None:
        """Take a slot for `client`: None when granted, else why not (`FULL`, `CLIENT_FULL`)."""
        with self._lock:
            if self._count >= self.maximum:
                return FULL
            held = self._by_client.get(client, 0)
            if held >= self.per_client:
                return CLIENT_FULL
            self._count += 1
            self._by_client[client] = held + 1
            return None

    def release(self, client: str = "") -> None:
        with self._lock:
            self._count = max(0, self._count - 1)
            held = self._by_client.get(client, 0) - 1
            if held > 0:
                self._by_client[client] = held
            else:
                self._by_client.pop(client, None)  # no entry left behind per address seen


def event_id(hub: HubAccess, version: int) -> str:
    return f"{hub.instance}-{version}"


def format_event(event: str, data: str, ident: str | None = None) -> bytes:
    """One SSE message; `data` must be a single line (compact JSON is)."""
    lines = [f"id: {ident}"] if ident is not None else []
    lines += [f"event: {event}", f"data: {data}"]
    return ("\n".join(lines) + "\n\n").encode()


class StateStream:
    """The body of one ``/api/events`` response; releases its client slot when closed.

    A class rather than a bare generator because WSGI servers call ``close()`` even when the
    body was never iterated (client gone before the first byte), and the slot must come back.
    `disconnected` tells whether the client has gone (None when the server cannot tell).
    ``odds``: whether the snapshots sent carry the odds advice.
    """

    def __init__(
        self,
        hub: HubAccess,
        limit: ClientLimit,
        last_event_id: str | None,
        keepalive: float,
        *,
        client: str = "",
        disconnected: Callable[[], bool] | None = None,
        poll: float = DISCONNECT_POLL,
        odds: bool = True,
    ) -> None:
        self._hub = hub
        self._odds = odds  # whether this page is shown the odds advice
        self._limit = limit
        self._client = client
        self._disconnected = disconnected
        self._closed = False
        self._lock = threading.Lock()
        self._events = self._generate(last_event_id, keepalive, poll)

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        return next(self._events)

    def close(self) -> None:
        with self._lock:  # the server may close from another thread than the one iterating
            if self._closed:
                return
            self._closed = True
        self._events.close()
        self._limit.release(self._client)

    def _gone(self) -> bool:
        return self._disconnected is not None and bool(self._disconnected())

    def _generate(
        self, last_event_id: str | None, keepalive: float, poll: float
    ) -> Iterator[bytes]:
        hub = self._hub
        yield f"retry: {RECONNECT_MS}\n\n".encode()
        version, text = hub.snapshot_json(odds=self._odds)
        if last_event_id != event_id(hub, version):
            yield format_event("state", text, event_id(hub, version))
        # Without a way to see the client leave, only writes can tell: wait a whole keep-alive.
        step = keepalive if self._disconnected is None else min(poll, keepalive)
        next_keepalive = time.monotonic() + keepalive
        while True:
            if self._gone():
                return  # ending the body makes the server close it: the slot comes back now
            try:
                changed = hub.wait_for_change(version, timeout=step)
            except StreamsEnded:
                return
            if changed is None:
                if time.monotonic() >= next_keepalive:
                    next_keepalive = time.monotonic() + keepalive
                    yield b": keep-alive\n\n"
                continue
            version, text = hub.snapshot_json(odds=self._odds)
            next_keepalive = time.monotonic() + keepalive
            yield format_event("state", text, event_id(hub, version))
