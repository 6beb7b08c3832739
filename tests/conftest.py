"""Shared test fixtures: where the third-party dice-photos dataset lives, if anywhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = REPO_ROOT.parent / "shared" / "datasets" / "dice-photos"


def dataset_dir() -> Path | None:
    """The dice-photos folder from $DICE_PHOTOS or ../shared/datasets/dice-photos, or None."""
    path = Path(os.environ.get("DICE_PHOTOS", DEFAULT_DATASET))
    return path if (path / "manifest.json").is_file() else None


@pytest.fixture(scope="session")
def dice_photos() -> Path:
    """The dataset folder; skips the test with a clear message when it is absent."""
    path = dataset_dir()
    if path is None:
        pytest.skip(
            "dice-photos dataset not found: set $DICE_PHOTOS or place it at "
            f"{DEFAULT_DATASET} (it is third-party data and never part of the repo)"
        )
    return path
