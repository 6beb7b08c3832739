"""The layers of pyproject.toml's import-linter contracts hold: each part imports only what
lies below it, the scoreboard never reaches into the tower, and no modules import each other
in a circle (relative imports and imports inside functions included)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_import_contracts_are_kept() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    assert lint_imports.is_file(), "import-linter is missing: pip install -e '.[test]'"
    result = subprocess.run([str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    # The contracts were found and read: a configuration that names none keeps "all" of them.
    counts = re.search(r"Contracts: (\d+) kept, (\d+) broken", result.stdout)
    assert counts is not None and int(counts[1]) >= 3 and counts[2] == "0", result.stdout
