"""The Raspberry Pi camera source against a fake `picamera2` that keeps the real one's contract
(`fake_picamera2`: the pipe and camera manager a failed open leaves, buffers, controls, time-outs
and queued jobs, as picamera2 0.3's own code has them), installed into ``sys.modules`` by a
fixture. Also: a webcam's locks through a fake `cv2.VideoCapture` whose driver refuses some.
"""

from __future__ import annotations

import gc
import itertools
import logging
import os
import sys
from typing import Any, ClassVar

import cv2
import numpy as np
import pytest
from fake_picamera2 import RED_BGR, World, make_fake

from firmware_host.camera import CameraError, camera_from_spec
from firmware_host.camera.motion import SMALL_WIDTH, small_grey
from firmware_host.controller import camera_link
from firmware_host.controller.camera_link import CameraLink


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> World:
    world = World()
    picamera2, libcamera = make_fake(world)
    monkeypatch.setitem(sys.modules, "picamera2", picamera2)
    monkeypatch.setitem(sys.modules, "libcamera", libcamera)
    return world


def _camera(**options: Any) -> Any:
    return camera_from_spec("picamera2", **{"size": (640, 480), "warm_up": 0.0, **options})


# ---------------------------------------------------------------------- frames


def test_frames_are_bgr_with_the_lores_luma_as_the_small_copy(world: World) -> None:
    with _camera() as camera:
        frame = camera.read()
        second = camera.read()
    assert frame.image.shape == (480, 640, 3)
    # The rectangle drawn red must come out red in OpenCV's order: no channel swap.
    assert tuple(int(v) for v in frame.image[200, 200]) == RED_BGR
    assert frame.small is not None and frame.small.ndim == 2
    assert frame.small.shape == (240, 320)  # the lores size, the stride's padding cut off
    # The Y plane (video-range luma) of the picture, not the U and V rows nor the padding.
    luma = cv2.cvtColor(cv2.resize(frame.image, (320, 240), interpolation=cv2.INTER_AREA),
                        cv2.COLOR_BGR2YUV_I420)[:240]
    off = np.abs(frame.small.astype(int) - luma.astype(int)) > 3
    assert off.mean() < 0.02  # only along the rectangle's edges, drawn at each size
    assert small_grey(frame).shape == (72, SMALL_WIDTH)
    assert second.at > frame.at and second.index == frame.index + 1
    assert world.opened[0].made == world.opened[0].released  # every request handed back


def test_stream_configuration_follows_the_options(world: World) -> None:
    with _camera(size=(1280, 720), fps=10, lock=False) as camera:
        camera.read()
        config = world.opened[0].config
    assert config["main"] == {"size": (1280, 720), "format": "RGB888"}
    assert config["lores"]["format"] == "YUV420" and config["lores"]["size"] == (320, 180)
    assert config["controls"]["FrameDurationLimits"] == (100000, 100000)


# ---------------------------------------------------------------------- locks


def test_given_settings_are_fixed_and_autofocus_is_off(world: World) -> None:
    controls = {"ExposureTime": 8000, "AnalogueGain": 1.5, "ColourGains": (1.9, 1.6),
                "LensPosition": 3.0}
    with _camera(controls=controls) as camera:
        camera.read()
        state = world.opened[0].controls
    assert state["AeEnable"] is False and state["AwbEnable"] is False
    assert state["AfMode"] == 0  # libcamera's AfModeEnum.Manual
    assert (state["ExposureTime"], state["AnalogueGain"]) == (8000, 1.5)
    assert state["ColourGains"] == (1.9, 1.6) and state["LensPosition"] == 3.0
    assert camera.locked["ExposureTime"] == 8000


def test_lock_measures_what_is_not_given_then_fixes_it(world: World,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO), _camera(warm_up=0.05) as camera:
        fake = world.opened[0]
        first = camera.read()
        world.target_exposure = 2000  # the bar's lights change: nothing must follow them
        for _ in range(5):
            camera.read()
        after = camera._camera.capture_request(wait=1).get_metadata()
    locked = camera.locked
    assert locked["AeEnable"] is False and locked["AwbEnable"] is False and locked["AfMode"] == 0
    assert locked["LensPosition"] == 3.25  # where the autofocus cycle left the lens
    assert locked["ColourGains"] == (1.8, 1.5) and locked["AnalogueGain"] == 2.0
    assert after["ExposureTime"] == locked["ExposureTime"]
    assert abs(locked["ExposureTime"] - 12000) < 1000  # converged during the warm-up
    assert first.image is not None and fake.controls["AeEnable"] is False
    assert "locked" in caplog.text and "ExposureTime=" in caplog.text


def test_an_autofocus_that_never_ends_still_starts_with_the_lens_locked(
        world: World, caplog: pytest.LogCaptureFixture) -> None:
    world.af_hangs = True
    with caplog.at_level(logging.WARNING), _camera() as camera:
        fake = world.opened[0]
        # The timed-out cycle was dropped from the queue: frames come, none time out.
        assert camera.read().image.shape == (480, 640, 3)
        assert camera.read().index == 1 and fake.jobs == []
    assert "autofocus did not finish" in caplog.text
    assert {"AfTrigger": 1} in fake.set_calls  # the lens's scan cancelled too
    assert camera.locked["AfMode"] == 0 and camera.locked["LensPosition"] == 1.0


def test_without_lock_the_camera_stays_automatic(world: World) -> None:
    with _camera(lock=False) as camera:
        camera.read()
    assert world.opened[0].controls["AeEnable"] is True
    assert camera.locked == {}


def test_a_camera_without_autofocus_skips_focus_with_a_line(
        world: World, caplog: pytest.LogCaptureFixture) -> None:
    world.autofocus = False  # Camera Module 2
    with caplog.at_level(logging.INFO), _camera(controls={"LensPosition": 2.0}) as camera:
        camera.read()
    assert "LensPosition" not in camera.locked and "AfMode" not in camera.locked
    assert "no LensPosition control" in caplog.text
    assert camera.locked["AeEnable"] is False


def test_set_controls_while_open_and_again_after_reopen(world: World) -> None:
    camera = _camera(lock=False)
    assert camera.set_controls(ExposureTime=5000) == {}  # not open: applied at open
    camera.open()
    assert world.opened[-1].controls["ExposureTime"] == 5000
    assert camera.set_controls(AnalogueGain=3.0) == {"AnalogueGain": 3.0, "AeEnable": False}
    camera.open()  # reopening (after an error) applies the same again
    assert world.opened[-1].controls["AnalogueGain"] == 3.0
    assert world.opened[-1].controls["ExposureTime"] == 5000
    camera.close()
    with pytest.raises(ValueError, match="Brightness"):
        camera.set_controls(Brightness=1)


# ---------------------------------------------------------------------- failures


def _one_line(exc: pytest.ExceptionInfo[CameraError]) -> str:
    message = str(exc.value)
    assert "\n" not in message and message
    return message


def test_a_busy_camera_is_one_camera_error_naming_the_cause(world: World) -> None:
    world.busy = True
    camera = _camera()
    with pytest.raises(CameraError) as exc:
        camera.open()
    message = _one_line(exc)
    assert "Device or resource busy" in message and "another program" in message
    assert not camera.is_open


def test_no_camera_is_a_camera_error_saying_to_check_the_cable(world: World) -> None:
    world.cameras = []
    with pytest.raises(CameraError) as exc:
        _camera().open()
    assert "not found" in _one_line(exc) and "ribbon cable" in str(exc.value)


def test_a_stalled_capture_times_out_and_flushes(world: World) -> None:
    camera = _camera(timeout=0.5)
    camera.open()
    world.stalled = True
    with pytest.raises(CameraError) as exc:
        camera.read()
    assert "no frame within 0.5 s" in _one_line(exc)
    assert world.opened[0].flushed == 1


def test_a_stall_while_starting_releases_the_camera(world: World) -> None:
    world.stalled = True
    camera = _camera(warm_up=0.1)
    with pytest.raises(CameraError, match="no frame within"):
        camera.open()
    assert not world.opened[0].is_open and not camera.is_open


def _open_descriptors() -> int:
    gc.collect()  # what earlier tests let go without closing is closed now, not mid-count
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no /proc/self/fd here")
def test_a_thousand_failed_opens_leave_no_descriptor_behind(world: World) -> None:
    camera = _camera()
    plugged = world.cameras
    before = _open_descriptors()
    for attempt in range(1000):  # an hour and a half of retries every 5 s
        world.busy = attempt % 2 == 0  # found but held by another program...
        world.cameras = plugged if world.busy else []  # ...or not found at all
        with pytest.raises(CameraError):
            camera.open()
    assert _open_descriptors() == before
    assert world.manager.cameras == {} and not world.manager.running
    world.busy, world.cameras = False, plugged
    with camera:  # the camera back: it opens, and closing lets everything go
        assert camera.read().index == 0
    assert _open_descriptors() == before and world.manager.cameras == {}


def test_a_numpy_clash_in_picamera2_says_what_to_install(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Any) -> None:
    from firmware_host.controller.config import ConfigError, load_config

    # Raspberry Pi OS's picamera2 importing its simplejpeg (built for NumPy 1) under NumPy 2.
    (tmp_path / "picamera2.py").write_text(
        'raise ValueError("numpy.dtype size changed, may indicate binary incompatibility. '
        'Expected 96 from C header, got 88 from PyObject")\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "picamera2", raising=False)
    with pytest.raises(CameraError) as exc:
        camera_from_spec("picamera2")
    message = _one_line(exc)
    assert "numpy.dtype size changed" in message and "--no-deps simplejpeg" in message
    config = tmp_path / "tower.toml"
    config.write_text('[camera]\nsource = "picamera2"\n')
    with pytest.raises(ConfigError) as refused:
        load_config(config)
    assert "simplejpeg" in str(refused.value) and "is not a camera" not in str(refused.value)


def test_picamera2_missing_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import picamera2 -> ImportError
    with pytest.raises(CameraError, match="apt install python3-picamera2"):
        camera_from_spec("picamera2")


# ---------------------------------------------------------------------- the camera link


def test_the_link_reconnects_after_busy_stall_and_unplug(world: World,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(camera_link, "RECONNECT_DELAYS", (0.0,))  # retry at once
    events: list[str] = []
    link = CameraLink(_camera(timeout=0.2), on_down=events.append,
                      on_back=lambda: events.append("back"), sleep=lambda s: None)
    world.busy = True
    assert link.next_frame() is None
    assert "Device or resource busy" in (link.down or "")
    world.busy = False
    frame = link.next_frame()
    assert frame is not None and link.down is None and events[-1] == "back"
    world.stalled = True
    assert link.next_frame() is None and "no frame within" in (link.down or "")
    assert not world.opened[-1].is_open  # closed, to be opened anew
    world.stalled = False
    world.cameras, cameras = [], world.cameras  # unplugged meanwhile
    assert link.next_frame() is None and "not found" in (link.down or "")
    world.cameras = cameras
    assert link.next_frame() is not None and events[-1] == "back"
    assert link.errors == 3
    assert sum(fake.is_open for fake in world.opened) == 1  # one camera held, no leak


class FakeClock:
    """Time that passes only when the link sleeps: the retries are counted, not timed."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_camera_that_opens_but_gives_no_frame_is_retried_ever_more_slowly(
        world: World, caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()
    attempts: list[float] = []  # the clock at each failed try: a try fails as soon as made
    backs: list[float] = []
    link = CameraLink(_camera(timeout=0.2), on_down=lambda detail: attempts.append(clock.now),
                      on_back=lambda: backs.append(clock.now), sleep=clock.sleep, clock=clock)
    caplog.set_level(logging.INFO, logger=camera_link.__name__)
    world.stalled = True  # opens every time, never a frame
    while clock.now < 60.0:
        assert link.next_frame() is None
    gaps = [later - earlier for earlier, later in itertools.pairwise(attempts)]
    # docs/tower.md: 0.5, 1, 2, then every 5 seconds; the first try at 0, the last by 60 s.
    expected = [0.5, 1.0, 2.0] + [5.0] * 11
    assert gaps == pytest.approx(expected)
    assert link.errors == len(attempts) == 15
    assert backs == [] and link.down is not None  # never ready without a frame
    messages = [record.getMessage() for record in caplog.records]
    assert "camera: back" not in messages
    assert sum("no frame within" in m for m in messages) == 1  # one warning, not one a try
    assert len(world.opened) == 15 and not any(fake.is_open for fake in world.opened)

    world.stalled = False  # frames again: back at the next try, and the back-off starts over
    while link.next_frame() is None:
        pass
    assert backs == [pytest.approx(attempts[-1] + 5.0)] and link.down is None
    assert caplog.records[-1].getMessage() == "camera: back"
    world.stalled = True
    while len(attempts) < 17:
        link.next_frame()
    assert attempts[-1] - attempts[-2] == pytest.approx(0.5)


# ---------------------------------------------------------------------- configuration


def test_config_camera_settings_reach_the_pi_camera(world: World, tmp_path: Any) -> None:
    from firmware_host.controller.assembly import camera_source
    from firmware_host.controller.config import ConfigError, load_config

    path = tmp_path / "tower.toml"
    path.write_text('[camera]\nsource = "picamera2"\nfps = 10\nsize = [1280, 720]\n'
                    'exposure_us = 10000\ngain = 2\ncolour_gains = [1.9, 1.6]\n'
                    'lens_position = 3.3\nlock = false\n')
    config = load_config(path)
    camera = camera_source(config)
    assert (camera.size, camera.fps, camera.lock) == ((1280, 720), 10.0, False)
    assert camera._wanted == {"ExposureTime": 10000, "AnalogueGain": 2.0,
                              "ColourGains": (1.9, 1.6), "LensPosition": 3.3}
    for bad, words in [("size = [1280]", "size must be [width, height]"),
                       ("colour_gains = [1, 0]", "colour_gains must be [red, blue]"),
                       ("exposure_us = 0", "exposure_us must be from 10"),
                       ('lock = "yes"', "lock must be true or false")]:
        path.write_text(f'[camera]\nsource = "picamera2"\n{bad}\n')
        with pytest.raises(ConfigError, match=words.replace("[", r"\[")):
            load_config(path)


# ---------------------------------------------------------------------- a webcam's locks


class FakeCapture:
    """cv2.VideoCapture of a UVC webcam whose driver refuses auto white balance."""

    refuse: ClassVar[set[int]] = {cv2.CAP_PROP_AUTO_WB}

    def __init__(self, *args: Any) -> None:
        self.props: dict[int, float] = {cv2.CAP_PROP_EXPOSURE: 156.0,
                                         cv2.CAP_PROP_AUTO_EXPOSURE: 3.0}
        self.grabs = 0

    def isOpened(self) -> bool:
        return True

    def set(self, prop: int, value: float) -> bool:
        if prop in self.refuse:
            return False
        self.props[prop] = value
        return True

    def get(self, prop: int) -> float:
        return self.props.get(prop, 0.0)

    def grab(self) -> bool:
        self.grabs += 1
        return True

    def read(self) -> tuple[bool, np.ndarray]:
        return True, np.zeros((48, 64, 3), np.uint8)

    def release(self) -> None:
        pass


def test_a_webcam_is_locked_where_its_driver_allows(monkeypatch: pytest.MonkeyPatch,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    from firmware_host.camera import capture

    monkeypatch.setattr(capture.cv2, "VideoCapture", FakeCapture)
    camera = camera_from_spec("usb:0", size=(1280, 720), fps=15, lock=True, warm_up=0.0,
                              controls={"ExposureTime": 10000, "AnalogueGain": 2.0})
    with caplog.at_level(logging.INFO):
        camera.open()
    props = camera._capture.props
    assert props[cv2.CAP_PROP_FRAME_WIDTH] == 1280 and props[cv2.CAP_PROP_FPS] == 15
    assert props[cv2.CAP_PROP_AUTO_EXPOSURE] == 1  # V4L2's manual exposure
    assert props[cv2.CAP_PROP_EXPOSURE] == 100  # 10 ms in 100 µs steps
    assert props[cv2.CAP_PROP_AUTOFOCUS] == 0
    assert "AwbEnable" not in camera.locked and camera.locked["AeEnable"] == 1
    assert "does not let AwbEnable be set" in caplog.text
    assert "AnalogueGain not sent" in caplog.text
    camera.close()


def test_a_webcam_without_values_keeps_the_exposure_it_reached(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from firmware_host.camera import capture

    monkeypatch.setattr(capture.cv2, "VideoCapture", FakeCapture)
    camera = camera_from_spec("usb:1", lock=True, warm_up=0.0)
    camera.open()
    assert camera._capture.props[cv2.CAP_PROP_EXPOSURE] == 156.0
    assert camera._capture.props[cv2.CAP_PROP_AUTO_EXPOSURE] == 1
    camera.close()
