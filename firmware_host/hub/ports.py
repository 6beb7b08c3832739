"""What each side may ask of the other, written down: the hub for the pages, the running tower
for the game master.

`HubAccess` is all the scoreboard (and any other viewer) uses of the `GameHub`: read a
snapshot, wait for changes, submit an input, and the game master's actions on the game.
`TowerActions` is what the game master's page may ask of a running tower (the controller is
one): resume after a jam, count a dispense cut off, start a calibration, where its journal is.
`LeagueSeat` is a tower's place in a league: the match the league offers it.
`dicetower serve` runs the pages without a tower: then those actions answer 409.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

JSONDict = dict[str, Any]


class HubAccess(Protocol):
    """The narrow face of `GameHub` that the pages are given."""

    instance: str

    @property
    def version(self) -> int: ...
    def snapshot(self, *, odds: bool = True) -> JSONDict: ...
    def snapshot_json(self, *, odds: bool = True) -> tuple[int, str]: ...
    def history(self) -> JSONDict: ...
    def game_json(self) -> JSONDict | None: ...
    def frame(self) -> tuple[int, bytes] | None: ...
    def wait_for_change(self, after: int, timeout: float) -> int | None: ...
    def end_streams(self) -> None: ...
    def subscribe(self, listener: Callable[[JSONDict, Any], None]) -> None: ...
    def set_odds_source(self, source: Callable[[int, JSONDict], JSONDict | None] | None,
                        ) -> None: ...
    def odds_ready(self, game_version: int) -> None: ...
    # -- inputs and the game master's actions on the game
    def start_game(self, preset: str, players: list[str],
                   knobs: JSONDict | None = None) -> JSONDict: ...
    def apply(self, event: JSONDict) -> list[JSONDict]: ...
    def undo(self) -> list[JSONDict]: ...
    def correct_last(self, faces: list[int], keep: list[int] | None = None,
                     rotate: str | None = None) -> list[JSONDict]: ...
    def set_paused(self, paused: bool) -> bool: ...
    def end_game(self) -> JSONDict: ...


class ValuesCount(ValueError):
    """Dice's values given to a calibration (`CalibrationRun.set_values`) that are not one
    per die shown: ``count`` are."""

    def __init__(self, count: int) -> None:
        super().__init__(f"{count} values, one per die shown")
        self.count = count


class AddedOutside(ValueError):
    """A die added to a calibration's values (`CalibrationRun.set_values`) whose centre lies
    outside the throw's ``width`` x ``height`` picture."""

    def __init__(self, width: int, height: int) -> None:
        super().__init__(f"a die added lies outside the {width}x{height} picture")
        self.width, self.height = width, height


class CalibrationRun(Protocol):
    """A calibration of the running tower, driven step by step from the game master's page;
    its refusals are `firmware_host.hub.HubError`, values of the wrong count `ValuesCount`,
    a die added outside the picture `AddedOutside`."""

    @property
    def active(self) -> bool: ...
    def start(self) -> None: ...
    def state(self) -> JSONDict: ...
    def next(self) -> None: ...
    def cancel(self) -> None: ...
    def set_corners(self, corners: list[tuple[float, float]]) -> None: ...
    def set_values(self, values: list[int | None], ask: int | None = None,
                   added: list[tuple[float, float, int]] | None = None) -> None: ...
    def preview_jpeg(self) -> bytes | None: ...


class TowerActions(Protocol):
    """What the game master's page may ask of a running tower.

    Refusals are `firmware_host.hub.HubError` (a count out of range, a dispense not waiting,
    a dispense cut off not yet counted); an unknown dispense is a `KeyError`."""

    @property
    def journal_path(self) -> Path | None:
        """The tower's journal, for the fairness of its dice (None: no journal file)."""

    def resume(self) -> None:
        """Go on after a pause or a jam: unpaused, and the dispenser pays what is due."""

    def confirm_dispense(self, dispense_id: int, delivered: int) -> Any:
        """Record that ``delivered`` tokens fell for a dispense cut off mid-way."""

    def calibration(self, *, expect: int, name: str, path: str | Path | None, throws: int,
                    checks: int, hold: float, values: bool = True) -> CalibrationRun:
        """A calibration of this tower, not started yet; ValueError for a bad profile name.
        ``values``: the game master gives the values of the dice thrown (their faces are then
        learnt)."""


class LeagueSeat(Protocol):
    """A tower's seat in a league (docs/league.md; `firmware_host.league.TowerPublisher` is
    one): the tournament match the league offers it, started with one tap."""

    @property
    def proposal(self) -> JSONDict | None:
        """The offer (``{"match", "preset", "players"}``), None when there is none."""

    def start_proposal(self) -> JSONDict:
        """Start the offered match on this tower; the new game's view. LookupError when
        there is no offer."""
