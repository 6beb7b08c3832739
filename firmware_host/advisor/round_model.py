"""What a 421 hand is worth in its round: the chance to end the round's weakest or best hand,
and the tokens that moves, with the players still to throw in view.

The odds table (``odds421``) answers "how likely is this keep to beat that hand". A round is
decided against the players who throw *after* too, and under the ``at-most`` and ``exact``
rules the opener's count binds them: stopping early leaves them fewer throws. This module
models them, every later player throwing (independently) to beat the round's weakest hand
when their turn comes (not to be the one who loses), within the throws the round allows.
For the opener every later player aims at the opener's hand; for a later player, at the
weaker of the round's weakest so far and their own hand.

From that, a final hand (h, made in m throws) gets:

- ``p_worst``: the chance that it ends the round's weakest (ties settled by a rampo, where
  each of n tied players loses with chance 1/n: the rampo is one coup sec each, repeated);
- ``p_best``: the chance that it ends the round's best;
- the expected tokens it moves for its player (the stake): a loser takes the price the
  engine's judge sets (``RoundJudge.amount`` / ``charge_amount``), a décharge winner gives
  their hand's price away (never more than they hold).

``best_action`` then plays the turn by dynamic programming over the same transition rows as
the odds table, every state valued by that stake. Nothing ranks or prices hands here: the
comparisons are the odds table's (the engine's keys), the prices the engine's judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import comb
from typing import Any

import numpy as np

from firmware_host.advisor.odds421 import (
    DICE,
    EPSILON,
    ODDS_KNOBS,
    OddsTable,
    Target,
    _outcomes,
    table_for,
)
from firmware_host.rules.game421 import MAX_THROWS
from firmware_host.rules.hands import hand_name
from firmware_host.rules.round_judge import RoundJudge

# The knobs the stake depends on besides the odds knobs.
STAKE_KNOBS = ("charge_pays",)


@dataclass(frozen=True)
class Situation:
    """A 421 turn as the player to move sees it, built from a game or from its view.

    ``made``: the hands of the round so far, in throwing order (``player``, ``hand``,
    ``throws``); ``later``: how many players still throw after this one; ``tokens``: the
    mover's tokens; ``best_tokens``: the tokens of the player holding the best hand so far;
    ``pot``: tokens left in the pot (the charge's limit).
    """

    knobs: Mapping[str, Any]
    dice: tuple[int, ...]
    made_throws: int
    allowed: int
    required: int
    round_kind: str  # charge, decharge, round (one-round mode)
    made: tuple[tuple[int, str, int], ...]  # (player, hand, throws) in throwing order
    later: int
    tokens: int
    best_tokens: int
    pot: int
    most: int  # the most throws this round allows anyone (charge_throws or 3)

    @property
    def opener(self) -> bool:
        return not self.made


class RoundModel:
    """Later players' final hands and their comparisons, for one set of knobs (cached)."""

    def __init__(self, knobs: Mapping[str, Any]) -> None:
        self.table: OddsTable = table_for(knobs)
        self.judge = RoundJudge(knobs)
        table = self.table
        n = len(table.hands)
        self.first = np.zeros(n)
        for faces, count in _outcomes(DICE).items():
            self.first[table.index[hand_name(faces)]] += count / 6**DICE
        rows = len(table.row_keep)
        self.block = np.repeat(np.arange(n), np.diff(table.starts))
        self.row_ids = np.arange(rows)
        hands = table.hands
        # price[loser, payer]: what a loser with hand `loser` takes when `payer` sets the price.
        self.price_decharge = np.array([[self.judge.amount(lo, pa) for pa in hands]
                                        for lo in hands], dtype=float)
        self.price_charge = np.array([[self.judge.charge_amount(lo, pa) for pa in hands]
                                      for lo in hands], dtype=float)
        self.value = np.array([self.judge.value[h] for h in hands], dtype=float)

    # ------------------------------------------------------------------ later players

    def _rows(self, q: np.ndarray, top: np.ndarray) -> np.ndarray:
        """Per hand, the first row reaching the best value (the keep throwing fewest dice)."""
        ok = q >= top[self.block] - EPSILON
        return np.minimum.reduceat(np.where(ok, self.row_ids, len(self.row_ids)),
                                   self.table.starts[:-1])

    @lru_cache(maxsize=4096)  # noqa: B019 - one model per knobs, kept for the process
    def follower(self, target: Target, total: int, required: int) -> np.ndarray:
        """Final hands of a player throwing to beat ``target`` within ``total`` throws
        (stopping allowed after ``required``): array [throws made, hand] of chances."""
        table = self.table
        values = table.solve(total, required, target, None)
        dist = self.first.copy()
        out = np.zeros((total + 1, len(table.hands)))
        for made in range(1, total + 1):
            left = total - made
            if left == 0:
                out[made] = dist
                break
            q = table.matrix @ values[left - 1][:, 0]
            top = np.maximum.reduceat(q, table.starts[:-1])
            stopping = np.zeros(len(dist), dtype=bool)
            if made >= required:
                stopping = table.terminal(made, target, None)[:, 0] >= top - EPSILON
            out[made, stopping] = dist[stopping]
            go = ~stopping & (dist > 0)
            dist = dist[go] @ table.matrix[self._rows(q, top)[go]]
        return out

    @lru_cache(maxsize=65536)  # noqa: B019 - as above
    def versus(self, hand: int, made: int, aim: Target, total: int, required: int,
               charge: bool) -> tuple[float, float, float]:
        """One later player, throwing to beat ``aim``, against ``hand`` made in ``made``
        throws: (chance to end above it, to tie it, the mean price a loser holding ``hand``
        pays when that player sets it from above)."""
        dist = self.follower(aim, total, required)
        signs = self.table.compare((self.table.hands[hand], made, "round"))
        above = np.zeros(len(self.table.hands))
        tie = 0.0
        for m in range(1, total + 1):
            above += dist[m] * (signs[m] < 0)
            tie += float(dist[m] @ (signs[m] == 0))
        p_above = float(above.sum())
        prices = self.price_charge if charge else self.price_decharge
        price = float(above @ prices[hand]) / p_above if p_above > EPSILON else 0.0
        return p_above, tie, price


@lru_cache(maxsize=64)
def _model(items: tuple[tuple[str, Any], ...]) -> RoundModel:
    return RoundModel(dict(items))


def model_for(knobs: Mapping[str, Any]) -> RoundModel:
    """The (cached) round model of a game's knobs."""
    return _model(tuple((name, knobs[name]) for name in (*ODDS_KNOBS, *STAKE_KNOBS)))


def _share(later: int, p_tie: float, p_clear: float, already: int) -> float:
    """Chance to lose a tie-aware contest: every one of ``later`` players independently ties
    (``p_tie``) or stays clear (``p_clear``) of this hand; with j ties and ``already`` earlier
    holders of the same hand, a rampo among j + already + 1 players takes one of them."""
    return sum(comb(later, j) * p_tie**j * p_clear ** (later - j) / (j + already + 1)
               for j in range(later + 1))


def _extreme(model: RoundModel, situation: Situation, weakest: bool
             ) -> tuple[Target, int, int] | None:
    """(the round's weakest or best hand so far as a target, how many hold it, its player)."""
    if not situation.made:
        return None
    hands = [{"player": p, "hand": h, "throws": t} for p, h, t in situation.made]
    holders = model.judge.extreme(hands, weakest)
    first = next(m for m in hands if m["player"] == holders[0])
    return (first["hand"], first["throws"], "round"), len(holders), holders[0]


def later_bounds(situation: Situation, made: int) -> tuple[int, int]:
    """(throws allowed, throws required) of the later players if this turn ends after
    ``made`` throws."""
    rule = situation.knobs["throw_limit"]
    if not situation.opener:
        return situation.allowed, situation.required
    if rule == "free":
        return situation.most, 1
    total = min(situation.most, made)
    return total, total if rule == "exact" else 1


def stake(model: RoundModel, situation: Situation, made: int) -> np.ndarray:
    """For every final hand made in ``made`` throws: minus the expected tokens it costs its
    player (one-round mode: the chance to end the best hand)."""
    table = model.table
    n = len(table.hands)
    total, required = later_bounds(situation, made)
    later = situation.later
    worst = _extreme(model, situation, weakest=True)
    best = _extreme(model, situation, weakest=False)
    charge = situation.round_kind == "charge"
    one_round = situation.round_kind == "round"
    w_sign = None if worst is None else table.compare(worst[0])[made]
    b_sign = None if best is None else table.compare(best[0])[made]
    gives = situation.round_kind == "decharge" and situation.tokens > 0
    out = np.zeros(n)
    for h in range(n):
        me: Target = (table.hands[h], made, "round")
        p_best = 0.0
        if (gives or one_round) and (b_sign is None or b_sign[h] <= 0):
            aim = me if worst is None or w_sign[h] > 0 else worst[0]
            above, tie, _ = model.versus(h, made, aim, total, required, charge)
            already = best[1] if b_sign is not None and b_sign[h] == 0 else 0
            p_best = _share(later, tie, 1.0 - above - tie, already)
        if one_round:
            out[h] = p_best
            continue
        p_worst, price = 0.0, 0.0
        if w_sign is None or w_sign[h] >= 0:
            above, tie, price = model.versus(h, made, me, total, required, charge)
            already = worst[1] if w_sign is not None and w_sign[h] == 0 else 0
            p_worst = _share(later, tie, above, already)
            if best is not None and b_sign is not None and b_sign[h] > 0:
                # The best so far sets the price (a later player may set a higher one).
                prices = model.price_charge if charge else model.price_decharge
                price = float(prices[h, table.index[best[0][0]]])
                if not charge:
                    price = min(price, situation.best_tokens)
            if charge:
                price = min(price, situation.pot)
        give = min(float(model.value[h]), situation.tokens) if gives else 0.0
        out[h] = p_best * give - p_worst * price
    return out


def best_action(situation: Situation) -> tuple[tuple[int, ...] | None, dict[str, float]]:
    """The faces to keep (None: stop) that serve the round's stake best, and the expected
    value of stopping and of that choice (tokens won, minus lost; one-round: the chance to
    win the round)."""
    model = model_for(situation.knobs)
    table = model.table
    hand = table.index[hand_name(list(situation.dice))]
    allowed, required, now = situation.allowed, situation.required, situation.made_throws
    terminal = {m: stake(model, situation, m) for m in range(now, allowed + 1)}
    values = terminal[allowed]
    for made in range(allowed - 1, now, -1):
        q = table.matrix @ values
        best = np.maximum.reduceat(q, table.starts[:-1])
        values = np.maximum(best, terminal[made]) if made >= required else best
    may_stop = now >= required or now == allowed
    stop_value = float(terminal[now][hand])
    if now == allowed:
        return None, {"stop": stop_value, "chosen": stop_value}
    start, end = table.starts[hand], table.starts[hand + 1]
    q = table.matrix[start:end] @ values
    top = float(q.max())
    if may_stop and stop_value >= top - EPSILON:
        return None, {"stop": stop_value, "chosen": stop_value}
    row = int(start + np.flatnonzero(q >= top - EPSILON)[0])
    kept = table.row_keep[row]
    return _faces_of(situation.dice, kept), {"stop": stop_value if may_stop else float("nan"),
                                             "chosen": top}


def _faces_of(dice: Sequence[int], kept: Sequence[int]) -> tuple[int, ...]:
    """``kept`` (sorted faces) in the order the dice show them."""
    free = list(kept)
    out = []
    for face in dice:
        if face in free:
            free.remove(face)
            out.append(face)
    return tuple(out)


__all__ = ["MAX_THROWS", "RoundModel", "Situation", "best_action", "later_bounds", "model_for",
           "stake"]
