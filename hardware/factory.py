"""Choosing gpiozero's pin factory: mock pins for simulation and tests, lgpio on a Pi.

- `mock_factory()` gives a `MockFactory` whose pins all support PWM (`MockPWMPin`), which the
  servos, the ring light and dimmed LEDs need.
- `real_factory()` gives the factory for real pins: the one named by `$GPIOZERO_PIN_FACTORY`
  when set (gpiozero's own convention), else `LGPIOFactory`, which works on the Pi 4 and Pi 5.
  On a machine that is not a Raspberry Pi it raises `NotOnAPi` with a message to print, rather
  than letting gpiozero fall back through every factory with a wall of warnings.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpiozero import Device
from gpiozero.pins import Factory
from gpiozero.pins.mock import MockFactory, MockPWMPin

MODEL_FILE = Path("/proc/device-tree/model")


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


def real_factory(model_file: Path = MODEL_FILE) -> Factory:
    """The pin factory for real pins; NotOnAPi explains why there is none."""
    named = os.environ.get("GPIOZERO_PIN_FACTORY")
    if named:
        # The builder chose a factory (e.g. pigpio for hardware-timed servo pulses, or a remote
        # Pi): let gpiozero resolve it exactly as it documents.
        try:
            Device.pin_factory = None
            Device.ensure_pin_factory()
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
        from gpiozero.pins.lgpio import LGPIOFactory
    except ImportError:
        raise NotOnAPi(
            f"{model}: the lgpio library is missing. Install it with "
            "`sudo apt install python3-lgpio` or `pip install 'dicetower[pi]'`."
        ) from None
    try:
        return LGPIOFactory()
    except Exception as exc:  # lgpio.error when /dev/gpiochip* cannot be opened
        raise NotOnAPi(f"{model}: cannot open the GPIO chip with lgpio: {exc} (is the user "
                       "in the gpio group?)") from None
