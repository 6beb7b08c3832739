"""The `dicetower hw-test` subcommand: walk a builder through every device of the tower.

On real pins it lights each seat, shows each status pattern, sweeps each servo, drops one
token per dispenser and waits for each button, asking the builder what happened. With
`--simulate` it runs the same walk-through on gpiozero's mock pins, reading them back and
pressing the buttons itself. Exit status: 0 when every device answered, 1 when one failed,
2 when the pin map is refused or there are no pins to drive.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

PINMAP_ENV = "DICETOWER_PINMAP"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "hw-test", help="check every light, servo, sensor and button of the tower",
        description="Walk through every device of the tower (dicetower hw-test): light each "
        "seat, sweep each servo, press each button, and report what answered.")
    parser.add_argument(
        "--pinmap", type=Path, default=None,
        help=f"pin map TOML file (default: ${PINMAP_ENV}, else ./pinmap.toml, else the "
        "shipped example hardware/pinmap.example.toml)")
    parser.add_argument(
        "--simulate", action="store_true",
        help="run on mock pins, reading them back and pressing the buttons automatically")
    parser.add_argument(
        "--button-timeout", type=float, default=20.0, metavar="SECONDS",
        help="how long to wait for each button press on real pins (default: 20)")
    parser.set_defaults(func=_run)


def default_pinmap() -> Path:
    """$DICETOWER_PINMAP, else ./pinmap.toml if present, else the shipped example."""
    from hardware.pinmap import EXAMPLE_PINMAP  # pydantic: when the command runs

    if os.environ.get(PINMAP_ENV):
        return Path(os.environ[PINMAP_ENV])
    local = Path("pinmap.toml")
    return local if local.is_file() else EXAMPLE_PINMAP


def _run(args: argparse.Namespace) -> int:
    # Imported here: `dicetower --help` must not pay for gpiozero.
    from hardware.factory import NotOnAPi, real_factory
    from hardware.pinmap import PinMapError, load_pinmap
    from hardware.simulation import SimulatedTower, simulated_pinmap
    from hardware.tower import Tower
    from hardware.walkthrough import Probe, SimulatedProbe, run_walkthrough

    path = args.pinmap or default_pinmap()
    try:
        pinmap = load_pinmap(path)
    except PinMapError as exc:
        print(f"dicetower hw-test: the pin map is refused:\n{exc}")
        return 2
    print(f"dicetower hw-test: pin map {path} ({pinmap.seat_count} seats, "
          f"{pinmap.dispenser.layout.replace('_', '-')} dispensers)")
    for warning in pinmap.warnings:
        print(f"warning: {warning}")
    if args.simulate:
        print("Mock pins (gpiozero MockFactory); timings shortened for the simulation.")
        tower: Tower = SimulatedTower(simulated_pinmap(pinmap))
        probe: Probe = SimulatedProbe(tower)  # type: ignore[arg-type]
    else:
        if args.button_timeout <= 0:
            print("dicetower hw-test: --button-timeout must be greater than 0")
            return 2
        try:
            factory = real_factory()
        except NotOnAPi as exc:
            print(f"dicetower hw-test: {exc}")
            return 2
        print(f"Real pins ({type(factory).__name__}). Answer each question with y or n.")
        try:
            tower = Tower(pinmap, factory)
        except Exception as exc:  # gpiozero: pin in use by another program, no permission...
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            print(f"dicetower hw-test: cannot set up the devices: {detail}")
            return 2
        probe = Probe(button_timeout=args.button_timeout)
    with tower:
        checks = run_walkthrough(tower, probe)
    failed = [c for c in checks if not c.ok]
    print(f"{len(checks) - len(failed)} of {len(checks)} devices answered.")
    for check in failed:
        print(f"FAILED: {check.device}: {check.detail}")
    return 1 if failed else 0
