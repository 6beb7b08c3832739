"""The simulated tray's varied scene: other dice, floor, light and camera at every throw,
deterministic by seed; the classic scene as it was; `demo` and `bench tower` play on both."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from firmware_host.cli import main
from firmware_host.simulation.camera import SimulatedCamera
from firmware_host.simulation.demo import Demo, DemoSummary
from firmware_host.simulation.scene import PlacedDie, TrayTruth
from firmware_host.simulation.tray import SimulatedTray

#: sha256 of the 8th frame of a classic tray (seed 7) after throwing 4, 2, 1 with one die
#: cocked, taken before the varied scene existed: the classic scene must not move.
CLASSIC_FRAME_SHA256 = "248088c2d8f2c63ec25e9b9dcbae7bb72bfe41823d95e6c55e1f4b06d517cbe9"


def _frames(tray: SimulatedTray, faces: list[int], n: int = 8, **throw: object) -> np.ndarray:
    camera = SimulatedCamera(tray)
    camera.open()
    tray.throw(faces, **throw)  # type: ignore[arg-type]
    frame = None
    for _ in range(n):
        frame = camera.read()
    assert frame is not None
    return frame.image


def test_the_classic_scene_draws_as_before() -> None:
    image = _frames(SimulatedTray(seed=7), [4, 2, 1], cocked=True)
    assert hashlib.sha256(image.tobytes()).hexdigest() == CLASSIC_FRAME_SHA256


def test_the_varied_scene_changes_the_tray_and_stays_deterministic() -> None:
    classic = _frames(SimulatedTray(seed=5), [6, 3, 1])
    varied = _frames(SimulatedTray(seed=5, scene="varied"), [6, 3, 1])
    again = _frames(SimulatedTray(seed=5, scene="varied"), [6, 3, 1])
    assert np.array_equal(varied, again)
    assert np.abs(varied.astype(int) - classic.astype(int)).mean() > 10
    other = _frames(SimulatedTray(seed=6, scene="varied"), [6, 3, 1])
    assert not np.array_equal(varied, other)


def test_every_throw_of_the_varied_scene_has_its_own_look() -> None:
    tray = SimulatedTray(seed=3, scene="varied")
    looks = []
    for k in range(6):
        tray.throw([1 + k % 6, 2, 3])
        looks.append((tray.layout.side, tray._base.floor_bgr, tray._base.light_elevation_deg))
    assert len(set(looks)) == 6
    assert all(28 <= side <= 48 for side, _, _ in looks)
    # What the tray holds is what was thrown, whatever the look.
    truth = tray.throw([5, 4, 2])
    assert truth.faces("roll") == [2, 4, 5]


def test_the_varied_scene_is_read_uncalibrated() -> None:
    profile = SimulatedTray(seed=1, scene="varied").profile()
    assert profile.dice_colors == [] and profile.pip_polarity is None
    assert profile.zones and profile.keep_zone
    classic = SimulatedTray(seed=1).profile()
    assert classic.dice_colors and classic.pip_polarity == "dark"
    with pytest.raises(ValueError):
        SimulatedTray(scene="gaudy")


def test_bench_tower_plays_on_the_varied_scene(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "tower", "--throws", "10", "--json", "--fps", "30",
                 "--scene", "varied"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["scene"] == "varied" and result["throws"] >= 10
    assert result["read_ok"] + result["misread"] + sum(result["refused"].values()) \
        == result["throws"]
    for key in ("cocked_accepted", "hand_accepted", "outside_accepted", "first_try", "p50_ms",
                "p95_ms"):
        assert key in result


@pytest.mark.parametrize("command", [["bench", "tower", "--scene", "gaudy"],
                                     ["demo", "--scene", "gaudy"]])
def test_an_unknown_scene_is_refused(command: list[str],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(command)
    assert stop.value.code == 2
    assert "scene" in capsys.readouterr().err


_ROLLED = (PlacedDie(4, (100.0, 100.0), 0.0, "roll"), PlacedDie(2, (160.0, 100.0), 0.0, "roll"))
_ONE = PlacedDie(1, (210.0, 100.0), 0.0, "roll")


@pytest.mark.parametrize(("truth", "counter"), [
    (TrayTruth((*_ROLLED, replace(_ONE, leaning=True))), "cocked_accepted"),
    (TrayTruth((*_ROLLED, _ONE), hand=True), "hand_accepted"),
    (TrayTruth((*_ROLLED, _ONE), moving=True), "hand_accepted"),
    (TrayTruth((*_ROLLED, _ONE, PlacedDie(5, (900.0, 100.0), 0.0, "outside"))),
     "outside_accepted"),
    (TrayTruth((*_ROLLED, _ONE)), None),
])
def test_a_throw_accepted_from_a_tray_not_clean_is_counted_by_what_was_wrong(
        truth: TrayTruth, counter: str | None) -> None:
    said: list[str] = []
    wrong: list[tuple[str, str]] = []  # what a benchmark keeps the frames of
    demo = SimpleNamespace(table=SimpleNamespace(last=SimpleNamespace(kind="throw")),
                           summary=DemoSummary(), say=said.append,
                           on_wrong=lambda frame, kind, what: wrong.append((kind, what)))
    Demo._check_accepted(demo, SimpleNamespace(truth=truth),  # type: ignore[arg-type]
                         {"type": "throw", "faces": [1, 2, 4]})
    counts = {key: value for key, value in demo.summary.to_json().items()
              if key.endswith("_accepted") and value}
    assert counts == ({counter: 1} if counter else {})
    assert demo.summary.misread == 0 and len(said) == (1 if counter else 0)
    assert wrong == ([("cocked", "accepted [1, 2, 4] with a cocked die")]
                     if counter == "cocked_accepted" else [])
