"""The scoreboard's address for phones: the LAN IPv4 of the default route first (the QR code),
the mDNS name where avahi publishes it, this machine's own last."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from firmware_host.scoreboard import network


def test_the_lan_address_is_the_default_route_interface() -> None:
    address = network.lan_address()
    if address is None:
        pytest.skip("this machine has no default route")
    # The kernel's choice for an outside address is the interface phones reach it on.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect(("192.0.2.1", 9))
        assert address == sock.getsockname()[0]
    assert not address.startswith("127.")


@pytest.mark.parametrize(("avahi", "urls"), [
    (True, ["http://192.168.1.23:8000/", "http://tower.local:8000/",
            "http://127.0.0.1:8000/"]),
    (False, ["http://192.168.1.23:8000/", "http://127.0.0.1:8000/"]),
])
def test_urls_qr_first_then_mdns_name_where_avahi_runs(avahi: bool, urls: list[str],
                                                       tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    avahi_socket = tmp_path / "socket"
    if avahi:
        avahi_socket.touch()
    monkeypatch.setattr(network, "AVAHI_SOCKET", avahi_socket)
    monkeypatch.setattr(network, "lan_address", lambda: "192.168.1.23")
    monkeypatch.setattr(network.socket, "gethostname", lambda: "tower")
    assert network.scoreboard_urls("0.0.0.0", 8000) == urls
    assert network.scoreboard_urls("10.0.0.5", 8000) == ["http://10.0.0.5:8000/"]


def test_offline_only_this_machine_and_no_mdns(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "socket").touch()
    monkeypatch.setattr(network, "AVAHI_SOCKET", tmp_path / "socket")
    monkeypatch.setattr(network, "lan_address", lambda: None)
    assert network.scoreboard_urls("0.0.0.0", 8000) == ["http://127.0.0.1:8000/"]


def test_a_loopback_only_route_is_no_lan_address(monkeypatch: pytest.MonkeyPatch) -> None:
    class Loopback:
        def __init__(self, *args: object) -> None:
            pass

        def __enter__(self) -> Loopback:
            return self

        def __exit__(self, *args: object) -> None:
            pass

        def connect(self, address: object) -> None:
            pass

        def getsockname(self) -> tuple[str, int]:
            return ("127.0.0.1", 40000)

    monkeypatch.setattr(network.socket, "socket", Loopback)
    assert network.lan_address() is None


def test_localhost_is_no_mdns_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "socket").touch()
    monkeypatch.setattr(network, "AVAHI_SOCKET", tmp_path / "socket")
    monkeypatch.setattr(network.socket, "gethostname", lambda: "localhost")
    assert network.mdns_name() is None
    monkeypatch.setattr(network.socket, "gethostname", lambda: "bar-tower.lan")
    assert network.mdns_name() == "bar-tower.local"
