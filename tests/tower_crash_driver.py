"""One life of a simulated tower, to be killed: the crash tests run it in a subprocess.

    python tests/tower_crash_driver.py SPEC.json

SPEC names the journal, the game (preset, players, knobs, seed) and how this life ends:
``{"kill": "timer", "delay": 0.4}`` or ``{"kill": POINT, "n": N}``, where POINT is one of
`KILL_POINTS`: the process sends itself SIGKILL at the N-th time it gets there; without a
kill it plays the game to its end. What the tower did is appended to SPEC's ``log`` as JSON
lines: the game as resumed (``start``), every change the store made (``change``), every
accepted throw with what the tray held (``accepted``), the dispenses left in doubt and the
game master's count of each (``confirmed``), and the summary at the end (``end``). Lines are
flushed as they are written, so they outlive the kill.

The tray is physical: the dice stay where they lie when the tower dies. Its state is kept in
SPEC's ``tray`` file, and the next life starts with the same dice in it. Tokens that fell are
in the demo's token tray file beside the journal.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from firmware_host.simulation import tray as simulated_tray
from firmware_host.simulation.demo import Demo, DemoOptions
from firmware_host.simulation.scene import PlacedDie

#: Where a life can be cut short, besides a timer.
KILL_POINTS = (
    "dispense_started",  # a dispense marked started, before its first stroke
    "token_uncounted",  # a token fell (it is on the table) but the ledger has not counted it
    "token_counted",  # a token counted, before the next stroke (or before the dispense ends)
    "tumbling",  # a frame of dice in flight was just read
    "read_unjournaled",  # the still tray was read and agreed on; the input is not journaled
    "journaled_unheard",  # the input is journaled; nobody has heard of it, nothing paid
)


class Life:
    """The demo tower of one process, wired to log what it does and to die on cue."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.log_file = open(spec["log"], "a+", encoding="utf-8")  # noqa: SIM115
        if self.log_file.tell():
            self.log_file.seek(self.log_file.tell() - 1)
            if self.log_file.read(1) != "\n":
                self.log_file.write("\n")  # the last life died in the middle of a line
        self.tray_path = Path(spec["tray"])
        # Two frames of dice in flight instead of four: the motion is seen all the same.
        simulated_tray.TUMBLE_FRAMES = 2
        options = DemoOptions(preset=spec["preset"], players=list(spec["players"]),
                              knobs=dict(spec.get("knobs") or {}), seed=int(spec["seed"]),
                              fast=True, serve=False, games=1, journal=Path(spec["journal"]),
                              max_throws=2000)
        self.demo = Demo(options, say=lambda line: None)
        self.calls: dict[str, int] = {}

    # ------------------------------------------------------------------ logging

    def write(self, kind: str, **data: Any) -> None:
        self.log_file.write(json.dumps({"kind": kind, "pid": os.getpid(), **data}) + "\n")
        self.log_file.flush()

    def game(self) -> dict[str, Any]:
        store = self.demo.hub
        snapshot = store.snapshot()
        view = snapshot.get("game") or {}
        return {"preset": view.get("preset"),
                "players": [p["name"] for p in view.get("players", [])],
                "tokens": [p["tokens"] for p in view.get("players", [])],
                "scores": [p["score"] for p in view.get("players", [])],
                "history": [e["event"] for e in store.history()["entries"]],
                "ended": snapshot.get("ended"), "paused": snapshot.get("paused")}

    # ------------------------------------------------------------------ the physical tray

    def restore_tray(self) -> None:
        if not self.tray_path.exists():
            return
        dice = [PlacedDie(v, (x, y), a, zone, leaning, tilt, toward)
                for v, x, y, a, zone, leaning, tilt, toward in json.loads(
                    self.tray_path.read_text(encoding="utf-8"))]
        self.demo.tray.place(dice, frames=0)

    def keep_tray(self) -> None:
        tray = self.demo.tray
        for name in ("throw", "place", "clear"):
            original = getattr(tray, name)

            def kept(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                result = _original(*args, **kwargs)
                dice = [[d.value, d.center[0], d.center[1], d.angle, d.zone, d.leaning, d.tilt,
                         d.tilt_toward] for d in tray.dice]
                temporary = self.tray_path.with_suffix(".tmp")
                temporary.write_text(json.dumps(dice), encoding="utf-8")
                os.replace(temporary, self.tray_path)
                return result

            setattr(tray, name, kept)

    # ------------------------------------------------------------------ dying on cue

    def cue(self, point: str) -> bool:
        """Count one arrival at ``point``; True when this is the one to die at."""
        if self.spec.get("kill") != point:
            return False
        self.calls[point] = self.calls.get(point, 0) + 1
        return self.calls[point] == int(self.spec.get("n", 1))

    @staticmethod
    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def arm(self) -> None:
        demo = self.demo
        journal, camera = demo.journal, demo.camera
        mark, count, record = journal.mark, journal.count_token, journal.record
        read = camera.read

        def marked(dispense_id: int, state: str, **kw: Any) -> None:
            mark(dispense_id, state, **kw)
            if state == "started" and self.cue("dispense_started"):
                self.die()

        def counted(dispense_id: int, delivered: int) -> None:
            if self.cue("token_uncounted"):
                self.die()
            count(dispense_id, delivered)
            if self.cue("token_counted"):
                self.die()

        def recorded(action: dict[str, Any], *args: Any, **kw: Any) -> int:
            if action.get("action") in ("event", "correct") and self.cue("read_unjournaled"):
                self.die()
            action_id = record(action, *args, **kw)
            if action.get("action") in ("event", "correct") and self.cue("journaled_unheard"):
                self.die()
            return action_id

        def framed() -> Any:
            frame = read()
            if frame.truth is not None and frame.truth.moving and not frame.truth.hand and (
                    self.cue("tumbling")):
                self.die()
            return frame

        journal.mark = marked  # type: ignore[method-assign]
        journal.count_token = counted  # type: ignore[method-assign]
        journal.record = recorded  # type: ignore[method-assign]
        camera.read = framed  # type: ignore[method-assign]
        if self.spec.get("kill") == "timer":
            timer = threading.Timer(float(self.spec["delay"]), self.die)
            timer.daemon = True
            timer.start()

    # ------------------------------------------------------------------ a life

    def live(self) -> int:
        demo = self.demo
        self.restore_tray()
        self.keep_tray()
        resume = demo.controller.resume_or_start

        def resumed(*args: Any, **kwargs: Any) -> bool:
            answer = resume(*args, **kwargs)
            doubts = [{"id": r.id, "requested": r.requested, "delivered": r.delivered,
                       "fell": demo.tokens.counts.get(r.id, 0)}
                      for r in demo.journal.dispenses(("doubt",))]
            self.write("start", resumed=answer, doubts=doubts, **self.game())
            demo.hub.subscribe(lambda action, result: self.write(
                "change", action=action.get("action"), **self.game()))
            return answer

        demo.controller.resume_or_start = resumed  # type: ignore[method-assign]
        check = demo.controller.on_accept

        def accepted(frame: Any, event: dict[str, Any]) -> None:
            truth = frame.truth
            self.write("accepted", event=event, moving=bool(truth and truth.moving),
                       hand=bool(truth and truth.hand),
                       dice=[[d.value, d.zone, round(d.center[0], 2), round(d.center[1], 2)]
                             for d in (truth.dice if truth else ())])
            if check is not None:
                check(frame, event)

        demo.controller.on_accept = accepted
        confirm = demo.controller.confirm_dispense

        def confirmed(dispense_id: int, delivered: int) -> Any:
            self.write("confirmed", id=dispense_id, delivered=delivered,
                       fell=demo.tokens.counts.get(dispense_id, 0))
            return confirm(dispense_id, delivered)

        demo.controller.confirm_dispense = confirmed  # type: ignore[method-assign]
        self.arm()
        try:
            demo.start()
            summary = demo.run()
            self.write("end", summary=summary.to_json(), **self.game())
        finally:
            demo.close()
        return 0


if __name__ == "__main__":
    sys.exit(Life(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))).live())
