"""Calibrating the running tower from the game master's page: /api/admin/calibration.

    POST start {expect, name?, values?}   the game pauses, step 1 asks for an empty tray
    GET  (the state)                step, progress, message code and values, preview, result;
                                    while the dice's values are asked, ``dice`` (index, centre
                                    and side in image pixels, value read or null) and ``ask``
    POST next                       the game master did what was asked (values: as read)
    POST corners {corners: [[x, y] x4]}   the tray's outline by hand (image pixels)
    POST values {values: [v, ...], ask?, added?}  the values of the dice shown, in their
                                    order: 1-6, 0 for a die not to learn from, null for no
                                    die; added: [[x, y, v], ...] the dice the reading missed,
                                    each its centre in image pixels and its value (1-6 or 0)
    POST cancel                     nothing saved
    GET  preview.jpg                the current step's annotated picture

Every POST needs the PIN's session and its CSRF token; the GETs the PIN's session. The job
itself is the running tower's (`TowerActions.calibration`); without a running tower, 409.
"""

from __future__ import annotations

import math
from typing import Any

from flask import Blueprint, Response, current_app, jsonify

from firmware_host.hub import HubError
from firmware_host.hub.ports import AddedOutside, CalibrationRun, TowerActions, ValuesCount
from firmware_host.scoreboard.admin import _bad, _body
from firmware_host.scoreboard.auth import admin_required, is_admin
from firmware_host.scoreboard.errors import ApiError

calibration_api = Blueprint("calibration_api", __name__, url_prefix="/api/admin/calibration")

JOB = "dicetower.calibration"
MAX_EXPECT = 6  # more dice than any game throws
MAX_SHOWN = 64  # more dice than a tray shows: a longer list of values is refused unread
MAX_ADDED = 16  # more dice than a reading misses in one throw
# How many throws the dice step learns from and the check uses (as `dicetower calibrate`),
# and how long the tray must be still: app.config may change them (the tests do).
CONFIG = {"CALIBRATION_THROWS": 4, "CALIBRATION_CHECKS": 3, "CALIBRATION_HOLD": 0.5}


def _tower() -> TowerActions:
    tower = current_app.extensions.get("dicetower.tower")
    if tower is None:
        raise ApiError(409, "no_tower", "calibration_no_tower")
    return tower


def _job() -> CalibrationRun:
    job = current_app.extensions.get(JOB)
    if job is None:
        raise ApiError(409, "calibration", "calibration_none")
    return job


def _read_access() -> None:
    if not is_admin():
        raise ApiError(401, "login", "login_first")


def _state(job: CalibrationRun | None) -> dict[str, Any] | None:
    if job is None:
        return None
    state = job.state()
    if state["preview"] is not None:
        state["preview"]["url"] = (f"/api/admin/calibration/preview.jpg"
                                   f"?v={state['preview']['version']}")
    return state


def _answer(job: CalibrationRun | None) -> Response:
    response = jsonify({"ok": True, "calibration": _state(job)})
    response.headers["Cache-Control"] = "no-store"
    return response


def _refused(exc: HubError) -> ApiError:
    """The job's own refusals (not waiting, corners too late...): a 409 with its sentence."""
    return ApiError(409, "calibration", exc.code, **exc.values)


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _corners(value: Any) -> list[tuple[float, float]]:
    if (not isinstance(value, list) or len(value) != 4
            or not all(isinstance(c, list) and len(c) == 2 and all(map(_number, c))
                       for c in value)):
        raise _bad("corners", "corners_shape")
    return [(float(x), float(y)) for x, y in value]


def _values(value: Any) -> list[int | None]:
    """One answer per die: 1-6, 0 (a die not to learn from) or None (no die)."""
    if (not isinstance(value, list) or len(value) > MAX_SHOWN
            or not all(v is None or (isinstance(v, int) and not isinstance(v, bool)
                                     and 0 <= v <= 6) for v in value)):
        raise _bad("values", "values_shape")
    return list(value)


def _added(value: Any) -> list[tuple[float, float, int]]:
    """The dice the reading missed: [x, y, value] each, value 1-6 or 0; none when absent."""
    if value is None:
        return []
    if (not isinstance(value, list) or len(value) > MAX_ADDED
            or not all(isinstance(d, list) and len(d) == 3 and _number(d[0]) and _number(d[1])
                       and isinstance(d[2], int) and not isinstance(d[2], bool)
                       and 0 <= d[2] <= 6 for d in value)):
        raise _bad("added", "added_shape", most=MAX_ADDED)
    return [(float(x), float(y), v) for x, y, v in value]


@calibration_api.post("/start")
@admin_required
def start() -> Response:
    tower = _tower()
    data = _body()
    expect = data.get("expect")
    if not isinstance(expect, int) or isinstance(expect, bool) or not 1 <= expect <= MAX_EXPECT:
        raise _bad("expect", "expect_count", most=MAX_EXPECT)
    name = data.get("name") or "default"
    values = data.get("values", True)
    if not isinstance(values, bool):
        raise _bad("values", "true_or_false")
    settings = {key: current_app.config.get(key, default) for key, default in CONFIG.items()}
    # Without a name, the profile the tower was started with is the one made anew, so that a
    # restart reads with it too (CALIBRATION_PROFILE: the profile named in tower.toml).
    path = None if data.get("name") else current_app.config.get("CALIBRATION_PROFILE")
    try:
        job = tower.calibration(expect=expect, name=name if isinstance(name, str) else "",
                                path=path, throws=int(settings["CALIBRATION_THROWS"]),
                                checks=int(settings["CALIBRATION_CHECKS"]),
                                hold=float(settings["CALIBRATION_HOLD"]), values=values)
    except ValueError:
        raise _bad("name", "profile_name") from None
    current = current_app.extensions.get(JOB)
    if current is not None and current.active:
        raise ApiError(409, "calibration", "calibration_running")
    current_app.extensions[JOB] = job
    job.start()
    return _answer(job)


@calibration_api.get("")
def state() -> Response:
    _read_access()
    return _answer(current_app.extensions.get(JOB))


@calibration_api.post("/next")
@admin_required
def next_step() -> Response:
    job = _job()
    try:
        job.next()
    except HubError as exc:
        raise _refused(exc) from None
    return _answer(job)


@calibration_api.post("/corners")
@admin_required
def corners() -> Response:
    job = _job()
    given = _corners(_body().get("corners"))
    try:
        job.set_corners(given)
    except HubError as exc:
        raise _refused(exc) from None
    return _answer(job)


@calibration_api.post("/values")
@admin_required
def dice_values() -> Response:
    job = _job()
    data = _body()
    given = _values(data.get("values"))
    added = _added(data.get("added"))
    ask = data.get("ask")
    if ask is not None and (not isinstance(ask, int) or isinstance(ask, bool)):
        raise _bad("ask", "ask_number")
    try:
        job.set_values(given, ask, added)
    except ValuesCount as exc:
        raise _bad("values", "values_count", count=exc.count) from None
    except AddedOutside as exc:
        raise _bad("added", "added_outside", width=exc.width, height=exc.height) from None
    except HubError as exc:
        raise _refused(exc) from None
    return _answer(job)


@calibration_api.post("/cancel")
@admin_required
def cancel() -> Response:
    job = _job()
    try:
        job.cancel()
    except HubError as exc:
        raise _refused(exc) from None
    return _answer(job)


@calibration_api.get("/preview.jpg")
def preview() -> Response:
    _read_access()
    job = current_app.extensions.get(JOB)
    jpeg = job.preview_jpeg() if job is not None else None
    if jpeg is None:
        raise ApiError(404, "no_preview", "calibration_no_preview")
    response = Response(jpeg, mimetype="image/jpeg")
    response.headers["Cache-Control"] = "no-store"
    return response
