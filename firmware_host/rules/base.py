"""What every game shares: the event journal, apply, undo, replay and JSON form.

A game is a pure state machine. ``apply`` checks an input event, changes the state and
returns the effects the machine must carry out. Accepted events are journaled, so the
whole game can be rebuilt by replaying them: that is how undo and ``game_from_json`` work.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any, ClassVar

from firmware_host.rules.errors import RuleError

JSON_FORMAT = "dicetower-game/1"

_SEQUENCES = (list, tuple)

# How to carry out the opposite of a token effect, for undo.
_INVERSE = {"tokens_from_pot": "tokens_to_pot", "tokens_to_pot": "tokens_from_pot"}


class GameBase:
    """Journal, undo and serialisation; subclasses implement ``_reset``, ``_step``, ``view``."""

    kind: ClassVar[str] = ""
    event_types: ClassVar[tuple[str, ...]] = ()
    #: The fields each event type may carry besides ``type`` (anything else is refused, so
    #: nothing the engine ignores is ever journaled as if it mattered).
    event_fields: ClassVar[dict[str, tuple[str, ...]]] = {}

    def __init__(self, preset: str, players: list[str], knobs: dict[str, Any]) -> None:
        self.preset = preset
        self.players = list(players)
        self.knobs = dict(knobs)
        self.history: list[dict[str, Any]] = []
        self.is_over = False
        self._reset()

    # -- to implement -------------------------------------------------------------------

    def _reset(self) -> None:
        """Put the game in its starting state (called by ``__init__`` and by replay)."""
        raise NotImplementedError

    def _step(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """Check and apply one normalised event; raise RuleError before changing anything."""
        raise NotImplementedError

    def view(self) -> dict[str, Any]:
        """The display snapshot (plain JSON types)."""
        raise NotImplementedError

    # -- the public surface -------------------------------------------------------------

    def apply(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """Apply one input event and return its effects; RuleError leaves the game unchanged."""
        if not isinstance(event, dict):
            raise RuleError("event_not_dict", kind=type(event).__name__)
        kind = event.get("type")
        if kind == "undo":
            return self.undo()
        if kind not in self.event_types:
            valid = ", ".join((*self.event_types, "undo"))
            raise RuleError("unknown_event", kind=repr(kind), valid=valid)
        if self.is_over:
            raise RuleError("game_is_over")
        clean = self._normalise(event)
        try:
            effects = self._step(clean)
        except Exception:
            # _step checks before it changes; rebuilding from the journal is the safety net
            # that keeps "refused input changes nothing" true even if a check came late.
            self._replay([entry["event"] for entry in self.history])
            raise
        self.history.append({"seq": len(self.history) + 1, "event": clean, "effects": effects})
        return list(effects)

    def undo(self) -> list[dict[str, Any]]:
        """Undo the last accepted input; returns the effects that put the tokens back."""
        if not self.history:
            raise RuleError("nothing_to_undo")
        last = self.history[-1]
        self._replay([entry["event"] for entry in self.history[:-1]])
        effects: list[dict[str, Any]] = [{"kind": "undone", "seq": last["seq"]}]
        for effect in reversed(last["effects"]):
            inverse = _invert(effect)
            if inverse is not None:
                effects.append(inverse)
        effects.extend(self._current_turn_effects())
        return effects

    @property
    def events(self) -> list[dict[str, Any]]:
        """The accepted input events, in order (what replay needs)."""
        return [entry["event"] for entry in self.history]

    def to_json(self) -> dict[str, Any]:
        """Everything needed to rebuild the game, plus its view to check the rebuild."""
        return {
            "format": JSON_FORMAT,
            "game": self.kind,
            "preset": self.preset,
            "knobs": dict(self.knobs),
            "players": list(self.players),
            "events": deepcopy(self.events),
            "view": self.view(),
        }

    # -- helpers for subclasses ---------------------------------------------------------

    def _replay(self, events: list[dict[str, Any]]) -> None:
        self.history = []
        self.is_over = False
        self._reset()
        for event in events:
            effects = self._step(event)
            self.history.append({"seq": len(self.history) + 1, "event": event, "effects": effects})

    def _normalise(self, event: dict[str, Any]) -> dict[str, Any]:
        """A clean copy of the event (only known fields, checked types)."""
        allowed = self.event_fields.get(event["type"], ())
        unused = sorted(set(event) - {"type", *allowed})
        if unused:
            kind, fields = repr(event["type"]), ", ".join(repr(f) for f in unused)
            if not allowed:
                raise RuleError("fields_none", kind=kind, unused=fields)
            raise RuleError("fields_unknown", kind=kind, unused=fields,
                            takes=", ".join(repr(f) for f in allowed))
        clean: dict[str, Any] = {"type": event["type"]}
        if "faces" in event or event["type"] in ("throw", "turn"):
            clean["faces"] = _int_list(event.get("faces"), "faces")
        if "keep" in event:
            # Checked even when falsy: 0, "" or False are no list of positions, and taking
            # them for "nothing kept" would let a wrong keep through on a first throw.
            keep = _int_list(event["keep"], "keep")
            if keep:
                clean["keep"] = keep
        player = event.get("player")
        if player is not None:
            if type(player) is not int or not 0 <= player < len(self.players):
                raise RuleError("bad_seat", last=len(self.players) - 1, value=repr(player))
            clean["player"] = player
        return clean

    def _check_player(self, event: dict[str, Any], expected: int | None) -> None:
        """Refuse an event that names a player other than the one to move."""
        player = event.get("player")
        if player is not None and player != expected:
            if expected is None:
                raise RuleError("not_your_turn_nobody", player=self.players[player])
            raise RuleError("not_your_turn", player=self.players[player],
                            mover=self.players[expected])

    def _current_turn_effects(self) -> list[dict[str, Any]]:
        return []


def _int_list(value: Any, field: str) -> list[int]:
    if not isinstance(value, _SEQUENCES):
        raise RuleError("not_a_list", field=field, value=repr(value))
    for item in value:
        if type(item) is not int:
            raise RuleError("not_whole_numbers", field=field, value=repr(item))
    return list(value)


def _invert(effect: dict[str, Any]) -> dict[str, Any] | None:
    kind = effect["kind"]
    if kind in _INVERSE:
        return {**effect, "kind": _INVERSE[kind]}
    if kind == "tokens_between":
        return {**effect, "from": effect["to"], "to": effect["from"]}
    return None
