"""Knobs (house rules) and the five named presets of RULES.md, with their validation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from firmware_host.rules.errors import RuleError

# Knobs of a 421 game: name -> allowed values (first value listed is not a default;
# defaults come from the preset).
KNOBS_421: dict[str, tuple] = {
    "ranking": ("fiches", "brelans"),
    "value_421": (10, 8),
    "fewer_throws_breaks_tie": (False, True),
    "opener": ("lowest-hand", "lowest-die"),
    "charge_throws": (1, 3),
    "throw_limit": ("exact", "at-most", "free"),
    "charge_pays": ("best", "loser"),
    "nenette": ("fixed-2", "plus-2", "plain"),
    "pot": tuple(range(1, 100)),
    "private_tokens": tuple(range(31)),
    "zero_after_charge": ("stays", "wins"),
    "charge_win_counts": (False, True),
    "manches_to_lose": (1, 2, 3, 4, 5),
    "one_round": (False, True),
}

# Knobs of a 4D game.
KNOBS_4D: dict[str, tuple] = {
    "target": tuple(range(10, 1001)),
    "pairs_score": (True, False),
    "fifth_die": (False, True),
}

KNOBS: dict[str, tuple] = {**KNOBS_421, **KNOBS_4D}

PRESETS: dict[str, dict[str, Any]] = {
    "regles-21": {
        "ranking": "fiches",
        "value_421": 10,
        "fewer_throws_breaks_tie": True,
        "opener": "lowest-hand",
        "charge_throws": 1,
        "throw_limit": "free",
        "charge_pays": "loser",
        "nenette": "plus-2",
        "pot": 21,
        "private_tokens": 0,
        "zero_after_charge": "stays",
        "charge_win_counts": False,
        "manches_to_lose": 2,
        "one_round": False,
    },
    "tim-11": {
        "ranking": "fiches",
        "value_421": 8,
        "fewer_throws_breaks_tie": False,
        "opener": "lowest-die",
        "charge_throws": 1,
        "throw_limit": "at-most",
        "charge_pays": "best",
        "nenette": "fixed-2",
        "pot": 11,
        "private_tokens": 0,
        "zero_after_charge": "wins",
        "charge_win_counts": False,
        "manches_to_lose": 2,
        "one_round": False,
    },
    "classique-10": {
        "ranking": "fiches",
        "value_421": 10,
        "fewer_throws_breaks_tie": False,
        "opener": "lowest-hand",
        "charge_throws": 3,
        "throw_limit": "exact",
        "charge_pays": "best",
        "nenette": "fixed-2",
        "pot": 21,
        "private_tokens": 0,
        "zero_after_charge": "wins",
        "charge_win_counts": True,
        "manches_to_lose": 1,
        "one_round": False,
    },
    "kyt-11": {
        "ranking": "brelans",
        "value_421": 8,
        "fewer_throws_breaks_tie": False,
        "opener": "lowest-hand",
        "charge_throws": 1,
        "throw_limit": "at-most",
        "charge_pays": "best",
        "nenette": "plain",
        "pot": 11,
        "private_tokens": 0,
        "zero_after_charge": "wins",
        "charge_win_counts": False,
        "manches_to_lose": 1,
        "one_round": False,
    },
    "4d": {
        "target": 100,
        "pairs_score": True,
        "fifth_die": False,
    },
}


def game_kind(preset: str) -> str:
    """ "4d" for the 4D preset, "421" for the others; unknown presets are refused."""
    if not isinstance(preset, str) or preset not in PRESETS:
        raise RuleError(f"unknown preset {preset!r}; valid presets: {', '.join(PRESETS)}")
    return "4d" if preset == "4d" else "421"


def describe_values(values: tuple) -> str:
    """The allowed values of a knob in a short readable form ("1 to 99" for ranges)."""
    ints = len(values) > 6 and all(type(v) is int for v in values)
    if ints and list(values) == list(range(values[0], values[-1] + 1)):
        return f"an integer from {values[0]} to {values[-1]}"
    return ", ".join(_show(v) for v in values)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def resolve_knobs(preset: str, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The full knob dict of a preset with ``overrides`` applied, every value checked."""
    kind = game_kind(preset)
    allowed = KNOBS_4D if kind == "4d" else KNOBS_421
    knobs = dict(PRESETS[preset])
    for name, value in (overrides or {}).items():
        if name not in allowed:
            raise RuleError(
                f"unknown knob {name!r} for a {kind} game; valid knobs: {', '.join(allowed)}"
            )
        knobs[name] = _coerce(name, value, allowed[name])
    return knobs


def _coerce(name: str, value: Any, values: tuple) -> Any:
    """Accept the value as given or as text (command line, web form); refuse anything else."""
    for candidate in values:
        if type(value) is type(candidate) and value == candidate:
            return candidate
    text = str(value).strip().lower()
    for candidate in values:
        if text == _show(candidate).lower():
            return candidate
        if isinstance(candidate, bool) and text in (
            ("on", "yes", "1") if candidate else ("off", "no", "0")
        ):
            return candidate
    raise RuleError(f"knob {name!r} cannot be {value!r}; valid values: {describe_values(values)}")
