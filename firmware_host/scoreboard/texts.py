"""Why the scoreboard refuses a request, in every language: codes and values in, sentences out.

A refusal is raised as a code with its values (`firmware_host.hub.errors.Refusal`: the hub's
`HubError`, whose codes come first, and the scoreboard's `ApiError`); the error handler says it
in the language of the page that sent the request, the command line and the logs in English.
The sentences are the tables ``hub.refusals`` and ``scoreboard.refusals`` of the gettext
catalogs (`firmware_host.catalogue`); the rules engine's refusals have their own table
(`firmware_host.rules.texts`). JSON field names and values stay as the API spells them.
"""

from __future__ import annotations

from typing import Any

from firmware_host.catalogue import Catalogue
from firmware_host.hub.errors import HUB_REFUSALS

REFUSALS = HUB_REFUSALS | Catalogue("scoreboard.refusals")


def say(code: str, values: dict[str, Any] | None = None, language: str = "en") -> str:
    """The sentence for ``code`` in ``language`` ("fr" or "en"), ``values`` filled in; an
    unknown code comes back as it is, so a refusal is never lost for want of a sentence."""
    return REFUSALS.say(code, values, language)
