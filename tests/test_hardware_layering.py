"""Only the hardware layer talks to gpiozero: the rest of dicetower goes through `Tower`."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("firmware_host", "vision", "calibration", "tools")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_nothing_outside_hardware_imports_gpiozero() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for package in PACKAGES if (ROOT / package).is_dir()
        for path in sorted((ROOT / package).rglob("*.py"))
        if any(name.split(".")[0] == "gpiozero" for name in imported_modules(path))
    ]
    assert offenders == []


def test_reading_a_pinmap_does_not_load_gpiozero() -> None:
    # The wiring table reads the header layout from gpiozero's board data, but only once a
    # table is drawn: importing the module stays light.
    code = ("import sys, hardware\n"
            "from hardware.pinmap import EXAMPLE_PINMAP, load_pinmap\n"
            "from hardware.wiring import wiring_table\n"
            "pinmap = load_pinmap(EXAMPLE_PINMAP)\n"
            "assert 'gpiozero' not in sys.modules, 'gpiozero was imported'\n"
            "wiring_table(pinmap)\n"
            "assert 'gpiozero' in sys.modules\n"
            "hardware.Tower\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=30, check=False)
    assert result.returncode == 0, result.stderr


def test_open_tower_gives_a_simulated_tower_or_says_there_are_no_pins() -> None:
    from hardware import EXAMPLE_PINMAP, NotOnAPi, SimulatedTower, open_tower

    with open_tower(EXAMPLE_PINMAP, simulate=True) as tower:
        assert isinstance(tower, SimulatedTower)
    if not Path("/proc/device-tree/model").is_file():
        try:
            open_tower(EXAMPLE_PINMAP).close()
        except NotOnAPi:
            pass
        else:
            raise AssertionError("real pins opened on a machine that is no Raspberry Pi")
