"""Rebuilding the game from the journal, and knowing which journaled input each move came from.

`replay_action` applies one journaled action to a hub exactly as it was applied the
first time (the engine is deterministic, so the same actions give the same game). `Origins`
follows, for every entry of the engine's history, the journal action that made it: a dispense
belongs to an action, and stays due only while that action's entry stands (not undone, not
replaced by a correction). `last_throw` tells what a restarted tower may find in the tray.
"""

from __future__ import annotations

from typing import Any, Protocol

from firmware_host.rules.knobs import saved_knobs


class Replayable(Protocol):
    """The inputs a journaled action may be (`firmware_host.hub.GameHub` takes them all)."""

    def start_game(self, preset: str, players: list[str],
                   knobs: dict[str, Any] | None = None) -> Any: ...
    def apply(self, event: dict[str, Any]) -> Any: ...
    def correct_last(self, faces: list[int], keep: list[int] | None = None,
                     rotate: str | None = None) -> Any: ...
    def set_paused(self, paused: bool) -> Any: ...
    def end_game(self) -> Any: ...


def replay_action(store: Replayable, action: dict[str, Any]) -> None:
    """Apply one journaled action (as `GameHub` journals it) to ``store``."""
    kind = action.get("action")
    if kind == "new_game":
        preset = action["preset"]
        store.start_game(preset, list(action["players"]),
                         saved_knobs(preset, action.get("knobs")) or None)
    elif kind == "event":
        store.apply(action["event"])
    elif kind == "correct":
        store.correct_last(action["faces"], action.get("keep"), action.get("rotate"))
    elif kind == "pause":
        store.set_paused(bool(action.get("paused")))
    elif kind == "end":
        store.end_game()
    else:
        raise ValueError(f"unknown journaled action {kind!r}")


class Origins:
    """The journal action behind each entry of the game's history, kept in step with it."""

    def __init__(self) -> None:
        self._ids: list[int] = []

    def follow(self, action: dict[str, Any], action_id: int) -> None:
        """Keep in step with one more accepted action."""
        kind = action.get("action")
        if kind == "new_game":
            self._ids = []
        elif kind == "event":
            if (action.get("event") or {}).get("type") == "undo":
                if self._ids:
                    self._ids.pop()
            else:
                self._ids.append(action_id)
        elif kind == "correct" and self._ids:
            self._ids[-1] = action_id

    def live(self, action_id: int) -> bool:
        """Whether the entry made by ``action_id`` still stands in the game's history."""
        return action_id in self._ids


def last_throw(history: dict[str, Any]) -> tuple[list[int], int] | None:
    """(faces thrown, dice kept) of the last throw in a hub's history (`GameHub.history`)."""
    for entry in reversed(history.get("entries", [])):
        event = entry.get("event") or {}
        if event.get("type") == "throw":
            return sorted(event.get("faces", []), reverse=True), len(event.get("keep", []))
    return None
