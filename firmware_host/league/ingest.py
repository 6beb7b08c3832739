"""The league's side of the broker: every tower's messages, checked, into the league's file.

`LeagueListener` subscribes (QoS 1, persistent session: the broker keeps what arrives while
the league is away) to every tower's actions and status. Each message is checked
(`messages.parse`: JSON of our shape, the tower of the payload the tower of the topic) and
taken by the `LeagueStore`, which keeps each journal action id once; a refused one is only
noted, never half-taken. When the store holds an action whose predecessor it lacks (a broker
that lost its sessions, a league file started anew), the tower is asked to publish its journal
again from the first one missing (``PREFIX/towers/NAME/resend``).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

import paho.mqtt.client as mqtt

from firmware_host.league.broker import RECONNECT, BrokerAddress
from firmware_host.league.messages import (
    DEFAULT_PREFIX,
    MessageError,
    parse,
    resend_topic,
    subscriptions,
)
from firmware_host.league.store import LeagueStore

log = logging.getLogger(__name__)

RESEND_EVERY = 1.0  # seconds between two requests to one tower to publish again


class LeagueListener:
    """Feeds ``store`` from the broker at ``address``; see the module docstring."""

    def __init__(self, store: LeagueStore, address: BrokerAddress, *,
                 prefix: str = DEFAULT_PREFIX, client_id: str = "dicetower-league",
                 reconnect: tuple[float, float] = RECONNECT) -> None:
        self.store = store
        self.address = address
        self.prefix = prefix
        self.taken: dict[str, int] = {"new": 0, "late": 0, "held": 0, "duplicate": 0,
                                      "status": 0, "refused": 0}
        self.asked: dict[str, float] = {}  # tower -> when it was last asked to resend
        self._connected = threading.Event()
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                             clean_session=False, protocol=mqtt.MQTTv311)
        address.configure(client)
        client.reconnect_delay_set(min_delay=max(0.1, reconnect[0]),
                                   max_delay=max(0.1, reconnect[1]))
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        self._client = client

    def start(self) -> None:
        """Connect in the background (tried again until the broker answers)."""
        self._client.connect_async(self.address.host, self.address.port, 30)
        self._client.loop_start()

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def close(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any,
                    properties: Any) -> None:
        if reason.is_failure:
            log.warning("league broker %s refused the league: %s", self.address.url(), reason)
            return
        # Again at every connection: a broker that lost its sessions forgets subscriptions.
        client.subscribe([(topic, 1) for topic in subscriptions(self.prefix)])
        self._connected.set()

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any,
                       properties: Any) -> None:
        self._connected.clear()

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        try:
            kind, parsed = parse(self.prefix, message.topic, message.payload)
        except MessageError as exc:
            self.taken["refused"] += 1
            self.store.refuse(str(exc))
            return
        try:
            outcome = self.store.take(kind, parsed)
        except Exception as exc:  # one bad message must not stop the league listening
            log.exception("league: taking %s", message.topic)
            self.taken["refused"] += 1
            self.store.refuse(f"{message.topic}: not taken ({exc})")
            return
        self.taken[outcome] += 1
        if outcome == "held":
            self._ask_again(parsed.tower)

    def _ask_again(self, tower: str) -> None:
        """Ask ``tower`` for what the league lacks, at most once a second (what it sends
        back fills the hole at once; a second request meanwhile would only double it)."""
        now = time.monotonic()
        start = self.store.missing_from(tower)
        if start is None or now - self.asked.get(tower, -RESEND_EVERY) < RESEND_EVERY:
            return
        self.asked[tower] = now
        self._client.publish(resend_topic(self.prefix, tower),
                             json.dumps({"v": 1, "from": start}).encode(), qos=1)
