"""Exact 421 odds for every keep, by dynamic programming over the dice outcomes.

A state is (hand, throws left); there are 56 hands, so with at most two throws left the
whole game tree of a turn is 56 x 3 states. The ranking and the token values are the rules
engine's own: the comparison key is ``Game421.key`` (rank, then throws where fewer throws
break ties) and the values come from ``hands.value_table``; nothing here ranks hands.

Seven goals are solved at once, each with its own optimal policy (every later keep serves
the same goal): beat (end strictly better than the hand to beat), tie (end equal to it),
avoid the worst (not end strictly worse than the hand to avoid), 421, avoid the nénette,
the expected token value of the final hand, and the balance (the chance to beat minus the
chance to be worst: a décharge player wants both). Every goal is a maximisation (the two
"avoid" goals maximise minus the chance), so one matrix product per throw serves all seven.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, product
from typing import Any

import numpy as np

from firmware_host.rules.factory import new_game
from firmware_host.rules.game421 import DICE, MAX_THROWS
from firmware_host.rules.hands import NENETTE, RANKINGS, hand_kind, hand_name, value_table
from firmware_host.rules.knobs import KNOBS_421, game_kind, resolve_knobs

GOALS = ("beat", "tie", "avoid_worst", "421", "nenette", "tokens", "balance")
RULES = KNOBS_421["throw_limit"]  # exact, at-most, free
# Values closer than this are equal: they are sums of multiples of 1/216**3.
EPSILON = 1e-12
# The knobs that change the odds; games sharing them share one table.
ODDS_KNOBS = ("ranking", "value_421", "nenette", "fewer_throws_breaks_tie", "second_nenette")


class AdvisorError(ValueError):
    """A question the advisor cannot answer, with a sentence saying why."""


def _outcomes(count: int) -> Counter:
    """Sorted faces of ``count`` fair dice -> number of the 6**count ordered throws."""
    return Counter(tuple(sorted(t)) for t in product(range(1, 7), repeat=count))


def sub_multisets(dice: Sequence[int]) -> list[tuple[int, ...]]:
    """Distinct sub-multisets of ``dice`` (in the dice's order), most dice first."""
    found: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    for size in range(len(dice), -1, -1):
        for picked in combinations(range(len(dice)), size):
            faces = tuple(dice[i] for i in picked)
            if tuple(sorted(faces)) not in seen:
                seen.add(tuple(sorted(faces)))
                found.append(faces)
    return found


# A hand to compare the final hand with: (hand name, throws it took, how). "round" compares
# them as the engine compares the hands of one round, the final hand made after the other
# (where a later nénette beats an earlier one, it does here too); "key" compares by the
# engine's sort key alone (rank, then throws where fewer throws break ties).
Target = tuple[str, int, str]


class OddsTable:
    """Everything that repeats for one set of odds knobs: hands, values, transitions."""

    def __init__(self, knobs: Mapping[str, Any]) -> None:
        self.knobs = {name: knobs[name] for name in ODDS_KNOBS}
        # The engine's comparisons, from a real game under these knobs (never re-implemented).
        game = new_game("tim-11", ["a", "b"], dict(self.knobs))
        self.key: Callable[[str, int], int] = game.key
        self.round_keys: Callable[[list[dict[str, Any]]], list[Any]] = game.judge.keys
        self.hands: tuple[str, ...] = RANKINGS[self.knobs["ranking"]]
        self.index = {hand: i for i, hand in enumerate(self.hands)}
        values = value_table(self.knobs["ranking"], self.knobs["value_421"], self.knobs["nenette"])
        self.values = np.array([values[h] for h in self.hands], dtype=float)
        n = len(self.hands)
        self.is_421 = np.array([h == "421" for h in self.hands], dtype=float)
        # Minus the indicator: the "avoid" goals maximise minus the chance, so they come out
        # exactly 0 where they cannot happen (1 - p would leave rounding crumbs).
        self.minus_nenette = -np.array([h == NENETTE for h in self.hands], dtype=float)
        # One row per (hand, keep that throws at least one die), grouped by hand.
        rows: list[np.ndarray] = []
        self.row_keep: list[tuple[int, ...]] = []  # kept faces, sorted
        self.starts = np.zeros(n + 1, dtype=np.intp)
        self.first_row: list[dict[tuple[int, ...], int]] = []
        throws = {count: _outcomes(count) for count in range(1, DICE + 1)}
        for i, hand in enumerate(self.hands):
            self.starts[i] = len(rows)
            where: dict[tuple[int, ...], int] = {}
            for keep in sub_multisets([int(c) for c in hand])[1:]:  # not "keep all"
                row = np.zeros(n)
                thrown = throws[DICE - len(keep)]
                total = 6 ** (DICE - len(keep))
                for faces, count in thrown.items():
                    row[self.index[hand_name(keep + faces)]] += count / total
                where[tuple(sorted(keep))] = len(rows)
                rows.append(row)
                self.row_keep.append(tuple(sorted(keep)))
            self.first_row.append(where)
        self.starts[n] = len(rows)
        self.matrix = np.array(rows)

    @lru_cache(maxsize=1024)  # noqa: B019 - tables live as long as the process, by design
    def compare(self, target: Target) -> dict[int, np.ndarray]:
        """Throws made -> for each hand: -1 better than ``target``, 0 tie, 1 worse."""
        hand, throws, how = target
        signs: dict[int, np.ndarray] = {}
        for made in range(1, MAX_THROWS + 1):
            row = []
            for mine in self.hands:
                if how == "key":
                    theirs, ours = self.key(hand, throws), self.key(mine, made)
                else:
                    theirs, ours = self.round_keys([
                        {"player": 0, "hand": hand, "throws": throws},
                        {"player": 1, "hand": mine, "throws": made},
                    ])
                row.append((ours > theirs) - (ours < theirs))
            signs[made] = np.array(row)
        return signs

    def terminal(self, throws: int, beat: Target | None, avoid: Target | None) -> np.ndarray:
        """(56, 7) goal values of stopping on each hand made in ``throws`` throws."""
        zero = np.zeros(len(self.hands))
        versus = None if beat is None else self.compare(beat)[throws]
        worse = None if avoid is None else self.compare(avoid)[throws] > 0
        return np.column_stack([
            zero if versus is None else (versus < 0).astype(float),
            zero if versus is None else (versus == 0).astype(float),
            zero if worse is None else -worse.astype(float),
            self.is_421,
            self.minus_nenette,
            self.values,
            zero if versus is None or worse is None else (versus < 0) - worse.astype(float),
        ])

    @lru_cache(maxsize=4096)  # noqa: B019 - as above
    def solve(
        self, total: int, required: int, beat: Target | None, avoid: Target | None
    ) -> tuple[np.ndarray, ...]:
        """Goal values of every state: ``values[t][hand, goal]`` with t throws left.

        ``total`` is the throws the turn allows in all, ``required`` the throws to make
        before stopping is allowed (the ``exact`` rule); a state with t throws left has
        ``total - t`` throws made.
        """
        values = [self.terminal(total, beat, avoid)]
        for left in range(1, total):
            made = total - left
            best = np.maximum.reduceat(self.matrix @ values[-1], self.starts[:-1], axis=0)
            if made >= required:
                best = np.maximum(best, self.terminal(made, beat, avoid))
            values.append(best)
        return tuple(values)

    def choice(
        self, hand: int, left: int, total: int, required: int,
        beat: Target | None, avoid: Target | None, goal: int, may_stop: bool = True,
    ) -> int | None:
        """The row one goal's policy plays from ``hand`` with ``left`` throws left (None:
        stop). On equal values: stop, then the keep that throws fewer dice."""
        made = total - left
        if left == 0:
            return None
        start, end = self.starts[hand], self.starts[hand + 1]
        after = self.solve(total, required, beat, avoid)[left - 1][:, goal]
        q = self.matrix[start:end] @ after
        top = q.max()
        stop = self.terminal(made, beat, avoid)[hand, goal]
        if may_stop and made >= required and stop >= top - EPSILON:
            return None
        return int(start + np.flatnonzero(q >= top - EPSILON)[0])

@lru_cache(maxsize=64)
def _table(items: tuple[tuple[str, Any], ...]) -> OddsTable:
    return OddsTable(dict(items))


def table_for(knobs: Mapping[str, Any]) -> OddsTable:
    """The (cached) odds table of a game's knobs."""
    return _table(tuple((name, knobs[name]) for name in ODDS_KNOBS))


def parse_faces(dice: Sequence[Any], what: str = "a 421 hand") -> list[int]:
    """Three faces 1 to 6 as ints, or AdvisorError naming what is wrong."""
    faces: list[int] = []
    for die in dice:
        if type(die) is bool or not isinstance(die, int | str) or not str(die).strip().isdigit():
            raise AdvisorError(f"a die shows 1 to 6, not {die!r}")
        face = int(die)
        if not 1 <= face <= 6:
            raise AdvisorError(f"a die shows 1 to 6, not {face}")
        faces.append(face)
    if len(faces) != DICE:
        raise AdvisorError(f"{what} is {DICE} dice, not {len(faces)}")
    return faces


@dataclass(frozen=True)
class Turn:
    """Where a player stands in a turn: throws made, throws allowed in all, throws required."""

    made: int
    allowed: int
    required: int

    @property
    def left(self) -> int:
        return self.allowed - self.made


def analyse(
    knobs: Mapping[str, Any],
    dice: Sequence[int],
    turn: Turn,
    to_beat: tuple[str, int] | None = None,
    avoid: tuple[str, int] | None = None,
) -> dict[str, Any]:
    """The odds of every keep of ``dice`` (checked faces) at this point of a turn.

    ``to_beat`` and ``avoid`` are (hand name, throws it took), hands of the same round made
    before this one. Returns plain JSON types: ``keeps`` (one dict per distinct keep, most
    dice kept first) and ``best`` (goal -> kept faces, or None when the goal has no hand).
    """
    table = table_for(knobs)
    beat = None if to_beat is None else (*to_beat, "round")
    worst = None if avoid is None else (*avoid, "round")
    i = table.index[hand_name(dice)]
    rows: list[tuple[tuple[int, ...], np.ndarray]] = []
    if turn.made >= turn.required or turn.left == 0:
        rows.append((tuple(dice), table.terminal(turn.made, beat, worst)[i]))
    if turn.left > 0:
        after = table.solve(turn.allowed, turn.required, beat, worst)[turn.left - 1]
        for keep in sub_multisets(dice)[1:]:
            row = table.first_row[i][tuple(sorted(keep))]
            rows.append((keep, table.matrix[row] @ after))
    keeps = [_keep_entry(keep, v, beat is not None, worst is not None) for keep, v in rows]
    return {"keeps": keeps, "best": _best(keeps, beat is not None, worst is not None)}


def _keep_entry(keep: tuple[int, ...], v: np.ndarray, beat: bool, avoid: bool) -> dict[str, Any]:
    return {
        "keep": list(keep),
        "stop": len(keep) == DICE,
        "throw": DICE - len(keep),
        "p_beat": _p(v[0]) if beat else None,
        "p_tie": _p(v[1]) if beat else None,
        "p_worst": _p(-v[2]) if avoid else None,
        "p_421": _p(v[3]),
        "p_nenette": _p(-v[4]),
        "expected_tokens": float(v[5]),
        "balance": float(v[6]) if beat and avoid else None,
    }


def _p(value: float) -> float:
    """A probability as a float, rounding crumbs outside [0, 1] clipped."""
    return min(1.0, max(0.0, float(value)))


# Goal -> (field, +1 to maximise / -1 to minimise).
BEST_FIELDS = {
    "beat": ("p_beat", 1),
    "tie": ("p_tie", 1),
    "avoid_worst": ("p_worst", -1),
    "421": ("p_421", 1),
    "nenette": ("p_nenette", -1),
    "tokens": ("expected_tokens", 1),
    "balance": ("balance", 1),
}


def _best(keeps: list[dict[str, Any]], beat: bool, avoid: bool) -> dict[str, Any]:
    """Goal -> the best keep's faces; on equal odds the keep that throws fewer dice."""
    best: dict[str, Any] = {}
    for goal, (field, sign) in BEST_FIELDS.items():
        if (goal in ("beat", "tie", "balance") and not beat) or (
            goal in ("avoid_worst", "balance") and not avoid
        ):
            best[goal] = None
            continue
        top = max(sign * k[field] for k in keeps)
        # keeps are listed most dice kept first, so the first within EPSILON throws fewest.
        best[goal] = next(k["keep"] for k in keeps if sign * k[field] >= top - EPSILON)
    return best


def opener_outlook(
    knobs: Mapping[str, Any], dice: Sequence[int], turn: Turn
) -> dict[str, Any] | None:
    """For the player setting the round's count: the final hand if stopping now versus
    throwing again, every keep then aiming to end strictly better than stopping now would
    (by the engine's sort key: the rank, then the throws where fewer throws break ties)."""
    if turn.left == 0:
        return None
    table = table_for(knobs)
    hand = hand_name(dice)
    now: Target = (hand, turn.made, "key")
    args = (turn.allowed, 1, now, None, 0)
    row = table.choice(table.index[hand], turn.left, *args, may_stop=False)
    assert row is not None
    final: dict[tuple[str, int], float] = {}
    dist = table.matrix[row].copy()
    for left in range(turn.left - 1, -1, -1):
        made = turn.allowed - left
        nxt = np.zeros(len(table.hands))
        for j in np.flatnonzero(dist > 0):
            chosen = table.choice(int(j), left, *args)
            if chosen is None:
                end_state = (table.hands[j], made)
                final[end_state] = final.get(end_state, 0.0) + float(dist[j])
            else:
                nxt += dist[j] * table.matrix[chosen]
        dist = nxt
    by_hand: dict[str, float] = {}
    versus = {"better": 0.0, "same": 0.0, "worse": 0.0}
    for (name, made), p in final.items():
        by_hand[name] = by_hand.get(name, 0.0) + p
        sign = int(table.compare(now)[made][table.index[name]])
        versus[("better", "same", "worse")[sign + 1]] += p
    kinds: dict[str, float] = {}
    for name, p in by_hand.items():
        kind = hand_kind(name, knobs["ranking"])
        kinds[kind] = kinds.get(kind, 0.0) + p
    return {
        "stop": {"hand": hand, "rank": table.index[hand] + 1, "throws": turn.made},
        "throw_again": {
            "keep": [int(f) for f in table.row_keep[row]],
            "p_better": _p(versus["better"]),
            "p_same": _p(versus["same"]),
            "p_worse": _p(versus["worse"]),
            "hands": [
                {"hand": h, "rank": table.index[h] + 1, "p": _p(by_hand[h])}
                for h in table.hands if by_hand.get(h, 0.0) > 0
            ],
            "kinds": {kind: _p(p) for kind, p in kinds.items()},
        },
    }


def _target(value: Any, what: str, default_throws: int) -> tuple[str, int] | None:
    """(hand name, throws) from faces, or (faces, throws); None stays None."""
    if value is None:
        return None
    faces, throws = value, default_throws
    if isinstance(value, tuple) and len(value) == 2 and not isinstance(value[0], int):
        faces, throws = value
    faces = parse_faces(list(faces), what)
    if type(throws) is not int or not 1 <= throws <= MAX_THROWS:
        raise AdvisorError(f"{what} was made in 1 to {MAX_THROWS} throws, not {throws!r}")
    return hand_name(faces), throws


def advise(
    dice: Sequence[int],
    *,
    preset: str = "tim-11",
    throws_left: int | None = None,
    throws_made: int = 1,
    rule: str | None = None,
    to_beat: Any = None,
    avoid: Any = None,
    opener: bool = False,
    charge: bool = False,
    knobs: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The odds of every keep of a 421 hand, as a plain dict (see docs/advisor.md).

    ``rule`` is the round's throw rule (default: the preset's ``throw_limit``); under
    ``exact`` a player bound by the opener must make every throw left, so cannot stop.
    The ``opener`` sets the count and is never bound. ``charge``: in the charge the most
    throws are the preset's ``charge_throws``, elsewhere 3. ``to_beat`` / ``avoid``: three
    faces, or (faces, throws it took); without a count a hand counts as made in 3 throws,
    which matters only where fewer throws break ties. Raises AdvisorError on bad input.
    """
    try:
        if game_kind(preset) != "421":
            raise AdvisorError(f"{preset} is not a 421 preset; 4D moves are advised by advise_4d")
        resolved = resolve_knobs(preset, knobs)
    except ValueError as err:
        raise AdvisorError(str(err)) from None
    faces = parse_faces(dice)
    rule = resolved["throw_limit"] if rule is None else rule
    if rule not in RULES:
        raise AdvisorError(f"the throw rule is one of {', '.join(RULES)}, not {rule!r}")
    most = resolved["charge_throws"] if charge and not resolved["one_round"] else MAX_THROWS
    if type(throws_made) is not int or not 1 <= throws_made <= most:
        raise AdvisorError(f"throws made must be 1 to {most} under {preset}, not {throws_made!r}")
    if throws_left is None:
        throws_left = most - throws_made
    if type(throws_left) is not int or not 0 <= throws_left <= most - throws_made:
        where = "in the charge" if charge else "in a turn"
        top = most - throws_made
        span = "0" if top == 0 else f"0 to {top}"
        raise AdvisorError(
            f"throws left must be {span} under {preset} ({most} throw{'s' if most > 1 else ''}"
            f" at most {where}, {throws_made} made), not {throws_left!r}"
        )
    allowed = throws_made + throws_left
    required = allowed if rule == "exact" and not opener else 1
    turn = Turn(throws_made, allowed, required)
    beat_target = _target(to_beat, "the hand to beat", MAX_THROWS)
    avoid_target = _target(avoid, "the hand to avoid", MAX_THROWS)
    result = analyse(resolved, faces, turn, beat_target, avoid_target)
    return {
        "game": "421",
        "preset": preset,
        "dice": faces,
        "hand": hand_name(faces),
        "throws_made": throws_made,
        "throws_left": throws_left,
        "rule": rule,
        "opener": opener,
        "may_stop": turn.made >= turn.required or throws_left == 0,
        "to_beat": _target_json(beat_target),
        "avoid": _target_json(avoid_target),
        **result,
        "outlook": opener_outlook(resolved, faces, turn) if opener else None,
    }


def _target_json(target: tuple[str, int] | None) -> dict[str, Any] | None:
    return None if target is None else {"hand": target[0], "throws": target[1]}
