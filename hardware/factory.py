"""Choosing gpiozero's pin factory: mock pins for simulation and tests, lgpio on a Pi.

- `mock_factory()` gives a `MockFactory` whose pins all support PWM (`MockPWMPin`), which the
  servos, the ring light and dimmed LEDs need.
- `real_factory()` gives the factory for real pins: the one named by `$GPIOZERO_PIN_FACTORY`
  when set (gpiozero's own convention), else `LGPIOFactory`, which works on the Pi 4 and Pi 5.
  On a machine that is not a Raspberry Pi it raises `NotOnAPi` with a message to print, rather
  than letting gpiozero fall back through every factory with a wall of warnings.

`import lgpio` makes a named pipe, ``.lgd-nfy0``, in ``$LG_WD`` or else the current folder, and
opens it by its relative name: run from a folder the user cannot write to (``/`` under a
service, a root-owned folder), the import fails with FileNotFoundError. `real_factory` imports it
from a folder that takes the pipe (`pipe_folder`) and comes back; `lgpio_pipe_folder` says
where that was, for `dicetower doctor`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from gpiozero import Device
from gpiozero.pins import Factory
from gpiozero.pins.mock import MockFactory, MockPWMPin

MODEL_FILE = Path("/proc/device-tree/model")
LG_WD = "LG_WD"  # lgpio's own variable: the folder of its pipes

_pipe_folder_used: Path | None = None  # where lgpio made its pipe, once imported here
T = TypeVar("T")


class NotOnAPi(RuntimeError):
    """Real pins were asked for where there are none (or their library is missing)."""


def mock_factory() -> MockFactory:
    """A fresh mock pin factory whose pins all do PWM."""
    return MockFactory(pin_class=MockPWMPin)


def board_model(model_file: Path = MODEL_FILE) -> str | None:
    """The board's model string (e.g. "Raspberry Pi 5 Model B Rev 1.0"), or None if unknown."""
    try:
        return model_file.read_bytes().rstrip(b"\0\n").decode("ascii", "replace")
    except OSError:
        return None


def _takes_a_pipe(folder: Path) -> bool:
    """Whether a named pipe can be made in ``folder``, as lgpio makes one (a write test:
    `os.access` says yes to root in /proc, where nothing can be made)."""
    probe = folder / f".dicetower-pipe-{os.getpid()}"
    try:
        os.mkfifo(probe, 0o600)
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.unlink()
    return True


def pipe_folder() -> Path:
    """The folder lgpio's pipe goes in: ``$LG_WD`` when set (lgpio honours it), else the
    current folder if it takes one, else the user's runtime folder, home or temporary folder."""
    named = os.environ.get(LG_WD)
    if named:
        return Path(named).absolute()
    candidates: list[Path] = []
    with contextlib.suppress(OSError):  # a current folder that was deleted has no name
        candidates.append(Path.cwd())
    if os.environ.get("XDG_RUNTIME_DIR"):
        candidates.append(Path(os.environ["XDG_RUNTIME_DIR"]))
    candidates += [Path.home(), Path(tempfile.gettempdir())]
    for folder in candidates:
        if folder.is_dir() and _takes_a_pipe(folder):
            return folder
    return candidates[0]  # nowhere: the import says why


@contextlib.contextmanager
def _working_in(folder: Path) -> Iterator[None]:
    """The block run from ``folder``, then back in the current folder (when it still exists).

    lgpio keeps the absolute path of the folder it found, and its pipe open, so coming back
    after the import changes nothing for it, and relative paths given to dicetower keep
    their meaning.
    """
    try:
        here: str | None = os.getcwd()
    except OSError:
        here = None
    moved = here is None or Path(here) != folder
    if moved:
        os.chdir(folder)
    try:
        yield
    finally:
        if moved and here is not None:
            with contextlib.suppress(OSError):
                os.chdir(here)


def lgpio_pipe_folder() -> Path | None:
    """Where lgpio made its pipe when `real_factory` imported it (None if it did not)."""
    return _pipe_folder_used


def _import_in_pipe_folder(load: Callable[[], T]) -> T:
    """``load()`` (which may import lgpio) run from `pipe_folder` the first time; NotOnAPi
    when lgpio cannot make its pipe even there."""
    global _pipe_folder_used
    if "lgpio" in sys.modules:  # imported already: its pipe is made and open
        return load()
    folder = pipe_folder()
    try:
        with _working_in(folder):
            loaded = load()
    except OSError as exc:
        if ".lgd-nfy" not in str(exc.filename):  # not lgpio's pipe: the caller's to say
            raise
        where = f"$LG_WD ({folder})" if os.environ.get(LG_WD) else str(folder)
        raise NotOnAPi(f"lgpio cannot make its notification pipe in {where}: "
                       f"{exc.strerror or exc}; run from a folder you can write to, or set "
                       "LG_WD to one") from None
    if "lgpio" in sys.modules:
        _pipe_folder_used = folder
    return loaded


def real_factory(model_file: Path | None = None) -> Factory:
    """The pin factory for real pins; NotOnAPi explains why there is none."""
    model_file = model_file or MODEL_FILE  # looked up now, so that tests can set it
    named = os.environ.get("GPIOZERO_PIN_FACTORY")
    if named:
        # The builder chose a factory (e.g. pigpio for hardware-timed servo pulses, or a remote
        # Pi): let gpiozero resolve it exactly as it documents.
        def ensure() -> None:
            Device.pin_factory = None
            Device.ensure_pin_factory()

        try:
            _import_in_pipe_folder(ensure)  # "lgpio" loads lgpio, and makes its pipe, here
        except NotOnAPi:
            raise
        except Exception as exc:  # gpiozero raises BadPinFactory, ImportError, OSError...
            raise NotOnAPi(f"cannot load the pin factory GPIOZERO_PIN_FACTORY={named!r}: "
                           f"{exc}") from None
        return Device.pin_factory
    model = board_model(model_file)
    if model is None or "Raspberry Pi" not in model:
        raise NotOnAPi(
            "this machine is not a Raspberry Pi (no Raspberry Pi model in "
            f"{model_file}), so there are no real pins to drive. Run with --simulate to use "
            "mock pins, or set GPIOZERO_PIN_FACTORY to use another pin factory."
        )
    try:
        lgpio_module: Any = _import_in_pipe_folder(
            lambda: importlib.import_module("gpiozero.pins.lgpio"))
    except ImportError:
        raise NotOnAPi(
            f"{model}: the lgpio library is missing. Install it with "
            "`sudo apt install python3-lgpio` or `pip install 'dicetower[pi]'`."
        ) from None
    try:
        return lgpio_module.LGPIOFactory()  # type: ignore[no-any-return]
    except Exception as exc:  # lgpio.error when /dev/gpiochip* cannot be opened
        raise NotOnAPi(f"{model}: cannot open the GPIO chip with lgpio: {exc} (is the user "
                       "in the gpio group?)") from None
