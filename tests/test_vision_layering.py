"""What `vision` may import: the tower side nothing of the lab, and no part of it the tower's
hardware, web server or controller.

Imports are read from the source with `ast` (every `import` and `from ... import`, wherever it
stands: at the top, inside a function, relative or absolute), so a module that would only
import the lab when one of its functions runs is caught as well.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

VISION = Path(__file__).resolve().parent.parent / "vision"
LAB = VISION / "lab"
# What runs at the bar reads images, not pins, pages or cameras.
FORBIDDEN = ("hardware", "flask", "firmware_host", "picamera2", "gpiozero")


def module_name(path: Path) -> str:
    """The dotted name of a module file under the repository (``vision/lab/render.py`` ->
    ``vision.lab.render``; a package's ``__init__.py`` is the package)."""
    parts = list(path.relative_to(VISION.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module name that ``source`` (the text of ``module``) imports, relative imports
    resolved; ``from a import b`` counts as both ``a`` and ``a.b`` (``b`` may be a module)."""
    package = module if is_package else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            names.add(origin)
            names.update(f"{origin}.{alias.name}" for alias in node.names)
    return names


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def vision_modules() -> dict[str, set[str]]:
    """Each module of `vision` (lab included) and what it imports."""
    found = {}
    for path in sorted(VISION.rglob("*.py")):
        name = module_name(path)
        found[name] = imported(path.read_text(encoding="utf-8"), name,
                               path.name == "__init__.py")
    return found


def test_the_import_reader_sees_every_way_of_importing_the_lab() -> None:
    for source in ("from vision.lab import render", "import vision.lab.render",
                   "from vision import lab", "from .lab.render import render_tray",
                   "from . import lab", "def f():\n    from vision.lab.scoring import score\n"):
        names = imported(source, "vision.pipeline")
        assert any(within(n, "vision.lab") for n in names), source
    assert imported("from . import face", "vision", is_package=True) >= {"vision.face"}
    assert not any(within(n, "vision.lab") for n in imported(
        "from vision.layout import fit_layout\nimport vision.label", "vision.pipeline"))


def test_the_tower_side_imports_nothing_of_the_lab() -> None:
    modules = vision_modules()
    tower = {name: names for name, names in modules.items() if not within(name, "vision.lab")}
    # Both sides are there: a layout change that empties one would make this test vacuous.
    assert {"vision", "vision.pipeline", "vision.face"} <= set(tower)
    assert {"vision.lab.render", "vision.lab.scoring"} <= set(modules) - set(tower)
    wrong = {name: sorted(n for n in names if within(n, "vision.lab"))
             for name, names in tower.items()}
    assert not {name: names for name, names in wrong.items() if names}


@pytest.mark.parametrize("package", FORBIDDEN)
def test_vision_imports_nothing_of_the_tower_around_it(package: str) -> None:
    wrong = {name: sorted(n for n in names if within(n, package))
             for name, names in vision_modules().items()}
    assert not {name: names for name, names in wrong.items() if names}


def test_no_two_vision_modules_import_each_other() -> None:
    modules = vision_modules()
    pairs = {tuple(sorted((a, b))) for a, names in modules.items() for b in names
             if b in modules and b != a and a in modules[b]}
    assert not pairs
