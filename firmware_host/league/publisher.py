"""The tower's side: its journal published to the league's broker, in order, never in the way.

`TowerPublisher` is one more subscriber of the tower's `GameHub`. Hearing of a change only
wakes its own thread: the hub, and so the game, never waits on the broker. That thread reads
the actions not yet published from the journal (`Journal.actions_after`), in the journal's
order, and hands them to paho with QoS 1 on a persistent session (``clean_session`` false).
The broker's acknowledgement moves a cursor, kept in a small file beside the journal: while
the broker or the Wi-Fi is down nothing new is handed over, the journal keeps it, and it goes
out in order when the link returns; after a restart of the tower, publishing goes on from
the cursor. A message that was sent but not yet acknowledged when the link dropped is sent
again; the league takes each journal action id once, so a second delivery changes nothing.

When the league lacks some (its broker lost them), it asks: the tower publishes its journal
again from the id asked for (``PREFIX/towers/NAME/resend``).

Every input a player makes (a throw, a stop, a turn, a correction) names that player in its
message (``who``, `throwers.GameFollower`): the league checks it against its own replay.

The tower's status (online, idle, playing, camera_fault) is published retained as soon as it
connects (again at every connection), then at each change, with a last will that the broker
publishes (``offline``) when the tower drops without a goodbye.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from firmware_host.hub import GameHub, Journal
from firmware_host.league.broker import RECONNECT, BrokerAddress
from firmware_host.league.messages import (
    DEFAULT_PREFIX,
    action_payload,
    actions_topic,
    check_name,
    proposal_topic,
    resend_topic,
    status_payload,
    status_topic,
)
from firmware_host.league.throwers import GameFollower

log = logging.getLogger(__name__)

WINDOW = 200  # actions handed to paho and not yet acknowledged, at most
STATUS_POLL = 2.0  # seconds between looks at the tower's own state (a camera fault)


class TowerPublisher:
    """Publishes one tower's journal and status; see the module docstring.

    ``cursor``: the file that keeps the last acknowledged action id (None: kept in memory, the
    whole journal is published again after a restart, harmless but slower).
    ``reconnect``: (shortest, longest) seconds between attempts to reach the broker."""

    def __init__(self, hub: GameHub, journal: Journal, address: BrokerAddress, tower: str, *,
                 prefix: str = DEFAULT_PREFIX, cursor: Path | None = None,
                 reconnect: tuple[float, float] = RECONNECT, keepalive: int = 30) -> None:
        self.hub = hub
        self.journal = journal
        self.address = address
        self.tower = check_name(tower)
        self.prefix = prefix
        self._cursor_file = cursor
        self.acked = _read_cursor(cursor)
        self._sent = self.acked  # the last action id handed to paho
        self._mids: dict[int, int] = {}  # paho message id -> journal action id
        self._acks: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._rewinds: queue.SimpleQueue[int] = queue.SimpleQueue()  # the league's requests
        self._done: set[int] = set()  # acknowledged ids above the contiguous cursor
        self._in_flight: list[int] = []  # action ids handed over, oldest first
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._connected = threading.Event()
        self._status_sent: str | None = None
        self._thread: threading.Thread | None = None
        self._follower = GameFollower(journal)  # names who made each input published
        self.published = 0  # messages handed to paho (again after a restart of the tower)
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"tower-{tower}",
                             clean_session=False, protocol=mqtt.MQTTv311)
        address.configure(client)
        client.will_set(status_topic(prefix, tower),
                        status_payload(tower, "offline", time.time()), qos=1, retain=True)
        client.reconnect_delay_set(min_delay=max(0.1, reconnect[0]),
                                   max_delay=max(0.1, reconnect[1]))
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_message = self._on_message
        self.proposal: dict[str, Any] | None = None  # the league's offer of a match, if any
        self._client = client
        self._keepalive = keepalive
        hub.subscribe(self._changed)

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        """Connect in the background and start publishing; returns at once (a broker that
        cannot be reached is tried again and again, the tower plays on meanwhile)."""
        self._client.connect_async(self.address.host, self.address.port, self._keepalive)
        self._client.loop_start()
        self._thread = threading.Thread(target=self._run, name=f"league-{self.tower}",
                                        daemon=True)
        self._thread.start()

    def close(self, *, goodbye: bool = True) -> None:
        """Stop publishing; ``goodbye``: say ``offline`` first (a tower switched off on
        purpose), else leave the last will to the broker."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if goodbye and self._connected.is_set():
            info = self._client.publish(status_topic(self.prefix, self.tower),
                                        status_payload(self.tower, "offline", time.time()),
                                        qos=1, retain=True)
            with contextlib.suppress(RuntimeError, ValueError):
                info.wait_for_publish(timeout=2)
            self._client.disconnect()
        self._client.loop_stop()
        self._drain_acks()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def pending(self) -> int:
        """Journal actions not yet acknowledged by the broker."""
        return max(0, self.journal.last_action_id() - self.acked)

    # ------------------------------------------------------------------ hub and paho hooks

    def _changed(self, action: dict[str, Any], result: Any) -> None:
        # On the hub's caller's thread: only a wake-up, never a wait.
        self._wake.set()

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any,
                    properties: Any) -> None:
        if reason.is_failure:
            log.warning("league broker %s refused tower %s: %s", self.address.url(),
                        self.tower, reason)
            return
        client.subscribe([(proposal_topic(self.prefix, self.tower), 1),
                          (resend_topic(self.prefix, self.tower), 1)])
        self._connected.set()
        self._status_sent = None  # say it again: the broker may have lost it
        self._wake.set()

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any,
                       properties: Any) -> None:
        self._connected.clear()

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason: Any,
                    properties: Any) -> None:
        # On paho's thread, inside its own lock: hand the acknowledgement over, no more.
        self._acks.put(mid)
        self._wake.set()

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        if message.topic == resend_topic(self.prefix, self.tower):
            self._resend_request(message.payload)
            return
        # The league's offer of a tournament match (empty: withdrawn); anything else is
        # ignored: the tower's game is started only by its game master.
        try:
            offer = json.loads(message.payload) if message.payload else None
            if offer is not None and not (isinstance(offer.get("players"), list)
                                          and isinstance(offer.get("preset"), str)):
                offer = None
        except (ValueError, AttributeError):
            offer = None
        self.proposal = offer

    def _resend_request(self, payload: bytes) -> None:
        try:
            start = json.loads(payload)["from"]
        except (ValueError, TypeError, KeyError):
            return
        if isinstance(start, int) and not isinstance(start, bool) and start >= 1:
            self._rewinds.put(start)
            self._wake.set()

    def start_proposal(self) -> dict[str, Any]:
        """The game master's one tap: start the match the league offers; its view.
        LookupError when there is no offer."""
        offer = self.proposal
        if offer is None:
            raise LookupError("the league offers no match")
        return self.hub.start_game(offer["preset"], [str(p) for p in offer["players"]])

    # ------------------------------------------------------------------ the publishing thread

    def _run(self) -> None:
        next_status = 0.0
        while not self._stop.is_set():
            self._wake.wait(timeout=STATUS_POLL)
            self._wake.clear()
            try:
                self._drain_acks()
                self._rewind()
                if not self._connected.is_set():
                    continue
                if time.monotonic() >= next_status:
                    next_status = time.monotonic() + STATUS_POLL
                    self._send_status(self._status())
                self._publish_new()
            except Exception:  # the tower must play on whatever happens here
                log.exception("league publisher of %s", self.tower)
                self._stop.wait(1.0)

    def _publish_new(self) -> None:
        room = WINDOW - len(self._in_flight)
        if room <= 0:
            return
        actions = self.journal.actions_after(self._sent, room)
        for action_id, action in actions:
            if not self._connected.is_set():
                return  # the journal keeps the rest
            who = self._follower.name(action_id, self._sent, action)
            body = action if who is None else {**action, "who": who}
            info = self._client.publish(actions_topic(self.prefix, self.tower),
                                        action_payload(self.tower, action_id, self._sent, body),
                                        qos=1)
            self._mids[info.mid] = action_id
            self._in_flight.append(action_id)
            self._sent = action_id
            self.published += 1
            if action.get("action") in ("new_game", "end") or any(
                    effect.get("kind") == "game_over" for effect in action.get("effects", [])):
                self._send_status(self._status())
        if len(actions) == room:
            self._wake.set()  # more waiting: go on once acknowledgements make room

    def _rewind(self) -> None:
        """Publish again from the earliest action the league asked for."""
        starts = []
        while True:
            try:
                starts.append(self._rewinds.get_nowait())
            except queue.Empty:
                break
        if starts:
            self._sent = min(self._sent, min(starts) - 1)

    def _drain_acks(self) -> None:
        moved = False
        while True:
            try:
                mid = self._acks.get_nowait()
            except queue.Empty:
                break
            action_id = self._mids.pop(mid, None)
            if action_id is None:
                continue  # a status message
            self._done.add(action_id)
            while self._in_flight and self._in_flight[0] in self._done:
                self._done.discard(self._in_flight[0])
                # max: an action published again was acknowledged once already.
                self.acked = max(self.acked, self._in_flight.pop(0))
                moved = True
        if moved:
            _write_cursor(self._cursor_file, self.acked)

    def _status(self) -> str:
        state = self.hub.state()
        tower = self.hub.snapshot(odds=False).get("tower") or {}
        if tower.get("status") == "error":
            return "camera_fault"
        if state.game is None:
            return "online"  # up, and no game since the tower was switched on
        if not state.ended:
            return "playing"
        return "idle"

    def _send_status(self, status: str) -> None:
        if status == self._status_sent:
            return
        self._status_sent = status
        self._client.publish(status_topic(self.prefix, self.tower),
                             status_payload(self.tower, status, time.time()), qos=1,
                             retain=True)


def cursor_beside(journal_path: Path) -> Path:
    """Where a tower keeps its publishing cursor: beside its journal."""
    return journal_path.with_name(journal_path.name + ".league")


def _read_cursor(path: Path | None) -> int:
    if path is None or not path.is_file():
        return 0
    try:
        return max(0, int(path.read_text().strip() or 0))
    except (OSError, ValueError):
        # A damaged cursor costs only a republication, which the league takes once.
        return 0


def _write_cursor(path: Path | None, value: int) -> None:
    if path is None:
        return
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(f"{value}\n")
    os.replace(temporary, path)
