"""The dice's fairness read from a tower's journal, beside the running tower.

The journal is opened read-only (SQLite's WAL lets a reader in while the tower commits; the
writer's lock is not taken), so `dicetower fairness` and the game master's page work while
the tower plays. Only thrown dice count: a 4D turn's faces are set by hand.

Reading a journal of years takes a while (every input is parsed again, to follow undos and
corrections), so the page's `FairnessWatch` reads it again only once it has grown by
``every`` inputs, and never makes a second reader wait for the first.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from firmware_host.fairness.analysis import DEFAULT_QUESTION, Question, Report, analyse
from firmware_host.hub.journal import Journal, JournalError

# Inputs (throws, stops, undos...) the journal grows by before the page's report is read again:
# a few throws more or less never change what hundreds of them say.
REFRESH_EVERY = 50


def journal_report(path: str | Path, since: float | None = None,
                   question: Question = DEFAULT_QUESTION) -> Report:
    """The report on every throw of the journal at ``path`` (from ``since``, a Unix time).

    Raises `JournalError` for a missing, foreign or damaged journal.
    """
    with Journal(path, read_only=True) as journal:
        return report_of(journal, since, question)


def report_of(journal: Journal, since: float | None = None,
              question: Question = DEFAULT_QUESTION) -> Report:
    """The report on the thrown dice of an open journal."""
    try:
        throws = journal.accepted_throws(since, turns=False)
    except ValueError as exc:  # a body that is not JSON: a damaged row
        raise JournalError(f"{journal.path}: an input is damaged ({exc}); keep the file "
                           "for inspection") from None
    return analyse([t["faces"] for t in throws], [t["colours"] for t in throws], question)


class FairnessWatch:
    """The latest report on a journal's dice, read again as the journal grows."""

    def __init__(self, path: str | Path, *, every: int = REFRESH_EVERY,
                 question: Question = DEFAULT_QUESTION) -> None:
        self.path = Path(path)
        self.every = every
        self.question = question
        self._lock = threading.Lock()
        self._journal: Journal | None = None
        self._read_at = -1  # the journal's last input when the report was made
        self._summary: dict[str, Any] | None = None

    def summary(self) -> dict[str, Any] | None:
        """The report as JSON (None while there is no journal to read yet)."""
        # The first call waits for the first report; later ones take the one there is while
        # another request reads the journal again.
        if not self._lock.acquire(blocking=self._summary is None):
            return self._summary
        try:
            if self._journal is None:
                self._journal = Journal(self.path, read_only=True)
            last = self._journal.last_action_id()
            if self._summary is None or last - self._read_at >= self.every:
                report = report_of(self._journal, None, self.question)
                self._summary = {**report.to_json(), "inputs": last}
                self._read_at = last
        except JournalError:
            self._drop()  # the tower may create it later: try again next time
        finally:
            self._lock.release()
        return self._summary

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None
