"""Paying tokens out: the journal's token ledger carried out on the tower's dispensers.

A worker thread takes the dispenses the journal holds as *intended*, oldest first, and pays
each one token at a time: the ledger counts every token as it falls (durable before the next
stroke), so a crash costs at most the one token in flight, and that dispense is then left for
the game master to confirm instead of being paid again or forgotten.

A jam (or an empty hopper) stops the dispense where it is, with what was counted; the game is
paused with the reason until someone clears it and resumes (scoreboard or button), and the
rest is paid then. A dispense whose input was undone or corrected before it was paid is voided;
tokens already paid for it are to be handed back, which the scoreboard says.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from firmware_host.hub import Dispense, Journal

log = logging.getLogger(__name__)


class PaysTokens(Protocol):
    """What the dispenser needs of the tower (`hardware.Tower` has it)."""

    def dispense(self, seat: int, n: int) -> object: ...


class TokenDispenser:
    """Pays the journal's intended dispenses on ``tower``, from a thread of its own.

    ``live(action_id)`` tells whether the input that made a dispense still stands (not undone
    or corrected). ``on_jam(dispense, detail)`` and ``on_void(dispense)`` are called from the
    worker thread; ``on_token(dispense, delivered)`` after each token is counted, and
    ``before_token(dispense)`` before each stroke (a simulated table notes where tokens go).
    """

    def __init__(self, tower: PaysTokens, journal: Journal, *,
                 live: Callable[[int], bool],
                 on_jam: Callable[[Dispense, str], None],
                 on_void: Callable[[Dispense], None],
                 on_token: Callable[[Dispense, int], None] | None = None,
                 before_token: Callable[[Dispense], None] | None = None) -> None:
        self.tower = tower
        self.journal = journal
        self.live = live
        self.on_jam = on_jam
        self.on_void = on_void
        self.on_token = on_token
        self.before_token = before_token
        self._wake = threading.Condition()
        self._pending = False
        self._stopping = False
        self._held = False  # a jam holds every dispense until someone resumes
        self._busy = False
        self._thread = threading.Thread(target=self._loop, name="dispenser", daemon=True)

    def start(self) -> TokenDispenser:
        self._thread.start()
        return self

    def wake(self) -> None:
        """Look at the ledger again (a new input, a resume, a confirmation)."""
        with self._wake:
            self._pending = True
            self._wake.notify_all()

    def resume(self) -> None:
        """Someone cleared the jam: pay what is still due."""
        with self._wake:
            self._held = False
            self._pending = True
            self._wake.notify_all()

    @property
    def held(self) -> bool:
        return self._held

    def idle(self, timeout: float = 10.0) -> bool:
        """Wait until nothing is left to pay (or a jam holds it); True when so. The worker is
        then at rest: every callback of what it did has returned."""
        with self._wake:
            # Not busy first: a jam is held before its `on_jam` has run.
            return self._wake.wait_for(
                lambda: not self._busy and (self._held or not self._pending), timeout)

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    # ------------------------------------------------------------------ the worker

    def _loop(self) -> None:
        while True:
            with self._wake:
                self._wake.wait_for(lambda: self._stopping or (self._pending and not self._held))
                if self._stopping:
                    return
                self._pending = False
                self._busy = True
            try:
                self._pay_all()
            except Exception:  # a bug must not kill the thread that pays players
                log.exception("paying tokens failed")
            finally:
                with self._wake:
                    self._busy = False
                    self._wake.notify_all()

    def _pay_all(self) -> None:
        for row in self.journal.dispenses(("intended",)):
            if self._stopping or self._held:
                return
            if not self.live(row.action):
                self.journal.mark(row.id, "void")
                self.on_void(self.journal.dispense(row.id))
                continue
            if not self._pay(row):
                return

    def _pay(self, row: Dispense) -> bool:
        """Pay one dispense to the end; False when a jam stopped it."""
        self.journal.mark(row.id, "started")
        delivered = row.delivered
        while delivered < row.requested:
            if self._stopping:
                # Stopping cleanly between two tokens: nothing is in doubt.
                self.journal.mark(row.id, "intended", delivered=delivered)
                return False
            if self.before_token is not None:
                self.before_token(row)
            result = self.tower.dispense(row.seat + 1, 1)
            fell = int(getattr(result, "dispensed", 0))
            if fell:
                delivered += fell
                self.journal.count_token(row.id, delivered)
                if self.on_token is not None:
                    self.on_token(row, delivered)
            if getattr(result, "jammed", False) or not fell:
                detail = str(getattr(result, "reason", "") or "no token fell")
                self.journal.mark(row.id, "intended", delivered=delivered, note=detail)
                with self._wake:
                    self._held = True
                self.on_jam(self.journal.dispense(row.id), detail)
                return False
        self.journal.mark(row.id, "done", delivered=delivered)
        if not self.live(row.action):
            # Undone while it was being paid: what fell is to be handed back.
            self.journal.mark(row.id, "void")
            self.on_void(self.journal.dispense(row.id))
        return True
