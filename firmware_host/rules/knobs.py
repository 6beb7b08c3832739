"""Knobs (house rules) and the five named presets of docs/rules.md, with their validation."""

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
    # Two nénettes in one round: "beats" (a later one ranks above an earlier one) or
    # "rampo" (equal hands: a tie).
    "second_nenette": ("rampo", "beats"),
    # "off": the game is lost by holding every token (manches_to_lose). Otherwise the charge
    # and the décharge are manches won by their winners, and when they go to different
    # players a "belle" (one more charge and décharge) or the "decharge" winner decides.
    "split_manches": ("off", "belle", "decharge"),
}

# Knobs of a 4D game.
KNOBS_4D: dict[str, tuple] = {
    "target": tuple(range(10, 1001)),
    "pairs_score": (True, False),
    "fifth_die": (False, True),
    # Who makes the first move: the thrower's opponent, once the thrower has presented the
    # square (the seed), or the thrower (the reading before the seed's was followed).
    "first_move": ("opponent", "thrower"),
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
        # "Dans le cas où un autre joueur ferait nénette, il bat la nénette précédente et
        # ainsi de suite." (if another player makes a nénette, it beats the previous one.)
        "second_nenette": "beats",
        "split_manches": "off",
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
        # "En cas d'égalité, chaque joueur relance un tour de dés": equal hands are a rampo.
        "second_nenette": "rampo",
        "split_manches": "off",
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
        # "Celui qui n'a plus de jetons à la fin de la décharge est gagnant de cette manche":
        # the décharge is decided at its end, so a player left at 0 by the charge plays it.
        "zero_after_charge": "stays",
        "charge_win_counts": True,
        "manches_to_lose": 1,
        "one_round": False,
        # The text says nothing of two nénettes: equal hands, a rampo.
        "second_nenette": "rampo",
        # The text makes the charge and the décharge two manches, each with its winner, and
        # does not say who wins the game when they go to different players. A belle (one
        # more charge and décharge) is how bars settle one game won each, and it keeps both
        # manches worth the same, as the text has them.
        "split_manches": "belle",
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
        # "En cas d'égalité entre deux joueurs ou plus pour désigner le plus faible [...] il y
        # a 'rampot'": two nénettes are a rampo.
        "second_nenette": "rampo",
        "split_manches": "off",
    },
    "4d": {
        "target": 100,
        "pairs_score": True,
        "fifth_die": False,
        "first_move": "opponent",
    },
}


# Knobs added after games were first saved, each with the reading games were played under
# before it existed (and a preset default that changed along with them). A saved game or a
# journal holding none of them was played that way, and must replay exactly as it was played.
EARLIER_READINGS: dict[str, dict[str, Any]] = {
    "regles-21": {"second_nenette": "rampo", "split_manches": "off"},
    "tim-11": {"second_nenette": "rampo", "split_manches": "off"},
    "classique-10": {"second_nenette": "rampo", "split_manches": "off",
                     "zero_after_charge": "wins"},
    "kyt-11": {"second_nenette": "rampo", "split_manches": "off"},
    "4d": {"first_move": "thrower"},
}


def saved_knobs(preset: str, knobs: Any) -> Any:
    """The knob overrides that rebuild a game saved (or journaled) with ``knobs``.

    Games are saved with their full knobs; one saved before the newer knobs existed lacks
    them all and gets the readings it was played under (`EARLIER_READINGS`).
    """
    if knobs is not None and not isinstance(knobs, Mapping):
        return knobs  # not knobs at all: resolve_knobs refuses it with its reason
    stored = dict(knobs or {})
    earlier = EARLIER_READINGS.get(preset, {}) if isinstance(preset, str) else {}
    if any(name in stored for name in earlier):
        return stored
    return {**earlier, **stored}


def game_kind(preset: str) -> str:
    """ "4d" for the 4D preset, "421" for the others; unknown presets are refused."""
    if not isinstance(preset, str) or preset not in PRESETS:
        raise RuleError("unknown_preset", preset=repr(preset), valid=", ".join(PRESETS))
    return "4d" if preset == "4d" else "421"


def _int_range(values: tuple) -> tuple[int, int] | None:
    """(lowest, highest) when the allowed values are a long run of whole numbers, else None."""
    ints = len(values) > 6 and all(type(v) is int for v in values)
    if ints and list(values) == list(range(values[0], values[-1] + 1)):
        return values[0], values[-1]
    return None


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
            raise RuleError("unknown_knob", knob=repr(name), game=kind, valid=", ".join(allowed))
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
    low_high = _int_range(values)
    if low_high is not None:
        raise RuleError("knob_range", knob=repr(name), value=repr(value), low=low_high[0],
                        high=low_high[1])
    raise RuleError("knob_value", knob=repr(name), value=repr(value),
                    valid=", ".join(_show(v) for v in values))
