"""`dicetower calibrate --from-images`: photos of simulated trays in, a profile out.

The photos are drawn by the simulated tray (seeded), so what they show is known: the profile
written must read the throws' dice right through `dicetower read --profile`. Bad input (no
tray, no dice, dice of two sizes, dim light) must say so in one line and save nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from calibration import dice as dice_step
from calibration.agreement import agreement
from calibration.dice import two_sizes
from calibration.tray import find_tray, parse_tray, propose_zones
from firmware_host.cli import main
from firmware_host.simulation.camera import SimulatedCamera
from firmware_host.simulation.scene import TrayLayout
from firmware_host.simulation.tray import SimulatedTray
from vision import Die, Profile

SEED = 11


def _throws(folder: Path, *, seed: int = SEED, throws: int = 4, dice: int = 3,
            layout: TrayLayout | None = None, empty: bool = True,
            suffix: str = "", **tray: str) -> list[list[int]]:
    """Photos of a simulated tray in ``folder``: the empty tray, then ``throws`` throws of
    ``dice`` dice; the faces of each throw, in file order. ``tray``: the dice's colours and
    the floor, if not the simulated tray's own."""
    from calibration.sources import still_image

    folder.mkdir(parents=True, exist_ok=True)
    tray = SimulatedTray(seed=seed, layout=layout, **tray)
    camera = SimulatedCamera(tray)
    camera.open()
    if empty:
        cv2.imwrite(str(folder / "empty.png"), still_image(camera))
    rng = np.random.default_rng(seed)
    faces = []
    for k in range(throws):
        values = [int(v) for v in rng.integers(1, 7, dice)]
        tray.throw(values)
        cv2.imwrite(str(folder / f"throw-{k}{suffix}.png"), still_image(camera))
        faces.append(sorted(values))
    return faces


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[int]]]:
    folder = tmp_path_factory.mktemp("photos")
    return folder, _throws(folder)


def _calibrate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["calibrate", "--yes", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_from_images_writes_a_profile_that_read_uses(
        photos: tuple[Path, list[list[int]]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder, faces = photos
    target = tmp_path / "tray.json"
    code, out, err = _calibrate(capsys, "--from-images", str(folder), "--expect", "3",
                                "--profile", str(target))
    assert code == 0, err
    assert f"Profile written: {target}" in out
    for step in range(1, 5):
        assert f"Step {step}/4" in out
    profile = Profile.load(target)
    assert profile.zones and profile.keep_zone  # proposed from the tray found
    assert profile.background_image() is not None  # the empty tray, beside the profile
    assert profile.background_image().shape == cv2.imread(str(folder / "empty.png")).shape
    previews = sorted(p.name for p in (tmp_path / "tray.preview").iterdir())
    assert "1-tray.png" in previews and "3-dice.png" in previews
    assert any(p.startswith("4-check") for p in previews)
    notes = json.loads((tmp_path / "tray.calibration.json").read_text())
    assert notes["expect"] == 3 and notes["check"]["with_profile"]["expected"] == 3
    assert "worth fixing" not in out  # ivory dice on green felt: nothing to warn of
    # The profile in use: every throw read right through `dicetower read --profile`.
    images = [str(folder / f"throw-{k}.png") for k in range(len(faces))]
    assert main(["read", "--profile", str(target), "--json", *images]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [sorted(d["value"] for d in line["dice"]) for line in lines] == faces


@pytest.mark.parametrize(("seed", "saved"), [(0, True), (2, False)])
def test_dice_nearly_the_colour_of_the_tray_are_named_as_what_to_fix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int, saved: bool) -> None:
    # Ivory dice on white paper: the check throws may read well (saved, with a warning:
    # later throws may read worse) or not (refused); either way the colours are named.
    folder = tmp_path / "pale"
    _throws(folder, seed=seed, throws=6, colours="ivory/black", floor="paper")
    code, out, err = _calibrate(capsys, "--from-images", str(folder), "--expect", "3",
                                "--profile", str(tmp_path / "pale.json"))
    assert code == (0 if saved else 1), err
    said = "worth fixing all the same: " if saved else "To fix: "
    (line,) = [line for line in out.splitlines() if said in line]
    assert "nearly the colour of the tray" in line
    assert (tmp_path / "pale.json").exists() == saved


def test_an_empty_white_page_reads_no_die(tmp_path: Path) -> None:
    # Where no die body sizes the frame, a dark speck of the paper (4 px) looks like the pip
    # of a white one: the finder, taught frames without dice, must not take it for a die.
    import vision

    _throws(tmp_path, seed=4, throws=1, colours="ivory/black", floor="paper")
    assert vision.read_dice(vision.load_image(str(tmp_path / "empty.png"))) == []


def test_rerun_updates_in_place_and_keeps_a_backup(
        photos: tuple[Path, list[list[int]]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = photos
    target = tmp_path / "p.json"
    assert _calibrate(capsys, "--from-images", str(folder), "--expect", "3",
                      "--profile", str(target))[0] == 0
    first = json.loads(target.read_text())
    # Again with the keep zone on the left: the new profile replaces the old one in place.
    code, out, _ = _calibrate(capsys, "--from-images", str(folder), "--expect", "3",
                              "--profile", str(target), "--keep", "left")
    assert code == 0
    backup = tmp_path / "p.json.bak"
    assert "previous profile kept" in out and backup.is_file()
    assert json.loads(backup.read_text()) == first
    assert json.loads(target.read_text())["keep_zone"] != first["keep_zone"]
    # The backup is a usable profile: its empty tray is still there.
    assert Profile.load(backup).background_image() is not None
    assert (tmp_path / "p.calibration.json.bak").is_file()


def test_named_profiles_live_in_the_user_config_folder(
        photos: tuple[Path, list[list[int]]], private_data_home: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = photos
    for name in ("red", "ivory"):
        code, out, _ = _calibrate(capsys, "--from-images", str(folder), "--expect", "3",
                                  "--name", name)
        assert code == 0
        path = private_data_home / "config" / "dicetower" / "profiles" / f"{name}.json"
        assert f"Profile written: {path}" in out
        assert Profile.load(path).zones
    code, _, err = _calibrate(capsys, "--from-images", str(folder), "--name", "../evil")
    assert code == 2 and "--name" in err and err.count("\n") == 1


def test_tray_corners_given_by_hand(photos: tuple[Path, list[list[int]]], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = photos
    target = tmp_path / "t.json"
    code, out, _ = _calibrate(capsys, "--from-images", str(folder), "--expect", "3",
                              "--profile", str(target), "--tray", "8,8;630,8;630,470;8,470")
    assert code == 0 and "tray corners from --tray" in out
    points = np.array([*Profile.load(target).zones[0], *Profile.load(target).keep_zone])
    assert points.min() >= 8 and points[:, 0].max() <= 630 and points[:, 1].max() <= 470
    code, _, err = _calibrate(capsys, "--from-images", str(folder), "--tray", "1,2;3")
    assert code == 2 and "x,y;x,y;x,y;x,y" in err


def _nothing_saved(tmp_path: Path) -> bool:
    return not list(tmp_path.glob("*.json")) and not list(tmp_path.glob("*.png"))


def _bad(capsys: pytest.CaptureFixture[str], folder: Path, tmp_path: Path,
         *extra: str) -> str:
    out_dir = tmp_path / "out"
    out_dir.mkdir(exist_ok=True)
    code, _, err = _calibrate(capsys, "--from-images", str(folder), "--profile",
                              str(out_dir / "p.json"), *extra)
    assert code == 1
    assert err.count("\n") == 1 and "nothing saved" in err and "Traceback" not in err
    assert not any(out_dir.iterdir())
    return err


def test_no_tray_found(photos: tuple[Path, list[list[int]]], tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = photos
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in ("throw-0.png", "throw-1.png"):
        (bad / name).write_bytes((folder / name).read_bytes())
    # The camera sees a cluttered bar counter, not a tray: blocks of every colour.
    rng = np.random.default_rng(3)
    clutter = np.zeros((480, 640, 3), np.uint8)
    for _ in range(120):
        x, y = (int(v) for v in rng.integers(0, 600, 2))
        w, h = (int(v) for v in rng.integers(20, 90, 2))
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        cv2.rectangle(clutter, (x, y % 460), (x + w, y % 460 + h), colour, -1)
    cv2.imwrite(str(bad / "empty.png"), clutter)
    assert "no tray found" in _bad(capsys, bad, tmp_path, "--expect", "3")


def test_no_dice_found(photos: tuple[Path, list[list[int]]], tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = photos
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in ("empty.png", "throw-a.png", "throw-b.png"):
        (bad / name).write_bytes((folder / "empty.png").read_bytes())
    assert "no dice found" in _bad(capsys, bad, tmp_path, "--expect", "3")


def test_dice_of_two_sizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad"
    # Throws of small and large dice, one after the other (throw-0a, throw-0b, ...).
    _throws(bad, seed=21, throws=3, layout=TrayLayout(side=28.0), suffix="a")
    _throws(bad, seed=22, throws=3, layout=TrayLayout(side=60.0), suffix="b", empty=False)
    assert "dice of two sizes" in _bad(capsys, bad, tmp_path, "--expect", "3")


def test_light_too_dim(photos: tuple[Path, list[list[int]]], tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = photos
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in ("empty.png", "throw-0.png", "throw-1.png"):
        image = cv2.imread(str(folder / name))
        cv2.imwrite(str(bad / name), (image // 6).astype(np.uint8))
    assert "light too dim" in _bad(capsys, bad, tmp_path, "--expect", "3")


def test_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert _calibrate(capsys)[0] == 2
    code, _, err = _calibrate(capsys, "--camera", "simulated")
    assert code == 2 and "--expect" in err
    code, _, err = _calibrate(capsys, "--from-images", str(tmp_path / "none"),
                              "--profile", str(tmp_path / "p.json"))
    assert code == 2 and "no such folder" in err and not list(tmp_path.glob("*.json"))
    (tmp_path / "a-file.jpg").write_bytes(b"")
    code, _, err = _calibrate(capsys, "--from-images", str(tmp_path / "a-file.jpg"),
                              "--profile", str(tmp_path / "p.json"))
    assert code == 2 and "not a folder" in err and "\n" not in err.strip()


@pytest.mark.parametrize(("args", "words"), [
    (["--tray", "nan,1;2,3;4,5;6,7"], "give four corners"),
    (["--tray", "0,0;inf,0;10,10;0,10"], "give four corners"),
    (["--tray", ""], "give four corners"),
    (["--profile", "{tmp}"], "is a folder"),
    (["--profile", "{tmp}/a-file/p.json"], "a-file is a file, not a folder"),
    (["--expect", "99999999999999999999"], "at most 12"),
])
def test_bad_input_is_refused_before_calibrating(
        args: list[str], words: str, photos: tuple[Path, list[list[int]]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-file").write_text("x")
    args = [arg.format(tmp=tmp_path) for arg in args]
    try:
        code = main(["calibrate", "--yes", "--from-images", str(photos[0]), "--expect", "3",
                     "--profile", str(tmp_path / "p.json"), *args])
    except SystemExit as exc:  # argparse's refusals
        code = exc.code
    _, err = capsys.readouterr()
    assert code == 2 and words in err.splitlines()[-1] and "Traceback" not in err
    assert [p.name for p in tmp_path.iterdir()] == ["a-file"]  # nothing written


# -- the parts ------------------------------------------------------------------------------


def test_tray_outline_and_zones() -> None:
    image = np.full((300, 400, 3), (30, 30, 30), np.uint8)  # dark walls around
    cv2.rectangle(image, (60, 40), (340, 260), (150, 170, 190), -1)  # the floor
    quad = find_tray(image)
    assert quad is not None
    assert np.allclose(quad, [(60, 40), (340, 40), (340, 260), (60, 260)], atol=4)
    roll, keep = propose_zones(quad, "right")
    assert keep is not None
    assert max(x for x, _ in roll) < min(x for x, _ in keep)  # keep zone right of roll
    assert min(x for x, _ in roll) >= 60 and max(x for x, _ in keep) <= 340
    roll, keep = propose_zones(quad, "top")
    assert keep is not None and max(y for _, y in keep) < min(y for _, y in roll)
    assert propose_zones(quad, "none")[1] is None
    assert parse_tray("340,40; 60,40; 60,260; 340,260")[0] == (60.0, 40.0)  # any order


def test_two_sizes_only_for_two_clear_groups() -> None:
    assert two_sizes([30, 31, 29, 30, 60, 61, 59]) is not None
    assert two_sizes([30, 31, 29, 30, 33, 28, 32]) is None
    assert two_sizes([30, 31, 29, 30, 30, 29, 45]) is None  # one odd die is no second set


@pytest.mark.parametrize(("reads_all", "kept"), [
    (lambda side: 22.0 <= side <= 29.0, 25.0),  # three sizes of the ladder in a row
    (lambda side: abs(side - 25.0) < 0.05, None),  # one size alone: a knife's edge
])
def test_a_die_size_is_kept_only_when_the_sizes_beside_it_read_as_well(
        monkeypatch: pytest.MonkeyPatch, reads_all, kept: float | None) -> None:
    """The reader (faked) reads all three dice of each throw at the sizes ``reads_all``
    allows, two of them otherwise; it measures a die side of 20 px on the throws by itself,
    so the ladder tried is 16, 18, 20, 22.4, 25, 28 and 32 px."""

    given = object()  # the networks the calibration is given: every reading uses them
    asked = []

    def read(image: np.ndarray, profile: Profile | None = None, *, readers=None) -> list[Die]:
        asked.append(readers)
        side = profile.die_side if profile is not None else None
        count = 3 if side is not None and reads_all(side) else 2
        return [Die(4, (30.0 + 40 * k, 30.0), ((20.0 + 40 * k, 20.0), (40.0 + 40 * k, 20.0),
                                                (40.0 + 40 * k, 40.0), (20.0 + 40 * k, 40.0)),
                    0.9) for k in range(count)]

    def measure(images, base: Profile, readers) -> float:
        asked.append(readers)
        return 20.0

    monkeypatch.setattr(dice_step, "read_dice", read)
    monkeypatch.setattr(dice_step, "reader_side", measure)
    images = [np.full((100, 160, 3), 200, np.uint8) for _ in range(3)]
    findings = dice_step.learn(images, [3, 3, 3], Profile(), readers=given)
    assert findings.profile.die_side == kept
    assert asked and all(readers is given for readers in asked)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_sizes_tried_stand_where_the_reader_measures_the_dice(seed: int) -> None:
    """The die side the sizes tried are centred on is the reader's own measure, in the unit a
    profile's die side stands for it: given as the profile's side, it reads the tray as no
    side does. A read die's outline (its top face) is smaller: sizes tried around it cut a
    two's pips apart."""
    from calibration.agreement import die_side
    from vision import read_dice, shipped_readers
    from vision.lab.render import random_tray, render_tray

    image = render_tray(random_tray(np.random.default_rng(seed), 5), seed).image
    side = dice_step.reader_side([image], Profile(), shipped_readers())
    assert side is not None
    plain = read_dice(image)
    assert sorted(d.value or 0 for d in read_dice(image, Profile(die_side=side))) == sorted(
        d.value or 0 for d in plain)
    assert np.median([die_side(d) for d in plain if d.value not in (None, 1)]) < 0.95 * side


def test_agreement_counts_against_the_dice_thrown() -> None:
    def die(value: int | None, x: float) -> Die:
        corners = ((x - 5, 0.0), (x + 5, 0.0), (x + 5, 10.0), (x - 5, 10.0))
        return Die(value, (x, 5.0), corners, 0.9, None if value else "blurred")

    plain = [[die(3, 10), die(4, 40)]]
    exact = agreement([[die(3, 10), die(4, 40), die(6, 80)]], [3], plain)
    assert (exact.cost, exact.missing, exact.over) == (0.0, 0, 0)
    short = agreement([[die(3, 10), die(None, 40)]], [3], plain)
    assert short.missing == 2 and short.cost > exact.cost
    over = agreement([[die(3, 10), die(4, 40), die(6, 80), die(1, 120)]], [3], plain)
    assert over.over == 1 and over.cost > short.cost  # a value too many is surely wrong
    contradicted = agreement([[die(5, 10), die(4, 40), die(6, 80)]], [3], plain)
    assert contradicted.contradictions == 1 and contradicted.cost > 0
    assert exact.better_than(short) and not short.better_than(exact)


def test_live_with_a_camera_that_has_no_controls(
        photos: tuple[Path, list[list[int]]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    # A folder replayed as a camera: someone is asked to throw (here, --yes: the next
    # picture is the next throw), and the light stays as it is.
    folder, faces = photos
    target = tmp_path / "folder.json"
    code, out, err = _calibrate(capsys, "--camera", f"folder:{folder}", "--expect", "3",
                                "--throws", "2", "--checks", "1", "--profile", str(target))
    assert code == 0, err
    assert "Throw the 3 dice into the roll zone" in out
    assert "offers no light controls" in out
    assert json.loads((tmp_path / "folder.calibration.json").read_text())["light"] == {}
    assert main(["read", "--profile", str(target), "--json", str(folder / "throw-3.png")]) == 0
    line = json.loads(capsys.readouterr().out)
    assert sorted(d["value"] for d in line["dice"]) == faces[3]


@pytest.mark.parametrize(("args", "manifest", "words"), [
    (["--throws", "0", "--only-simulated"], None, "must be at least 1"),
    (["--images", "-1"], None, "must be at least 1"),
    ([], b"\x00\xff garbage", "cannot read it"),
    ([], b"{not json", "not JSON"),
    ([], b'{"images": [{"file": "a.jpg"}]}', "record 1 is not an image record"),
    ([], b"[]", "no image records"),
    (["--sources", " , "], None, "no source named; sources: src-one"),
    (["--sources", "zz"], None, "no source starts with 'zz'"),
    (["--only-simulated", "--dice", "gold/gold"], None, "--dice 'gold/gold': not a dice set"),
])
def test_bench_calibrate_refuses_bad_input_in_one_line(
        args: list[str], manifest: bytes | None, words: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "manifest.json").write_bytes(
        manifest or b'[{"image": "a.jpg", "source": "src-one", "dice": []}]')
    try:
        code = main(["bench", "calibrate", str(tmp_path), *args])
    except SystemExit as exc:  # argparse's refusals
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "Traceback" not in err
    assert words in err.splitlines()[-1]


def test_bench_calibrate_draws_the_simulated_trays_with_the_dice_set_asked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from firmware_host.simulation import bench_calibrate, tray

    made: list[str] = []

    class Recorded(tray.SimulatedTray):
        def __init__(self, **options: Any) -> None:
            made.append(options.get("colours", "ivory/black"))
            super().__init__(**options)

    monkeypatch.setattr(tray, "SimulatedTray", Recorded)
    monkeypatch.setattr(bench_calibrate, "LIGHTS", {"red dice": {"colours": "red/white"}})
    rows = bench_calibrate.simulated_rows(1, 421, lambda text: None,
                                          dice_set="marbled green/white")
    assert made == ["marbled green/white"] * 2  # before and after
    assert [r["light"] for r in rows] == ["red dice"]
    assert rows[0]["before"]["dice"] == rows[0]["after"]["dice"] == 3
