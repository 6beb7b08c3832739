"""Where the broker is: ``mqtt://`` addresses, and a local Mosquitto for the demo, the bench
and the tests.

`BrokerAddress` is what a tower's ``[league] broker`` key and ``dicetower league serve
--broker`` take: ``mqtt://[USER[:PASSWORD]@]HOST[:PORT]`` (1883 by default) or ``mqtts://``
for TLS (8883). `LocalBroker` runs Debian's ``mosquitto`` on a free port of this machine, with
persistence, so that it can be stopped and started again without losing a session;
`EmbeddedBroker` is a broker inside this process (amqtt) for a demo where Mosquitto is not
installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import logging
import shutil
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

# Seconds between attempts to reach the broker, the first and the longest: the first soon (a
# broker restarted on the bar's network is back within a second), then doubling up to 30 s.
RECONNECT = (0.25, 30.0)
# Debian puts the broker in /usr/sbin, which is not on every user's PATH.
MOSQUITTO_PLACES = ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto")


@dataclass(frozen=True)
class BrokerAddress:
    """A broker to connect to; ``tls`` for ``mqtts://`` (``ca_file``: the CA to trust,
    None: the system's)."""

    host: str
    port: int = 1883
    username: str | None = None
    password: str | None = None
    tls: bool = False
    ca_file: str | None = None

    @classmethod
    def parse(cls, url: str, **extra: Any) -> BrokerAddress:
        """``mqtt://HOST[:PORT]`` or ``mqtts://...``; ValueError (one line) otherwise."""
        parts = urlsplit(url if "://" in url else f"mqtt://{url}")
        if parts.scheme not in ("mqtt", "mqtts"):
            raise ValueError(f"{url!r}: a broker is mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
        try:
            port = parts.port
        except ValueError:
            raise ValueError(f"{url!r}: the port must be a number 1..65535") from None
        if not parts.hostname:
            raise ValueError(f"{url!r}: no host; e.g. mqtt://192.168.1.10")
        tls = parts.scheme == "mqtts"
        return cls(host=parts.hostname, port=port or (8883 if tls else 1883),
                   username=unquote(parts.username) if parts.username else None,
                   password=unquote(parts.password) if parts.password else None,
                   tls=tls, **extra)

    def url(self) -> str:
        """The address without its password (for messages and logs)."""
        user = f"{self.username}@" if self.username else ""
        return f"{'mqtts' if self.tls else 'mqtt'}://{user}{self.host}:{self.port}"

    def configure(self, client: Any) -> None:
        """Give a paho client the credentials and TLS of this address."""
        if self.username is not None:
            client.username_pw_set(self.username, self.password)
        if self.tls:
            client.tls_set(ca_certs=self.ca_file)


def find_mosquitto() -> str | None:
    """The ``mosquitto`` program: on the PATH, else where Debian installs it; None: absent."""
    found = shutil.which("mosquitto")
    if found:
        return found
    return next((place for place in MOSQUITTO_PLACES if Path(place).is_file()), None)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalBroker:
    """A Mosquitto on 127.0.0.1, its configuration and persistence in ``folder``.

    `stop` and `start` again keep the port and the sessions (Mosquitto saves them when it
    stops), as a broker restarted in the middle of a bar night would."""

    def __init__(self, folder: Path, *, program: str | None = None, port: int = 0,
                 persistence: bool = True) -> None:
        program = program or find_mosquitto()
        if program is None:
            raise FileNotFoundError("mosquitto is not installed (Debian: apt-get install "
                                    "mosquitto)")
        self.program = program
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.config = self.folder / "mosquitto.conf"
        # Persistence: the league's queued messages outlive a restart. No message cap: a
        # league offline for a while must find everything on its return.
        self.config.write_text(
            f"listener {self.port} 127.0.0.1\n"
            "allow_anonymous true\n"
            f"persistence {'true' if persistence else 'false'}\n"
            f"persistence_location {self.folder}/\n"
            "max_queued_messages 0\n"
            "log_dest none\n"
            # Started by root, Mosquitto becomes the user "mosquitto", who may not write
            # its sessions here: it stays who started it.
            f"user {getpass.getuser()}\n")
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> BrokerAddress:
        return BrokerAddress(host="127.0.0.1", port=self.port)

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, timeout: float = 10.0) -> None:
        """Start the broker and return once it takes connections."""
        if self.running:
            return
        self._process = subprocess.Popen([self.program, "-c", str(self.config)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                error = (self._process.stderr.read() if self._process.stderr else b"").decode()
                raise RuntimeError(f"mosquitto stopped at once: {error.strip()[:200]}")
            with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", self.port), timeout=0.2):
                return
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"mosquitto did not listen on port {self.port} within {timeout} s")

    def stop(self) -> None:
        """Stop it as a service manager would (SIGTERM: it saves its sessions first)."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stderr:
            process.stderr.close()

    def __enter__(self) -> LocalBroker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class EmbeddedBroker:
    """An MQTT broker inside this process (amqtt, the optional ``league-broker`` extra), for
    the demo on a machine without Mosquitto: same face as `LocalBroker`, nothing kept on disk
    (a restart of the process forgets its sessions)."""

    def __init__(self, port: int = 0) -> None:
        # Loaded late: an optional dependency, only for a demo without Mosquitto.
        import amqtt.broker  # noqa: F401 - ImportError here says the extra is missing

        self.port = port or free_port()
        self._loop: Any = None
        self._broker: Any = None
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> BrokerAddress:
        return BrokerAddress(host="127.0.0.1", port=self.port)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, timeout: float = 10.0) -> None:
        from amqtt.broker import Broker  # the optional extra, checked by __init__

        logging.getLogger("amqtt").setLevel(logging.WARNING)  # it says every packet at INFO
        config = {"listeners": {"default": {"type": "tcp", "bind": f"127.0.0.1:{self.port}"}},
                  "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin":
                              {"allow_anonymous": True}}}
        self._loop = asyncio.new_event_loop()
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            try:
                self._broker = Broker(config, loop=self._loop)
                self._loop.run_until_complete(self._broker.start())
            except Exception as exc:  # told to the caller of start
                failure.append(exc)
                started.set()
                return
            started.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="embedded-broker", daemon=True)
        self._thread.start()
        if not started.wait(timeout) or failure:
            raise RuntimeError(f"the embedded broker did not start: {failure[:1]}")

    def stop(self) -> None:
        if not self.running:
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._broker.shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        assert self._thread is not None
        self._thread.join(timeout=5)

    def __enter__(self) -> EmbeddedBroker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
