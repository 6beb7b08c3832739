"""Starting a game from a preset, and rebuilding one from its JSON form."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from firmware_host.rules.base import JSON_FORMAT, GameBase
from firmware_host.rules.errors import RuleError
from firmware_host.rules.fourd import Game4D
from firmware_host.rules.game421 import Game421
from firmware_host.rules.knobs import game_kind, resolve_knobs, saved_knobs

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
        raise RuleError("knobs_not_mapping", value=repr(knobs))
    merged = resolve_knobs(preset, {**(knobs or {}), **opts})
    names = _check_players(players, kind)
    cls = Game4D if kind == "4d" else Game421
    return cls(preset, names, merged)


def _check_players(players: list[str], kind: str) -> list[str]:
    if isinstance(players, str) or not isinstance(players, list | tuple):
        raise RuleError("players_not_list")
    names = [str(p).strip() for p in players]
    low, high = PLAYER_COUNTS[kind]
    if not low <= len(names) <= high:
        if low == high:
            raise RuleError("player_count_exact", game=kind, count=low, given=len(names))
        raise RuleError("player_count_range", game=kind, low=low, high=high, given=len(names))
    if any(not name for name in names):
        raise RuleError("player_unnamed")
    if len(set(names)) != len(names):
        raise RuleError("players_not_distinct", players=", ".join(names))
    return names


def game_from_json(data: dict[str, Any]) -> GameBase:
    """Rebuild a game from ``Game.to_json()`` by replaying its events.

    When the data carries a view, the rebuilt game must show the same view; a mismatch
    means the data was altered or written by other rules, and is refused. A game saved by an
    earlier version replays under the readings it was played with (`saved_knobs`), and only
    the parts of the view both versions show are compared.
    """
    if not isinstance(data, dict) or data.get("format") != JSON_FORMAT:
        raise RuleError("not_saved_game", format=repr(JSON_FORMAT))
    try:
        game = new_game(data["preset"], data["players"],
                        saved_knobs(data["preset"], data["knobs"]))
        events = data["events"]
    except KeyError as missing:
        raise RuleError("saved_game_lacks", field=str(missing)) from None
    if not isinstance(events, list):
        raise RuleError("saved_events_not_list")
    for seq, event in enumerate(events, start=1):
        try:
            game.apply(event)
        except RuleError as err:
            raise RuleError("saved_event_refused", seq=seq, reason=err.as_text()) from None
    view = data.get("view")
    if view is not None and not _same_view(view, game.view()):
        raise RuleError("saved_view_differs")
    return game


def _same_view(saved: Any, replayed: dict[str, Any]) -> bool:
    if not isinstance(saved, dict):
        return False
    # A view losing most of its parts is not an older version's view but another thing.
    if len(saved.keys() & replayed.keys()) < len(replayed) // 2:
        return False
    return _agrees(saved, replayed)


def _agrees(saved: Any, replayed: Any) -> bool:
    """Equal, except that parts (keys of a mapping, at any depth) one side lacks are skipped:
    a newer version shows more, an older one showed what it has since stopped showing."""
    if isinstance(saved, dict) and isinstance(replayed, dict):
        return all(_agrees(saved[key], replayed[key]) for key in saved.keys() & replayed.keys())
    return saved == replayed
