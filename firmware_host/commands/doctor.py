"""The `dicetower doctor` subcommand: is this machine ready to run the tower? One screen.

    dicetower doctor --config ~/dicetower/tower.toml

Each check is one line, OK, FAIL (with a one-line fix under it) or SKIP (with why): the
configuration; the camera found and delivering frames; the calibration profile present and
fitting the camera's pictures; the pin factory and every pin of the pin map; the journal
writable; the scoreboard's port free; the vision's networks loading and reading; the clock;
disk space; the CPU temperature and the Pi's under-voltage and throttling flags (`vcgencmd
get_throttled`), where the machine reports them.
The exit status is 0 when nothing failed (skipped checks do not fail), else 1; 2 for a bad
option. Run it with the tower stopped: a running tower holds the camera, the pins and the port.
"""

from __future__ import annotations

import argparse
import datetime
import logging
import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from firmware_host import service
from firmware_host.commands.paths import writable_file_problem
from firmware_host.hub.journal import SQLITE_MAGIC

RELEASE_YEAR = 2026  # this version's year: a clock before it is wrong (no battery clock on a Pi)
THERMAL_ZONE = Path("/sys/class/thermal/thermal_zone0/temp")
HOT = 80.0  # °C: a Pi 4 or 5 starts slowing itself down here
SPARE_MB = 200  # disk kept free beyond the journal's images
FRAMES = 3  # frames the camera must deliver
STOP_FIRST = "stop the tower first if it runs (sudo systemctl stop dicetower)"
# vcgencmd get_throttled bits (Raspberry Pi documentation): now, and since boot.
THROTTLE_BITS = {0: "under-voltage now", 1: "ARM frequency capped now",
                 2: "throttled now", 3: "soft temperature limit now",
                 16: "under-voltage since boot", 17: "ARM frequency capped since boot",
                 18: "throttled since boot", 19: "soft temperature limit since boot"}


@dataclass
class Check:
    """One line of the report: ``state`` is "ok", "fail" or "skip"."""

    name: str
    state: str
    detail: str
    fix: str = ""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor", help="check this machine is ready to run the tower",
        description="Check the camera, pins, profile, journal, scoreboard port, networks, "
        "clock, disk, temperature and power, one line each; exit 0 when nothing failed.")
    parser.add_argument("--config", type=Path, default=None,
                        help="the tower's configuration (default: ~/dicetower/tower.toml)")
    parser.add_argument("--journal", type=Path, default=None,
                        help="the journal to check instead of the configuration's (the "
                        "service's is /var/lib/dicetower/journal.sqlite3)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    # One screen: warnings only (OpenCV's attempts at a missing device are quieted by the
    # camera source).
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    path = args.config or Path("~/dicetower/tower.toml").expanduser()
    checks = run_checks(path, journal=args.journal)
    print(f"dicetower doctor: {path}")
    width = max(len(c.name) for c in checks)
    for check in checks:
        print(f"  {check.state.upper():<5} {check.name:<{width}}  {check.detail}")
        if check.state == "fail" and check.fix:
            print(f"  {'':<5} {'':<{width}}  fix: {check.fix}")
    counts = {state: sum(c.state == state for c in checks) for state in ("ok", "fail", "skip")}
    print(f"doctor: {counts['ok']} OK, {counts['fail']} FAIL, {counts['skip']} skipped")
    return 1 if counts["fail"] else 0


def run_checks(path: Path, *, journal: Path | None = None) -> list[Check]:
    """Every check, in the order shown."""
    # The tower's parts (pydantic, OpenCV, Flask, gpiozero) load when the checks run, not
    # when the command line starts.
    from firmware_host.commands.camera_sources import offer_simulated_camera
    from firmware_host.controller.config import ConfigError, load_config

    offer_simulated_camera()
    checks: list[Check] = []
    config: Any = None
    try:
        config = load_config(path)
    except ConfigError as exc:
        checks.append(Check("configuration", "fail", str(exc),
                            "dicetower run --example > ~/dicetower/tower.toml, then edit it"))
    if config is not None:
        if journal is not None:
            config.journal = journal
        pins = "mock pins" if config.pinmap is None else f"pin map {config.pinmap}"
        checks.append(Check("configuration", "ok", f"camera {config.camera}, {pins}, "
                            f"{config.preset} for {len(config.players)} players"))
        camera, shape = check_camera(config)
        checks += [camera, check_profile(config, shape), *check_pins(config),
                   check_journal(config.journal), check_port(config.host, config.port)]
    checks += [check_networks(), check_clock(),
               check_disk(config.journal if config else Path.home(),
                          config.max_images_mb if config else 0),
               check_temperature(), check_power()]
    return checks


def check_camera(config: Any) -> tuple[Check, tuple[int, int] | None]:
    """The camera opens and gives `FRAMES` frames; the (height, width) of its pictures."""
    from firmware_host.camera import CameraError  # OpenCV, Flask: when the check runs
    from firmware_host.controller.assembly import StartError, camera_source

    fix = ("check the cable and [camera] source (`rpicam-hello --list-cameras` lists Pi "
           f"cameras, `v4l2-ctl --list-devices` webcams); {STOP_FIRST}")
    try:
        camera = camera_source(config)
    except StartError as exc:
        return Check("camera", "fail", str(exc), fix), None
    try:
        camera.open()
        frames = [camera.read() for _ in range(FRAMES)]
    except CameraError as exc:
        return Check("camera", "fail", str(exc), fix), None
    finally:
        camera.close()
    h, w = frames[-1].image.shape[:2]
    return Check("camera", "ok", f"{config.camera}: {FRAMES} frames of {w}x{h}"), (h, w)


def check_profile(config: Any, shape: tuple[int, int] | None) -> Check:
    """The profile loads, and its empty tray and zones fit the camera's pictures."""
    if config.profile is None:
        return Check("profile", "skip", "none in the configuration ([tower] profile): the "
                     "whole picture is read")
    from vision import Profile  # OpenCV: when the check runs

    fix = f"fix [tower] profile in {config.source}, or calibrate again for this camera"
    try:
        profile = Profile.load(config.profile)
    except ValueError as exc:
        return Check("profile", "fail", str(exc), fix)
    if shape is None:
        return Check("profile", "skip", f"{config.profile} loads; its fit needs the camera")
    try:
        profile.empty_tray(shape)
        profile.zone_box(shape)
    except ValueError as exc:
        return Check("profile", "fail", f"{config.profile}: {exc}", fix)
    return Check("profile", "ok", f"{config.profile} fits {shape[1]}x{shape[0]}")


def check_networks() -> Check:
    """The shipped networks (die finder, face network, lean check) load on ONNX Runtime and
    read a frame: a 32-bit system, where ONNX Runtime has no wheels, fails here."""
    import numpy as np

    fix = ("install the project again (pip install ~/dicetower/src[pi]) on a 64-bit system: "
           "ONNX Runtime runs the networks and has wheels for arm64 and x86-64")
    try:
        import onnxruntime

        from vision import read_dice, shipped_readers

        read_dice(np.full((240, 320, 3), 90, np.uint8), readers=shipped_readers())
    except (ImportError, OSError, ValueError) as exc:  # a missing library, model or file
        return Check("networks", "fail", f"{type(exc).__name__}: {exc}".splitlines()[0], fix)
    return Check("networks", "ok", f"die finder, face network and lean check read "
                 f"(ONNX Runtime {onnxruntime.__version__})")


def check_pins(config: Any) -> list[Check]:
    """The pin factory, then each pin of the pin map claimed and let go (as an input)."""
    if config.pinmap is None:
        return [Check("pins", "skip", 'mock pins ([tower] pinmap = "simulated")')]
    from hardware.factory import NotOnAPi, lgpio_pipe_folder, real_factory  # gpiozero: late
    from hardware.pinmap import PinMapError, load_pinmap

    try:
        pinmap = load_pinmap(config.pinmap)
    except PinMapError as exc:
        return [Check("pins", "fail", exc.problems[0], "fix the pin map; `dicetower hw-test "
                      "--pinmap FILE` lists every problem")]
    checks = []
    try:
        factory = real_factory()
    except NotOnAPi as exc:
        fix = ("install python3-lgpio, add the user to the gpio group, or set [tower] pinmap "
               "= \"simulated\"")
        if "notification pipe" in str(exc):
            fix = "run it from a folder you can write to (cd ~), or set LG_WD to one"
        return [*_lgpio_pipe(lgpio_pipe_folder()), Check("pins", "fail", str(exc), fix)]
    checks += _lgpio_pipe(lgpio_pipe_folder())
    uses = pinmap.pin_uses()
    try:
        for bcm, key, what in uses:
            try:
                factory.pin(bcm).close()
            except Exception as exc:  # lgpio.error "GPIO busy", gpiozero's PinError...
                checks.append(Check("pin", "fail", f"GPIO {bcm} ({key}, {what}): {exc}",
                                    f"another program holds it: {STOP_FIRST}"))
    finally:
        factory.close()
    if not any(check.state == "fail" for check in checks):
        checks.append(Check("pins", "ok", f"{len(uses)} pins of {config.pinmap} free on "
                            f"{type(factory).__name__}"))
    return checks


def _lgpio_pipe(folder: Path | None) -> list[Check]:
    """Where `import lgpio` made its pipe (it fails where it cannot: doctor looks elsewhere)."""
    if folder is None:
        return []
    elsewhere = "" if _is_current(folder) else " (the current folder takes none)"
    return [Check("lgpio", "ok", f"its notification pipe in {folder}{elsewhere}")]


def _is_current(folder: Path) -> bool:
    try:
        return Path.cwd() == folder
    except OSError:  # the current folder was deleted
        return False


def check_journal(journal: Path) -> Check:
    """The journal's folder (or where it will be made) takes files; the journal is writable."""
    elsewhere = "set [journal] path (or --journal) to a journal file of your own"
    problem = writable_file_problem(journal, "the journal")
    if problem:
        return Check("journal", "fail", problem, elsewhere)
    if journal.is_file() and journal.stat().st_size:
        try:
            with journal.open("rb") as handle:
                header = handle.read(len(SQLITE_MAGIC))
        except OSError as exc:
            return Check("journal", "fail", f"{journal}: {exc.strerror}", elsewhere)
        if header != SQLITE_MAGIC:  # `run` would refuse it: say so before the bar opens
            return Check("journal", "fail", f"{journal}: not a dicetower journal (not an "
                         "SQLite file)", elsewhere)
    fix = (f"sudo chown $USER {journal.parent}, or set [journal] path to a folder of "
           "your own")
    if journal.parent == service.STATE_DIR:
        # The service's state directory: systemd makes it at the first start, owned by the
        # service's user, and gives it back to that user at every start (a chown is undone).
        if not service.STATE_DIR.exists():
            return Check("journal", "ok", f"{journal} will be created at the service's first "
                         "start (systemd makes its folder)")
        fix = ("run doctor as the service's user (the User= of `systemctl cat dicetower`), "
               "or set [journal] path to a folder of your own")
    folder = journal.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # the journal's folder is made at start: look where it goes
    try:
        probe = folder / f".doctor-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        return Check("journal", "fail", f"{folder}: {exc.strerror}", fix)
    if journal.exists() and not os.access(journal, os.W_OK):
        return Check("journal", "fail", f"{journal}: not writable", fix)
    state = "writable" if journal.exists() else "will be created"
    return Check("journal", "ok", f"{journal} {state}")


def check_port(host: str, port: int) -> Check:
    """The scoreboard's port can be listened on (with SO_REUSEADDR, as waitress does)."""
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen()
    except socket.gaierror as exc:  # a name that does not resolve: no program to stop
        return Check("scoreboard", "fail", f"{host}:{port}: {exc.strerror}",
                     "set [scoreboard] host to an address of this machine (0.0.0.0 for all)")
    except OSError as exc:
        return Check("scoreboard", "fail", f"{host}:{port}: {exc.strerror}",
                     f"another program listens there ({STOP_FIRST}), or set [scoreboard] port")
    return Check("scoreboard", "ok", f"{host}:{port} free")


def check_clock(today: datetime.date | None = None) -> Check:
    today = today or datetime.date.today()
    if today.year < RELEASE_YEAR:
        return Check("clock", "fail", f"the date is {today.isoformat()}, before this version",
                     "connect to the network so it sets the time (timedatectl), or "
                     "sudo date -s 'YYYY-MM-DD HH:MM'")
    return Check("clock", "ok", today.isoformat())


def check_disk(journal: Path, images_mb: float) -> Check:
    folder = journal if journal.is_dir() else journal.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    free_mb = shutil.disk_usage(folder).free / 1e6
    needed = images_mb + SPARE_MB
    detail = f"{free_mb / 1000:.1f} GB free on {folder}"
    if free_mb < needed:
        return Check("disk", "fail", f"{detail}, {needed:.0f} MB needed",
                     "free some space (sudo apt clean), lower [journal] max_images_mb, or use a "
                     "bigger SD card")
    return Check("disk", "ok", detail)


def check_temperature(zone: Path | None = None) -> Check:
    zone = zone or THERMAL_ZONE
    try:
        celsius = int(zone.read_text().strip()) / 1000
    except (OSError, ValueError):
        return Check("temperature", "skip", f"not reported here (no {zone})")
    if celsius >= HOT:
        return Check("temperature", "fail", f"CPU at {celsius:.0f} °C",
                     "fit a heatsink or the fan (Pi 5: the Active Cooler), and leave air "
                     "around the Pi")
    return Check("temperature", "ok", f"CPU at {celsius:.0f} °C")


def check_power() -> Check:
    """Under-voltage and throttling as the Pi's firmware reports them."""
    vcgencmd = shutil.which("vcgencmd")
    if vcgencmd is None:
        return Check("power", "skip", "not reported here (no vcgencmd: not a Raspberry Pi)")
    try:
        out = subprocess.run([vcgencmd, "get_throttled"], capture_output=True, text=True,
                             timeout=5, check=True).stdout.strip()
        flags = int(out.partition("=")[2], 16)
    except (OSError, subprocess.SubprocessError, ValueError):
        return Check("power", "skip", "vcgencmd get_throttled gave no answer")
    if not flags:
        return Check("power", "ok", "no under-voltage or throttling since boot")
    # Each bit said, the "now" ones first: 0x50005 is under-voltage and throttling, both now
    # and since boot, not only the under-voltage.
    reasons = [text for bit, text in THROTTLE_BITS.items() if flags & (1 << bit)]
    if flags & 0x10001:
        fix = ("use the official power supply (Pi 4: 5.1 V 3 A, Pi 5: 5.1 V 5 A) and give the "
               "servos their own 5 V supply, grounds joined (docs/hardware.md)")
    else:
        fix = "the Pi ran too hot: fit a heatsink or fan"
    return Check("power", "fail", f"{', '.join(reasons)} ({out})", fix)
