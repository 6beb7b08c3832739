"""Command-line options that choose a game: ``--preset``, ``--players``, ``--knob``.

Shared by `simulate`, `demo` and the other commands that start a game, so that every command
accepts and refuses the same things with the same words.
"""

from __future__ import annotations

import argparse
from typing import Any

from firmware_host.rules import PRESETS, RuleError, new_game
from firmware_host.rules.knobs import game_kind

DEFAULT_PLAYERS = {"421": "Ana,Ben,Cleo", "4d": "Ana,Ben"}
# The virtual players' strategies (firmware_host.advisor.strategies.STRATEGIES, named here so
# that the command line starts without loading the advisor).
STRATEGY_NAMES = ("random", "simple", "advisor")
MAX_NAME_LENGTH = 24  # what the scoreboard shows on a phone without cutting the name


def add_game_options(parser: argparse.ArgumentParser, *, default_preset: str = "tim-11") -> None:
    """Add ``--preset``, ``--players`` and ``--knob`` to ``parser``."""
    parser.add_argument("--preset", default=default_preset, choices=list(PRESETS),
                        help=f"rule set (default {default_preset})")
    parser.add_argument("--players",
                        help="comma-separated names in seat order (default Ana,Ben,Cleo; "
                             "Ana,Ben for 4d)")
    parser.add_argument("--knob", action="append", default=[], metavar="NAME=VALUE",
                        help="house rule overriding the preset, e.g. --knob pot=21 (repeatable)")


def players_of(text: str | None, preset: str) -> list[str]:
    """The player names of ``--players`` (the preset's default when absent); ValueError
    saying what is wrong for an empty, repeated or too long name."""
    raw = DEFAULT_PLAYERS[game_kind(preset)] if text is None else text
    names = [name.strip() for name in raw.split(",")]
    if not any(names):
        raise ValueError("--players needs at least one name, e.g. --players Ana,Ben")
    if not all(names):
        raise ValueError(f"--players {raw!r} has an empty name; separate names with one comma")
    long = [name for name in names if len(name) > MAX_NAME_LENGTH]
    if long:
        raise ValueError(f"player name {long[0]!r} is longer than {MAX_NAME_LENGTH} "
                         "characters (the scoreboard could not show it)")
    seen: set[str] = set()
    for name in names:
        if name.casefold() in seen:
            raise ValueError(f"player name {name!r} is given twice; each seat needs its own")
        seen.add(name.casefold())
    return names


def knobs_of(items: list[str]) -> dict[str, Any]:
    """``--knob NAME=VALUE`` items as a dict of texts (the rules engine checks the values)."""
    knobs: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--knob wants NAME=VALUE, not {item!r}")
        knobs[name.strip()] = value.strip()
    return knobs


def checked_game(preset: str, players_text: str | None, knob_items: list[str]
                 ) -> tuple[list[str], dict[str, Any]]:
    """(players, knobs as the engine holds them) for these options; ValueError when the
    names, the knobs or their combination with the preset cannot make a game."""
    players = players_of(players_text, preset)
    try:
        knobs = new_game(preset, players, knobs_of(knob_items) or None).knobs
    except RuleError as err:
        raise ValueError(str(err)) from None
    return players, dict(knobs)
