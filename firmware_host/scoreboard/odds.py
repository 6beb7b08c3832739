"""The odds line: the advisor's advice for the player to move, computed once per game version.

The advice rides in the state every page already receives (the snapshot, key ``odds``), not
behind an endpoint of its own: the snapshot is serialised once per version and pushed down
streams that are already open, so 100 phones cost one computation and a few hundred more
bytes per push, where an endpoint fetched on change would cost 100 more requests (100 more
waitress threads woken, 100 more Flask dispatches) on every throw.

The advisor is fast once warm (421: under a millisecond) but its first question per rule set
builds tables (about 0.2 s), and a 4D position takes 5 to 60 ms, so nothing is computed on a
request thread nor under the store's lock: `OddsService` computes in a worker thread of its
own, for the latest game version only, and tells the store when the advice is ready (one more
version, so the streams push it). Until then the snapshot says ``{"pending": true}``.

``SCOREBOARD_ODDS`` says who sees it: ``public`` (the default: every page) or ``admin-only``
(only a session unlocked with the game master's PIN; the public board never receives it).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from firmware_host.advisor.moves4d import advise_4d
from firmware_host.advisor.odds421 import Turn, analyse
from firmware_host.advisor.round_model import best_action
from firmware_host.advisor.strategies import situation_from_view
from firmware_host.catalogue import LANGUAGES, Catalogue
from firmware_host.rules.hands import hand_name

JSONDict = dict[str, Any]
ODDS_MODES = ("public", "admin-only")
DEFAULT_ODDS_MODE = "public"
PENDING: JSONDict = {"pending": True}
TOP_MOVES = 5  # 4D moves listed when the line is tapped
# The columns of the 421 table and the goal whose best keep each one marks.
KEEP_FIELDS = {"p_beat": "beat", "p_tie": "tie", "p_worst": "avoid_worst", "p_421": "421",
               "expected_tokens": "tokens"}

log = logging.getLogger(__name__)


def check_odds_mode(value: object) -> str:
    """``value`` when it is one of `ODDS_MODES`, else ValueError naming them."""
    if value not in ODDS_MODES:
        raise ValueError(f"SCOREBOARD_ODDS must be one of {', '.join(ODDS_MODES)}, "
                         f"not {value!r}")
    return str(value)


# ---------------------------------------------------------------------- the advice itself


def advice_needed(view: Mapping[str, Any] | None) -> bool:
    """Whether the player to move in ``view`` has a choice to make (cheap: no advisor run)."""
    if not view or view.get("phase") == "over":
        return False
    if view.get("game") == "4d":
        return (view.get("phase") in ("play", "present") and bool(view.get("square"))
                and view.get("to_move") is not None)
    return situation_from_view(view) is not None


def advice_for_view(view: Mapping[str, Any] | None) -> JSONDict | None:
    """The advice for the player to move in ``view`` (a game's ``view()``), or None when that
    player has nothing to choose (no game, before the first throw, a coup sec, a rampo...)."""
    if not view or view.get("phase") == "over":
        return None
    if view.get("game") == "4d":
        return _advice_4d(view)
    return _advice_421(view)


def _advice_421(view: Mapping[str, Any]) -> JSONDict | None:
    situation = situation_from_view(view)
    if situation is None:
        return None
    hands = view.get("round") or []
    turn = Turn(situation.made_throws, situation.allowed, situation.required)

    def made_by(who: Mapping[str, Any] | None) -> tuple[str, int] | None:
        entry = next((h for h in hands if who and h["player"] == who["player"]), None)
        return None if entry is None else (entry["hand"], entry["throws"])

    # The opener has nothing to beat yet: the table then compares with the hand in hand.
    to_beat = made_by(view.get("best"))
    avoid = made_by(view.get("worst"))
    own = to_beat is None
    if own:
        to_beat = (hand_name(list(situation.dice)), situation.made_throws)
    table = analyse(situation.knobs, situation.dice, turn, to_beat, avoid)
    advised, _ = best_action(situation)
    keeps = [{"keep": k["keep"], "stop": k["stop"], "throw": k["throw"],
              **{f: None if k[f] is None else round(k[f], 4) for f in KEEP_FIELDS}}
             for k in table["keeps"]]
    keep = list(advised) if advised is not None else list(situation.dice)
    return {
        "game": "421",
        "player": view["to_move"],
        "dice": list(situation.dice),
        "throws_left": situation.allowed - situation.made_throws,
        "to_beat": {"hand": to_beat[0], "throws": to_beat[1], "own": own},
        "avoid": None if avoid is None else {"hand": avoid[0], "throws": avoid[1]},
        "advice": {"keep": keep, "stop": advised is None},
        "keeps": keeps,
        "best": {field: table["best"][goal] for field, goal in KEEP_FIELDS.items()},
    }


def _advice_4d(view: Mapping[str, Any]) -> JSONDict | None:
    square = view.get("square")
    mover = view.get("to_move")
    if view.get("phase") not in ("play", "present") or not square or mover is None:
        return None
    faces = [0] * 4
    for spot in square.values():
        faces[spot["pos"]] = spot["face"]
    if view.get("fifth") is not None:
        faces.append(view["fifth"])
    scores = view.get("scores") or [p.get("score", 0) for p in view["players"]]
    knobs = {k: view["knobs"][k] for k in ("target", "pairs_score", "fifth_die")}
    result = advise_4d(faces, near=square["near"]["pos"],
                       scores=(scores[mover], scores[1 - mover]), knobs=knobs)
    moves = [_move(m, square) for m in result["moves"][:TOP_MOVES]]
    return {"game": "4d", "player": mover, "best": moves[0], "moves": moves,
            "count": len(result["moves"])}


def _move(move: Mapping[str, Any], square: Mapping[str, Any]) -> JSONDict:
    """One 4D move for the page: which dice turn to which faces, the rotation, the points."""
    turned = [role for role in ("near", "left", "right")
              if role in move["move"].split("+")]
    to = {role: move["faces"][square[role]["pos"]] for role in turned}
    if len(move["faces"]) > 4:
        to["fifth"] = move["faces"][4]
    reply = move["reply"]
    return {"move": move["move"], "to": to, "rotate": move["rotate"],
            "combination": move["combination"], "points": move["points"], "wins": move["wins"],
            "reply": None if reply is None else {"combination": reply["combination"],
                                                 "points": reply["points"],
                                                 "wins": reply["wins"]}}


# ---------------------------------------------------------------------- once per version


class OddsService:
    """Advice for the store's current game version, computed off the request threads.

    The store asks `advice(game_version, view)` whenever it builds a snapshot (once per
    version, however many clients read it); the answer is None at once when the player to
    move has no choice, else the advice when ready, else `PENDING`, and the first ask of a
    game version queues its computation. Only the latest
    version is ever computed: a worker that finishes late finds its version gone and moves
    on. `computations` counts the advisor calls (each game version at most once).
    """

    def __init__(self, compute: Callable[[Mapping[str, Any]], JSONDict | None] = advice_for_view,
                 *, ready: Callable[[int], None] | None = None,
                 needed: Callable[[Mapping[str, Any]], bool] = advice_needed) -> None:
        self._compute = compute
        self._needed = needed
        self._ready = ready
        self._lock = threading.Lock()
        self._done: tuple[int, JSONDict | None] | None = None
        self._wanted: tuple[int, Mapping[str, Any]] | None = None
        self._worker: threading.Thread | None = None
        self.computations = 0

    def set_ready(self, ready: Callable[[int], None]) -> None:
        """Who to tell (with the game version) once an advice is ready: the store."""
        self._ready = ready

    def advice(self, game_version: int, view: Mapping[str, Any] | None) -> JSONDict | None:
        """The advice of ``game_version`` if computed, else `PENDING` (and it is queued)."""
        if view is None or not self._needed(view):
            # Most versions have no choice to advise (an opening, a coup sec, a rampo,
            # between turns): answered at once, with no computation and no extra version.
            return None
        with self._lock:
            if self._done is not None and self._done[0] == game_version:
                return self._done[1]
            if self._wanted is None or self._wanted[0] != game_version:
                self._wanted = (game_version, view)
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="odds", daemon=True)
                self._worker.start()
        return PENDING

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until nothing is being computed (tests, and a clean stop); True if idle."""
        with self._lock:
            worker = self._worker
        if worker is not None:
            worker.join(timeout)
            return not worker.is_alive()
        return True

    def _work(self) -> None:
        while True:
            with self._lock:
                job = self._wanted
                self._wanted = None
                if job is None:
                    self._worker = None
                    return
            version, view = job
            try:
                result = self._compute(view)
            except Exception:  # an advice is a nicety: never let it take the scoreboard down
                log.exception("odds: no advice for game version %s", version)
                result = None
            with self._lock:
                self.computations += 1
                self._done = (version, result)
            if self._ready is not None:
                self._ready(version)


# ---------------------------------------------------------------------- the page's words

ODDS_LABELS = Catalogue("scoreboard.odds")


def odds_labels(language: str) -> dict[str, str]:
    """The odds line's words in ``language`` (French when unknown)."""
    return ODDS_LABELS.in_language(language if language in LANGUAGES else "fr")
