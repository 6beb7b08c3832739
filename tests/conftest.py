"""Shared test fixtures: a private data folder for every test, and where the third-party
dice-photos dataset lives, if anywhere."""

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


@pytest.fixture(autouse=True)
def private_data_home(tmp_path_factory: pytest.TempPathFactory,
                      monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test (and every process it starts) keeps its journals and profiles in a folder
    of its own, never in the user's data directory."""
    home = tmp_path_factory.mktemp("data-home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    return home


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


def assert_states_and_min_times(
    pin: object, expected: list[tuple[float | None, float]]
) -> None:
    """Like gpiozero's ``MockPin.assert_states_and_times``, tolerant of a busy machine.

    The states must match exactly. Each interval may run late (a loaded scheduler only ever
    delays a timer), up to half as long again plus 0.1 s, but never early: a pattern with the
    wrong timing still fails, while CI jitter does not. An interval of ``None`` is not
    timed: the test itself ended it (late timers upstream shorten it).
    """
    actual = list(pin.states)  # type: ignore[attr-defined]
    assert len(actual) >= len(expected), f"{len(actual)} states, expected {len(expected)}"
    for k, (change, (interval, state)) in enumerate(zip(actual, expected, strict=False)):
        assert abs(change.state - state) < 1e-6, f"state {k}: {change.state} != {state}"
        if k == 0 or interval is None:
            continue
        assert interval - 0.01 <= change.timestamp <= interval * 1.5 + 0.1, (
            f"state {k}: after {change.timestamp:.3f} s, expected {interval} s"
        )
