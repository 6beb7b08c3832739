"""Where phones can reach the scoreboard: the tower's address on the bar's network, as a QR code.

Phones on a bar's Wi-Fi often cannot resolve the tower's hostname (no local DNS, no mDNS on
some Android phones), so the QR code uses the IPv4 address of the interface holding the default
route (the bar's network, never 127.0.0.1 when there is one). Where avahi publishes the
tower's name by mDNS (Raspberry Pi OS runs avahi-daemon), ``http://NAME.local:PORT/`` is
printed too: it keeps working when the router hands the Pi another address.
"""

from __future__ import annotations

import socket
from pathlib import Path

import segno

AVAHI_SOCKET = Path("/run/avahi-daemon/socket")  # there while avahi-daemon runs


def lan_address() -> str | None:
    """The IP address of the interface holding the default route, or None when offline.

    Connecting a UDP socket sends no packet; it only makes the kernel pick the interface.
    """
    for probe in ("192.0.2.1", "10.255.255.255"):  # documentation/private ranges: never reached
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.connect((probe, 9))
                address = sock.getsockname()[0]
        except OSError:
            continue
        if address and not address.startswith(("0.", "127.")):
            return address
    return None


def mdns_name() -> str | None:
    """``HOSTNAME.local`` when avahi-daemon runs to publish it, else None."""
    name = socket.gethostname().split(".")[0]
    if not AVAHI_SOCKET.exists() or not name or name == "localhost":
        return None
    return f"{name}.local"


def scoreboard_urls(host: str, port: int) -> list[str]:
    """URLs to print at start-up, the one for the QR code first: the LAN address, the mDNS
    name where avahi publishes it, then this machine's own."""
    if host in ("0.0.0.0", "", "::"):
        lan = lan_address()
        addresses = [a for a in (lan, mdns_name() if lan else None, "127.0.0.1") if a]
    else:
        addresses = [host]
    urls = []
    for address in dict.fromkeys(addresses):
        shown = f"[{address}]" if ":" in address else address
        urls.append(f"http://{shown}:{port}/")
    return urls


def hostname() -> str:
    return socket.gethostname()


def qr_svg(url: str) -> str:
    """The QR code of `url` as an inline SVG element (no file, no external request)."""
    return segno.make(url, error="m").svg_inline(
        scale=4, border=2, dark="#111", light="#fff", svgclass="qr", lineclass="qr-line"
    )


def qr_terminal(url: str) -> None:
    """Print the QR code of `url` on the terminal (half-height blocks)."""
    segno.make(url, error="m").terminal(compact=True)
