"""Starting a game from a preset, and rebuilding one from its JSON form."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from firmware_host.rules.base import JSON_FORMAT, GameBase
from firmware_host.rules.errors import RuleError
from firmware_host.rules.fourd import Game4D
from firmware_host.rules.game421 import Game421
from firmware_host.rules.knobs import game_kind, resolve_knobs

PLAYER_COUNTS = {"421": (2, 10), "4d": (2, 2)}


def new_game(
    preset: str, players: list[str], knobs: dict[str, Any] | None = None, **opts: Any
) -> GameBase:
    """A new game of ``preset`` for ``players`` (names, in seat order).

    ``knobs`` and keyword options both override the preset's knobs
    (``new_game("4d", ["Ana", "Ben"], target=50)``).
    """
    kind = game_kind(preset)
    if knobs is not None and not isinstance(knobs, Mapping):
        raise RuleError(f"knobs must be a mapping of knob names to values, not {knobs!r}")
    merged = resolve_knobs(preset, {**(knobs or {}), **opts})
    names = _check_players(players, kind)
    cls = Game4D if kind == "4d" else Game421
    return cls(preset, names, merged)


def _check_players(players: list[str], kind: str) -> list[str]:
    if isinstance(players, str) or not isinstance(players, list | tuple):
        raise RuleError("players must be a list of names")
    names = [str(p).strip() for p in players]
    low, high = PLAYER_COUNTS[kind]
    if not low <= len(names) <= high:
        wanted = f"exactly {low}" if low == high else f"{low} to {high}"
        raise RuleError(f"{kind} is played by {wanted} players, not {len(names)}")
    if any(not name for name in names):
        raise RuleError("every player needs a name")
    if len(set(names)) != len(names):
        raise RuleError(f"player names must differ: {', '.join(names)}")
    return names


def game_from_json(data: dict[str, Any]) -> GameBase:
    """Rebuild a game from ``Game.to_json()`` by replaying its events.

    When the data carries a view, the rebuilt game must show the same view; a mismatch
    means the data was altered or written by other rules, and is refused.
    """
    if not isinstance(data, dict) or data.get("format") != JSON_FORMAT:
        raise RuleError(f"not a saved game (expected format {JSON_FORMAT!r})")
    try:
        game = new_game(data["preset"], data["players"], data["knobs"])
        events = data["events"]
    except KeyError as missing:
        raise RuleError(f"saved game lacks {missing}") from None
    if not isinstance(events, list):
        raise RuleError("saved game events must be a list")
    for seq, event in enumerate(events, start=1):
        try:
            game.apply(event)
        except RuleError as err:
            raise RuleError(f"saved game event {seq} is refused: {err}") from None
    view = data.get("view")
    if view is not None and view != game.view():
        raise RuleError("saved game does not replay to its stored view")
    return game
