"""The `dicetower service` subcommand: start the tower at boot with systemd.

    sudo ~/dicetower/venv/bin/dicetower service install --user pi --config ~/dicetower/tower.toml
    dicetower service install --user pi --config tower.toml --dry-run   # show, write nothing

`install` fills in the unit shipped with the package (`firmware_host/service/dicetower.service`)
for this installation's Python and the given user and configuration, writes it to
/etc/systemd/system/dicetower.service, and prints it with the commands that start it. The
journal goes to /var/lib/dicetower (systemd's ``StateDirectory=``, kept across reboots and
owned by the user), which is also the service's working directory; a configuration whose
[journal] path is another is warned about, since `doctor`, `serve` and backups read that one.
``--dry-run`` prints the same without writing, on any machine; what would stop a real install
(not root, no systemd, no such user or group) is then said as a warning.
"""

from __future__ import annotations

import argparse
import grp
import os
import pwd
import re
import shlex
import sys
from pathlib import Path

from firmware_host.service import JOURNAL, STATE_DIR, UNIT_NAME, WATCHDOG_SECONDS, render_unit

SYSTEMD_UNIT_DIR = Path("/etc/systemd/system")
SYSTEMD_RUNNING = Path("/run/systemd/system")  # sd_booted(3): present only under systemd
GROUPS = ("gpio", "video")
# Debian's NAME_REGEX (adduser.conf), upper case allowed as useradd allows it.
USER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?")


class InstallError(Exception):
    """Why the unit cannot be installed: one line; ``code`` 2 for a bad option, else 1."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "service", help="start the tower at boot (systemd)",
        description="Install the tower as a systemd service that starts at boot, restarts "
        "when it fails or hangs, and keeps its journal in /var/lib/dicetower.")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    install = actions.add_parser(
        "install", help="write /etc/systemd/system/dicetower.service",
        description="Write the systemd unit for this installation, the user and the "
        "configuration given, then print the commands that enable and start it.")
    install.add_argument("--user", default=None,
                         help="the user the tower runs as (default: the user behind sudo); "
                         "not root")
    install.add_argument("--config", type=Path, default=None,
                         help="the tower's configuration (default: ~USER/dicetower/tower.toml)")
    install.add_argument("--dry-run", action="store_true",
                         help="print the unit and the commands, write nothing")
    install.set_defaults(func=_install)


def _fail(message: str, code: int = 1) -> int:
    print(f"dicetower service install: {message}", file=sys.stderr)
    return code


def _install(args: argparse.Namespace) -> int:
    warnings: list[str] = []
    try:
        user, home = _user(args.user, warnings, args.dry_run)
        config, journal = _config(args.config, home)
        if not args.dry_run:
            _machine_ready()
        else:
            try:
                _machine_ready()
            except InstallError as exc:
                warnings.append(str(exc))
        warnings += _group_warnings(user)
    except InstallError as exc:
        return _fail(str(exc), exc.code)
    command = [sys.executable, "-m", "firmware_host.cli", "run", "--config", str(config),
               "--journal", str(JOURNAL)]
    # The state directory, not the configuration's folder: the one folder sure to take the
    # pipe lgpio makes in the working directory (a configuration may sit in /etc).
    unit = render_unit(exec_start=shlex.join(command), user=user, workdir=STATE_DIR,
                       watchdog=WATCHDOG_SECONDS)
    target = SYSTEMD_UNIT_DIR / UNIT_NAME
    if args.dry_run:
        print(f"# would write {target}:")
        print(unit, end="")
    else:
        try:
            target.write_text(unit, encoding="utf-8")
        except OSError as exc:
            return _fail(f"cannot write {target}: {exc.strerror}")
        print(f"wrote {target}:")
        print(unit, end="")
    if journal != JOURNAL:
        # One journal for the tower: `doctor`, `serve` and backups read the configuration's.
        warnings.append(f"the configuration's journal is {journal}, not the service's: set "
                        f"[journal] path = \"{JOURNAL}\" in {config} so that `dicetower "
                        "doctor`, `serve` and backups use the tower's")
    for warning in warnings:
        print(f"warning: {warning}")
    print(f"journal: {JOURNAL} (created by systemd for {user} at the first start)")
    print("next:")
    print("  sudo systemctl daemon-reload")
    print("  sudo systemctl enable --now dicetower")
    print("  journalctl -u dicetower -f          # its log")
    return 0


def _user(name: str | None, warnings: list[str], dry_run: bool) -> tuple[str, Path]:
    """The service's user and home folder."""
    name = name or os.environ.get("SUDO_USER")
    if not name:
        raise InstallError("--user NAME is needed (the user the tower runs as, not root)", 2)
    if not USER_NAME.fullmatch(name):  # it goes into the unit as is: no spaces, no newlines
        raise InstallError(f"--user {name!r}: not a user name (letters, digits, _ and -, "
                           "e.g. pi)", 2)
    if name == "root":
        raise InstallError("--user must not be root: the tower runs as an ordinary user in "
                           "the gpio and video groups", 2)
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        message = f"there is no user {name!r} on this machine (sudo adduser {name})"
        if not dry_run:
            raise InstallError(message) from None
        warnings.append(message)
        return name, Path("/home") / name
    if entry.pw_uid == 0:
        raise InstallError(f"--user {name} is root (uid 0): choose an ordinary user", 2)
    return name, Path(entry.pw_dir)


def _config(path: Path | None, home: Path) -> tuple[Path, Path]:
    """The configuration, absolute, checked as `dicetower run` would check it, and the
    journal it names."""
    # Pydantic and the camera sources: loaded when the command runs.
    from firmware_host.commands.camera_sources import offer_simulated_camera
    from firmware_host.controller.config import ConfigError, load_config

    offer_simulated_camera()
    config = (path or home / "dicetower" / "tower.toml").expanduser().absolute()
    if any(ord(char) < 32 or ord(char) == 127 for char in str(config)):
        # A newline would end the unit's ExecStart= line: systemd has no way to quote it.
        raise InstallError(f"--config {str(config)!r}: the path holds a control character "
                           "(a newline?); move the configuration to a plain path", 2)
    try:
        loaded = load_config(config)
    except ConfigError as exc:
        raise InstallError(f"{exc} (--config)", 2) from None
    return config, loaded.journal


def _machine_ready() -> None:
    if not SYSTEMD_RUNNING.is_dir():
        raise InstallError(f"this machine does not run systemd (no {SYSTEMD_RUNNING}); start "
                           "`dicetower run --config ...` some other way")
    if os.geteuid() != 0:
        raise InstallError("writing the unit needs root: run it again with sudo, e.g. "
                           f"sudo {shlex.quote(sys.executable)} -m firmware_host.cli service "
                           "install ...")


def _group_warnings(user: str) -> list[str]:
    """The groups the unit names that are missing (systemd refuses to start without them),
    and those the user is not in (needed for `hw-test` and `doctor` by hand)."""
    warnings = []
    for group in GROUPS:
        try:
            members = grp.getgrnam(group).gr_mem
        except KeyError:
            warnings.append(f"there is no {group!r} group on this machine: the service will "
                            "not start (Raspberry Pi OS has it)")
            continue
        if user not in members:
            warnings.append(f"{user} is not in the {group!r} group: the service gets it anyway, "
                            f"but for `dicetower hw-test` and `doctor` by hand: sudo usermod "
                            f"-aG {group} {user}")
    return warnings
