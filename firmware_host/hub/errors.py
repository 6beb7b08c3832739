"""What the hub refuses, as a code and its values, and the sentences that say why.

A refusal is raised as a code of a text table with its values (`Refusal`); whoever shows it
(the scoreboard in the page's language, the command line and the logs in English) puts it
into words. `HubError` is the hub's own kind: the request conflicts with the game's state
(no game, paused, over), with the token ledger, or with a calibration under way; nothing
changed. The sentences are the table ``hub.refusals`` of the gettext catalogs
(`firmware_host.catalogue`); other layers add their own tables to `HUB_REFUSALS`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from firmware_host.catalogue import Catalogue

HUB_REFUSALS = Catalogue("hub.refusals")


class Refusal(Exception):
    """A refused request as a code of `texts` and its values; ``str()`` is English."""

    texts: ClassVar[Catalogue] = HUB_REFUSALS

    def __init__(self, code: str, **values: Any) -> None:
        self.code = code
        self.values = values
        super().__init__(self.text("en"))

    def text(self, language: str) -> str:
        """The sentence in ``language`` ("fr" or "en")."""
        return self.texts.say(self.code, self.values, language)


class HubError(Refusal):
    """The request conflicts with the hub's state (no game, paused, over, a dispense not
    waiting, a calibration under way); nothing changed."""
