"""`Controller`: the tower's main loop, from camera frames to tokens, lights and phones.

    controller = Controller(camera, tower, hub, journal, profile=profile)
    controller.resume_or_start("tim-11", ["Ana", "Ben", "Cleo"])   # the journal's game if any
    controller.run(stop_event)                                       # until stop_event is set

Each frame goes to the `SettleWatcher`; a still tray read the same `agree` times goes to the
referee (421) or the square tracker (4D); their input goes to the game's hub (`GameHub`),
which journals it (and its dispenses) before anyone hears of it; the controller, one of the
hub's subscribers, then lights the seats and pays. A refused throw moves nothing: the status
light asks for it again and the scoreboard says why.

The camera may fail at any time (`camera_link`): the tower shows it, keeps the game and
reopens the camera. Buttons and the game master's page submit inputs to the same hub.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from firmware_host.camera import CameraSource, Frame
from firmware_host.controller import messages
from firmware_host.controller.calibration_job import CalibrationJob
from firmware_host.controller.camera_link import CameraLink, FrameTap
from firmware_host.controller.dispenser import TokenDispenser
from firmware_host.controller.referee import Call, judge_421, zone_of
from firmware_host.controller.settle import Outcome, SettleWatcher, same_reading
from firmware_host.controller.square_keeper import SquareKeeper
from firmware_host.controller.tower_lights import show_game
from firmware_host.hub import Dispense, GameHub, HubError, Journal
from firmware_host.hub.replay import last_throw
from firmware_host.rules import RuleError
from vision import Die, Profile, Readers, annotate, read_dice, shipped_readers

log = logging.getLogger(__name__)

JPEG_QUALITY = 80
WAITING = ("nothing_thrown",)  # readings that only show the table is not done yet


class Controller:
    """Plays the game on the tower: see the module docstring."""

    def __init__(self, camera: CameraSource, tower: Any, hub: GameHub, journal: Journal,
                 *, profile: Profile | None = None, hold: float = 0.4, agree: int = 2,
                 read: Callable[[np.ndarray], list[Die]] | None = None,
                 heartbeat: Callable[[], None] | None = None,
                 on_accept: Callable[[Frame, dict[str, Any]], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep, tray: Any = None,
                 readers: Readers | None = None) -> None:
        self.camera = camera
        self.tower = tower
        self.hub = hub
        self.journal = journal
        # A simulated tower's tray (`SimulatedTray`), None on a real one: a calibration
        # throws its dice and sweeps its lamp as the ring light.
        self.tray = tray
        self.profile = profile
        self.heartbeat = heartbeat
        self.on_accept = on_accept
        self.sleep = sleep
        self.readers = shipped_readers() if readers is None else readers  # loaded once
        self._read = read or (lambda image: read_dice(image, profile, readers=self.readers))
        empty = profile.background_image() if profile is not None else None
        self.watcher = SettleWatcher(self._read_frozen, hold=hold, agree=agree,
                                     empty_tray=empty)
        self.square = SquareKeeper(hub)
        self._lock = threading.RLock()
        self._notice: dict[str, Any] | None = None
        self._status = "ready"
        self.link = CameraLink(camera, on_down=self._camera_failed, on_back=self._camera_back,
                               sleep=sleep)
        self._last_beat = 0.0
        self.stats: dict[str, Any] = {"readings": 0, "accepted": 0, "refused": {},
                                      "camera_errors": 0}
        # The dice of the last reading taken as an input: looking at them again is no throw.
        self._judged: tuple[Die, ...] | None = None
        # Whether the tray moved since then: dice thrown again can land just as they were.
        self._moved = False
        # After a restart: (faces, kept count) of the game's last throw, the tray as left.
        self._left_over: tuple[list[int], int] | None = None
        # What became of the last still tray: ("accepted" | "refused" | "nothing", code).
        self.last_result: tuple[str, str] = ("nothing", "")
        self.dispenser = TokenDispenser(tower, journal, live=hub.live,
                                        on_jam=self._jammed, on_void=self._voided,
                                        on_token=lambda row, n: self._publish_tower())

    # ------------------------------------------------------------------ start and stop

    def resume_or_start(self, preset: str, players: list[str],
                        knobs: dict[str, Any] | None = None, *, new: bool = False) -> bool:
        """Resume the journal's game (True), or start ``preset`` with ``players`` (False).

        A finished game is not resumed: a new one starts, unless it still owes tokens (then it
        stays, over, until they are paid: True). ``new`` starts one in any case.
        """
        self.hub.open_journal(self.journal, replay=not new)
        state = self.hub.state()
        resumed = not new and bool(state.game) and not state.ended
        if resumed and (state.game or {}).get("game") == "421":
            self._left_over = last_throw(self.hub.history())
        self.hub.subscribe(self._changed)
        due = self.journal.dispenses(("intended", "started", "doubt"))
        if not resumed and not new and any(self.hub.live(row.action) for row in due):
            resumed = True  # a new game now would void the tokens its last inputs took
        if not resumed:
            self.hub.start_game(preset, list(players), dict(knobs or {}) or None)
        doubts = self.journal.mark_cut_off()
        self.dispenser.start()
        if doubts:
            self._pause_for(messages.notice("dispense_doubt", self._doubt_values(doubts[0]),
                                            "error"))
        show_game(self.tower, self._view())
        self.dispenser.wake()
        self._publish_tower()
        return resumed

    def bind_buttons(self) -> None:
        """stop: end the 421 turn (4D: the last move's square turned the other way; while
        paused on a jam: resume); undo: take back the last input; new_game (long press): a
        new game with the same players."""
        self.tower.on_button("stop", self._stop_button)
        self.tower.on_button("undo", self._undo_button)
        self.tower.on_button("new_game", self._new_game_button, long_press=True)

    def _stop_button(self) -> None:
        try:
            state = self.hub.state()
            view = state.game or {}
            if state.paused or self.dispenser.held:
                if not self.journal.dispenses(("doubt",)):  # else the game master counts first
                    self.resume()
            elif view.get("game") == "4d":
                self.square.turn_back()  # the listener renumbers the dice (`_changed`)
            else:
                self.hub.apply({"type": "stop"})
        except (RuleError, HubError) as exc:
            self._notice = messages.notice("refused", {"reason": messages.reason_of(exc)})
            self._publish_tower()

    def resume(self) -> None:
        """Go on after a pause or a jam (cleared, hopper refilled): pay what is due. A
        dispense cut off mid-way must be counted first (`confirm_dispense`): HubError."""
        if self.journal.dispenses(("doubt",)):
            raise HubError("count_cut_off_first")
        if self.hub.state().paused:
            self.hub.set_paused(False)  # the listener resumes paying
        else:
            self._resume_paying()  # a jam after the game's last input: nothing was paused

    def _undo_button(self) -> None:
        try:
            self.hub.undo()
        except (RuleError, HubError) as exc:
            self._notice = messages.notice("refused", {"reason": messages.reason_of(exc)})
            self._publish_tower()

    def _new_game_button(self) -> None:
        view = self._view()
        if view is None:
            return
        try:
            self.hub.start_game(view["preset"], [p["name"] for p in view["players"]],
                                view.get("knobs"))
        except (RuleError, HubError) as exc:
            self._notice = messages.notice("refused", {"reason": messages.reason_of(exc)})
            self._publish_tower()

    def close(self) -> None:
        """Stop paying (between two tokens), release the camera; the journal stays open."""
        self.dispenser.stop()
        self.camera.close()

    # ------------------------------------------------------------------ the loop

    def run(self, stop: threading.Event) -> None:
        """Read frames and play until ``stop`` is set."""
        while not stop.is_set():
            self.step()

    def step(self) -> Outcome | None:
        """One frame: read it, act on what it shows. Returns the watcher's outcome, if any."""
        self._beat()
        frame = self.link.next_frame()
        if frame is None:
            return None
        outcome = self.watcher.feed(frame)
        if outcome is not None:
            with self.square.lock:
                self._handle(outcome)
        return outcome

    # ------------------------------------------------------------------ readings

    def _read_frozen(self, image: np.ndarray) -> list[Die]:
        # No servo moves and the ring light holds still while a frame is read.
        reading = getattr(self.tower, "camera_reading", None)
        if reading is None:
            return self._read(image)
        with reading():
            return self._read(image)

    def _handle(self, outcome: Outcome) -> None:
        if outcome.kind == "moving":
            self._moved = True
            if self._notice and self._notice.get("level") == "warn":
                self._notice = None
            self._set_status("reading")
            return
        if outcome.kind == "obstructed":
            if outcome.final:
                # It never left: whatever lies there, the throw cannot be trusted.
                self._refuse(Call.refuse("obstructed"), outcome)
                return
            # Not a refusal yet: the throw is read once the hand is gone.
            self._notice = messages.notice("hand", {}, "info")
            self._publish(outcome, None)
            return
        if outcome.kind == "unsteady":
            self._refuse(Call.refuse("unsteady"), outcome)
            return
        self.stats["readings"] += 1
        self.last_result = ("nothing", "")
        state = self.hub.state()
        view = state.game
        if view is None or state.ended:
            self._publish(outcome, None)
            self._set_status("ready")
            return
        if state.paused:
            self._publish(outcome, None)
            return
        if self._seen_already(outcome.dice, view):
            # The tower looked again (camera back, new game, a hand passing over) but nothing
            # was thrown: the dice lie as they were when their throw was taken.
            self._publish(outcome, None)
            self._set_status("ready")
            return
        call = self._judge(outcome.dice, view)
        if call.refusal in WAITING:
            # Kept dice alone in the tray: the player is about to throw the others, or to
            # stop. A hint, not a request to throw again.
            self._notice = messages.notice(call.refusal or "", call.values, "info")
            self._publish(outcome, None)
            self._set_status("ready")
            return
        if call.refusal is not None:
            self._refuse(call, outcome)
            return
        try:
            if call.event is not None:
                if call.event["type"] == "present" and (
                        state.last_input or {}).get("type") == "present":
                    # The square turned again before the first move: presented anew.
                    self.hub.undo()
                self.hub.apply(call.event)
            elif call.correction is not None:
                self.hub.correct_last(call.correction["faces"])
            elif call.rotation is not None:
                self.square.rotate_last(call.rotation, seen=True)
        except (RuleError, HubError) as exc:
            self._refuse(Call.refuse("refused", reason=messages.reason_of(exc)), outcome)
            return
        if view.get("game") == "4d" and (call.accepted or call.correction or call.rotation):
            self.square.accept(outcome.dice, call)
        action_id = self.hub.recorded_id()  # the action this thread just recorded
        jpeg = self._publish(outcome, call)
        self._judged = outcome.dice
        self._moved = False
        if call.accepted:
            self.last_result = ("accepted", "")
            self.stats["accepted"] += 1
            if jpeg is not None:
                self.journal.keep_image(action_id, jpeg, [d.to_json() for d in outcome.dice])
            if self.on_accept is not None and outcome.frame is not None:
                self.on_accept(outcome.frame, call.event or {})
        if self._notice and self._notice.get("level") in ("warn", "info"):
            self._notice = None
        self._set_status("ready")

    def _seen_already(self, dice: tuple[Die, ...], view: dict[str, Any]) -> bool:
        """Whether the tray shows the dice of the last throw taken, untouched since."""
        if self._judged is not None:
            # The same dice at the same places are the same throw: looked at again (camera
            # back, new game, end of a pause), or after a bump or a kept die turned and put
            # back (thrown 421 dice land anywhere). 4D dice keep four spots: after motion, a
            # move can end where one began.
            same = same_reading(dice, self._judged)
            return same and (not self._moved or view.get("game") != "4d")
        left, self._left_over = self._left_over, None
        if left is None:
            return False
        # Just restarted: only the faces of the last throw are known, not where they lay.
        zones = [zone_of(d, self.profile) for d in dice]
        rolled = sorted((d.value for d, z in zip(dice, zones, strict=True) if z == "roll"),
                        key=lambda v: -(v or 0))
        as_left = rolled == left[0] and zones.count("keep") == left[1]
        self._judged = dice if as_left else None
        return as_left

    def _judge(self, dice: tuple[Die, ...], view: dict[str, Any]) -> Call:
        if view.get("game") == "4d":
            return self.square.judge(dice, view)
        return judge_421(dice, view, self.profile)

    def _refuse(self, call: Call, outcome: Outcome) -> None:
        code = call.refusal or "refused"
        self.last_result = ("refused", code)
        self.stats["refused"][code] = self.stats["refused"].get(code, 0) + 1
        self._notice = messages.notice(code, call.values)
        self._publish(outcome, call)
        self._set_status("reroll")

    def _publish(self, outcome: Outcome, call: Call | None) -> bytes | None:
        """Show the reading on the scoreboard: the frame with the dice outlined."""
        if outcome.frame is None:
            return None
        image = annotate(outcome.frame.image, outcome.dice)
        ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        jpeg = bytes(buffer) if ok else None
        self.hub.publish_reading(jpeg, [d.to_json() for d in outcome.dice])
        self._publish_tower()
        return jpeg

    # ------------------------------------------------------------------ the hub's changes

    def _changed(self, action: dict[str, Any], result: Any) -> None:
        """After every change of the hub, from whichever thread made it: lights, tokens,
        notices."""
        kind = action.get("action")
        if kind == "new_game":
            self.square.reset()
            self.watcher.reset()
        if kind == "correct":
            self.square.follow(action)
        if kind in ("event", "correct", "new_game"):
            show_game(self.tower, self._view(), action.get("effects", []))
        if kind == "pause" and not action.get("paused"):
            # What was thrown during the pause was not judged: look at the tray again.
            self.watcher.reset()
            self._resume_paying()
        self.dispenser.wake()
        self._publish_tower()

    # ------------------------------------------------------------------ tokens

    def _resume_paying(self) -> None:
        with self._lock:
            if self._notice and self._notice.get("code") in ("jam", "dispense_doubt"):
                self._notice = None
        self.dispenser.resume()
        self._set_status("ready")

    def confirm_dispense(self, dispense_id: int, delivered: int) -> Dispense:
        """The game master counted ``delivered`` tokens for a dispense that was cut off."""
        row = self.journal.dispense(dispense_id)
        if row.state != "doubt":
            raise HubError("dispense_not_waiting", dispense=dispense_id)
        if not 0 <= delivered <= row.requested:
            raise HubError("count_out_of_range", most=row.requested)
        state = "done" if delivered >= row.requested else "intended"
        self.journal.mark(dispense_id, state, delivered=delivered, note="counted by hand")
        doubts = self.journal.dispenses(("doubt",))
        if doubts:
            self._notice = messages.notice("dispense_doubt", self._doubt_values(doubts[0]),
                                           "error")
            self._publish_tower()
        elif self.hub.state().paused:
            self.hub.set_paused(False)  # the listener resumes the dispenser
        else:
            self._resume_paying()
        self._publish_tower()
        return self.journal.dispense(dispense_id)

    def _jammed(self, row: Dispense, detail: str) -> None:
        values = {"detail": detail, "missing": row.remaining, "player": self._name(row.seat)}
        self._pause_for(messages.notice("jam", values, "error"))

    def _voided(self, row: Dispense) -> None:
        if row.delivered:
            self._notice = messages.notice("return_tokens", {"player": self._name(row.seat),
                                                             "count": row.delivered}, "info")
        self._publish_tower()

    def _pause_for(self, notice: dict[str, Any]) -> None:
        with self._lock:
            self._notice = notice
        self._set_status("error")
        try:
            if not self.hub.state().paused:
                self.hub.set_paused(True)
        except HubError:
            pass  # the game is over: nothing to pause, the notice still shows
        self._publish_tower()

    def _doubt_values(self, row: Dispense) -> dict[str, Any]:
        return {"player": self._name(row.seat), "requested": row.requested,
                "delivered": row.delivered, "dispense": row.id}

    # ------------------------------------------------------------------ camera health

    def _camera_failed(self, detail: str) -> None:
        self.stats["camera_errors"] = self.link.errors
        self._notice = messages.notice("camera_error", {"detail": detail}, "error")
        self._set_status("error")

    def _camera_back(self) -> None:
        self.watcher.reset()
        if self._notice and self._notice.get("code") == "camera_error":
            self._notice = None
        self._set_status("ready")

    # ------------------------------------------------------------------ showing the state

    def _set_status(self, status: str) -> None:
        if self._notice and self._notice.get("level") == "error":
            status = "error"
        if status != self._status:
            self._status = status
            try:
                self.tower.set_status(status)
            except (ValueError, RuntimeError) as exc:
                log.warning("status light: %s", exc)
        self._publish_tower()

    def _publish_tower(self) -> None:
        # A dispense whose last token has just fell is over: nothing else may publish again
        # before the next input (the game's last dispense), so it must not linger as due.
        pending = [row for row in self.journal.dispenses(("intended", "started", "doubt"))
                   if row.remaining or row.state == "doubt"]
        self.hub.set_tower({
            "status": self._status,
            "notice": self._notice,
            "camera": "down" if self.link.down else "ok",
            "dispenses": [{**row.to_json(), "player": self._name(row.seat)} for row in pending],
        })

    def _view(self) -> dict[str, Any] | None:
        return self.hub.state().game

    def _name(self, seat: int) -> str:
        view = self._view() or {}
        players = view.get("players") or []
        return players[seat]["name"] if 0 <= seat < len(players) else f"seat {seat + 1}"

    def _beat(self) -> None:
        if self.heartbeat is None:
            return
        now = time.monotonic()
        if now - self._last_beat >= 1.0:
            self._last_beat = now
            self.heartbeat()

    # ------------------------------------------------------------------ calibration
    # A calibration borrows the camera (a FrameTap in the link's place) and, at the end,
    # hands over the profile it made: apart from the loop, which stays as it is.

    @property
    def journal_path(self) -> Path | None:
        """The journal's file, for the fairness of the dice (`TowerActions`)."""
        return self.journal.path

    def calibration(self, *, expect: int, name: str, path: str | Path | None, throws: int,
                    checks: int, hold: float, values: bool = True) -> CalibrationJob:
        """A calibration of this tower from the game master's page, not started yet;
        ValueError for a name that cannot name a profile."""
        return CalibrationJob(self, expect=expect, name=name, path=path, throws=throws,
                              checks=checks, hold=hold, values=values)

    def lend_camera(self) -> FrameTap:
        """Put a `FrameTap` in the place of the camera link: the loop reads no throw from
        then on (a step under way ends as it would); HubError if one is lent already."""
        with self._lock:
            if isinstance(self.link, FrameTap):
                raise HubError("calibration_running")
            self.link = tap = FrameTap(self.link)
        return tap

    def give_camera_back(self, tap: FrameTap) -> None:
        """The camera's frames go to the game again; the tray is looked at afresh."""
        with self._lock:
            if self.link is tap:
                self.link = tap.link
        self.watcher.reset()

    def use_profile(self, profile: Profile) -> None:
        """Read the next frames with ``profile`` (its zones, empty tray and dice)."""
        with self._lock:
            self.profile = profile
            self._read = lambda image: read_dice(image, profile, readers=self.readers)
            self.watcher.set_empty_tray(profile.background_image())
            self.watcher.reset()
