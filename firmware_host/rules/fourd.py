"""4D: four dice in a 2x2 square, thrown once, then turned a quarter at a time.

Geometry. The dice keep their positions 0, 1, 2, 3, numbered clockwise seen from above
(the fifth die of the variant is position 4, beside the square). The player to move faces
one corner: the die there is *near*, the next clockwise is *left*, the previous one is
*right*, and the opposite one is *far* (locked). After each move the mover turns the square
a quarter, clockwise by default, and the direction picks the die the opponent cannot touch:
clockwise, the opponent's near die is the next position and the mover's right die is locked
for them; counter-clockwise, their near die is the previous position and the mover's left die
is locked.

The first move. "Le premier joueur tourne ce carré de façon à présenter trois dés à son
adversaire. L'adversaire ne pourra modifier la valeur du dé dont il est le plus éloigné." (The
first player turns the square so as to present three dice to the opponent, who cannot change
the die farthest from them.) So seat 0 throws, may then ``present`` the square (name the
position that faces the opponent), and the opponent makes the first move; when the opponent's
first move comes without a presentation, position 0 faces them. The knob ``first_move``
= ``"thrower"`` keeps the older reading: the thrower moves first, facing position 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from copy import deepcopy
from itertools import product
from typing import Any, ClassVar

from firmware_host.rules.base import GameBase
from firmware_host.rules.errors import RuleError
from firmware_host.rules.texts import RuleText, rule_text

SQUARE = 4

# The six moves of the seed, as the set of dice they turn. Turning the near die to the left
# or to the right cannot be told apart from its top face alone, so both are "near".
MOVES: dict[str, frozenset[str]] = {
    "near-left": frozenset({"near"}),
    "near-right": frozenset({"near"}),
    "left": frozenset({"left"}),
    "right": frozenset({"right"}),
    "left+near": frozenset({"left", "near"}),
    "right+near": frozenset({"right", "near"}),
}
LEGAL_TURNED: frozenset[frozenset[str]] = frozenset(MOVES.values())
# The five sets of dice a move can turn (the two near moves look alike from above).
TURNED_SETS: dict[str, tuple[str, ...]] = {
    "near": ("near",),
    "left": ("left",),
    "right": ("right",),
    "left+near": ("left", "near"),
    "right+near": ("right", "near"),
}

# The two ways to turn the square after a move, as the step of the near position: "cw" locks
# the mover's right die for the opponent, "ccw" the mover's left die.
ROTATIONS: dict[str, int] = {"cw": 1, "ccw": -1}
DEFAULT_ROTATION = "cw"
# The position facing the opponent when the thrower does not present the square.
DEFAULT_NEAR = 0
THROWER = 0  # the seat that throws the dice (the first player)

# Combination -> base points (the face value is added). Equal totals go to the rarer one.
COMBINATIONS: dict[str, int] = {
    "pair": 3,
    "trio": 5,
    "brelan": 6,
    "double_pair": 7,
    "carre": 8,
    "suite": 10,
    "quinte": 12,
}


def roles(near: int) -> dict[str, int]:
    """Position of the near, left, right and far dice when ``near`` faces the player."""
    return {
        "near": near,
        "left": (near + 1) % SQUARE,
        "right": (near - 1) % SQUARE,
        "far": (near + 2) % SQUARE,
    }


def next_near(near: int, rotate: str = DEFAULT_ROTATION) -> int:
    """The opponent's near position once the mover has turned the square ``rotate``."""
    return (near + ROTATIONS[rotate]) % SQUARE


def check_rotate(value: Any) -> str:
    """``value`` when it names a rotation of the square, else a RuleError listing the valid ones."""
    if type(value) is not str or value not in ROTATIONS:
        valid = ", ".join(repr(name) for name in ROTATIONS)
        raise RuleError("bad_rotate", valid=valid, value=repr(value))
    return value


def check_near(value: Any) -> int:
    """``value`` when it names a position of the square, else a RuleError saying what it takes."""
    if type(value) is not int or not 0 <= value < SQUARE:
        raise RuleError("bad_near", last=SQUARE - 1, value=repr(value))
    return value


def is_quarter_turn(old: int, new: int) -> bool:
    """A quarter turn shows an adjacent face: never the same one, never the opposite."""
    return new != old and new + old != 7


def check_move(
    old: Sequence[int], new: Sequence[int], near: int, fifth_die: bool = False
) -> RuleText | None:
    """None when going from ``old`` to ``new`` top faces is a legal move, else the reason.

    The reason is a `RuleText` (``{"code": ..., "values": {...}}``): whoever shows it puts
    it into words in its own language (`firmware_host.rules.texts.render_text`).
    """
    size = SQUARE + (1 if fifth_die else 0)
    if len(new) != size:
        return rule_text("move_face_count", count=len(new), size=size)
    for face in new:
        if type(face) is not int or not 1 <= face <= 6:
            return rule_text("die_face", face=repr(face))
    where = roles(near)
    role_of = {pos: role for role, pos in where.items()}
    changed = [pos for pos in range(SQUARE) if old[pos] != new[pos]]
    if where["far"] in changed:
        return rule_text("far_locked", position=where["far"])
    for pos in range(size):
        if old[pos] != new[pos] and old[pos] + new[pos] == 7:
            die = dict(_DIE_NAMES["fifth" if pos == SQUARE else role_of[pos]])
            return rule_text("opposite_face", die=die, old=old[pos], new=new[pos])
    if fifth_die and old[SQUARE] == new[SQUARE]:
        return rule_text("fifth_not_turned")
    if not changed:
        return rule_text("nothing_changed")
    turned = frozenset(role_of[pos] for pos in changed)
    if turned not in LEGAL_TURNED:
        # The only sets no single move turns: both sides, or all three dice.
        if "near" in turned:
            return rule_text("two_moves_all")
        return rule_text("two_moves_sides")
    return None


# How a reason names a die of the square (the far one is never turned, so never named).
_DIE_NAMES: dict[str, RuleText] = {
    "near": rule_text("die_near"),
    "left": rule_text("die_left"),
    "right": rule_text("die_right"),
    "fifth": rule_text("die_fifth"),
}


def adjacent_faces(face: int) -> list[int]:
    """The four faces a quarter turn can bring up from ``face``."""
    return [f for f in range(1, 7) if is_quarter_turn(face, f)]


def legal_results(
    faces: Sequence[int], near: int, fifth_die: bool = False
) -> list[tuple[str, list[int]]]:
    """Every (move, new top faces) the player facing ``near`` can reach this turn."""
    where = roles(near)
    results: list[tuple[str, list[int]]] = []
    fifth_options = adjacent_faces(faces[SQUARE]) if fifth_die else [None]
    for move, turned in TURNED_SETS.items():
        for picked in product(*(adjacent_faces(faces[where[role]]) for role in turned)):
            new = list(faces)
            for role, face in zip(turned, picked, strict=True):
                new[where[role]] = face
            for fifth in fifth_options:
                if fifth is not None:
                    new[SQUARE] = fifth
                results.append((move, list(new)))
    return results


def best_combination(faces: Sequence[int], pairs_score: bool = True) -> tuple[str | None, int]:
    """The best-scoring combination showing on ``faces`` and its points (None, 0 if none)."""
    counts = Counter(faces)
    found: list[tuple[int, int, str]] = []

    def add(name: str, value: int) -> None:
        found.append((COMBINATIONS[name] + value, COMBINATIONS[name], name))

    groups = sorted((v for v, c in counts.items() if c >= 2), reverse=True)
    for value, count in counts.items():
        if count >= 4:
            add("carre", value)
        if count >= 3:
            add("brelan", value)
        if count >= 2 and pairs_score:
            add("pair", value)
    if len(groups) >= 2:
        add("double_pair", groups[0])
    run_names = {3: "trio", 4: "suite", 5: "quinte"}
    present = set(counts)
    for high in present:
        length = 1
        while high - length in present:
            length += 1
        for size in range(3, min(length, 5) + 1):
            add(run_names[size], high)
    if any(name == "trio" for _, _, name in found):
        # "Lorsqu'un joueur réalise à la fois une paire et un trio, il déclare le trio."
        found = [entry for entry in found if entry[2] != "pair"]
    if not found:
        return None, 0
    points, _, name = max(found)
    return name, points


class Game4D(GameBase):
    """A 4D game for two players, with or without the fifth die."""

    kind: ClassVar[str] = "4d"
    event_types: ClassVar[tuple[str, ...]] = ("throw", "present", "turn")
    event_fields: ClassVar[dict[str, tuple[str, ...]]] = {
        "throw": ("faces", "player"),
        "present": ("near", "player"),
        "turn": ("faces", "rotate", "player"),
    }

    def _reset(self) -> None:
        self.size = SQUARE + (1 if self.knobs["fifth_die"] else 0)
        self.faces: list[int] = []
        self.near = DEFAULT_NEAR
        self.phase = "start"
        self.to_move: int | None = THROWER
        self.scores = [0, 0]
        self.moves = 0
        self.last_move: dict[str, Any] | None = None
        self.winner: int | None = None
        self.loser: int | None = None

    def _normalise(self, event: dict[str, Any]) -> dict[str, Any]:
        """The base clean form, plus ``rotate`` on a turn when given (checked here)."""
        clean = super()._normalise(event)
        if event["type"] == "turn" and "rotate" in event:
            clean["rotate"] = check_rotate(event["rotate"])
        if event["type"] == "present":
            clean["near"] = check_near(event.get("near"))
            # Written down with the presenter, so the history says who made the choice.
            clean.setdefault("player", THROWER)
        return clean

    def _step(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        faces = event.get("faces", [])
        if self.phase == "start":
            self._check_player(event, self.to_move)
            if event["type"] != "throw":
                raise RuleError("throw_first")
            for face in faces:
                if not 1 <= face <= 6:
                    raise RuleError("die_face", face=face)
            if len(faces) != self.size:
                raise RuleError("start_dice", count=len(faces), size=self.size)
            self.faces = list(faces)
            if self.knobs["first_move"] == "thrower":
                self.phase = "play"
            else:
                # The opponent moves first; the thrower may present the square before that.
                self.phase = "present"
                self.to_move = 1 - THROWER
            return [{"kind": "phase", "phase": self.phase}, self._turn_effect()]
        if event["type"] == "present":
            return self._present(event)
        self._check_player(event, self.to_move)
        if event["type"] != "turn":
            raise RuleError("thrown_once")
        reason = check_move(self.faces, faces, self.near, self.knobs["fifth_die"])
        if reason is not None:
            raise RuleError(reason["code"], **reason["values"])
        rotate = check_rotate(event.get("rotate", DEFAULT_ROTATION))
        player = self.to_move
        where = roles(self.near)
        moved = [
            role
            for role in ("near", "left", "right")
            if self.faces[where[role]] != faces[where[role]]
        ]
        if self.size > SQUARE:
            moved.append("fifth")
        self.faces = list(faces)
        name, points = best_combination(faces, self.knobs["pairs_score"])
        self.scores[player] += points
        self.moves += 1
        self.last_move = {
            "player": player,
            "moved": moved,
            "combination": name,
            "points": points,
            "rotate": rotate,
        }
        effects: list[dict[str, Any]] = [
            {"kind": "scored", "player": player, "combination": name, "points": points}
        ]
        if self.scores[player] >= self.knobs["target"]:
            self.winner, self.loser = player, 1 - player
            self.phase = "over"
            self.is_over = True
            self.to_move = None
            effects.append({"kind": "phase", "phase": "over"})
            effects.append({"kind": "game_over", "loser": self.loser, "winner": self.winner})
            return effects
        if self.phase == "present":
            # The first move came without a presentation: the square was taken as it lay.
            self.phase = "play"
            effects.append({"kind": "phase", "phase": "play"})
        # The mover turns the square a quarter, choosing which die the opponent cannot touch.
        self.near = next_near(self.near, rotate)
        self.to_move = 1 - player
        effects.append(self._turn_effect())
        return effects

    def _present(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """The thrower turns the square: ``near`` faces the opponent, who moves first."""
        thrower, opponent = self.players[THROWER], self.players[1 - THROWER]
        if self.knobs["first_move"] == "thrower":
            raise RuleError("present_not_used", thrower=thrower)
        if self.phase != "present":
            if self.phase == "play" and self.moves == 0:
                raise RuleError("already_presented", player=opponent)
            raise RuleError("present_once")
        if event["player"] != THROWER:
            raise RuleError("presenter_only", thrower=thrower,
                            player=self.players[event["player"]])
        self.near = event["near"]
        self.phase = "play"
        return [{"kind": "phase", "phase": "play"}, self._turn_effect()]

    def _turn_effect(self) -> dict[str, Any]:
        where = roles(self.near)
        return {
            "kind": "turn",
            "player": self.to_move,
            "throws_allowed": 1 if self.phase == "start" else 0,
            "near": where["near"],
            "far": where["far"],
        }

    def _current_turn_effects(self) -> list[dict[str, Any]]:
        return [] if self.to_move is None else [self._turn_effect()]

    def legal_moves(self) -> list[tuple[str, list[int]]]:
        """Every (move, new top faces) the player to move can reach (none unless playing)."""
        if self.phase not in ("present", "play"):
            return []
        return legal_results(self.faces, self.near, self.size > SQUARE)

    def view(self) -> dict[str, Any]:
        square = None
        if self.faces:
            square = {
                role: {"pos": pos, "face": self.faces[pos]}
                for role, pos in roles(self.near).items()
            }
        combination, points = (
            best_combination(self.faces, self.knobs["pairs_score"]) if self.faces else (None, 0)
        )
        # A deep copy: the caller may keep or change it without touching the game.
        return deepcopy(
            {
                "game": "4d",
                "preset": self.preset,
                "knobs": dict(self.knobs),
                "players": [
                    {
                        "name": name,
                        "seat": seat,
                        "tokens": 0,
                        "fiches": 0,
                        "manches_won": 0,
                        "out": False,
                        "out_rank": None,
                        "score": self.scores[seat],
                    }
                    for seat, name in enumerate(self.players)
                ],
                "phase": self.phase,
                "to_move": self.to_move,
                "throw_number": 0,
                "throws_allowed": 1 if self.phase == "start" else 0,
                "throws_label": None,
                "dice": list(self.faces),
                "kept": [],
                "round": [],
                "best": None,
                "worst": None,
                "pot": 0,
                "total_tokens": 0,
                "manche": 1,
                "last_round": None,
                "loser": self.loser,
                "winner": self.winner,
                "prompt": self.prompt(),
                "square": square,
                "fifth": self.faces[SQUARE] if self.size > SQUARE and self.faces else None,
                "showing": {"combination": combination, "points": points},
                "scores": list(self.scores),
                "target": self.knobs["target"],
                "moves": self.moves,
                "last_move": dict(self.last_move) if self.last_move else None,
                # Who may still present the square before the first move (else None).
                "presenter": THROWER if self.phase == "present" else None,
            }
        )

    def prompt(self) -> RuleText:
        """What happens next, as a code and values (`firmware_host.rules.texts.PROMPTS`)."""
        if self.phase == "over":
            return rule_text("fourd_won", player=self.players[self.winner],
                             points=self.scores[self.winner])
        name = self.players[self.to_move]
        if self.phase == "start":
            return rule_text("fourd_throw", player=name, dice=self.size)
        if self.phase == "present":
            return rule_text("fourd_present", thrower=self.players[THROWER], player=name)
        return rule_text("fourd_move", player=name)
