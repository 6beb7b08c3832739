"""The season's standings, counted from the games the league saw end, by a documented scoring.

A game counts when the rules say it is over (a 421 game's last player charged, a 4D target
reached); a game the game master ended early, or one still being played, counts for no one.
Each player of a counted game has played one game and has one outcome (`outcome`): the
loser has lost it; the winner has won it when the rules name one (4D, the 421 presets played
in manches), and when they name none (a 421 game of charge and décharge ends with one loser:
the one who pays the round) every player who is not the loser has won it; any other player is
placed. Points (`Scoring`, the league's knob): ``win`` per game won, ``place`` per game
placed, ``loss`` per game lost (3, 1 and 0 unless the league says otherwise).

Players are known by name across the league, whatever the tower: `player_key` folds case,
accents aside, and spaces, so "ana", "Ana " and "ANA" are one player; the game master's
merges (`aliases`) map a name onto another.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Scoring:
    """Points per game: winner, placed (neither winner nor loser), loser."""

    win: int = 3
    place: int = 1
    loss: int = 0

    def points(self, seat: int, winner: int | None, loser: int | None) -> int:
        return {"won": self.win, "lost": self.loss, "placed": self.place}[
            outcome(seat, winner, loser)]


def outcome(seat: int, winner: int | None, loser: int | None) -> str:
    """``won``, ``lost`` or ``placed``: see the module docstring."""
    if seat == loser:
        return "lost"
    if seat == winner or winner is None:
        return "won"
    return "placed"


@dataclass
class Record:
    """One player's line of the standings."""

    key: str
    name: str
    played: int = 0
    won: int = 0
    lost: int = 0
    points: int = 0
    presets: dict[str, int] = field(default_factory=dict)  # games played per preset

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "name": self.name, "played": self.played, "won": self.won,
                "lost": self.lost, "points": self.points, "presets": dict(self.presets)}


def player_key(name: str) -> str:
    """The name as the league tells players apart: case, spaces and accents folded."""
    folded = unicodedata.normalize("NFKD", " ".join(str(name).split())).casefold()
    return "".join(c for c in folded if not unicodedata.combining(c))


def resolve(key: str, aliases: Mapping[str, str]) -> str:
    """Follow the game master's merges from ``key`` to the name it now counts under."""
    seen = {key}
    while key in aliases and aliases[key] not in seen:
        key = aliases[key]
        seen.add(key)
    return key


def standings(games: Iterable[Mapping[str, Any]], scoring: Scoring,
              aliases: Mapping[str, str], names: Mapping[str, str] | None = None, *,
              preset: str | None = None) -> list[Record]:
    """The standings over ``games`` (rows of the league's ``games`` table, decoded): best
    first, by points, then games won, then fewer games played, then name.

    ``names``: the display name of a player key (the name a player picked), else the first
    spelling seen. ``preset``: only the games of that preset."""
    records: dict[str, Record] = {}
    for game in games:
        if game["state"] != "over" or (preset is not None and game["preset"] != preset):
            continue
        for seat, name in enumerate(game["players"]):
            key = resolve(player_key(name), aliases)
            record = records.get(key)
            if record is None:
                shown = (names or {}).get(key, " ".join(str(name).split()))
                record = records[key] = Record(key=key, name=shown)
            record.played += 1
            result = outcome(seat, game["winner"], game["loser"])
            record.won += result == "won"
            record.lost += result == "lost"
            record.points += scoring.points(seat, game["winner"], game["loser"])
            record.presets[game["preset"]] = record.presets.get(game["preset"], 0) + 1
    return sorted(records.values(), key=lambda r: (-r.points, -r.won, r.played, r.name))


def history(games: Iterable[Mapping[str, Any]], key: str, scoring: Scoring,
            aliases: Mapping[str, str]) -> list[dict[str, Any]]:
    """Every game of the player ``key`` (after merges) the league saw, newest first, with the
    result and the points it gave (None while it is played or when it did not count)."""
    rows = []
    for game in games:
        for seat, name in enumerate(game["players"]):
            if resolve(player_key(name), aliases) != key:
                continue
            counted = game["state"] == "over"
            result = (outcome(seat, game["winner"], game["loser"]) if counted
                      else game["state"])
            rows.append({"tower": game["tower"], "start": game["start"],
                         "preset": game["preset"], "at": game["started"],
                         "players": list(game["players"]), "result": result,
                         "points": scoring.points(seat, game["winner"], game["loser"])
                         if counted else None})
    return sorted(rows, key=lambda row: -(row["at"] or 0))
