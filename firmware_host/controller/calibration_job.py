"""A calibration run by the running tower, step by step from the game master's page.

    job = controller.calibration(expect=3, name="red", path=None, throws=4, checks=3, hold=0.5)
    job.start()                      # the game pauses; the loop lends the camera
    job.state()                      # step, progress, message (code and values), result
    job.next()                       # the game master emptied the tray, or threw the dice
    job.set_corners([(x, y)] * 4)    # the tray's outline by hand (until the first throw)
    job.set_values([4, 0, None])     # the dice's values of the throw shown (next(): as read)
    job.set_values([4], added=[(x, y, 2)])  # and a die the reading missed, where it lies
    job.cancel()                     # nothing saved, the light put back

The four steps of `calibration.session.calibrate_live` run in a thread of their own, on
frames of the tower's own camera. The controller lends it (`Controller.lend_camera`): its loop
keeps reading the camera (so that it is never read from two threads, and a camera that fails
is reopened as always) but hands a frame over only when the calibration asks for one
(`camera_link.FrameTap`), and judges no throw meanwhile. On a simulated tower (the
controller's ``tray``), the tray throws the dice when asked and its lamp is the ring light.
Every clearing of the tray and every throw waits for the game master's "next". With
``values`` (the default), each throw of the dice step and of the check is then shown read, its
dice numbered left to right, and waits for their values (`set_values`, as the terminal's
labeller takes them: `calibration.web.AskingLabeller`; a die the reading missed is added at
its centre in the picture's pixels), from which the dice's faces are learnt
and checked as `dicetower calibrate` learns them. A profile the
check passes is saved as `dicetower calibrate` saves it (the previous one kept as a backup)
and the controller reads with it from then on; one that reads worse than none is not saved.
Whatever the end, once dice were thrown the tower asks for the tray to be emptied before it
plays again, so that no calibration throw is taken for a player's; then it gives the camera
back and resumes the game as it was (unpaused only if the job paused it). Anything but a
saved profile puts the light (ring, exposure, gain) back as it was.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.agreement import die_side
from calibration.choices import choices_notes
from calibration.controls import light_knobs
from calibration.dice import describe_profile
from calibration.errors import CalibrationError
from calibration.faces import Added, faces_notes
from calibration.session import Outcome, Settings, calibrate_live
from calibration.sources import HOLD, LiveThrows, SimulatedTable
from calibration.store import profile_path, save, write_previews
from calibration.tray import draw, order_corners, propose_zones
from calibration.web import AskingLabeller, AskingTable, PageReporter, numbered
from firmware_host.camera import CameraError, Frame
from firmware_host.controller.camera_link import FRAME_TIMEOUT, FrameTap
from firmware_host.hub import HubError
from firmware_host.hub.ports import AddedOutside, ValuesCount
from vision import Die, Profile

log = logging.getLogger(__name__)

STEPS = 4
JPEG_QUALITY = 85
MIN_AREA = 16.0  # square pixels: four corners enclosing less enclose nothing


class Cancelled(Exception):
    """The game master cancelled: nothing is saved."""


class _Redo(Exception):
    """The tray's corners were given after step 1: it is done again with them."""


class TapCamera:
    """What the calibration sees of the tower's camera: frames through the tap, the controls
    of the camera itself (set from the calibration's thread: they are a setting, not a read)."""

    name = "the tower's camera"

    def __init__(self, tap: FrameTap, camera: Any, job: CalibrationJob,
                 timeout: float = FRAME_TIMEOUT) -> None:
        self.tap = tap
        self.camera = camera
        self.job = job
        self.timeout = timeout

    def read(self) -> Frame:
        self.job.check_cancelled()  # a cancel stops a long wait for a still tray at once
        return self.tap.read(self.timeout)

    def set_controls(self, **controls: Any) -> dict[str, Any]:
        setter = getattr(self.camera, "set_controls", None)
        if setter is None:
            raise ValueError("this camera takes no controls")
        return dict(setter(**controls))

    def controls(self) -> dict[str, Any]:
        getter = getattr(self.camera, "controls", None)
        return dict(getter()) if callable(getter) else {}


def _jpeg(image: np.ndarray) -> bytes:
    ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise CalibrationError("cannot encode a preview picture")
    return bytes(buffer)


def _counts(a: Any) -> dict[str, int]:
    return {"expected": a.expected, "read": a.read, "missed": a.missing,
            "strays": a.over + a.stray}


class CalibrationJob:
    """One calibration on the running tower; see the module docstring."""

    def __init__(self, controller: Any, *, expect: int, name: str = "default",
                 path: str | Path | None = None, throws: int = 4, checks: int = 3,
                 keep: str = "right", hold: float = HOLD, seed: int = 0,
                 frame_timeout: float = FRAME_TIMEOUT, values: bool = True) -> None:
        self.controller = controller
        self.settings = Settings(expect=expect, keep=keep, throws=throws, checks=checks)
        self.target = profile_path(name, path)  # ValueError for a bad name
        self.hold = hold
        self.seed = seed
        self.frame_timeout = frame_timeout
        self.ui = PageReporter(self._changed, self._shown)
        self.table = AskingTable(self._ask)
        self.labeller = AskingLabeller(self._ask_values, controller.readers) if values else None
        self.version = 0  # bumped at every change, for a page that polls
        self._cond = threading.Condition()
        self._phase = "starting"  # starting, working, waiting, over
        self._waiting: str | None = None  # "clear", "throw" or "finish" while waiting
        self._message: tuple[str, dict[str, Any]] = ("starting", {})
        self._pressed = self._cancel = self._redo = self._skip_clear = False
        self._asked: tuple[int, int] = (0, 0)  # (step, throws asked in it)
        self._dice: list[dict[str, Any]] | None = None  # the dice whose values are asked
        self._answer: list[int | None] | None = None  # their values (None: as read)
        self._added: list[Added] = []  # the dice the reading missed, added (x, y, value)
        self._valued: tuple[int, int] = (0, 0)  # (step, throws whose values were asked)
        self._result: dict[str, Any] | None = None
        self._preview: tuple[str, bytes] | None = None  # (step's picture name, JPEG)
        self._preview_version = 0
        self._frame: np.ndarray | None = None  # the tray as it was at the last question
        self._thread: threading.Thread | None = None
        self.camera: Any = None  # a `TapCamera` once the job runs

    # ------------------------------------------------------------------ the page's side

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="calibration", daemon=True)
        self._thread.start()

    @property
    def active(self) -> bool:
        return self._phase != "over"

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def state(self) -> dict[str, Any]:
        """Everything the page shows, as JSON."""
        with self._cond:
            step, fraction = self.ui.number, self.ui.fraction
            if self._result is not None and self._result["outcome"] in ("saved", "refused"):
                progress = 1.0
            else:
                progress = (max(step - 1, 0) + fraction) / STEPS
            size = None if self._frame is None else self._frame.shape[1::-1]
            return {
                "active": self.active, "phase": self._phase, "waiting": self._waiting,
                "step": step, "steps": STEPS, "step_progress": round(fraction, 3),
                "progress": round(progress, 3),
                "message": {"code": self._message[0], "values": dict(self._message[1])},
                "expect": self.settings.expect, "target": str(self.target),
                "corners": [list(c) for c in self.settings.tray] if self.settings.tray else None,
                "corners_open": self._corners_open(),
                "preview": None if self._preview is None else {
                    "name": self._preview[0], "version": self._preview_version,
                    "width": size[0] if size else None, "height": size[1] if size else None},
                "result": self._result, "lines": self.ui.lines[-12:], "version": self.version,
                "dice": self._dice if self._waiting == "values" else None,
                "ask": self.labeller.asked if self.labeller else 0,
            }

    def preview_jpeg(self) -> bytes | None:
        with self._cond:
            return None if self._preview is None else self._preview[1]

    def next(self) -> None:
        """The game master did what was asked."""
        with self._cond:
            if self._phase != "waiting":
                raise HubError("calibration_not_waiting")
            self._answered()

    def set_values(self, values: list[int | None], ask: int | None = None,
                   added: list[Added] | None = None) -> None:
        """The values of the dice shown (`state`'s ``dice``, in that order): 1-6, 0 for a
        die not to learn from, None for no die; ``added``: the dice the reading missed, each
        (x, y, value) with its centre in the picture's pixels and 1-6 or 0. ``ask``: the
        question answered (`state`'s ``ask``), refused if another is asked now. ValuesCount
        if not one per die, AddedOutside for a die added outside the picture."""
        with self._cond:
            if self._waiting != "values" or self._dice is None or self.labeller is None:
                raise HubError("calibration_values_not_asked")
            if ask is not None and ask != self.labeller.asked:
                raise HubError("calibration_values_stale")
            if len(values) != len(self._dice):
                raise ValuesCount(len(self._dice))
            if self._frame is not None:
                height, width = self._frame.shape[:2]
                if any(not (0 <= x < width and 0 <= y < height) for x, y, _ in added or ()):
                    raise AddedOutside(width, height)
            self._answer, self._added = list(values), list(added or ())
            self._answered()

    def _answered(self) -> None:
        """The question answered: no longer waiting, at once (a page that polls or answers
        twice sees it before the job's thread wakes)."""
        self._pressed = True
        self._phase, self._waiting, self._message = "working", None, ("working", {})
        self._changed()
        self._cond.notify_all()

    def cancel(self) -> None:
        """Stop: nothing saved, the light put back (after the tray is emptied, if dice were
        thrown); while that is asked, a second cancel gives the tower back at once."""
        with self._cond:
            if not self.active:
                raise HubError("calibration_none")
            self._cancel = True
            self._cond.notify_all()

    def set_corners(self, corners: list[tuple[float, float]]) -> None:
        """The tray's four corners (image pixels), while no throw was made yet."""
        with self._cond:
            if self._phase != "waiting" or not self._corners_open() or self._frame is None:
                raise HubError("calibration_corners_late")
            height, width = self._frame.shape[:2]
            if any(not (0 <= x <= width and 0 <= y <= height) for x, y in corners):
                raise HubError("calibration_corners_outside", width=width, height=height)
            quad = order_corners(corners)
            if cv2.contourArea(np.asarray(quad, np.float32)) < MIN_AREA:
                raise HubError("calibration_corners_area")
            self.settings.tray = quad
            if self.ui.number >= 2:
                self._redo = True  # step 1 is done again on the empty tray, with these
                self._cond.notify_all()
            self._show_live()

    def check_cancelled(self) -> None:
        if self._cancel and self._waiting is None and self._phase != "over":
            raise Cancelled

    # ------------------------------------------------------------------ the job's thread

    def _changed(self) -> None:
        self.version += 1

    def _shown(self, name: str, image: np.ndarray) -> None:
        jpeg = _jpeg(image)
        with self._cond:
            self._preview = (name, jpeg)
            self._preview_version += 1
            self._changed()

    def _corners_open(self) -> bool:
        return self.table.throws == 0 and self._waiting in ("clear", "throw") and self.active

    def _show_live(self) -> None:
        """The tray as last seen, with the corners given (and the zones they make)."""
        if self._frame is None:
            return
        image = self._frame
        quad = self.settings.tray
        if quad:
            roll, keep = propose_zones(quad, self.settings.keep)
            image = draw(image, quad, roll, keep)
            for x, y in quad:
                cv2.circle(image, (round(x), round(y)), 6, (255, 120, 0), 2, cv2.LINE_AA)
        self._preview = ("live", _jpeg(image))
        self._preview_version += 1
        self._changed()

    def _ask(self, kind: str, n: int) -> None:
        if kind == "clear" and self._skip_clear:
            self._skip_clear = False  # step 1 again: the tray is as empty as it was
            return
        values: dict[str, Any] = {}
        if kind == "throw":
            step = self.ui.number
            asked = self._asked[1] + 1 if self._asked[0] == step else 1
            self._asked = (step, asked)
            of = {3: self.settings.throws, 4: self.settings.checks}.get(step, 1)
            values = {"n": n, "k": asked, "of": of}
        if self.table.throws == 0:
            # No step picture to go by yet: the tray as it is, to click its corners on.
            self._frame = self.camera.read().image
            if self._preview is None or self._preview[0] == "live":
                with self._cond:
                    self._show_live()
        self._wait(kind, values)

    def _ask_values(self, name: str, image: np.ndarray, shown: list[Die]
                    ) -> tuple[list[int | None] | None, list[Added]]:
        """One throw's dice, numbered on its picture: their values as the game master gives
        them (None: as read), and the dice added."""
        step = self.ui.number
        k = self._valued[1] + 1 if self._valued[0] == step else 1
        self._valued = (step, k)
        self._shown(f"{step}-values-{k}", numbered(image, shown))
        with self._cond:
            self._frame, self._answer, self._added = image, None, []
            self._dice = [{"index": i, "center": [round(d.center[0], 1), round(d.center[1], 1)],
                           "side": round(die_side(d), 1), "value": d.value}
                          for i, d in enumerate(shown, 1)]
        of = {3: self.settings.throws, 4: self.settings.checks}.get(step, 1)
        try:
            self._wait("values", {"k": k, "of": of, "count": len(shown)})
        finally:
            with self._cond:
                self._dice = None
        return self._answer, self._added

    def _wait(self, kind: str, values: dict[str, Any]) -> None:
        with self._cond:
            self._phase, self._waiting, self._message = "waiting", kind, (kind, values)
            self._pressed = False
            self._changed()
            while not (self._pressed or self._cancel or self._redo):
                self._cond.wait()
            self._phase, self._waiting, self._message = "working", None, ("working", {})
            self._changed()
            if self._cancel and kind != "finish":
                raise Cancelled
            if self._redo:
                self._redo = False
                raise _Redo

    def _run(self) -> None:
        controller = self.controller
        paused = self._pause()
        tap = None
        try:
            tap = controller.lend_camera()
            self.camera = TapCamera(tap, controller.camera, self, self.frame_timeout)
            ring, level = self._ring()
            knobs = light_knobs(self.camera, ring, level)
            before = {k.name: k.current for k in knobs}
            if ring is not None:
                before["ring"] = level or 0.0  # off: level 0 lights as off does
            auto = self.camera.controls().get("AeEnable")
            if controller.tray is not None:  # a simulated tower: its tray throws when asked
                self.table.hands = SimulatedTable(controller.tray, self.seed, self.ui.say)
            result = self._calibrate(knobs)
            if result["outcome"] != "saved":
                for knob in knobs:
                    try:
                        knob.set(before[knob.name])
                    except (ValueError, RuntimeError) as exc:
                        log.warning("calibration: cannot put %s back: %s", knob.name, exc)
                if auto is not None:
                    self.camera.set_controls(AeEnable=auto)
            with self._cond:
                self._result = result
                self._cancel = False
            if self.table.throws:
                self._wait("finish", {})
        except Exception:  # never leave the tower without its camera or paused
            log.exception("calibration")
            with self._cond:
                self._result = self._result or {"outcome": "failed",
                                                "detail": "an unexpected error; see the log"}
        finally:
            if tap is not None:
                controller.give_camera_back(tap)
            self._resume(paused)
            with self._cond:
                self._phase, self._waiting, self._message = "over", None, ("over", {})
                self._changed()
                self._cond.notify_all()

    def _calibrate(self, knobs: list[Any]) -> dict[str, Any]:
        live = LiveThrows(self.camera, self.table, hold=self.hold)
        try:
            while True:
                try:
                    outcome = calibrate_live(live, self.settings, knobs, self.ui,
                                             self.labeller, readers=self.controller.readers)
                    break
                except _Redo:
                    self._skip_clear = True
                    self._asked = (0, 0)  # that throw was not made: asked again as the first
                    self._valued = (0, 0)
            return self._keep(outcome)
        except Cancelled:
            return {"outcome": "cancelled"}
        except CalibrationError as exc:
            return {"outcome": "failed", "detail": str(exc)}
        except CameraError as exc:
            where = f" during {self.ui.current}" if self.ui.current else ""
            return {"outcome": "failed", "detail": f"the camera stopped{where} ({exc})"}

    def _keep(self, outcome: Outcome) -> dict[str, Any]:
        """Save the profile as the command does and read with it; or say what to fix."""
        check = outcome.check
        counts = {"with": _counts(check.with_profile), "without": _counts(check.without)}
        stem = self.target.name[:-5] if self.target.name.endswith(".json") else self.target.name
        if not outcome.passed:
            folder = write_previews(self.target.with_name(f"{stem}.preview"), outcome.previews)
            return {"outcome": "refused", "advice": list(check.advice),
                    "previews": str(folder), **counts}
        notes = {
            "made": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "source": "the game master's page",
            "expect": self.settings.expect, "tray": outcome.tray, "light": outcome.light,
            "chosen": describe_profile(outcome.profile),
            "faces": faces_notes(outcome.learnt, outcome.judged),
            **choices_notes(outcome.choices),
            "check": {"sure": round(check.sure, 3), "with_profile": counts["with"],
                      "without": counts["without"], "advice": check.advice},
        }
        written = save(self.target, outcome.profile, outcome.empty, notes, outcome.previews)
        self.controller.use_profile(Profile.load(written["profile"]))
        backup = next((str(p) for k, p in written.items() if k == f"backup of {self.target.name}"),
                      None)
        self.ui.say(f"Profile written: {written['profile']}")
        if check.advice:
            self.ui.say("Worth fixing all the same: " + "; ".join(check.advice))
        return {"outcome": "saved", "path": str(written["profile"]), "backup": backup,
                "previews": str(written["previews"]), "chosen": notes["chosen"],
                "sure": round(check.sure, 3), "light": outcome.light,
                "advice": list(check.advice), "faces": notes["faces"],
                "die_side": notes["die_side"], **counts}

    def _ring(self) -> tuple[Any, float | None]:
        """The ring light the light step may sweep, and its level now (None: off)."""
        tray = self.controller.tray
        if tray is not None:
            return tray.set_ring, tray.ring
        tower = self.controller.tower
        if callable(getattr(tower, "set_ring", None)):
            return tower.set_ring, getattr(tower, "ring_level", None)
        return None, None

    def _pause(self) -> bool:
        """Pause the game unless it is already (or over, or none): whether this job did."""
        hub = self.controller.hub
        state = hub.state()
        if state.paused or not state.game or state.ended:
            return False
        try:
            hub.set_paused(True)
        except HubError:
            return False
        return True

    def _resume(self, paused: bool) -> None:
        hub = self.controller.hub
        if paused and hub.state().paused:
            # The controller then looks at the tray afresh; a game ended meanwhile stays so.
            with contextlib.suppress(HubError):
                hub.set_paused(False)
