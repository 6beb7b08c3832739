"""The `dicetower calibrate` subcommand: tune the tower to the bar's light and its dice.

    dicetower calibrate --camera usb:0 --expect 3              # live, step by step
    dicetower calibrate --camera simulated --expect 3 --yes    # the simulated tray throws
    dicetower calibrate --from-images DIR --expect 3           # from photos (empty*.jpg + throws)

Four steps (the empty tray, the light, the dice, the check), then the profile is written to
the user's configuration folder (`--name` for several dice sets, `--profile PATH`
elsewhere), the previous one kept as a backup; docs/calibration.md tells the whole story.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from firmware_host.argtypes import positive_int

MAX_EXPECT = 12  # dice in one throw: the games use 3 to 5; the simulated tray holds 12


def _dice_count(text: str) -> int:
    value = positive_int(text)
    if value > MAX_EXPECT:
        raise argparse.ArgumentTypeError(f"{text!r} dice: at most {MAX_EXPECT} in one throw")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help="tune the tower to the bar's light and dice; writes a profile",
        description="Guides the installer through four steps (the empty tray, the light, "
        "the dice, a check) and writes the vision profile that `run` and `read --profile` "
        "use. From a live camera (--camera) or from photos (--from-images DIR: files named "
        "empty* show the empty tray, the others are throws).",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--camera", metavar="SPEC",
                        help="the tray camera: usb:0, picamera2, simulated, ...")
    source.add_argument("--from-images", metavar="DIR", type=Path,
                        help="calibrate from photos in DIR instead of a camera")
    parser.add_argument("--labels", metavar="FILE", type=Path,
                        help="with --from-images: the dice's values in the dice-photos manifest "
                        "format (image paths relative to DIR); the photos it names are the "
                        "throws, and the faces of these dice are learnt")
    parser.add_argument("--expect", type=_dice_count, metavar="N",
                        help="dice in each throw (the game's dice; needed with a camera)")
    parser.add_argument("--name", default="default",
                        help="name of this dice set's profile (default: default)")
    parser.add_argument("--profile", metavar="PATH", type=Path,
                        help="write the profile here instead of the user's profiles folder")
    parser.add_argument("--tray", metavar="CORNERS",
                        help="the tray's corners x,y;x,y;x,y;x,y (pixels) instead of finding it")
    parser.add_argument("--keep", default="right",
                        choices=("right", "left", "top", "bottom", "none"),
                        help="which end of the tray holds the keep zone (default right)")
    parser.add_argument("--throws", type=positive_int, default=4,
                        help="throws to learn the dice from, live (default 4)")
    parser.add_argument("--checks", type=positive_int, default=3,
                        help="throws to check the profile with, live (default 3)")
    parser.add_argument("--pinmap", metavar="TOML", type=Path,
                        help="the tower's pin map, to sweep its ring light (live)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the simulated tray's throws (default 0)")
    parser.add_argument("--yes", action="store_true",
                        help="non-interactive: do not wait for Enter between steps")
    parser.set_defaults(func=run)


def _fail(message: str, code: int = 1) -> int:
    print(f"dicetower calibrate: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    from calibration.errors import CalibrationError
    from calibration.store import check_name, profile_path
    from calibration.tray import parse_tray
    from firmware_host.commands.paths import writable_file_problem

    if args.camera is None and args.from_images is None:
        return _fail("say where the pictures come from: --camera SPEC (e.g. usb:0, "
                     "simulated) or --from-images DIR", 2)
    try:
        check_name(args.name)
        tray = parse_tray(args.tray) if args.tray is not None else None
    except ValueError as exc:
        return _fail(str(exc), 2)
    if args.camera is not None and args.expect is None:
        return _fail("--expect N is needed with a camera: how many dice the game uses "
                     "(3 for 421, 4 for 4D)", 2)
    if args.from_images is not None and not args.from_images.is_dir():
        what = "not a folder" if args.from_images.exists() else "no such folder"
        return _fail(f"--from-images {args.from_images}: {what}; nothing saved", 2)
    if args.labels is not None and args.from_images is None:
        return _fail("--labels goes with --from-images DIR (live, the values are asked)", 2)
    if args.labels is not None and not args.labels.is_file():
        return _fail(f"--labels {args.labels}: no such file; nothing saved", 2)
    target = profile_path(args.name, args.profile)
    # Checked before the four steps, not after them: an installer must not calibrate for
    # minutes to learn the profile cannot be written there.
    problem = writable_file_problem(target, "the profile")
    if problem:
        return _fail(f"--profile {problem}", 2)
    from calibration.report import Reporter
    from calibration.session import Settings

    ui = Reporter(interactive=not args.yes and sys.stdin.isatty())
    settings = Settings(expect=args.expect, tray=tray, keep=args.keep, throws=args.throws,
                        checks=args.checks)
    from firmware_host.camera import CameraError

    start = time.monotonic()
    try:
        if args.from_images is not None:
            outcome = _from_images(args, settings, ui)
        else:
            outcome = _live(args, settings, ui)
    except CalibrationError as exc:
        return _fail(f"{exc}; nothing saved")
    except CameraError as exc:
        if not ui.current:
            return _fail(f"{exc}; nothing saved")
        return _fail(f"the camera stopped during {ui.current} ({exc}); nothing saved")
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return _fail("interrupted; nothing saved", 130)
    return _finish(outcome, target, args, ui, time.monotonic() - start)


def _from_images(args: argparse.Namespace, settings: Any, ui: Any) -> Any:
    from calibration.faces import labelled_reading
    from calibration.labels import load_labels
    from calibration.session import calibrate_photos
    from calibration.sources import PhotoThrows

    if args.labels is not None:
        photos = PhotoThrows.from_labels(args.from_images,
                                         load_labels(args.labels, args.from_images))
    else:
        photos = PhotoThrows.from_folder(args.from_images, args.expect)
    ui.say(f"Calibrating from {args.from_images}: {len(photos.empties)} empty-tray picture(s), "
           f"{len(photos.learn_images)} throws to learn from, {len(photos.check_images)} to "
           "check with" + (f", the dice's values from {args.labels}" if args.labels else ""))
    # Without a labels file, a person at the terminal gives the values (else none are known).
    labeller = labelled_reading(ui.answer, ui.say) if ui.interactive else None
    return calibrate_photos(photos, settings, ui, labeller)


def _live(args: argparse.Namespace, settings: Any, ui: Any) -> Any:
    from calibration.controls import light_knobs
    from calibration.errors import CalibrationError
    from calibration.faces import labelled_reading
    from calibration.session import calibrate_live
    from calibration.sources import LiveThrows, PersonTable, SimulatedTable
    from firmware_host.camera import camera_from_spec
    from firmware_host.commands.camera_sources import offer_simulated_camera

    offer_simulated_camera()
    try:
        camera = camera_from_spec(args.camera)
    except ValueError as exc:
        raise CalibrationError(str(exc)) from None
    tower = None
    try:
        tray = getattr(camera, "tray", None)
        if tray is not None:  # the simulated camera: its tray throws, and has a ring light
            table: Any = SimulatedTable(tray, args.seed, ui.say)
            ring, level = tray.set_ring, tray.ring
        else:
            table = PersonTable(ui.ask)
            ring, level = None, None
            if args.pinmap is not None:
                tower = _open_tower(args.pinmap)
                ring, level = tower.set_ring, tower.ring_level
        ui.say(f"Calibrating {camera.name} for {args.expect} dice")
        camera.open()
        knobs = light_knobs(camera, ring, level)
        live = LiveThrows(camera, table)
        # The dice's values: the simulated tray knows them; a person at the terminal confirms
        # or corrects each reading.
        labeller = (live.told_values if tray is not None
                    else labelled_reading(ui.answer, ui.say) if ui.interactive else None)
        return calibrate_live(live, settings, knobs, ui, labeller)
    finally:
        camera.close()
        if tower is not None:
            tower.close()


def _open_tower(pinmap: Path) -> Any:
    from calibration.errors import CalibrationError
    from hardware import NotOnAPi, PinMapError, open_tower

    try:
        return open_tower(pinmap)
    except (PinMapError, NotOnAPi, OSError) as exc:
        raise CalibrationError(f"--pinmap {pinmap}: {exc}") from None


def _finish(outcome: Any, target: Path, args: argparse.Namespace, ui: Any,
            seconds: float) -> int:
    from calibration.choices import choices_notes
    from calibration.dice import describe_profile
    from calibration.errors import CalibrationError
    from calibration.faces import faces_notes
    from calibration.store import save, write_previews

    check = outcome.check
    w, wo = check.with_profile, check.without
    notes = {
        "made": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "source": str(args.from_images) if args.from_images else args.camera,
        "expect": args.expect,
        "tray": outcome.tray,
        "light": outcome.light,
        "chosen": describe_profile(outcome.profile),
        "faces": faces_notes(outcome.learnt, outcome.judged),
        **choices_notes(outcome.choices),
        "check": {"sure": round(check.sure, 3), "with_profile": _counts(w),
                  "without": _counts(wo), "advice": check.advice},
    }
    stem = target.name[:-5] if target.name.endswith(".json") else target.name
    if not outcome.passed:
        previews = write_previews(target.with_name(f"{stem}.preview"), outcome.previews)
        ui.say(f"Not saved: with this profile the check reads {w.read} of {w.expected} dice "
               f"({w.missing} missed, {w.over + w.stray} strays), without any profile "
               f"{wo.read} ({wo.missing} missed, {wo.over + wo.stray} strays).")
        fixes = "; ".join(check.advice) or "more light, a cleaner tray or other dice"
        ui.say(f"To fix: {fixes}. Previews: {previews}")
        return 1
    try:
        written = save(target, outcome.profile, outcome.empty, notes, outcome.previews)
    except CalibrationError as exc:
        return _fail(str(exc))
    ui.say(f"Profile written: {written['profile']} ({seconds:.0f} s; sure {check.sure:.0%} "
           f"on the check throws)")
    for kind, path in written.items():
        if kind.startswith("backup"):
            ui.say(f"  previous profile kept: {path}")
    ui.say(f"  previews: {written['previews']}")
    if check.advice:
        # The check throws read well, but what makes a reading fragile still tells: dice
        # nearly the tray's colour read the next throws worse than the check's few.
        ui.say("  worth fixing all the same: " + "; ".join(check.advice))
    if outcome.light:
        ui.say("  light chosen: " + ", ".join(f"{k} {v:g}" for k, v in outcome.light.items())
               + f" (kept in {written['notes'].name})")
    ui.say(f'Use it: [tower] profile = "{written["profile"]}" in tower.toml, or '
           f"dicetower read --profile {written['profile']} IMAGE")
    return 0


def _counts(a: Any) -> dict[str, int]:
    return {"expected": a.expected, "read": a.read, "missed": a.missing,
            "strays": a.over + a.stray, "contradictions": a.contradictions}
