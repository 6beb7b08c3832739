"""The Raspberry Pi camera source against a fake `picamera2` that keeps the real one's contract.

The fake (installed into ``sys.modules`` by a fixture, with the `libcamera` enums picamera2
uses) follows picamera2 0.3's own code: ``Picamera2(n)`` looks the camera up in
``global_camera_info()`` (an IndexError when libcamera lists none) and wraps a failed acquire in
RuntimeError("Camera __init__ sequence did not complete."), having first opened its notification
pipe and joined the camera manager, in that order, as the real one does; "RGB888" buffers hold
B, G, R bytes; a YUV420 lores buffer is 1.5 x height rows of a padded stride; ``set_controls``
refuses a control the camera does not advertise; ``capture_request(wait=seconds)`` raises
TimeoutError when no frame comes, and a job that timed out (an autofocus cycle) stays queued,
taking the frames of the captures behind it, until ``cancel_all_and_flush``. Also: a webcam's
locks through a fake `cv2.VideoCapture` whose driver refuses some.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import time
import types
from typing import Any, ClassVar

import cv2
import numpy as np
import pytest

from firmware_host.camera import CameraError, camera_from_spec
from firmware_host.controller import camera_link
from firmware_host.controller.camera_link import CameraLink
from firmware_host.controller.settle import SMALL_WIDTH, small_grey

RED_BGR = (0, 0, 255)


class World:
    """What the fake library sees: cameras plugged in, one held by another program, a stall."""

    def __init__(self) -> None:
        self.cameras = [{"Model": "imx708", "Location": 2, "Rotation": 180,
                         "Id": "/base/axi/pcie@120000/rp1/i2c@88000/imx708@1a", "Num": 0}]
        self.busy = False
        self.stalled = False
        self.autofocus = True  # Camera Module 3: AfMode and LensPosition exist
        self.af_hangs = False  # the autofocus scan never ends (its job times out)
        self.opened: list[Any] = []  # every fake Picamera2 made
        self.manager: Any = None  # picamera2's CameraManager, one per process
        self.target_exposure = 12000  # what auto exposure converges to


def make_fake(world: World) -> tuple[types.ModuleType, types.ModuleType]:
    libcamera = types.ModuleType("libcamera")
    libcamera.controls = types.SimpleNamespace(  # type: ignore[attr-defined]
        AfModeEnum=types.SimpleNamespace(Manual=0, Auto=1, Continuous=2),
        AfTriggerEnum=types.SimpleNamespace(Start=0, Cancel=1))

    class CameraManager:
        """picamera2's: the open cameras by index, and a listening thread while there are any."""

        def __init__(self) -> None:
            self.cameras: dict[int, Any] = {}
            self.running = False

        def add(self, index: int, camera: Any) -> None:
            self.cameras[index] = camera
            self.running = True

        def cleanup(self, index: int) -> None:
            del self.cameras[index]
            if not self.cameras:
                self.running = False

    world.manager = CameraManager()

    class FakeRequest:
        def __init__(self, camera: FakePicamera2, metadata: dict[str, Any]) -> None:
            self.camera = camera
            self.metadata = metadata
            self.released = False

        def make_array(self, name: str) -> np.ndarray:
            assert not self.released, "a released request has no buffers"
            stream = self.camera.config[name]
            w, h = stream["size"]
            scene = self.camera.scene(w, h)  # BGR, as OpenCV draws it
            if stream["format"] == "RGB888":
                return scene.copy()  # picamera2's RGB888: each pixel's bytes are B, G, R
            assert stream["format"] == "YUV420"
            i420 = cv2.cvtColor(scene, cv2.COLOR_BGR2YUV_I420)  # Y rows, then U, then V
            stride = -(-w // 64) * 64
            # The hardware pads each row to its stride; what lies there is not picture.
            return np.pad(i420, ((0, 0), (0, stride - w)), constant_values=255)

        def get_metadata(self) -> dict[str, Any]:
            return dict(self.metadata)

        def release(self) -> None:
            self.released = True
            self.camera.released += 1

    class FakePicamera2:
        _cm = world.manager

        def __init__(self, camera_num: int = 0) -> None:
            # picamera2's order: the pipe, then the lookup, the manager, the acquire.
            self.notifyme_r, self.notifyme_w = os.pipe2(os.O_NONBLOCK)
            self.notifymeread = os.fdopen(self.notifyme_r, "rb")
            self._preview = None
            self.is_open = False
            camera_num = self.global_camera_info()[camera_num]["Num"]  # IndexError: none
            self._cm.add(camera_num, self)
            self.camera_idx = camera_num
            try:
                if world.busy:
                    raise RuntimeError("Failed to acquire camera: Device or resource busy")
            except Exception as e:
                raise RuntimeError("Camera __init__ sequence did not complete.") from e
            self.is_open = True
            self.jobs: list[str] = []  # picamera2's _job_list: what waits for frames
            self.camera_num = camera_num
            self.config: dict[str, Any] = {}
            self.started = False
            self.controls: dict[str, Any] = {"AeEnable": True, "AwbEnable": True}
            self.exposure = 30000
            self.lens = 1.0
            self.made = 0
            self.released = 0
            self.flushed = 0
            self.set_calls: list[dict[str, Any]] = []
            self.camera_controls = {
                "ExposureTime": (29, 66666, 20000), "AnalogueGain": (1.0, 16.0, 1.0),
                "AeEnable": (False, True, True), "AwbEnable": (False, True, True),
                "ColourGains": (0.0, 32.0, None), "FrameDurationLimits": (33333, 120000, 33333),
            }
            if world.autofocus:
                self.camera_controls |= {"AfMode": (0, 2, 0), "AfTrigger": (0, 1, 0),
                                         "LensPosition": (0.0, 15.0, 1.0)}
            world.opened.append(self)

        @staticmethod
        def global_camera_info() -> list[dict[str, Any]]:
            return list(world.cameras)

        def scene(self, w: int, h: int) -> np.ndarray:
            image = np.full((h, w, 3), 40, np.uint8)
            cv2.rectangle(image, (w // 4, h // 4), (w // 2, h // 2), RED_BGR, -1)
            return image

        def create_video_configuration(self, main: dict[str, Any],
                                       lores: dict[str, Any] | None = None,
                                       controls: dict[str, Any] | None = None
                                       ) -> dict[str, Any]:
            if not self.is_open:
                raise RuntimeError("Camera not opened")
            for stream in (main, lores):
                if stream is None:
                    continue
                w, h = stream["size"]
                if w % 2 or h % 2:
                    raise RuntimeError("width and height should be even")
            if lores is not None:
                if lores["size"][0] > main["size"][0] or lores["size"][1] > main["size"][1]:
                    raise RuntimeError("lores stream dimensions may not exceed main stream")
                if lores["format"] not in ("YUV420", "YVU420"):
                    raise RuntimeError("lores stream must be YUV")  # as on a Pi 4
            return {"main": dict(main), "lores": dict(lores) if lores else None,
                    "controls": dict(controls or {})}

        def configure(self, config: dict[str, Any]) -> None:
            if self.started:
                raise RuntimeError("Camera must be stopped before configuring")
            self.set_controls(config["controls"])
            self.config = config

        def camera_configuration(self) -> dict[str, Any]:
            return self.config

        def start(self) -> None:
            if not self.config:
                raise RuntimeError("Camera has not been configured")
            self.started = True

        def set_controls(self, controls: dict[str, Any]) -> None:
            for name in controls:
                if name not in self.camera_controls:
                    raise RuntimeError(f"Control {name} is not advertised by libcamera")
            self.set_calls.append(dict(controls))
            self.controls.update(controls)

        def autofocus_cycle(self, wait: Any = None) -> bool:
            if "AfMode" not in self.camera_controls:
                raise RuntimeError("Control AfMode is not advertised by libcamera")
            self.controls["AfMode"] = libcamera.controls.AfModeEnum.Auto
            if world.af_hangs:
                self.jobs.append("autofocus")  # Job.get_result timed out; the job stays
                raise TimeoutError()
            self.lens = 3.25  # found the tray floor
            return True

        def capture_request(self, wait: Any = None, flush: Any = None) -> FakeRequest:
            if not self.started:
                raise RuntimeError("Camera has not been started")
            if world.stalled or self.jobs:  # no frame, or each taken by the job ahead
                if wait is None or wait is True:
                    raise AssertionError("a stalled capture without a timeout hangs for ever")
                self.jobs.append("capture")
                raise TimeoutError()  # concurrent.futures' time-out, as Job.get_result gives
            if self.controls.get("AeEnable", True):
                self.exposure += (world.target_exposure - self.exposure) // 2  # converging
            exposure = (self.exposure if self.controls.get("AeEnable", True)
                        else self.controls.get("ExposureTime", self.exposure))
            lens = (self.controls["LensPosition"] if self.controls.get("AfMode") == 0
                    and "LensPosition" in self.controls else self.lens)
            metadata = {"ExposureTime": exposure, "AnalogueGain": 2.0,
                        "ColourGains": (1.8, 1.5), "SensorTimestamp": time.monotonic_ns(),
                        "FrameDuration": 66666}
            if "AfMode" in self.camera_controls:
                metadata["LensPosition"] = lens
            self.made += 1
            return FakeRequest(self, metadata)

        def cancel_all_and_flush(self) -> None:
            self.jobs.clear()
            self.flushed += 1

        def stop(self) -> None:
            self.started = False

        def close(self) -> None:
            if not self.is_open:  # as picamera2's: nothing for a camera that never opened
                return
            self.stop()
            self._cm.cleanup(self.camera_idx)
            self.is_open = False
            self.notifymeread.close()
            os.close(self.notifyme_w)

    module = types.ModuleType("picamera2")
    module.Picamera2 = FakePicamera2  # type: ignore[attr-defined]
    return module, libcamera


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
