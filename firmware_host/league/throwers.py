"""Who made each input of a tower's game: named by the tower, checked by the league.

A throw (and a 421 stop, a 4D turn or presentation) is made by the player to move when the
engine takes it; a correction replaces the last input, so it is made by that input's player.
`thrower` says who, from a hub's game as it stands just before the action.

The tower's publisher names that player in every such message (``"who": {"player": SEAT,
"name": NAME}`` in the action): `GameFollower` replays the tower's journal beside the
publisher, in the order it publishes, so that the name is the one the tower's own game gave.
The league replays the same actions and refuses a message whose ``who`` is not the player its
own replay says (`firmware_host.league.store`).
"""

from __future__ import annotations

import contextlib
from typing import Any

from firmware_host.hub import GameHub, HubError, Journal
from firmware_host.hub.replay import replay_action
from firmware_host.rules import RuleError

# What a replayed action may raise: the rules refusing it, or a journal entry of another shape.
REPLAY_ERRORS = (RuleError, HubError, ValueError, KeyError, TypeError)
SCAN = 500  # journal actions read at a time when the follower has to find its place again


def thrower(hub: GameHub, action: dict[str, Any]) -> dict[str, Any] | None:
    """``{"player": SEAT, "name": NAME}`` of who makes ``action`` in ``hub``'s game as it
    stands before it; None for an action no player makes (a new game, an undo, a pause, the
    end) or when the game has no one to move."""
    kind = action.get("action")
    if kind == "event":
        if (action.get("event") or {}).get("type") == "undo":
            return None
        view = hub.state().game
        if view is None:
            return None
        seat = view.get("to_move")
        names = [player.get("name") for player in view.get("players") or []]
    elif kind == "correct":
        history = hub.history()
        if not history["entries"]:
            return None
        seat = history["entries"][-1].get("player")
        names = history["players"]
    else:
        return None
    if not isinstance(seat, int) or not 0 <= seat < len(names):
        return None
    return {"player": seat, "name": names[seat]}


class GameFollower:
    """The tower's games replayed from its journal, one action after the other, to name the
    player of each input. Fed in the journal's order; when it is not (the publisher starts
    from its cursor, or goes back to where the league asked), it finds its place again from
    the journal: the actions of the game under way at that point."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._hub: GameHub | None = None
        self._last: int | None = None  # the journal action id replayed last

    def name(self, action_id: int, prev: int, action: dict[str, Any]) -> dict[str, Any] | None:
        """Who makes journal action ``action_id`` (see `thrower`); ``prev`` is the id of the
        action before it in the journal (the one the follower must have replayed last)."""
        if action.get("action") == "new_game":
            self._hub = GameHub()
        elif self._hub is None or self._last != prev:
            self._rebuild(action_id)
        assert self._hub is not None
        who = thrower(self._hub, action)
        self._replay(action)
        self._last = action_id
        return who

    def _rebuild(self, before: int) -> None:
        """Replay the game under way just before journal action ``before``."""
        game: list[dict[str, Any]] = []
        after = 0
        while True:
            chunk = self.journal.actions_after(after, SCAN)
            for action_id, action in chunk:
                if action_id >= before:
                    break
                if action.get("action") == "new_game":
                    game = []
                game.append(action)
            else:
                if len(chunk) == SCAN:
                    after = chunk[-1][0]
                    continue
            break
        self._hub = GameHub()
        for action in game:
            self._replay(action)

    def _replay(self, action: dict[str, Any]) -> None:
        assert self._hub is not None
        # The tower's engine took it; if ours cannot, the league's replay will say so.
        with contextlib.suppress(*REPLAY_ERRORS):
            replay_action(self._hub, action)
