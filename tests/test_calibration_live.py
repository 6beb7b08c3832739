"""`dicetower calibrate` live, on the simulated camera: the simulated tray makes the throws.

Also the light step's view of the simulated camera (exposure, gain and a ring light change
the frames as they would on a real tower), a camera that stops mid-way and Ctrl-C (nothing
saved), and a profile that reads worse than none being refused.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from calibration.check import check
from calibration.controls import light_knobs
from calibration.report import Reporter
from calibration.session import Settings, calibrate_live
from calibration.sources import LiveThrows, SimulatedTable, still_image
from calibration.tray import TOO_DIM, lightness
from firmware_host.camera import CameraError
from firmware_host.cli import main
from firmware_host.simulation.camera import SimulatedCamera
from firmware_host.simulation.tray import REFERENCE_EXPOSURE, SimulatedTray
from vision import Profile

FAST = ("--throws", "2", "--checks", "1")


def _live(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["calibrate", "--camera", "simulated", "--expect", "3", "--yes", *FAST, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_live_on_the_simulated_camera(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "live.json"
    code, out, err = _live(capsys, "--profile", str(target), "--seed", "5")
    assert code == 0, err
    assert "(simulated tray: 3 dice thrown)" in out and "Profile written" in out
    profile = Profile.load(target)
    assert profile.zones and profile.background_image() is not None
    notes = json.loads((tmp_path / "live.calibration.json").read_text())
    assert set(notes["light"]) == {"ring", "ExposureTime", "AnalogueGain"}
    assert notes["check"]["with_profile"]["read"] >= notes["check"]["without"]["read"]


def test_light_step_brings_a_dim_tray_up() -> None:
    tray = SimulatedTray(seed=4, exposure=0.3)
    camera = SimulatedCamera(tray)
    camera.open()
    before = lightness(still_image(camera))
    outcome = calibrate_live(LiveThrows(camera, SimulatedTable(tray, 4)),
                             Settings(expect=3, throws=2, checks=1),
                             light_knobs(camera, tray.set_ring, tray.ring),
                             Reporter(out=io.StringIO(), bars=False))
    assert outcome.passed
    # More light than the dim lamp alone: the ring on, or a longer exposure.
    assert outcome.light["ring"] > 0 or outcome.light["ExposureTime"] > REFERENCE_EXPOSURE
    assert outcome.empty is not None and lightness(outcome.empty) > before + 10
    assert outcome.check.with_profile.read == 3


def test_a_dark_floor_under_the_light_that_reads_best_is_kept() -> None:
    # Glossy ivory dice on slate read best at half the exposure, where the floor is darker
    # than a dim bar's; the dice read there, so the light is kept and the darkness only said.
    tray = SimulatedTray(seed=3, colours="ivory/black", floor="slate", gloss=1.5)
    camera = SimulatedCamera(tray)
    camera.open()
    out = io.StringIO()
    outcome = calibrate_live(LiveThrows(camera, SimulatedTable(tray, 3)),
                             Settings(expect=3, throws=2, checks=1),
                             light_knobs(camera, tray.set_ring, tray.ring),
                             Reporter(out=out, bars=False))
    assert outcome.empty is not None and lightness(outcome.empty) < TOO_DIM
    assert "the empty tray is dark" in out.getvalue() and "but the dice read" in out.getvalue()
    assert outcome.passed and outcome.check.with_profile.read == 3


def test_simulated_camera_answers_exposure_gain_and_ring() -> None:
    tray = SimulatedTray(seed=2, white_balance=(0.7, 1.0, 1.3))  # a warm bulb
    camera = SimulatedCamera(tray)
    camera.open()
    base = still_image(camera).astype(np.float32)
    assert camera.set_controls(ExposureTime=REFERENCE_EXPOSURE // 2) == {
        "ExposureTime": REFERENCE_EXPOSURE // 2}
    darker = still_image(camera).astype(np.float32)
    assert darker.mean() == pytest.approx(base.mean() / 2, rel=0.1)
    camera.set_controls(ExposureTime=REFERENCE_EXPOSURE, AnalogueGain=2.0)
    brighter = still_image(camera).astype(np.float32)
    assert brighter.mean() > 1.6 * base.mean()
    camera.set_controls(AnalogueGain=1.0)
    warm = base.reshape(-1, 3).mean(axis=0)
    tray.set_ring(1.0)  # white light from the ring dilutes the bulb's colour
    ringed = still_image(camera).astype(np.float32).reshape(-1, 3).mean(axis=0)
    assert ringed[2] / ringed[0] < warm[2] / warm[0]
    assert camera.controls()["ExposureTime"] == REFERENCE_EXPOSURE
    with pytest.raises(ValueError):
        camera.set_controls(Brightness=3)
    with pytest.raises(ValueError):
        tray.set_ring(1.5)


class _Failing(SimulatedCamera):
    """A simulated camera that fails after ``after`` frames, with ``error``."""

    def __init__(self, after: int, error: BaseException) -> None:
        super().__init__(SimulatedTray(seed=1))
        self.after = after
        self.error = error
        self.frames = 0

    def _read(self) -> tuple[np.ndarray, float, Any]:
        self.frames += 1
        if self.frames > self.after:
            raise self.error
        return super()._read()


@pytest.mark.parametrize(("error", "code", "message"), [
    (CameraError("simulated camera: no frame within 1 s"), 1, "the camera stopped during step"),
    (KeyboardInterrupt(), 130, "interrupted; nothing saved"),
])
def test_a_run_stopped_midway_saves_nothing(
        error: BaseException, code: int, message: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import firmware_host.camera as camera_module

    monkeypatch.setattr(camera_module, "camera_from_spec", lambda spec: _Failing(40, error))
    result, _, err = _live(capsys, "--profile", str(tmp_path / "p.json"))
    assert result == code and message in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_a_profile_worse_than_none_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The check on its own: a die size far from the dice's reads worse than no profile.
    tray = SimulatedTray(seed=6)
    camera = SimulatedCamera(tray)
    camera.open()
    images = []
    for faces in ([1, 4, 6], [2, 3, 5]):
        tray.throw(faces)
        images.append(still_image(camera))
    result = check(images, [3, 3], Profile(die_side=200.0))
    assert not result.passed and result.advice
    assert check(images, [3, 3], Profile()).passed
    # The command: zones that leave out most of where the dice land read worse than no
    # profile at all, whatever the dice step chooses: nothing is written, and it says why.
    code, out, _ = _live(capsys, "--profile", str(tmp_path / "p.json"), "--keep", "none",
                         "--tray", "0,0;200,0;200,479;0,479")
    assert code == 1 and "Not saved" in out and "To fix: the tray's outline" in out
    assert not (tmp_path / "p.json").exists()
    assert (tmp_path / "p.preview").is_dir()  # the check's pictures, to see what went wrong
