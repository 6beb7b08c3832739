"""`GameHub`: the one owner of the game, its journal and everything shown of it.

The rules engine stays the single source of truth: the hub only applies inputs through it and
adds what the engine does not know (paused, ended, the latest camera reading, who threw what).
Every input, whoever makes it (the camera loop, a button, the game master's page, a replayed
journal), goes through `GameHub._commit`: under the lock it is applied, counted, written to
the journal with the token dispenses its effects make (`open_journal`), and only then does
anyone hear of it. Subscribers (`subscribe`) hear of each change after the lock is released:
the controller carries out the effects there (lights, tokens).

The tower adds what only it knows (`set_tower`): its status (ready, reading, asking for a
throw again, camera error, jam), a notice in every language, and the token dispenses under way.

Readers never wait on writers for long: the snapshot sent to clients is serialised once per
version and cached, `state` gives the loop what it decides by without any serialising, and
`wait_for_change` lets streaming clients sleep until the counter moves.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from firmware_host.hub.errors import HubError
from firmware_host.hub.journal import Journal
from firmware_host.hub.replay import Origins, replay_action
from firmware_host.hub.stats import hands_completed, player_statistics
from firmware_host.rules import Game, RuleError, game_from_json, new_game

JSONDict = dict[str, Any]
# (game version, the game's view) -> the advice for the player to move (see odds.py).
OddsSource = Callable[[int, JSONDict], "JSONDict | None"]

# Inputs whose faces a misread can make wrong, so a correction may replace them.
CORRECTABLE_EVENTS = ("throw", "turn")


class StreamsEnded(Exception):
    """The server is stopping (or restarting): open streams should finish now."""


@dataclass(frozen=True)
class HubState:
    """What the tower decides by, read without serialising anything. One per version, shared
    by every reader of it: read it, never change it."""

    game: JSONDict | None  # the engine's view, None before the first game
    paused: bool
    ended: bool  # ended by the game master, or over by the rules
    last_input: JSONDict | None  # the event of the last entry of the game's history


class GameHub:
    """Holds the current game and everything shown about it: see the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._journal: Journal | None = None
        self._tokens = False  # whether journaled inputs also write the dispenses they make
        self._origins = Origins()
        self._recorded = threading.local()  # .id: the action this thread journaled last
        self._state: tuple[int, HubState] | None = None
        self._listeners: list[Callable[[JSONDict, Any], None]] = []
        self._tower: JSONDict | None = None
        self._game: Game | None = None
        # One note per entry of the engine's history: who was to move, when, hands completed.
        self._notes: list[JSONDict] = []
        self._paused = False
        self._ended = False
        self._reading: JSONDict | None = None
        self._frame: bytes | None = None
        self._version = 0
        self._game_version = 0  # the version of the last change of the game itself
        self._cached: tuple[int, str] | None = None
        self._cached_data: JSONDict = {}
        self._cached_no_odds: tuple[int, str] | None = None  # the same without the advice
        self._odds_source: OddsSource | None = None
        self._stream_endings = 0  # counts `end_streams` calls
        # Tells a reconnecting client whether its Last-Event-ID comes from this run.
        self.instance = secrets.token_hex(4)

    # ----------------------------------------------------------------- reading the state

    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    def state(self) -> HubState:
        """The game's view, paused, ended and the last input, once per version."""
        with self._lock:
            if self._state is None or self._state[0] != self._version:
                game = self._game
                self._state = (self._version, HubState(
                    game=game.view() if game is not None else None,
                    paused=self._paused,
                    ended=self._ended or bool(game is not None and game.is_over),
                    last_input=game.history[-1]["event"] if game and game.history else None))
            return self._state[1]

    def snapshot(self, *, odds: bool = True) -> JSONDict:
        """The state every client sees: the engine's view plus the hub's own metadata.

        ``odds=False``: without the advice (``odds`` is None), for pages not shown it."""
        return json.loads(self.snapshot_json(odds=odds)[1])

    def snapshot_json(self, *, odds: bool = True) -> tuple[int, str]:
        """(version, snapshot as JSON text), serialised once per version (and once more
        without the advice, when some page is not shown it)."""
        with self._lock:
            if self._cached is None or self._cached[0] != self._version:
                data = self._snapshot_locked()
                self._cached = (self._version, _compact_json(data))
                self._cached_data = data
                self._cached_no_odds = None
            if odds or self._cached_data.get("odds") is None:
                return self._cached
            if self._cached_no_odds is None:
                self._cached_no_odds = (self._version,
                                        _compact_json({**self._cached_data, "odds": None}))
            return self._cached_no_odds

    # ----------------------------------------------------------------- the odds advice

    def set_odds_source(self, source: OddsSource | None) -> None:
        """Where the snapshot's ``odds`` come from: ``source(game_version, view)`` is asked
        once per version, under the lock, so it must answer at once (`OddsService` does)."""
        with self._lock:
            self._odds_source = source
            self._cached = None  # the next snapshot asks the source (no new version: the
            # game did not change, and a stream gets the advice when it is ready)

    def odds_ready(self, game_version: int) -> None:
        """The advice of ``game_version`` is ready: a new version, so the streams push it (a
        late one, for a game that has moved on since, changes nothing)."""
        with self._changed:
            if game_version == self._game_version and self._odds_source is not None:
                self._version += 1
                self._changed.notify_all()

    def _odds_locked(self, view: JSONDict | None) -> JSONDict | None:
        if self._odds_source is None or view is None or self._ended:
            return None
        return self._odds_source(self._game_version, view)

    def history(self) -> JSONDict:
        """Every accepted input of the game with its effects, who made it and when."""
        with self._lock:
            if self._game is None:
                return {"version": self._version, "players": [], "entries": []}
            entries = [
                {**entry, **(self._notes[i] if i < len(self._notes) else {})}
                for i, entry in enumerate(self._game.history)
            ]
            players = [p["name"] for p in self._game.view()["players"]]
            return {"version": self._version, "players": players, "entries": entries}

    def game_json(self) -> JSONDict | None:
        """The whole game as the engine serialises it (enough to rebuild it), or None."""
        with self._lock:
            return None if self._game is None else self._game.to_json()

    def frame(self) -> tuple[int, bytes] | None:
        """(reading version, annotated JPEG) of the latest camera reading, or None."""
        with self._lock:
            if self._frame is None or self._reading is None:
                return None
            return self._reading["version"], self._frame

    def wait_for_change(self, after: int, timeout: float) -> int | None:
        """Block until the version differs from `after`; return it, or None on timeout.

        Raises `StreamsEnded` when `end_streams` is called meanwhile.
        """
        with self._changed:
            endings = self._stream_endings
            if not self._changed.wait_for(
                lambda: self._stream_endings != endings or self._version != after,
                timeout=timeout,
            ):
                return None
            if self._stream_endings != endings:
                raise StreamsEnded
            return self._version

    def end_streams(self) -> None:
        """Wake every waiting stream and make it finish (the server stops or restarts).

        Only the streams open now end; the hub itself keeps working and new streams can
        open, so a server can be restarted around the same hub.
        """
        with self._changed:
            self._stream_endings += 1
            self._changed.notify_all()

    # ----------------------------------------------------------------- changing the state

    def start_game(
        self, preset: str, players: list[str], knobs: JSONDict | None = None
    ) -> JSONDict:
        """Replace the current game by a new one; return its view."""
        game = new_game(preset, list(players), knobs or None)
        # The full knobs, not only the overrides: a later version's new knobs or defaults
        # never change a game in progress when the journal is replayed.
        action = {"action": "new_game", "preset": preset, "players": players,
                  "knobs": dict(game.knobs)}

        def install() -> JSONDict:
            self._game = game
            self._notes = []
            self._paused = False
            self._ended = False
            return game.view()

        return self._commit(action, install)

    def apply(self, event: JSONDict) -> list[JSONDict]:
        """Apply one input (throw, stop, turn, undo) through the engine; return its effects."""

        def apply_event() -> list[JSONDict]:
            game = self._playable_game()
            before = game.view()
            effects = game.apply(event)
            self._note_history(game, before)
            return effects

        return self._commit({"action": "event", "event": event}, apply_event)

    def undo(self) -> list[JSONDict]:
        """Undo the last accepted input."""
        return self.apply({"type": "undo"})

    def correct_last(
        self, faces: list[int], keep: list[int] | None = None, rotate: str | None = None
    ) -> list[JSONDict]:
        """Replace the faces of the last throw (or 4D turn), atomically: all or nothing.

        `keep` (421) and `rotate` (4D) default to those of the input being corrected.
        The correction is made on a copy of the game, which replaces the real one only when
        the engine accepts the corrected input, so a refused correction changes nothing.
        """

        def correct() -> list[JSONDict]:
            game = self._playable_game()
            if not game.history:
                raise HubError("nothing_to_correct")
            last = game.history[-1]["event"]
            if last.get("type") not in CORRECTABLE_EVENTS:
                raise HubError("last_not_a_throw", kind=last.get("type"))
            # Journaled with the correction: what the game master replaced, and what a
            # listener needs to follow it (the square's numbering follows its rotation).
            action["replaced"] = dict(last)
            corrected = {**last, "faces": list(faces)}
            if keep is not None:
                corrected["keep"] = list(keep)
            if rotate is not None:
                if last.get("type") != "turn":
                    raise HubError("rotation_only_4d")
                corrected["rotate"] = rotate
            trial = game_from_json(game.to_json())
            trial.undo()
            before = trial.view()
            effects = trial.apply(corrected)
            self._game = trial
            del self._notes[-1]
            self._note_history(trial, before)
            return effects

        action = {"action": "correct", "faces": faces, "keep": keep, "rotate": rotate}
        return self._commit(action, correct)

    def set_paused(self, paused: bool) -> bool:
        """Pause or resume: while paused, game inputs are refused."""

        def pause() -> bool:
            self._require_game()
            if self._ended:
                raise HubError("game_over")
            self._paused = bool(paused)
            return self._paused

        return self._commit({"action": "pause", "paused": bool(paused)}, pause)

    def end_game(self) -> JSONDict:
        """End the game now (the game master's decision); it stays on screen, read-only."""

        def end() -> JSONDict:
            game = self._require_game()
            self._ended = True
            self._paused = False
            return game.view()

        return self._commit({"action": "end"}, end)

    def subscribe(self, listener: Callable[[JSONDict, Any], None]) -> None:
        """Call ``listener(action, result)`` after every accepted change, outside the lock,
        on the thread that made it."""
        self._listeners.append(listener)

    def open_journal(self, journal: Journal, *, replay: bool = True,
                     tokens: bool = True) -> list[tuple[int, JSONDict]]:
        """Rebuild the journal's last game (unless ``replay`` is false), then journal every
        change from now on, before anyone hears of it. ``tokens``: each input also writes
        the dispenses its effects make (a tower that pays); without, tokens are handed out
        by hand. Returns the replayed (id, action) pairs."""
        actions = journal.actions_since_last_game() if replay else []
        for action_id, action in actions:
            replay_action(self, action)
            self._origins.follow(action, action_id)
        with self._lock:
            self._journal, self._tokens = journal, tokens
        return actions

    def live(self, action_id: int) -> bool:
        """Whether the history entry made by journaled action ``action_id`` still stands (not
        undone, not replaced by a correction): its dispenses are still due."""
        return self._origins.live(action_id)

    def recorded_id(self) -> int:
        """The id of the action this thread journaled last (0: none)."""
        return int(getattr(self._recorded, "id", 0))

    def set_tower(self, tower: JSONDict | None) -> int:
        """Show the tower's own state (status, notice, dispenses); not a game input, so not
        journaled. Returns the new version."""
        with self._changed:
            if tower == self._tower:
                return self._version
            self._version += 1
            self._tower = None if tower is None else dict(tower)
            self._changed.notify_all()
            return self._version

    def publish_reading(self, jpeg: bytes | None, dice: list[JSONDict]) -> int:
        """Show the latest camera reading: an annotated JPEG and the dice as read.

        Each die is ``{"value", "center", "corners", "confidence", "reason", "alternatives"}``.
        Not a game input, so it is not journaled. Returns the new version.
        """
        with self._changed:
            self._version += 1
            self._frame = bytes(jpeg) if jpeg else None
            self._reading = {
                "version": self._version,
                "at": time.time(),
                "has_image": self._frame is not None,
                "dice": [dict(die) for die in dice],
            }
            self._changed.notify_all()
            return self._version

    # ----------------------------------------------------------------- internals

    def _commit(self, action: JSONDict, change: Callable[[], Any]) -> Any:
        """The one way in for every change: run it under the lock, count it, journal it.

        A `RuleError` or `HubError` raised by `change` leaves everything as it was: the
        engine guarantees it for its own state, and every change here checks before it writes.
        """
        with self._changed:
            result = change()
            self._version += 1
            self._game_version = self._version
            entry = {**action, "version": self._version, "at": time.time()}
            if isinstance(result, list):
                entry["effects"] = result
            if self._journal is not None:
                self._record(entry)
            self._changed.notify_all()
        for listener in self._listeners:
            listener(entry, result)
        return result

    def _record(self, entry: JSONDict) -> None:
        """Journal one change (under the lock): the tower pays what its effects take from
        the pot, so those dispenses are written in the same transaction."""
        assert self._journal is not None
        dispenses: list[tuple[int, int]] = []
        event = entry.get("event") or {}
        kind = entry.get("action")
        if self._tokens and (kind == "correct" or (kind == "event"
                                                   and event.get("type") != "undo")):
            for effect in entry.get("effects", []):
                if effect.get("kind") == "tokens_from_pot" and effect.get("count", 0) > 0:
                    dispenses.append((int(effect["player"]), int(effect["count"])))
        action_id = self._journal.record(entry, dispenses)
        self._origins.follow(entry, action_id)
        # Per thread: a button or the game master may record an action at the same moment.
        self._recorded.id = action_id

    def _require_game(self) -> Game:
        if self._game is None:
            raise HubError("no_game")
        return self._game

    def _playable_game(self) -> Game:
        game = self._require_game()
        if self._ended:
            raise HubError("game_over")
        if self._paused:
            raise HubError("game_paused")
        return game

    def _note_history(self, game: Game, before: JSONDict) -> None:
        """Keep the notes aligned with the engine's history after an input (or an undo)."""
        length = len(game.history)
        del self._notes[length:]
        if len(self._notes) < length:
            note = {
                "player": before.get("to_move"),
                "at": time.time(),
                "hands": hands_completed(before, game.view()),
            }
            self._notes.extend(dict(note) for _ in range(length - len(self._notes)))

    def _snapshot_locked(self) -> JSONDict:
        game = self._game
        view = game.view() if game is not None else None
        return {
            "version": self._version,
            "game_version": self._game_version,
            "instance": self.instance,
            "paused": self._paused,
            "ended": self._ended or bool(self._game is not None and self._game.is_over),
            "camera": self._reading is not None,
            "tower": self._tower,
            "reading": self._reading,
            "game": view,
            "history_length": len(game.history) if game is not None else 0,
            "last_input": game.history[-1]["event"] if game is not None and game.history else None,
            "stats": player_statistics(view, game.history, self._notes) if view else None,
            "odds": self._odds_locked(view),
        }


def _compact_json(data: JSONDict) -> str:
    """One line, no spaces, UTF-8 kept as is: it goes to every phone on every change."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


__all__ = ["GameHub", "HubError", "HubState", "RuleError", "StreamsEnded"]
