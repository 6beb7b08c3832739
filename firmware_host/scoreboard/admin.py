"""The game master's actions, as JSON POSTs behind the PIN, the session and a CSRF token.

Inputs are checked for shape here (types, sizes) so that a malformed request gets a clear 400;
whether a well-formed input is legal is the rules engine's call (`RuleError`, also a 400).
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from firmware_host.hub import HubError
from firmware_host.rules import PRESETS
from firmware_host.rules.factory import PLAYER_COUNTS
from firmware_host.rules.knobs import game_kind
from firmware_host.scoreboard.api import get_hub
from firmware_host.scoreboard.auth import (
    admin_required,
    csrf_protected,
    is_admin,
    log_in,
    log_out,
)
from firmware_host.scoreboard.errors import ApiError
from firmware_host.web_guard import csrf_token

admin = Blueprint("admin", __name__, url_prefix="/api/admin")

# How many players a game takes is the rules engine's rule, stated once: `PLAYER_COUNTS`.
MAX_NAME_LENGTH = 24
MAX_JSON_DEPTH = 8  # the deepest admin body is an object holding a list
# Unicode categories refused in names: controls (Cc), format characters (Cf: the bidi
# overrides and isolates, zero-width characters...), lone surrogates (Cs), line and
# paragraph separators (Zl, Zp).
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
MAX_DICE = 6  # more than any game uses; the engine refuses what its game does not allow
# SQLite's largest integer: a bigger id cannot name a dispense, so it is simply not found.
MAX_ROW_ID = 2**63 - 1
ROTATIONS = ("cw", "ccw")  # 4D: which way the mover turns the square after a move


def _body() -> dict[str, Any]:
    """The request's JSON object ({} for an empty body), or a 400 saying what is wrong."""
    raw = request.get_data(cache=True)
    if not raw:
        return {}
    if not request.is_json:
        raise ApiError(400, "bad_json", "body_not_json")
    try:
        data = json.loads(raw)
    except RecursionError:
        # Thousands of nested brackets fit under the size cap and exhaust the parser's stack.
        raise ApiError(400, "bad_json", "body_too_deep") from None
    except ValueError:  # not JSON, or not UTF-8 (UnicodeDecodeError is a ValueError)
        raise ApiError(400, "bad_json", "body_invalid_json") from None
    if not isinstance(data, dict):
        raise ApiError(400, "bad_json", "body_not_object")
    if _depth(data) > MAX_JSON_DEPTH:
        # Parsed, but deep enough to break whatever walks it next (the journal's encoder).
        raise ApiError(400, "bad_json", "body_too_deep")
    return data


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in `value`; iterative, so any depth is safe."""
    deepest = 0
    pending = [(value, 1)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if level > MAX_JSON_DEPTH:
            break  # already too deep: no need to walk the rest
        pending.extend((child, level + 1) for child in children)
    return deepest


def _player_name(value: Any) -> str:
    """A player's name, trimmed; refused when it is empty, too long or hides characters."""
    if not isinstance(value, str):
        raise _bad("players", "name_not_text")
    name = value.strip()
    if not name:
        raise _bad("players", "name_empty")
    if len(name) > MAX_NAME_LENGTH:
        raise _bad("players", "name_too_long", most=MAX_NAME_LENGTH)
    for char in name:
        if unicodedata.category(char) in HIDDEN_CATEGORIES:
            # Control and format characters (U+202E reverses the text after it, zero-width
            # ones hide) would let one name pass for another on the board.
            raise _bad("players", "name_hidden_char", name=ascii(name),
                       char=f"U+{ord(char):04X}")
    return name


def _bad(field: str, why: str, **values: Any) -> ApiError:
    """A refused field: ``why`` is a code of `firmware_host.scoreboard.texts`."""
    return ApiError(400, "bad_input", why, field=field, **values)


def _int_list(data: dict[str, Any], field: str, *, required: bool) -> list[int] | None:
    value = data.get(field)
    if value is None:
        if required:
            raise _bad(field, "required_numbers")
        return None
    if not isinstance(value, list) or len(value) > MAX_DICE:
        raise _bad(field, "too_many_numbers", most=MAX_DICE)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise _bad(field, "numbers_only")
    return value


def _faces(data: dict[str, Any]) -> list[int]:
    faces = _int_list(data, "faces", required=True)
    assert faces is not None
    if not faces:
        raise _bad("faces", "one_die_at_least")
    if any(not 1 <= f <= 6 for f in faces):
        raise _bad("faces", "face_range")
    return faces


def _with_player(event: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Add the optional ``player`` seat: the engine then refuses an input out of turn."""
    player = data.get("player")
    if player is not None:
        if not isinstance(player, int) or isinstance(player, bool) or player < 0:
            raise _bad("player", "seat_number")
        event["player"] = player
    return event


def _rotation(data: dict[str, Any]) -> str | None:
    rotate = data.get("rotate")
    if rotate is not None and rotate not in ROTATIONS:
        raise _bad("rotate", "rotation_choice", choices=", ".join(ROTATIONS))
    return rotate


def _ok(**extra: Any) -> Response:
    return jsonify({"ok": True, "version": get_hub().version, **extra})


@admin.post("/login")
@csrf_protected
def login() -> Response:
    pin = _body().get("pin")
    if not isinstance(pin, str) or not pin:
        raise _bad("pin", "required_text")
    log_in(pin)
    return jsonify({"ok": True, "admin": True, "csrf": csrf_token()})


@admin.post("/logout")
@csrf_protected
def logout() -> Response:
    log_out()
    return jsonify({"ok": True, "admin": False})


@admin.post("/game")
@admin_required
def start_game() -> Response:
    data = _body()
    preset = data.get("preset")
    if not isinstance(preset, str) or preset not in PRESETS:
        raise _bad("preset", "preset_choice", choices=", ".join(sorted(PRESETS)))
    players = data.get("players")
    low, high = PLAYER_COUNTS[game_kind(preset)]
    if not isinstance(players, list) or not low <= len(players) <= high:
        if low == high:
            raise _bad("players", "player_count_exact", preset=preset, count=low)
        raise _bad("players", "player_count_range", preset=preset, low=low, high=high)
    names = [_player_name(p) for p in players]
    if len(set(names)) != len(names):
        raise _bad("players", "names_twice")
    knobs = data.get("knobs") or {}
    if not isinstance(knobs, dict):
        raise _bad("knobs", "knobs_object")
    view = get_hub().start_game(preset, names, knobs)
    return _ok(game=view)


@admin.post("/throw")
@admin_required
def throw() -> Response:
    data = _body()
    event: dict[str, Any] = {"type": "throw", "faces": _faces(data)}
    if _rotation(data) is not None:
        raise _bad("rotate", "rotate_only_turn")
    keep = _int_list(data, "keep", required=False)
    if keep:
        event["keep"] = keep
    return _ok(effects=get_hub().apply(_with_player(event, data)))


@admin.post("/turn")
@admin_required
def turn() -> Response:
    data = _body()
    event: dict[str, Any] = {"type": "turn", "faces": _faces(data)}
    rotate = _rotation(data)
    if rotate is not None:
        event["rotate"] = rotate
    return _ok(effects=get_hub().apply(_with_player(event, data)))


@admin.post("/present")
@admin_required
def present() -> Response:
    """4D, after the throw: the thrower turned the square so that ``near`` faces the opponent."""
    data = _body()
    near = data.get("near")
    if not isinstance(near, int) or isinstance(near, bool):
        raise _bad("near", "near_position")
    return _ok(effects=get_hub().apply(_with_player({"type": "present", "near": near}, data)))


@admin.post("/stop")
@admin_required
def stop() -> Response:
    return _ok(effects=get_hub().apply(_with_player({"type": "stop"}, _body())))


@admin.post("/undo")
@admin_required
def undo() -> Response:
    return _ok(effects=get_hub().undo())


@admin.post("/correct")
@admin_required
def correct() -> Response:
    data = _body()
    keep = _int_list(data, "keep", required=False)
    faces = _faces(data)
    return _ok(effects=get_hub().correct_last(faces, keep, _rotation(data)))


@admin.post("/pause")
@admin_required
def pause() -> Response:
    paused = _body().get("paused", True)
    if not isinstance(paused, bool):
        raise _bad("paused", "true_or_false")
    tower = current_app.extensions.get("dicetower.tower")
    if not paused and tower is not None:
        # The tower resumes: unpaused, and a jammed dispenser pays again (even once the game
        # is over, when there is nothing to unpause).
        tower.resume()
        return _ok(paused=get_hub().snapshot()["paused"])
    return _ok(paused=get_hub().set_paused(paused))


@admin.post("/end")
@admin_required
def end() -> Response:
    return _ok(game=get_hub().end_game())


@admin.post("/dispenses/<int:dispense_id>/confirm")
@admin_required
def confirm_dispense(dispense_id: int) -> Response:
    """The game master counted the tokens that fell for a dispense cut off mid-way."""
    tower = current_app.extensions.get("dicetower.tower")
    if tower is None:
        raise ApiError(409, "no_tower", "no_tower")
    delivered = _body().get("delivered")
    if not isinstance(delivered, int) or isinstance(delivered, bool) or delivered < 0:
        raise _bad("delivered", "token_count")
    if dispense_id > MAX_ROW_ID:
        raise ApiError(404, "no_dispense", "no_dispense", dispense=dispense_id)
    try:
        row = tower.confirm_dispense(dispense_id, delivered)
    except KeyError:
        raise ApiError(404, "no_dispense", "no_dispense", dispense=dispense_id) from None
    except HubError as exc:
        # A count out of range, or a dispense that is not waiting for one: nothing changed.
        raise ApiError(400, "dispense", exc.code, **exc.values) from None
    to_json = getattr(row, "to_json", None)
    return _ok(dispense=to_json() if callable(to_json) else row)


@admin.get("/league")
def league_offer() -> Response:
    """The league's offer of a tournament match to this tower (null: none, or no league).
    A read: the unlocked session is enough."""
    if not is_admin():
        raise ApiError(401, "login", "login_first")
    seat = current_app.extensions.get("dicetower.league_seat")
    response = jsonify({"league": seat is not None,
                        "offer": None if seat is None else seat.proposal})
    response.headers["Cache-Control"] = "no-store"
    return response


@admin.post("/league/start")
@admin_required
def start_league_offer() -> Response:
    """The game master's one tap: start the match the league offers this tower."""
    seat = current_app.extensions.get("dicetower.league_seat")
    if seat is None:
        raise ApiError(409, "no_league", "no_league")
    try:
        return _ok(game=seat.start_proposal())
    except LookupError:
        raise ApiError(409, "no_offer", "no_offer") from None


@admin.get("/fairness")
def fairness() -> Response:
    """Whether the dice look fair, from the running tower's journal (null without a tower:
    `dicetower fairness` reads any journal). A read: the unlocked session is enough."""
    from firmware_host.fairness.watch import FairnessWatch  # SciPy: loaded when first asked

    if not is_admin():
        raise ApiError(401, "login", "login_first")
    tower = current_app.extensions.get("dicetower.tower")
    path = None if tower is None else tower.journal_path
    summary = None
    if path is not None:
        watch = current_app.extensions.get("dicetower.fairness")
        if watch is None:
            watch = current_app.extensions.setdefault("dicetower.fairness", FairnessWatch(path))
        summary = watch.summary()
    response = jsonify({"fairness": summary})
    response.headers["Cache-Control"] = "no-store"
    return response
