"""A whole tower on one machine: simulated tray and pins, the real vision, rules and scoreboard.

`run_demo(options)` builds the tower exactly as `dicetower run` does, but with a
`SimulatedCamera` filming a `SimulatedTray`, a `SimulatedTower` on gpiozero's mock pins whose
hoppers drop tokens onto a `TokenTray`, and a `VirtualTable` of players throwing dice. The
controller knows nothing of the simulation: it reads every throw from the camera's frames.

Honesty checks come from what the table really threw: a throw the tower accepts with other
faces than those rendered is a *misread*; every token on the table must match the ledger and
the engine (*tokens conserved*).
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from firmware_host.advisor.strategies import make_strategy
from firmware_host.camera import Frame
from firmware_host.controller.controller import Controller
from firmware_host.controller.settle import Outcome
from firmware_host.controller.square import faces_by_position, facing
from firmware_host.hub import GameHub, Journal
from firmware_host.rules.fourd import next_near
from firmware_host.rules.texts import render_text
from firmware_host.scoreboard.app import create_app
from firmware_host.scoreboard.server import BackgroundServer
from firmware_host.simulation.camera import SimulatedCamera
from firmware_host.simulation.table import Habits, TokenTray, VirtualTable
from firmware_host.simulation.tray import SimulatedTray
from hardware import EXAMPLE_PINMAP, SimulatedTower, load_pinmap, simulated_pinmap

HOPPER_TOKENS = 120
THINK_SECONDS = 1.2  # at a watchable pace: players look at the dice before the next throw
LOOK_FRAMES = 120  # after a restart, frames the tower may take to read the tray as it was


@dataclass
class DemoOptions:
    """Everything `dicetower demo` can be told."""

    preset: str = "tim-11"
    players: list[str] = field(default_factory=lambda: ["Ana", "Ben", "Cleo"])
    knobs: dict[str, Any] = field(default_factory=dict)  # house rules over the preset's
    new: bool = False  # start a new game even if the journal holds an unfinished one
    seed: int = 7
    fast: bool = False
    think: float = THINK_SECONDS  # seconds between throws when not fast
    games: int | None = None
    journal: Path = Path("demo.sqlite3")
    host: str = "127.0.0.1"
    port: int = 8000
    serve: bool = True
    habits: Habits = field(default_factory=Habits)
    hopper_tokens: int = HOPPER_TOKENS
    hold: float = 0.4
    agree: int = 2
    pin: str | None = None
    max_throws: int = 100_000  # a safety net for tests: stop after this many throws
    # simple, advisor, or random (the table's habits, stopping at random even holding 421);
    # None: the table's habits, stopping on a hand worth keeping as people at a bar do
    strategy: str | None = None
    scene: str = "classic"  # the simulated tray's look: classic, or varied at every throw


@dataclass
class DemoSummary:
    """What `--json` prints."""

    games: int = 0
    throws: int = 0
    rethrows: int = 0
    rethrow_reasons: dict[str, int] = field(default_factory=dict)
    misreads: list[str] = field(default_factory=list)  # what each misread accepted and held
    cocked_accepted: int = 0  # right faces, but a die lay cocked and the tower did not see it
    hand_accepted: int = 0  # right faces, read while a hand lay in the tray or dice moved
    outside_accepted: int = 0  # right faces, with a die out of the tray the tower let pass
    tokens_conserved: bool = True
    resumed: bool = False
    jams: int = 0
    confirmed: int = 0

    @property
    def misread(self) -> int:
        """Throws accepted with other faces than the tray's (and 4D squares taken wrong)."""
        return len(self.misreads)

    def to_json(self) -> dict[str, Any]:
        return {"games": self.games, "throws": self.throws, "rethrows": self.rethrows,
                "rethrow_reasons": dict(self.rethrow_reasons), "misread": self.misread,
                "misreads": list(self.misreads),
                "cocked_accepted": self.cocked_accepted, "hand_accepted": self.hand_accepted,
                "outside_accepted": self.outside_accepted,
                "tokens_conserved": self.tokens_conserved, "resumed": self.resumed,
                "jams": self.jams, "confirmed": self.confirmed}


class Demo:
    """The assembled simulated tower and its table; `run` plays until done or stopped."""

    def __init__(self, options: DemoOptions, say: Callable[[str], None] = print) -> None:
        self.options = options
        self.say = say
        # Called with the frame, "misread" or "cocked" and a line for every throw accepted
        # wrong (a benchmark keeps the frames).
        self.on_wrong: Callable[[Frame, str, str], None] | None = None
        self.summary = DemoSummary()
        self.tray = SimulatedTray(seed=options.seed, scene=options.scene)
        self.camera = SimulatedCamera(self.tray, realtime=not options.fast)
        self.tokens = TokenTray(Path(str(options.journal) + ".tokens"))
        dropped = sum(self.tokens.counts.values())
        self.tower = SimulatedTower(simulated_pinmap(load_pinmap(EXAMPLE_PINMAP)),
                                    tokens=max(0, options.hopper_tokens - dropped),
                                    on_drop=self.tokens.drop)
        self.hub = GameHub()
        self.journal = Journal(options.journal, exclusive=True)
        self.profile = self.tray.profile()
        self.controller = Controller(self.camera, self.tower, self.hub, self.journal,
                                     profile=self.profile, hold=options.hold,
                                     agree=options.agree, on_accept=self._check_accepted,
                                     tray=self.tray)
        self.controller.dispenser.before_token = self._token_for
        habits = options.habits
        if options.strategy == "random":  # the table's old habits: stops at random, even on 421
            habits = replace(habits, keep_good_hands=False)
        self.table = VirtualTable(self.tray, seed=options.seed, habits=habits,
                                  press=self._press, strategy=_strategy(options.strategy))
        self.app = create_app({"SCOREBOARD_PIN": options.pin}, hub=self.hub,
                              tower=self.controller)
        self.server: Any = None
        self._next_act = 0.0
        self._waiting = False  # a throw is in the tray, waiting for the tower's verdict
        self._readings = 0  # the tower's readings when the throw was made

    # ------------------------------------------------------------------ life cycle

    def start(self) -> bool:
        """Resume the journal's game or start one; serve the scoreboard. True if resumed."""
        if self.options.serve:
            self.server = BackgroundServer(self.app, self.options.host, self.options.port)
            self.server.start()
        self.camera.open()
        self.controller.bind_buttons()
        resumed = self.controller.resume_or_start(self.options.preset, self.options.players,
                                                  self.options.knobs, new=self.options.new)
        self.summary.resumed = resumed
        if resumed:
            self._take_up()
        return resumed

    def _take_up(self) -> None:
        """After a restart the dice still lie in the tray: 4D players put the square back as
        the scoreboard shows it, and the tower looks at the tray before anyone moves."""
        view = self.hub.state().game or {}
        if view.get("game") == "4d" and view.get("phase") in ("present", "play"):
            self.table.lay_square(view)
        for _ in range(LOOK_FRAMES):
            outcome = self.controller.step()
            if outcome is not None and (outcome.kind in ("reading", "unsteady")
                                        or outcome.final):
                break
        self.controller.last_result = ("nothing", "")

    def run(self, stop: threading.Event | None = None) -> DemoSummary:
        stop = stop or threading.Event()
        while not stop.is_set():
            if self._finished():
                break
            self.step()
        self.controller.dispenser.idle(timeout=30)
        self.summary.tokens_conserved = self.tokens_conserved()
        return self.summary

    def step(self, observe: Callable[[Outcome | None], None] | None = None
             ) -> Outcome | None:
        """One frame of the tower, then the table's turn to act; ``observe`` sees the tower's
        verdict on the frame before the table does (a benchmark's measurements)."""
        outcome = self.controller.step()
        if observe is not None:
            observe(outcome)
        self._after_step()
        return outcome

    def close(self) -> None:
        self.controller.close()
        if self.server is not None:
            self.server.stop()
        self.tower.close()
        self.tokens.close()
        self.journal.close()

    # ------------------------------------------------------------------ the table's turn

    def _finished(self) -> bool:
        if self.summary.throws + self.summary.rethrows >= self.options.max_throws:
            return True
        return self.options.games is not None and self.summary.games >= self.options.games

    def _after_step(self) -> None:
        snapshot = self.hub.snapshot()
        view = snapshot.get("game")
        if view is None:
            return
        if snapshot.get("paused"):
            self._game_master(snapshot)
            return
        if self._waiting:
            result, code = self.controller.last_result
            if result == "nothing":
                if self.controller.stats["readings"] == self._readings:
                    return
                # Read, and nothing to do: every die bounced out of the tray. Throw again.
                result, code = "refused", "nothing_thrown"
            self.controller.last_result = ("nothing", "")
            self._waiting = False
            if result == "refused":
                self.summary.rethrows += 1
                reasons = self.summary.rethrow_reasons
                reasons[code] = reasons.get(code, 0) + 1
                self.say(f"  ↻ throw again: {code}")
                self._check_square(view, taken=False)
                self._act(view, retry=True)
                return
            self.summary.throws += 1
            self._report_accepted(view)
        if snapshot.get("ended") or view.get("phase") == "over":
            if self.controller.dispenser.held or self.journal.dispenses(("doubt",)):
                self._game_master(snapshot)  # a jam or a cut-off dispense at the very end
                return
            if self.controller.dispenser.idle(timeout=30):
                self._game_over(view)
            return
        if not self._waiting and time.monotonic() >= self._next_act:
            self._act(view, retry=False)

    def _act(self, view: dict[str, Any], retry: bool) -> None:
        if view.get("game") == "4d":
            line = self.table.play_4d(view, retry)
        else:
            line = self.table.play_421(view, retry)
        self.say(f"[game {self.summary.games + 1}] {line}")
        if line.endswith(" stops"):
            self._next_act = time.monotonic() + self._think()
            return
        self._waiting = True
        self._readings = self.controller.stats["readings"]
        self._next_act = time.monotonic() + self._think()

    def _think(self) -> float:
        return 0.0 if self.options.fast else self.options.think

    def _report_accepted(self, view: dict[str, Any]) -> None:
        prompt = view.get("prompt")
        message = render_text(prompt, "en") if isinstance(prompt, dict) else ""
        self.say(f"  ✓ read: {'-'.join(map(str, view.get('dice') or []))}  {message}")
        self._check_square(view, taken=True)

    def _check_square(self, view: dict[str, Any], taken: bool) -> None:
        """4D: after the tower's verdict on what the table did (a throw, a move, a
        presentation), the engine must hold the square the table holds: taken, as the
        table left it; refused, as it was before. Compared as the next player faces it (near,
        left, far, right, then the fifth die): the faces by position, which die that player
        faces and which one is locked, whatever the numbering (the same dice, the square
        turned one way or the other, may be numbered either way; the table then takes the
        engine's numbering)."""
        last = self.table.last
        if view.get("game") != "4d" or last is None or last.near is None:
            return
        want = (last.faces, last.near) if taken else last.before
        if want is None:
            return  # a throw refused: there was no square yet
        table = facing(*want)
        shown = next_square(view)
        if shown != table:
            what = "took" if taken else "refused"
            self._misread(f"({what}) the table shows {want[0]} with position {want[1]} "
                          f"before the next player ({table}), the tower {shown}")
        elif taken:
            self.table.align(view)

    def _game_over(self, view: dict[str, Any]) -> None:
        self.summary.games += 1
        loser = view.get("loser")
        names = [p["name"] for p in view.get("players", [])]
        who = names[loser] if isinstance(loser, int) and 0 <= loser < len(names) else "nobody"
        self.say(f"=== game {self.summary.games} over: {who} lost ===")
        if not self._finished():
            self.hub.start_game(self.options.preset, self.options.players,
                                  self.options.knobs or None)
            self._waiting = False
            self._next_act = time.monotonic() + self._think()

    def _game_master(self, snapshot: dict[str, Any]) -> None:
        """Paused: refill a jammed hopper, or count the tokens of a cut-off dispense."""
        doubts = self.journal.dispenses(("doubt",))
        if doubts:
            for row in doubts:
                fell = self.tokens.counts.get(row.id, 0)
                self.say(f"  game master counts {fell} token(s) for {row.requested} due")
                self.controller.confirm_dispense(row.id, min(fell, row.requested))
                self.summary.confirmed += 1
            return
        if self.controller.dispenser.held:
            self.summary.jams += 1
            for hopper in set(self.tower.hoppers.values()):
                hopper.tokens += self.options.hopper_tokens
            self.say("  game master refills the hopper and resumes")
            self._press("stop")
            return
        self.hub.set_paused(False)

    def _press(self, name: str) -> None:
        before = self.hub.version
        self.tower.press(name)
        deadline = time.monotonic() + 2.0
        while self.hub.version == before and time.monotonic() < deadline:
            time.sleep(0.002)

    # ------------------------------------------------------------------ honesty checks

    def _misread(self, what: str, frame: Frame | None = None) -> None:
        """One misread: counted, said, and its frame (if any) handed to `on_wrong`."""
        self.summary.misreads.append(what)
        self.say(f"  ✗ misread: {what}")
        if frame is not None and self.on_wrong is not None:
            self.on_wrong(frame, "misread", what)

    def _check_accepted(self, frame: Frame, event: dict[str, Any]) -> None:
        truth = frame.truth
        if truth is None or event.get("type") != "throw" or self.table.last is None:
            return
        if self.table.last.kind == "square":
            return  # checked by position once the engine holds it
        rolled = sorted(event.get("faces", []))
        kept_count = len(event.get("keep", []))
        if rolled != truth.faces("roll") or kept_count != len(truth.faces("keep")):
            self._misread(f"accepted {rolled}, the tray holds {truth.faces('roll')} + kept "
                          f"{truth.faces('keep')}", frame)
        elif any(d.leaning for d in truth.dice):
            self.summary.cocked_accepted += 1
            self.say("  ! accepted with a cocked die the camera did not see as cocked")
            if self.on_wrong is not None:
                self.on_wrong(frame, "cocked", f"accepted {rolled} with a cocked die")
        elif truth.hand or truth.moving:
            self.summary.hand_accepted += 1
            self.say("  ! accepted while a hand was in the tray")
        elif not truth.clean:
            self.summary.outside_accepted += 1
            self.say("  ! accepted with a die out of the tray")

    def _token_for(self, row: Any) -> None:
        self.tokens.current = row.id

    def tokens_conserved(self) -> bool:
        """Every token on the table is in the ledger, every paid dispense paid in full, and
        the engine's pot and players' tokens add up."""
        ledger = {row.id: row for row in self.journal.dispenses()}
        on_table = Counter(self.tokens.counts)
        if any(on_table[row_id] != row.delivered for row_id, row in ledger.items()):
            return False
        if any(k not in ledger for k in on_table if on_table[k]):
            return False
        if any(row.state == "done" and row.delivered != row.requested
               for row in ledger.values()):
            return False
        view = self.hub.state().game or {}
        if view.get("game") == "421":
            tokens = sum(p["tokens"] for p in view["players"]) + view.get("pot", 0)
            if tokens != view.get("total_tokens"):
                return False
        return True


def next_square(view: dict[str, Any]) -> list[int]:
    """4D: the engine's square as the next player faces it (`facing`); empty before the
    throw. The winning move ends the game before the square is turned for a next player:
    turned as its mover said, it is the square the mover left."""
    square = view.get("square")
    if not square:
        return []
    near = square["near"]["pos"]
    if view.get("phase") == "over" and view.get("last_move"):
        near = next_near(near, view["last_move"]["rotate"])
    return facing(faces_by_position(view), near)


def _strategy(name: str | None) -> Any:
    """The players' strategy object (firmware_host.advisor.strategies), or None for the
    table's own habits (``random`` among them)."""
    if name is None or name == "random":
        return None
    return make_strategy(name)


def run_demo(options: DemoOptions, say: Callable[[str], None] = print,
             stop: threading.Event | None = None) -> DemoSummary:
    """Start (or resume) the demo tower, play until done or stopped, close it cleanly."""
    demo = Demo(options, say)
    try:
        demo.start()
        if demo.server is not None:
            say(f"scoreboard: {demo.server.url}  (game master PIN "
                f"{demo.app.config['SCOREBOARD_PIN']})")
        return demo.run(stop)
    finally:
        demo.close()


if __name__ == "__main__":  # pragma: no cover - a quick look without the CLI
    summary = run_demo(DemoOptions(fast=True, games=1, serve=False,
                                   journal=Path(sys.argv[1] if len(sys.argv) > 1 else
                                                "/tmp/demo.sqlite3")))
    print(summary.to_json())
