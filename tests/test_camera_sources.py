"""Camera sources: specs, frame checks, open/read/close, image folders, video files, simulation."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from firmware_host.camera import (
    CONTROLS,
    SPEC_HELP,
    CameraError,
    CameraSource,
    Frame,
    camera_from_spec,
    check_spec,
)
from firmware_host.camera.base import check_frame
from firmware_host.camera.capture import VideoCaptureCamera
from firmware_host.camera.folder import FolderCamera
from firmware_host.commands.camera_sources import offer_simulated_camera
from firmware_host.simulation.camera import SimulatedCamera
from firmware_host.simulation.scene import PlacedDie, TrayLayout
from firmware_host.simulation.tray import MOVE_FRAMES, TUMBLE_FRAMES, SimulatedTray

# A tray half the default size: each picture is drawn four times faster.
SMALL = TrayLayout(width=320, height=240, side=24.0,
                   roll_zone=((8.0, 8.0), (226.0, 8.0), (226.0, 232.0), (8.0, 232.0)),
                   keep_zone=((238.0, 8.0), (312.0, 8.0), (312.0, 232.0), (238.0, 232.0)))


# ---------------------------------------------------------------------- camera_from_spec


def test_spec_simulated_takes_tray_and_camera_options() -> None:
    offer_simulated_camera()  # as the commands that build a camera from a spec do
    camera = camera_from_spec(" simulated ", seed=3, colours="red/white", fps=5.0)
    assert isinstance(camera, SimulatedCamera)
    assert camera.tray.colours == "red/white"
    assert camera.fps == 5.0
    assert not camera.is_open


def test_spec_simulated_is_refused_until_the_command_line_offers_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The camera package never imports the simulated tower: only an offer makes it a source.
    monkeypatch.setattr("firmware_host.camera._OFFERED", {})
    with pytest.raises(CameraError, match=r"'simulated'.*command line"):
        camera_from_spec("simulated")
    check_spec(" simulated ")  # a configuration naming it is still a good one
    with pytest.raises(ValueError, match="unknown camera"):
        check_spec("simulate")
    offer_simulated_camera()
    assert isinstance(camera_from_spec("simulated"), SimulatedCamera)


def test_spec_usb_is_a_device_index() -> None:
    camera = camera_from_spec("usb:2")
    assert isinstance(camera, VideoCaptureCamera)
    assert camera.source == 2 and not camera.is_file
    assert not camera.is_open


def test_spec_file_and_folder_keep_their_paths(tmp_path: Path) -> None:
    video = camera_from_spec(f"file:{tmp_path / 'session.avi'}")
    assert isinstance(video, VideoCaptureCamera)
    assert video.source == str(tmp_path / "session.avi") and video.is_file
    folder = camera_from_spec(f"folder:{tmp_path}", hold=3)
    assert isinstance(folder, FolderCamera)
    assert folder.folder == tmp_path and folder.hold == 3


@pytest.mark.parametrize("url", ["rtsp://192.0.2.7/stream", "http://192.0.2.7:8080/video",
                                 "https://cam.example/live"])
def test_spec_stream_urls(url: str) -> None:
    camera = camera_from_spec(url)
    assert isinstance(camera, VideoCaptureCamera)
    assert camera.source == url and not camera.is_file


@pytest.mark.parametrize("spec, words", [
    ("usb:", "device number"),
    ("usb:x", "device number"),
    ("usb:-1", "device number"),
    ("usb:\u00b2", "device number"),  # a superscript two: isdigit() but not int()
    ("folder:", "needs a path"),
    ("file:  ", "needs a path"),
    ("http://", SPEC_HELP),
    ("ftp://192.0.2.7/x", SPEC_HELP),
    ("", SPEC_HELP),
    ("webcam", SPEC_HELP),
    ("Simulated2", SPEC_HELP),
])
def test_bad_specs_say_what_is_accepted(spec: str, words: str) -> None:
    with pytest.raises(ValueError) as exc:
        camera_from_spec(spec)
    message = str(exc.value)
    assert repr(spec) in message
    assert words in message
    assert "\n" not in message


def test_picamera2_missing_is_a_camera_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def no_picamera(name: str, *args: Any) -> Any:
        if name == "firmware_host.camera.picamera":
            raise ModuleNotFoundError("No module named 'picamera2'")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", no_picamera)
    with pytest.raises(CameraError, match=r"picamera2.*not available.*picamera2"):
        camera_from_spec("picamera2")


# ---------------------------------------------------------------------- check_frame


@pytest.mark.parametrize("garbage", [
    None,
    b"\xff\xd8 a jpeg, maybe",
    np.zeros((48, 64, 3), np.float32),
    np.zeros((0, 64, 3), np.uint8),
    np.zeros((2, 2), np.uint8),
    np.zeros((8, 64, 3), np.uint8),
    np.zeros((48, 64, 2), np.uint8),
    np.zeros((48, 64, 3, 1), np.uint8),
])
def test_check_frame_refuses_garbage(garbage: object) -> None:
    with pytest.raises(CameraError) as exc:
        check_frame(garbage, "camera X")
    assert str(exc.value).startswith("camera X sent ")


def test_check_frame_grey_and_bgra_become_bgr() -> None:
    rng = np.random.default_rng(1)
    grey = rng.integers(0, 256, (24, 32), dtype=np.uint8)
    bgr = check_frame(grey, "cam")
    assert bgr.shape == (24, 32, 3)
    for c in range(3):
        assert np.array_equal(bgr[:, :, c], grey)
    bgra = rng.integers(0, 256, (24, 32, 4), dtype=np.uint8)
    out = check_frame(bgra, "cam")
    assert out.shape == (24, 32, 3) and out.flags["C_CONTIGUOUS"]
    assert np.array_equal(out, bgra[:, :, :3])
    colour = rng.integers(0, 256, (24, 32, 3), dtype=np.uint8)
    assert check_frame(colour, "cam") is colour


# ---------------------------------------------------------------------- the base class


class Stub(CameraSource):
    """Counts its calls; gives frames of a known value, or whatever it is told to."""

    name = "stub camera"

    def __init__(self) -> None:
        super().__init__()
        self.opened = self.closed = 0
        self.image: object = None

    def _open(self) -> None:
        self.opened += 1

    def _read(self) -> tuple[np.ndarray, float, Any]:
        if self.image is not None:
            return self.image, 0.0, None  # type: ignore[return-value]
        return np.full((16, 16, 3), self._count, np.uint8), self._count * 0.5, {"n": self._count}

    def _close(self) -> None:
        self.closed += 1


def test_source_open_read_close_and_numbering() -> None:
    camera = Stub()
    with pytest.raises(CameraError, match="stub camera is not open"):
        camera.read()
    with camera as same:
        assert same is camera and camera.is_open
        frames = [camera.read() for _ in range(3)]
    assert not camera.is_open and camera.closed == 1
    assert [f.index for f in frames] == [0, 1, 2]
    assert [f.at for f in frames] == [0.0, 0.5, 1.0]
    assert [int(f.image[0, 0, 0]) for f in frames] == [0, 1, 2]
    assert frames[2].truth == {"n": 2}
    camera.close()  # twice: nothing more to release
    assert camera.closed == 1
    with pytest.raises(CameraError):
        camera.read()


def test_reopening_closes_first_and_numbering_goes_on() -> None:
    camera = Stub()
    camera.open()
    first = camera.read()
    camera.open()  # reopen after an error, without a close in between
    assert (camera.opened, camera.closed) == (2, 1)
    assert camera.read().index == first.index + 1


def test_garbage_from_a_source_is_a_camera_error_and_not_counted() -> None:
    camera = Stub()
    camera.open()
    camera.image = np.zeros((2, 2), np.float32)
    with pytest.raises(CameraError, match="stub camera sent something that is not an image"):
        camera.read()
    camera.image = None
    assert camera.read().index == 0


def test_set_controls_refuses_unknown_names() -> None:
    camera = Stub()
    assert camera.set_controls(ExposureTime=10000) == {}
    with pytest.raises(ValueError, match="Brightness") as exc:
        camera.set_controls(Brightness=3, ExposureTime=1)
    assert all(name in str(exc.value) for name in CONTROLS)


# ---------------------------------------------------------------------- FolderCamera

COLOURS = {"b.png": (0, 0, 200), "a.png": (0, 200, 0), "c.bmp": (200, 0, 0)}


def picture(colour: tuple[int, int, int]) -> np.ndarray:
    image = np.zeros((40, 56, 3), np.uint8)
    image[:] = colour
    return image


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name, colour in COLOURS.items():
        assert cv2.imwrite(str(tmp_path / name), picture(colour))
    (tmp_path / "notes.txt").write_text("not an image")
    (tmp_path / "sub.png").mkdir()  # a folder with an image's name is not an image
    return tmp_path


def colour_of(frame: Frame) -> tuple[int, int, int]:
    b, g, r = frame.image[20, 28]
    return int(b), int(g), int(r)


def test_folder_replays_sorted_by_name_each_held(folder: Path) -> None:
    camera = FolderCamera(folder, fps=4.0, hold=2)
    camera.open()
    frames = [camera.read() for _ in range(6)]
    order = [COLOURS[n] for n in ("a.png", "b.png", "c.bmp")]
    assert [colour_of(f) for f in frames] == [c for c in order for _ in range(2)]
    assert [f.at for f in frames] == [k / 4.0 for k in range(6)]
    with pytest.raises(CameraError, match="every image has been shown"):
        camera.read()
    camera.open()  # a reconnect never rewinds: the replay is over
    with pytest.raises(CameraError, match="every image has been shown"):
        camera.read()
    with FolderCamera(folder, fps=4.0, hold=2) as again:  # a new replay starts over
        assert colour_of(again.read()) == COLOURS["a.png"]


def test_folder_loops_with_time_going_on(folder: Path) -> None:
    camera = FolderCamera(folder, fps=10.0, hold=1, loop=True)
    with camera:
        frames = [camera.read() for _ in range(7)]
    names = ["a.png", "b.png", "c.bmp"]
    assert [colour_of(f) for f in frames] == [COLOURS[names[k % 3]] for k in range(7)]
    times = [f.at for f in frames]
    assert times == sorted(times) and len(set(times)) == 7


def test_folder_unreadable_image_names_it(folder: Path) -> None:
    (folder / "b.png").write_bytes(b"\x89PNG but not really")
    camera = FolderCamera(folder, hold=1)
    camera.open()
    assert colour_of(camera.read()) == COLOURS["a.png"]
    with pytest.raises(CameraError) as exc:
        camera.read()
    assert "b.png" in str(exc.value) and "not an image" in str(exc.value)
    # One bad file costs one error: reopened (as the controller does), it goes on after it.
    camera.open()
    frame = camera.read()
    assert colour_of(frame) == COLOURS["c.bmp"] and frame.at == 2 / camera.fps


@pytest.mark.parametrize("shape", [(1, 1, 3), (1, 1), (8, 200, 3)])
def test_folder_image_too_small_costs_one_error(folder: Path, shape: tuple[int, ...]) -> None:
    assert cv2.imwrite(str(folder / "b.png"), np.full(shape, 90, np.uint8))
    camera = FolderCamera(folder, hold=10)
    camera.open()
    assert [colour_of(camera.read()) for _ in range(10)] == [COLOURS["a.png"]] * 10
    with pytest.raises(CameraError, match=r"b\.png sent a frame of shape"):
        camera.read()
    camera.open()  # as the controller reconnects: the next image, not the small one again
    frame = camera.read()
    assert colour_of(frame) == COLOURS["c.bmp"] and frame.at == 20 / camera.fps


def test_folder_empty_or_missing(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("no pictures here")
    with pytest.raises(CameraError, match=r"no images in it \(.png"):
        FolderCamera(tmp_path).open()
    missing = tmp_path / "nowhere"
    with pytest.raises(CameraError) as exc:
        FolderCamera(missing).open()
    assert str(exc.value) == f"image folder {missing}: no such folder"
    with pytest.raises(ValueError, match="fps must be positive"):
        FolderCamera(tmp_path, fps=0)
    with pytest.raises(ValueError, match="hold at least 1"):
        FolderCamera(tmp_path, hold=0)


# ---------------------------------------------------------------------- VideoCaptureCamera

LEVELS = [0, 50, 100, 150, 200, 250]


@pytest.fixture
def video(tmp_path: Path) -> Path:
    path = tmp_path / "tray.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (64, 48))
    assert writer.isOpened(), "OpenCV cannot write MJPG/avi here"
    for level in LEVELS:
        writer.write(np.full((48, 64, 3), level, np.uint8))
    writer.release()
    return path


def level_of(frame: Frame) -> int:
    return round(float(frame.image.mean()))


def test_video_file_plays_then_ends(video: Path) -> None:
    camera = camera_from_spec(f"file:{video}", realtime=False)
    camera.open()
    frames = [camera.read() for _ in LEVELS]
    # MJPG is lossy: each flat level comes back within a few grey levels.
    assert all(abs(level_of(f) - lv) <= 3 for f, lv in zip(frames, LEVELS, strict=True))
    assert [f.image.shape for f in frames] == [(48, 64, 3)] * len(LEVELS)
    assert [f.at for f in frames] == pytest.approx([k / 10 for k in range(len(LEVELS))])
    with pytest.raises(CameraError, match="the video has ended"):
        camera.read()
    camera.close()


def test_video_file_loops_and_frame_time_never_goes_back(video: Path) -> None:
    camera = VideoCaptureCamera(str(video), realtime=False, loop=True)
    with camera:
        frames = [camera.read() for _ in range(3 * len(LEVELS) + 2)]
    assert [abs(level_of(f) - LEVELS[k % len(LEVELS)]) <= 3 for k, f in enumerate(frames)] == \
        [True] * len(frames)
    steps = np.diff([f.at for f in frames])
    assert steps == pytest.approx([0.1] * len(steps))


def test_missing_file_and_device_are_camera_errors(tmp_path: Path) -> None:
    with pytest.raises(CameraError, match=r"cannot open \(no such file or not a video\)"):
        VideoCaptureCamera(str(tmp_path / "none.avi"), timeout=0.5).open()
    fake = tmp_path / "fake.avi"
    fake.write_text("this is not a video")
    with pytest.raises(CameraError, match="cannot open"):
        VideoCaptureCamera(str(fake), timeout=0.5).open()
    camera = VideoCaptureCamera(63, timeout=0.5)  # no /dev/video63 on a test machine
    with pytest.raises(CameraError, match=r"camera 63: cannot open \(no such device or stream\)"):
        camera.open()
    assert not camera.is_open


# ---------------------------------------------------------------------- the simulation


@pytest.fixture
def tray() -> SimulatedTray:
    return SimulatedTray(layout=SMALL, seed=5)


def test_simulated_frames_have_the_layout_size_and_frame_time(tray: SimulatedTray) -> None:
    camera = SimulatedCamera(tray, fps=20.0)
    with camera:
        frames = [camera.read() for _ in range(3)]
    assert {f.image.shape for f in frames} == {(SMALL.height, SMALL.width, 3)}
    assert [f.at for f in frames] == [0.0, 0.05, 0.1]
    assert [f.index for f in frames] == [0, 1, 2]
    assert all(f.truth.dice == () and not f.truth.moving for f in frames)


def test_the_default_tray_is_640_by_480() -> None:
    offer_simulated_camera()
    camera = camera_from_spec("simulated", seed=1)
    with camera:
        assert camera.read().image.shape == (480, 640, 3)


def test_a_throw_tumbles_then_rests_with_noise_only(tray: SimulatedTray) -> None:
    camera = SimulatedCamera(tray)
    camera.open()
    truth = tray.throw([4, 2, 1])
    frames = [camera.read() for _ in range(TUMBLE_FRAMES + 3)]
    assert [f.truth.moving for f in frames] == [True] * TUMBLE_FRAMES + [False] * 3
    assert all(f.truth.dice == truth.dice for f in frames)
    assert truth.faces("roll") == [1, 2, 4] and truth.clean
    still = [f.image.astype(np.int16) for f in frames[TUMBLE_FRAMES:]]
    # Every still frame gets fresh sensor noise, and nothing else changes.
    assert not np.array_equal(still[0], still[1])
    noise = np.abs(still[0] - still[1])
    assert noise.mean() < 6 and np.percentile(noise, 99.9) < 40
    # Dice in flight are elsewhere: far more differs than noise.
    flight = np.abs(frames[0].image.astype(np.int16) - still[0])
    assert np.count_nonzero(flight > 60) > 20 * np.count_nonzero(noise > 60) + 100


def test_without_noise_still_frames_are_identical() -> None:
    tray = SimulatedTray(layout=SMALL, seed=2, noise=0.0)
    camera = SimulatedCamera(tray)
    camera.open()
    tray.throw([6, 6])
    frames = [camera.read() for _ in range(TUMBLE_FRAMES + 2)]
    assert np.array_equal(frames[-1].image, frames[-2].image)
    assert not np.array_equal(frames[0].image, frames[-1].image)


def test_a_hand_and_a_move_are_reported_in_the_truth(tray: SimulatedTray) -> None:
    camera = SimulatedCamera(tray)
    camera.open()
    truth = tray.throw([3], hand=True)
    kinds = [(f.truth.moving, f.truth.hand) for f in (camera.read() for _ in range(
        TUMBLE_FRAMES + 60))]
    assert kinds[:TUMBLE_FRAMES] == [(True, False)] * TUMBLE_FRAMES
    rest = kinds[TUMBLE_FRAMES:]
    resting = rest.index((False, False))  # the hand has gone, for good
    assert rest[:resting] == [(False, True)] * resting
    assert rest[resting:] == [(False, False)] * (len(rest) - resting)
    assert resting > 0.4 * camera.fps  # it rests longer than the default settle hold
    assert [d.value for d in truth.dice] == [3] and tray.dice == truth.dice
    moved = [PlacedDie(5, (60.0, 60.0), 0.0, "roll")]
    tray.place(moved)
    kinds = [(f.truth.moving, f.truth.hand) for f in (camera.read() for _ in range(
        MOVE_FRAMES + 1))]
    assert kinds == [(True, True)] * MOVE_FRAMES + [(False, False)]
    assert tray.dice == tuple(moved)


def test_stalled_and_garbage_cameras_recover_on_reopen(tray: SimulatedTray) -> None:
    camera = SimulatedCamera(tray)
    camera.open()
    before = camera.read()
    camera.fail("stalled")
    for _ in range(2):
        with pytest.raises(CameraError, match="no frame within"):
            camera.read()
    camera.open()
    after = camera.read()
    assert after.index == before.index + 1 and after.at > before.at
    camera.fail("garbage")
    with pytest.raises(CameraError, match="not an image"):
        camera.read()
    camera.open()
    assert camera.read().image.shape == (SMALL.height, SMALL.width, 3)
    with pytest.raises(ValueError, match=r"stalled.*garbage"):
        camera.fail("on fire")


def test_an_unplugged_camera_cannot_open_until_plugged(tray: SimulatedTray) -> None:
    camera = SimulatedCamera(tray)
    camera.unplugged = True
    with pytest.raises(CameraError, match="no camera found"):
        camera.open()
    assert not camera.is_open
    with pytest.raises(CameraError, match="not open"):
        camera.read()
    camera.unplugged = False
    camera.open()
    assert camera.read().index == 0


def test_profile_zones_hold_the_thrown_and_kept_dice(tray: SimulatedTray) -> None:
    truth = tray.throw([5, 3], keep=[1, 6])
    profile = tray.profile()
    zones = [(d.zone, profile.zone_of(d.center)) for d in truth.dice]
    assert zones == [("roll", "roll"), ("roll", "roll"), ("keep", "keep"), ("keep", "keep")]
    assert truth.faces("keep") == [1, 6]
    assert profile.zone_of((SMALL.width - 2.0, SMALL.height - 2.0)) is None
    empty = profile.background_image()
    assert empty is not None and empty.shape == (SMALL.height, SMALL.width, 3)
    assert np.array_equal(empty, tray.empty_tray())
    assert profile.pip_polarity == "dark"  # ivory dice, black pips


def test_cocked_and_outside_throws_are_not_clean(tray: SimulatedTray) -> None:
    cocked = tray.throw([2, 5, 6], cocked=True)
    assert sum(d.leaning for d in cocked.dice) == 1 and not cocked.clean
    outside = tray.throw([2, 5, 6], outside=1)
    assert [d.zone for d in outside.dice].count("outside") == 1 and not outside.clean
    assert tray.profile(empty_tray=False).zone_of(
        next(d for d in outside.dice if d.zone == "outside").center) is None


def test_simulated_camera_refuses_a_bad_frame_rate(tray: SimulatedTray) -> None:
    with pytest.raises(ValueError, match="fps must be positive"):
        SimulatedCamera(tray, fps=0)
    with pytest.raises(ValueError, match="unknown dice colours"):
        SimulatedTray(colours="gold/gold")


def test_the_tray_holds_any_dice_set_of_the_bars_variety_marbled_ones_too() -> None:
    plain = SimulatedTray(seed=3, colours="blue/white", noise=0.0)
    marbled = SimulatedTray(seed=3, colours="marbled blue/black", noise=0.0)
    for t in (plain, marbled):
        t.throw([6, 6, 6])
    stills = [t._still.image.astype(int) for t in (plain, marbled)]
    truth = marbled.dice
    x, y = (round(c) for c in truth[0].center)
    # The same blue body and white pips, with a dark swirl through the marbled one.
    blue = [s[y - 8:y + 8, x - 8:x + 8, 0] for s in stills]
    assert blue[0].min() > 120 and blue[1].min() < 80
    with pytest.raises(ValueError, match="marbled purple/white"):
        SimulatedTray(colours="gold/gold")


def test_a_reseeded_tray_plays_the_same_throws_whatever_came_before() -> None:
    def played(before: int) -> list[np.ndarray]:
        tray = SimulatedTray(seed=5)
        camera = SimulatedCamera(tray, realtime=False)
        camera.open()
        for _ in range(before):  # a calibration's throws, say, each read till still
            tray.throw([1, 2, 3])
            for _ in range(10):
                camera.read()
        tray.reseed(77)
        tray.throw([6, 5, 4])
        frames = [camera.read().image for _ in range(8)]
        camera.close()
        return frames

    a, b = played(0), played(3)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
