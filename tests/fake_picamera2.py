"""A fake `picamera2` (and the `libcamera` enums it uses) that keeps the real one's contract.

It follows picamera2 0.3's own code: ``Picamera2(n)`` opens its notification pipe, looks the
camera up in ``global_camera_info()`` (an IndexError when libcamera lists none), joins the
camera manager, then wraps a failed acquire in RuntimeError("Camera __init__ sequence did not
complete."), in that order, and its ``close`` does nothing for a camera that never opened;
"RGB888" buffers hold B, G, R bytes; a YUV420 lores buffer is 1.5 x height rows of a padded
stride; ``set_controls`` refuses a control the camera does not advertise;
``capture_request(wait=seconds)`` raises TimeoutError when no frame comes, and a job that timed
out (an autofocus cycle) stays queued, taking the frames of the captures behind it, until
``cancel_all_and_flush``. `World` is what the fake library sees; `make_fake` builds the modules.
"""

from __future__ import annotations

import os
import time
import types
from typing import Any

import cv2
import numpy as np

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
