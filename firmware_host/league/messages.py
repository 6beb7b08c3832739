"""What goes on the wire between a tower and the league: topics and payloads, checked.

Topics (``PREFIX`` is ``dicetower`` unless configured):

- ``PREFIX/towers/NAME/actions``: one message per journaled action of the tower, QoS 1, in
  the journal's order: ``{"v": 1, "tower": NAME, "id": ID, "prev": PREV, "action": {...}}``
  where ``ID`` is
  the journal's action id (what makes a second delivery harmless), ``PREV`` the id of the
  action published before it (so that a missing one shows) and ``action`` the journal's
  entry as the hub wrote it (a new game with its preset and players, an accepted throw with its
  faces and time, a correction, a pause, the end; the effects: results, tokens, game over).
  An input a player made (a throw, a stop, a turn, a correction) also names them: ``"who":
  {"player": SEAT, "name": NAME}``; the league refuses it when its own replay of the game says
  another player. Images never leave the tower.
- ``PREFIX/towers/NAME/status``: retained, QoS 1: ``{"v": 1, "tower": NAME, "status": S,
  "at": T}`` with S one of `STATUSES`, said again at every connection: ``online`` (up, no
  game since the tower was switched on), ``idle`` (its last game over or ended), ``playing``,
  ``camera_fault``; the broker publishes the last will (``offline``) when the tower drops
  without saying goodbye.

The league may ask a tower for its actions again (``PREFIX/towers/NAME/resend``) and offer it
a tournament match (``PREFIX/towers/NAME/proposal``, retained).

A payload that is not JSON, not of this shape, or that names another tower than its topic is
refused (`MessageError`), never half-taken.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

DEFAULT_PREFIX = "dicetower"
VERSION = 1
MAX_PAYLOAD = 64 * 1024  # an action is a few hundred bytes; anything this big is not ours
STATUSES = ("online", "idle", "playing", "camera_fault", "offline")
# A table that can take a match: up with no game since it was switched on (``online``), or
# between games (``idle``).
FREE_STATUSES = ("online", "idle")
ACTION_KINDS = ("new_game", "event", "correct", "pause", "end")
# A tower's name is one topic level: no wildcard, no separator, nothing a URL must escape.
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")


class MessageError(ValueError):
    """A message the league refuses; the text says why, in one line."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class Who(_Strict):
    """Who made an input, as the tower's game says: their seat and name."""

    player: int = Field(ge=0)
    name: str


class ActionBody(BaseModel):
    """The journal's entry: its kind is checked here, its content by the rules engine."""

    model_config = ConfigDict(extra="allow", strict=True, allow_inf_nan=False)
    action: Literal["new_game", "event", "correct", "pause", "end"]
    who: Who | None = None  # the player who made an input (a throw, a correction)


class ActionMessage(_Strict):
    v: Literal[1]
    tower: str
    id: int = Field(ge=1)
    prev: int = Field(ge=0)  # the tower's action before this one (0: none): a gap shows
    action: ActionBody


class StatusMessage(_Strict):
    v: Literal[1]
    tower: str
    status: Literal["online", "idle", "playing", "camera_fault", "offline"]
    at: float


def check_name(name: str) -> str:
    """``name`` if it can be a tower's name (letters, digits, ``-`` and ``_``, 40 at most)."""
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise ValueError(f"{name!r} is not a tower name: letters, digits, - and _ "
                         "(40 at most), starting with a letter or digit")
    return name


def actions_topic(prefix: str, tower: str) -> str:
    return f"{prefix}/towers/{tower}/actions"


def status_topic(prefix: str, tower: str) -> str:
    return f"{prefix}/towers/{tower}/status"


def proposal_topic(prefix: str, tower: str) -> str:
    """Where the league offers a tower its next tournament match (retained; empty: none)."""
    return f"{prefix}/towers/{tower}/proposal"


def resend_topic(prefix: str, tower: str) -> str:
    """Where the league asks a tower to publish its journal again from an action id on
    (``{"v": 1, "from": ID}``): actions it lacks, lost by a broker that lost its sessions, or
    a league file started anew."""
    return f"{prefix}/towers/{tower}/resend"


def subscriptions(prefix: str) -> list[str]:
    """What the league listens to: every tower's actions and status."""
    return [f"{prefix}/towers/+/actions", f"{prefix}/towers/+/status"]


def action_payload(tower: str, action_id: int, prev: int, action: dict[str, Any]) -> bytes:
    return _dump({"v": VERSION, "tower": tower, "id": int(action_id), "prev": int(prev),
                  "action": action})


def status_payload(tower: str, status: str, at: float) -> bytes:
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}")
    return _dump({"v": VERSION, "tower": tower, "status": status, "at": float(at)})


def parse(prefix: str, topic: str, payload: bytes) -> tuple[str, ActionMessage | StatusMessage]:
    """(kind, message) of one received message: ``kind`` is ``actions`` or ``status``.

    Raises `MessageError` for a topic that is not a tower's, a payload that is not one of
    ours, or a message whose tower is not the one of its topic (a tower may speak only for
    itself; the broker's ACL says the same, this is the league's own check)."""
    parts = topic.split("/")
    head = prefix.split("/")
    if (len(parts) != len(head) + 3 or parts[:len(head)] != head
            or parts[len(head)] != "towers" or parts[-1] not in ("actions", "status")):
        raise MessageError(f"{topic}: not a tower's topic")
    tower, kind = parts[-2], parts[-1]
    if not NAME_PATTERN.match(tower):
        raise MessageError(f"{topic}: {tower!r} is not a tower name")
    if len(payload) > MAX_PAYLOAD:
        raise MessageError(f"{topic}: {len(payload)} bytes, more than any message of ours")
    try:
        data = json.loads(payload)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise MessageError(f"{topic}: the payload is not JSON") from None
    model = ActionMessage if kind == "actions" else StatusMessage
    try:
        message = model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "payload"
        raise MessageError(f"{topic}: {where}: {first['msg']}") from None
    if message.tower != tower:
        raise MessageError(f"{topic}: the message claims tower {message.tower!r}; refused")
    return kind, message


def _dump(data: dict[str, Any]) -> bytes:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
