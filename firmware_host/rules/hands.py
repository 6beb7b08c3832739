"""421 hands: naming three dice, the two rankings and the token value of each hand.

This is the one place where hands are ranked and valued; everything else asks here.
A hand is named by its faces in descending order, as players announce it (2,6,5 -> "652").
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import product


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Best first. With fiches, x11 ranks just above the brelan xxx (docs/rules.md, 56 outcomes).
FICHES_RANKING: tuple[str, ...] = _words(
    """
    421 111 611 666 511 555 411 444 311 333 211 222 654 543 432 321
    665 664 663 662 661 655 653 652 651 644 643 642 641 633 632 631 622 621
    554 553 552 551 544 542 541 533 532 531 522 521 443 442 441 433 431 422
    332 331 322 221
    """
)

# Brelans only (kyt-11): x11 is an ordinary hand, ranked by its digits.
BRELANS_RANKING: tuple[str, ...] = _words(
    """
    421 111 666 555 444 333 222 654 543 432 321
    665 664 663 662 661 655 653 652 651 644 643 642 641 633 632 631 622 621 611
    554 553 552 551 544 542 541 533 532 531 522 521 511 443 442 441 433 431 422 411
    332 331 322 311 211 221
    """
)

RANKINGS: dict[str, tuple[str, ...]] = {"fiches": FICHES_RANKING, "brelans": BRELANS_RANKING}

NENETTE = "221"
SUITES = frozenset({"654", "543", "432", "321"})

# Every ordered throw of three dice -> its name; a dict lookup is the hot path of a game.
_NAMES: dict[tuple[int, ...], str] = {
    faces: "".join(str(f) for f in sorted(faces, reverse=True))
    for faces in product(range(1, 7), repeat=3)
}


def hand_name(faces: Sequence[int]) -> str:
    """The announced name of three dice: faces in descending order, e.g. (2, 6, 5) -> "652"."""
    try:
        return _NAMES[tuple(faces)]
    except KeyError:
        raise ValueError(f"a 421 hand is three faces from 1 to 6, not {list(faces)}") from None


@cache
def rank_table(ranking: str) -> dict[str, int]:
    """Hand name -> position in the ranking, 0 being the best hand."""
    return {hand: i for i, hand in enumerate(RANKINGS[ranking])}


def hand_kind(hand: str, ranking: str) -> str:
    """A short family name for display and statistics: 421, brelan, fiche, suite, nenette."""
    if hand == "421":
        return "421"
    if hand == NENETTE:
        return "nenette"
    if hand[0] == hand[1] == hand[2]:
        return "brelan"
    if ranking == "fiches" and hand.endswith("11"):
        return "fiche"
    if hand in SUITES:
        return "suite"
    return "plain"


def hand_value(hand: str, ranking: str, value_421: int, nenette: str) -> int:
    """Tokens a hand is worth (the table of docs/rules.md).

    The two columns that differ are derived from other knobs: x11 is worth x only when it
    is a fiche (ranking ``fiches``), and the nénette is worth 2 unless it is ``plain``.
    """
    kind = hand_kind(hand, ranking)
    if kind == "421":
        return value_421
    if hand == "111":
        return 7
    if kind == "brelan":
        return int(hand[0])
    if kind == "fiche":
        return int(hand[0])
    if kind == "suite":
        return 2
    if kind == "nenette":
        return 1 if nenette == "plain" else 2
    return 1


@cache
def value_table(ranking: str, value_421: int, nenette: str) -> dict[str, int]:
    """Hand name -> token value, for every hand of the ranking."""
    return {h: hand_value(h, ranking, value_421, nenette) for h in RANKINGS[ranking]}


def throws_label(count: int | None) -> str | None:
    """What the opener announces: 1 -> "sec", 2 -> "en 2", 3 -> "à fond"."""
    return {1: "sec", 2: "en 2", 3: "à fond"}.get(count) if count else None
