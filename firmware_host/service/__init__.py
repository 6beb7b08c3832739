"""Running the tower as a systemd service: the unit file it ships, and the notify protocol.

- `UNIT_TEMPLATE` (``dicetower.service`` beside this module) is the unit `dicetower service
  install` fills in (`render_unit`): ``Type=notify`` with a watchdog, a non-root user in the
  ``gpio`` and ``video`` groups, ``Restart=on-failure`` but never after exit status 2 (what a
  restart cannot fix) nor more than 5 times in 10 minutes, a wait of at most `CLOCK_WAIT_SECONDS`
  for the clock to be set from the network, the journal and the working directory in
  ``/var/lib/dicetower`` (``StateDirectory=``).
- `Notifier` tells systemd how the tower is doing: ``READY=1`` once it is up, ``WATCHDOG=1``
  from the controller's loop while it advances, ``STOPPING=1`` on the way out. It speaks
  through `sdnotify` (pure Python, no compiler: systemd-python and cysystemd both build against
  libsystemd on a Pi), and does nothing when systemd did not start the process.
"""

from __future__ import annotations

import os
import string
from pathlib import Path

import sdnotify

UNIT_TEMPLATE = Path(__file__).with_name("dicetower.service")
UNIT_NAME = "dicetower.service"
STATE_DIR = Path("/var/lib/dicetower")  # what StateDirectory=dicetower gives a system unit
JOURNAL = STATE_DIR / "journal.sqlite3"
WATCHDOG_SECONDS = 30  # the loop pings every second; a camera reopen takes a few at most
CLOCK_WAIT_SECONDS = 90  # for systemd-timesyncd's first sync; then the tower starts anyway
START_SECONDS = 90  # from the clock wait's end to READY=1 (the camera's warm-up, the journal)


def render_unit(*, exec_start: str, user: str, workdir: Path,
                watchdog: int = WATCHDOG_SECONDS) -> str:
    """The unit file's text for these values (`string.Template`: ``${name}`` in the file).

    systemd reads ``%`` as a specifier and ``$`` as a variable on these lines: a path holding
    either gets them doubled, which systemd reads back as the character itself.
    """
    template = string.Template(UNIT_TEMPLATE.read_text(encoding="utf-8"))
    return template.substitute(
        exec_start=exec_start.replace("%", "%%").replace("$", "$$"), user=user,
        workdir=str(workdir).replace("%", "%%"), watchdog=str(watchdog),
        clock_wait=str(CLOCK_WAIT_SECONDS), start_timeout=str(CLOCK_WAIT_SECONDS + START_SECONDS))


class Notifier:
    """sd_notify messages to systemd, when it is listening (``$NOTIFY_SOCKET``)."""

    def __init__(self) -> None:
        self.enabled = bool(os.environ.get("NOTIFY_SOCKET"))
        self._notifier = None
        if self.enabled:
            self._notifier = sdnotify.SystemdNotifier()

    def _send(self, message: str) -> None:
        if self._notifier is not None:
            self._notifier.notify(message)

    def ready(self, status: str = "") -> None:
        self._send("READY=1" + (f"\nSTATUS={status}" if status else ""))

    def watchdog(self) -> None:
        self._send("WATCHDOG=1")

    def stopping(self) -> None:
        self._send("STOPPING=1")

    def status(self, text: str) -> None:
        self._send(f"STATUS={text}")
