"""The `dicetower bench tower` benchmark: from dice at rest to every phone, and how often right.

It runs the demo's simulated tower with a live camera pace (frames at the camera's rate, on
the wall clock), the real vision pipeline and the real scoreboard served on 127.0.0.1 with one
Server-Sent Events client, and virtual players throwing with people's habits (a cocked die, a
hand lingering, a die bouncing out now and then). For every accepted throw it notes:

- the delay from the moment the first still frame of the tray was taken to the moment the SSE
  client holds the new state, minus the configured hold (the wait that is a choice, not a
  cost); a controller that falls behind the camera pays for it here;
- whether the faces accepted are those rendered (a *misread* otherwise).

It also counts refusals by reason, and the share of *clean* throws (still, no hand, no cocked
die, none outside) accepted at their first settle: a clean throw asked again is a needless
re-throw at the bar.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from tqdm import tqdm

from firmware_host.figures import p95
from firmware_host.rules import PRESETS
from firmware_host.scoreboard.benchmark import Client, state_arrival


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tower",
        help="simulated throws end to end: delay to the phones, throws read right",
        description="Play simulated throws through the whole tower (camera pace, vision, "
        "rules, journal, scoreboard with an SSE client); report the delay from the first "
        "still frame to the phone (minus the hold), throws read, refused and misread.",
    )
    parser.add_argument("--throws", type=int, default=200,
                        help="throws to play (default 200, at least 10)")
    parser.add_argument("--preset", default="tim-11", help="rule set (default tim-11)")
    parser.add_argument("--seed", type=int, default=11, help="random seed (default 11)")
    parser.add_argument("--fps", type=float, default=15.0, help="camera frame rate (default 15)")
    parser.add_argument("--jpeg", type=int, default=None, metavar="QUALITY",
                        help="JPEG-compress every frame at this quality (1-100), as a webcam's "
                             "MJPEG stream does (default: raw frames)")
    parser.add_argument("--scene", choices=("classic", "varied"), default="classic",
                        help="the simulated tray's look: classic (default) or varied (other "
                             "dice, floor, light and camera at every throw)")
    parser.add_argument("--keep-frames", type=Path, default=None, metavar="DIR",
                        help="write into DIR the frame of every throw misread "
                             "(misread-N.png) or accepted with a cocked die (cocked-N.png)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=_run)


class _Watch:
    """What the benchmark notes beside the tower, without changing what the tower does."""

    def __init__(self) -> None:
        self.frame_seen: dict[float, float] = {}  # frame time -> when it was taken
        self.accepted_version: int | None = None
        self.delays_from: list[tuple[float, int]] = []  # (wall time of first still frame, version)
        self.clean_throws = 0
        self.clean_first = 0
        self.current: object = None  # the table's throw being judged
        self.first_settle_done = False

    def listener(self, action: dict[str, Any], result: Any) -> None:
        if action.get("action") in ("event", "correct"):
            self.accepted_version = int(action["version"])


def run_benchmark(throws: int = 200, preset: str = "tim-11", seed: int = 11,
                  fps: float = 15.0, progress: bool = False,
                  jpeg: int | None = None, scene: str = "classic",
                  keep_frames: Path | None = None) -> dict[str, Any]:
    """Play ``throws`` throws on the ``scene`` ("classic" or "varied") of the simulated tray;
    return the figures (delays in milliseconds). ``keep_frames``: a folder that gets the
    frame of every throw misread (``misread-N.png``) or accepted with a cocked die
    (``cocked-N.png``)."""
    # The tower (OpenCV, the renderer, Flask): loaded when the benchmark runs, not when the
    # command line starts.
    from firmware_host.simulation.camera import SimulatedCamera
    from firmware_host.simulation.demo import Demo, DemoOptions

    watch = _Watch()
    with TemporaryDirectory(prefix="dicetower-bench-") as folder:
        options = DemoOptions(preset=preset, seed=seed, fast=False, think=0.0,
                              journal=Path(folder) / "bench.sqlite3", port=0, scene=scene)
        demo = Demo(options, say=lambda line: None)
        assert isinstance(demo.camera, SimulatedCamera)
        demo.camera.fps = fps
        demo.tray.jpeg_quality = jpeg
        if keep_frames is not None:
            demo.on_wrong = lambda frame, kind, what: _keep_frame(keep_frames, kind, frame)
        camera = demo.camera
        read = camera.read
        # The SSE client notes arrivals on perf_counter; the camera paces on monotonic.
        offset = time.perf_counter() - time.monotonic()

        def timed_read() -> Any:
            frame = read()
            # From when the frame was taken, not when the controller got round to it.
            watch.frame_seen[frame.at] = camera.due(frame.at) + offset
            return frame

        camera.read = timed_read  # type: ignore[method-assign]
        try:
            demo.start()
            demo.hub.subscribe(watch.listener)
            client = Client("127.0.0.1", demo.server.port)
            client.start()
            client.connected.wait(5)
            if client.error:
                raise RuntimeError(f"SSE client: {client.error}")
            hold = demo.controller.watcher.hold
            # A progress bar on a terminal only (disable=None), never in a log or --json.
            bar = tqdm(total=throws, unit="throw", disable=None if progress else True,
                       leave=False, file=sys.stderr)
            done = 0
            while done < throws:
                watch.accepted_version = None
                demo.step(lambda outcome: _note_settle(watch, demo, outcome))
                now = demo.summary.throws + demo.summary.rethrows
                bar.update(now - done)
                done = now
            bar.close()
            time.sleep(0.5)  # the last events on their way to the client
            delays = []
            for still_wall, version in watch.delays_from:
                arrived = state_arrival(client.received, version)
                if arrived is not None:
                    delays.append((arrived - still_wall - hold) * 1000.0)
            summary = demo.summary
        finally:
            demo.close()
    return {
        "throws": summary.throws + summary.rethrows,
        "read_ok": summary.throws - summary.misread,
        "refused": dict(sorted(summary.rethrow_reasons.items())),
        "misread": summary.misread,
        "misreads": list(summary.misreads),
        "cocked_accepted": summary.cocked_accepted,
        "hand_accepted": summary.hand_accepted,
        "outside_accepted": summary.outside_accepted,
        "first_try": watch.clean_first / watch.clean_throws if watch.clean_throws else None,
        "clean_throws": watch.clean_throws,
        "delays": len(delays),
        "p50_ms": statistics.median(delays) if delays else None,
        "p95_ms": p95(delays) if delays else None,
        "max_ms": max(delays) if delays else None,
        "hold_s": hold,
        "fps": fps,
        "jpeg": jpeg,
        "preset": preset,
        "seed": seed,
        "scene": scene,
    }


def _keep_frame(folder: Path, kind: str, frame: Any) -> None:
    """The frame of a throw accepted wrong, as the next ``KIND-N.png`` in ``folder``."""
    import cv2

    folder.mkdir(parents=True, exist_ok=True)
    number = len(list(folder.glob(f"{kind}-*.png"))) + 1
    cv2.imwrite(str(folder / f"{kind}-{number}.png"), frame.image)


def _note_settle(watch: _Watch, demo: Any, outcome: Any) -> None:
    """Delays of accepted throws; whether each clean throw passed at its first settle."""
    last = demo.table.last
    if last is not watch.current:
        watch.current = last
        watch.first_settle_done = False
    if outcome is None or outcome.kind not in ("reading", "unsteady", "obstructed"):
        return
    accepted = demo.controller.last_result[0] == "accepted"
    if accepted and watch.accepted_version is not None:
        still_wall = watch.frame_seen.get(outcome.still_since)
        if still_wall is not None:
            watch.delays_from.append((still_wall, watch.accepted_version))
    if last is None or watch.first_settle_done:
        return
    watch.first_settle_done = True
    if last.truth.clean:
        watch.clean_throws += 1
        watch.clean_first += accepted


def _run(args: argparse.Namespace) -> int:
    if args.throws < 10:
        print("dicetower bench tower: --throws must be at least 10", file=sys.stderr)
        return 2
    if args.preset not in PRESETS:
        print(f"dicetower bench tower: unknown preset {args.preset!r}; one of "
              f"{', '.join(PRESETS)}", file=sys.stderr)
        return 2
    if not 1 <= args.fps <= 120:
        print("dicetower bench tower: --fps must be from 1 to 120", file=sys.stderr)
        return 2
    if args.jpeg is not None and not 1 <= args.jpeg <= 100:
        print("dicetower bench tower: --jpeg must be from 1 to 100", file=sys.stderr)
        return 2
    if args.keep_frames is not None and args.keep_frames.exists() \
            and not args.keep_frames.is_dir():
        print(f"dicetower bench tower: --keep-frames {args.keep_frames} is not a folder",
              file=sys.stderr)
        return 2
    result = run_benchmark(args.throws, args.preset, args.seed, args.fps,
                           progress=not args.json, jpeg=args.jpeg, scene=args.scene,
                           keep_frames=args.keep_frames)
    if args.json:
        print(json.dumps(result))
        return 0
    first = result["first_try"]
    frames = "raw frames" if args.jpeg is None else f"JPEG {args.jpeg}"
    if args.scene != "classic":
        frames += f" · {args.scene} scene"
    print(f"tower · {result['preset']} · seed {result['seed']} · {result['fps']:g} fps · "
          f"{frames} · hold {result['hold_s']:g} s")
    print(f"throws {result['throws']}: read right {result['read_ok']}, misread "
          f"{result['misread']}, cocked accepted {result['cocked_accepted']}, "
          f"with a hand in the tray {result['hand_accepted']}, "
          f"with a die out of it {result['outside_accepted']}")
    for what in result["misreads"]:
        print(f"  misread: {what}")
    print("refused: " + (", ".join(f"{k} {v}" for k, v in result["refused"].items())
                         or "none"))
    print(f"clean throws accepted at their first settle: "
          f"{'-' if first is None else f'{first:.1%}'} of {result['clean_throws']}")
    if result["p50_ms"] is not None:
        print(f"first still frame to the phone, minus the hold ({result['delays']} throws): "
              f"median {result['p50_ms']:.0f} ms, p95 {result['p95_ms']:.0f} ms, "
              f"max {result['max_ms']:.0f} ms")
    return 0
