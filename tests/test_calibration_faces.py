"""Calibration that learns the bar's own dice: the face network tuned on patches of them with
their values (`calibration.tuning`, `calibration.adapt`, `vision.adaptation`), kept only where
it reads the check throws better (`calibration.faces`).

The dataset's photos (third-party, read from ../shared/datasets/dice-photos or $DICE_PHOTOS)
drive the labels-file path end to end and the careless installer; the rest runs on drawn
features and the simulated tray.
"""

from __future__ import annotations

import io
import json
import logging
import random
from pathlib import Path

import numpy as np
import pytest

from calibration import adapt, faces
from calibration.labels import Labelled, load_labels, place_by_reading
from firmware_host.cli import main
from firmware_host.simulation.bench_calibrate import careless
from vision import Die, Profile, read_dice, shipped_readers
from vision.adaptation import Adaptation, adapted
from vision.adaptation import _warn_other_model as warned_once
from vision.combined import other_views
from vision.onnx_model import OnnxNetwork


def _rendered_patches(value: int, n: int, seed: int) -> list[np.ndarray]:
    """Straightened patches of ``n`` rendered dark red dice with white pips showing
    ``value``, four to a tray, each cut at its true place and turn."""
    from vision.lab.render import DieSpec, TraySpec, render_tray
    from vision.straightening import straighten

    rng = np.random.default_rng(seed)
    patches: list[np.ndarray] = []
    while len(patches) < n:
        dice = tuple(DieSpec(value, (160.0 + 320 * (k % 2) + rng.uniform(-20, 20),
                                     130.0 + 220 * (k // 2) + rng.uniform(-20, 20)),
                             float(rng.uniform(40, 60)), float(rng.uniform(0, 90)),
                             body_bgr=(40, 30, 150), pip_bgr=(235, 235, 235))
                     for k in range(4))
        shot = render_tray(TraySpec(dice=dice), seed=int(rng.integers(1 << 30)))
        for die in shot.truth:
            (x0, y0), (x1, y1) = die.corners[0], die.corners[1]
            angle = float(np.degrees(np.arctan2(y1 - y0, x1 - x0)))
            patches.append(straighten(shot.image, die.center, angle, die.side)[0])
    return patches[:n]


def test_tuning_moves_a_reading_the_right_way() -> None:
    """Patches of dice showing five labelled three, among fours and sixes labelled right: the
    tuned network reads new fives as threes far more than the shipped one does, and dice of
    the values no patch showed (ones, twos) much as before (the shipped network's beliefs on
    the patches are held)."""
    pytest.importorskip("torch", reason="tuning the face network needs PyTorch: "
                        "pip install -e '.[learn]'")
    import onnx

    from calibration import tuning
    from vision.face_net import DEFAULT_MODEL, FaceNet, to_input

    shipped = shipped_readers().base_face
    shown = {3: _rendered_patches(5, 16, 1), 4: _rendered_patches(4, 8, 2),
             6: _rendered_patches(6, 8, 3)}
    views = [(v, label) for label, patches in shown.items() for p in patches
             for v in (p, *other_views(p))]
    tuned = tuning.tune(onnx.load(str(DEFAULT_MODEL)), to_input([v for v, _ in views]),
                        np.array([label for _, label in views]))
    net = FaceNet.from_bytes(tuned.SerializeToString(), "tuned", base=shipped)
    fresh = _rendered_patches(5, 40, 4)
    before, after = shipped.probabilities(fresh), net.probabilities(fresh)
    assert after[:, 3].mean() > before[:, 3].mean() + 0.3
    unseen = [p for v in (1, 2) for p in _rendered_patches(v, 20, 5)]
    truth = np.repeat([1, 2], 20)
    right_before = (shipped.probabilities(unseen).argmax(axis=1) == truth).mean()
    right_after = (net.probabilities(unseen).argmax(axis=1) == truth).mean()
    assert right_before > 0.8 and right_after >= right_before - 0.1


def test_the_tuned_module_is_the_onnx_network() -> None:
    """Rebuilt in PyTorch, the face network computes what ONNX Runtime does; tuned for no
    step, its weights go back unchanged; an operator it does not know is named."""
    torch = pytest.importorskip("torch", reason="tuning the face network needs PyTorch: "
                                "pip install -e '.[learn]'")
    import onnx

    from calibration import tuning
    from vision.face_net import DEFAULT_MODEL, to_input

    model = onnx.load(str(DEFAULT_MODEL))
    x = to_input(_rendered_patches(4, 6, 5))
    expected = OnnxNetwork(onnx.load(str(DEFAULT_MODEL)), "shipped").run(x)
    for deep in (1, tuning.TUNED_FROM):
        module = tuning.OnnxModule(model, deep)
        with torch.no_grad():
            np.testing.assert_allclose(module(torch.from_numpy(x)).numpy(), expected,
                                       atol=1e-4)
    same = tuning.tune(model, x, np.full(len(x), 4), steps=0)
    np.testing.assert_allclose(OnnxNetwork(same, "same").run(x), expected, atol=1e-5)
    model.graph.node[1].op_type = "Sigmoid"
    with pytest.raises(ValueError, match="uses Sigmoid"):
        tuning.OnnxModule(model)


def test_an_adaptation_of_another_model_is_ignored_with_one_line(
        caplog: pytest.LogCaptureFixture) -> None:
    from vision.face_net import DEFAULT_MODEL

    net = shipped_readers().base_face
    mine = Adaptation(net.digest, DEFAULT_MODEL.read_bytes())
    assert adapted(net, mine) is not None
    other = Adaptation("0" * 64, DEFAULT_MODEL.read_bytes())
    # Said once per pair of models in a process: another test may have said it already.
    warned_once.cache_clear()
    with caplog.at_level(logging.WARNING):
        assert adapted(net, other) is None
    lines = [r.getMessage() for r in caplog.records if "another face network" in r.getMessage()]
    assert len(lines) == 1 and "\n" not in lines[0]


def test_a_profile_keeps_its_adaptation_and_reads_through_it(tmp_path: Path) -> None:
    """Saved and loaded whole (its tuned network in a file beside, named by content); an
    adaptation equal to the shipped network reads as no adaptation, one of another model is
    ignored, and one that sees every die as "no face" is used (the reading loses its dice);
    a profile whose network file is gone says so."""
    from test_vision_readers import no_face_network

    from vision.face_net import DEFAULT_MODEL
    from vision.lab.render import random_tray, render_tray

    net = shipped_readers().base_face
    image = render_tray(random_tray(np.random.default_rng(5), 3), 5).image
    plain = [(d.value, d.center) for d in read_dice(image)]
    assert sum(v is not None for v, _ in plain) >= 2
    same = Profile(adaptation=Adaptation(net.digest, DEFAULT_MODEL.read_bytes(), (1,) * 7))
    path = tmp_path / "p.json"
    same.save(path)
    beside = tmp_path / f"p.face-{same.adaptation.digest[:12]}.onnx"
    assert json.loads(path.read_text())["adaptation"]["network"] == beside.name
    loaded = Profile.load(path)
    assert loaded.adaptation is not None and loaded.adaptation.model == net.digest
    assert loaded.adaptation.network == DEFAULT_MODEL.read_bytes()
    assert loaded.adaptation.patches == (1,) * 7
    assert [(d.value, d.center) for d in read_dice(image, loaded)] == plain
    other = Profile(adaptation=Adaptation("f" * 64, no_face_network()))
    assert [(d.value, d.center) for d in read_dice(image, other)] == plain
    blinded = Profile(adaptation=Adaptation(net.digest, no_face_network()))
    assert not [d for d in read_dice(image, blinded) if d.value is not None]
    # ... and only within that reading: the next one without a profile is as before.
    assert [(d.value, d.center) for d in read_dice(image)] == plain
    beside.unlink()
    with pytest.raises(ValueError, match=rf"tuned network {beside.name} is missing"):
        Profile.load(path)


def test_a_broken_adaptation_in_a_profile_is_named() -> None:
    with pytest.raises(ValueError, match="adaptation"):
        Profile.from_dict({"adaptation": {"model": "x", "weights": [[1.0]], "biases": [0.0]}})
    with pytest.raises(ValueError, match="no network file beside"):
        Profile.from_dict({"adaptation": {"model": "x", "network": "../elsewhere.onnx"}})


def _die(value: int | None, x: float) -> Die:
    corners = ((x - 10, 90.0), (x + 10, 90.0), (x + 10, 110.0), (x - 10, 110.0))
    return Die(value, (x, 100.0), corners, 0.9, None if value else "not a pip face")


def test_the_installer_confirms_or_types_the_values() -> None:
    said: list[str] = []
    reading = [_die(4, 300.0), _die(None, 100.0), _die(2, 200.0)]
    answers = iter(["", "5 x 2", "5 - 2", "6 ? 1"])
    confirmed = faces.ask_values(lambda prompt: next(answers), said.append, "throw 1", reading)
    assert [(d.value, d.center[0]) for d in confirmed] == [(0, 100.0), (2, 200.0), (4, 300.0)]
    assert "1) ? at 100,100" in said[0]
    typed = faces.ask_values(lambda prompt: next(answers), said.append, "throw 2", reading)
    assert "try again" in said[-1]  # "x" is no answer
    assert [(d.value, d.center[0]) for d in typed] == [(5, 100.0), (2, 300.0)]
    skipped = faces.ask_values(lambda prompt: next(answers), said.append, "throw 3", reading)
    assert [(d.value, d.center[0]) for d in skipped] == [(6, 100.0), (0, 200.0), (1, 300.0)]


def test_tally_and_judgement() -> None:
    labels = [Labelled(4, (300.0, 100.0)), Labelled(2, (200.0, 100.0)),
              Labelled(6, (100.0, 100.0)), Labelled(0, (500.0, 100.0))]
    read = [_die(4, 302.0), _die(3, 200.0), _die(None, 100.0), _die(5, 400.0)]
    t = faces.tally(read, labels)
    assert t.row() == (3, 1, 1, 1, 0, 1)
    better = faces.Judgement(faces.Tally(10, 8, 0, 2), faces.Tally(10, 6, 0, 4))
    worse = faces.Judgement(faces.Tally(10, 9, 1, 0), faces.Tally(10, 7, 0, 3))
    same = faces.Judgement(faces.Tally(10, 7, 0, 3), faces.Tally(10, 7, 0, 3))
    assert better.kept and not worse.kept and not same.kept


def test_dice_without_a_box_are_placed_by_the_reading() -> None:
    read = [_die(4, 300.0), _die(None, 100.0), _die(2, 200.0)]
    placed = place_by_reading([Labelled(2), Labelled(4), Labelled(5)], read)
    assert sorted((d.value, d.center[0]) for d in placed) == [(2, 200.0), (4, 300.0),
                                                               (5, 100.0)]


def _nell(dataset: Path, n: int = 5) -> list[dict]:
    records = json.loads((dataset / "manifest.json").read_text())
    mine = sorted((r for r in records if r["source"].startswith("nell-byler")),
                  key=lambda r: r["image"])
    return random.Random(421).sample(mine, n)


@pytest.mark.dataset
def test_labels_file_end_to_end(dice_photos: Path, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    """`calibrate --from-images DIR --labels FILE` on five of the dataset's photos of many
    dice: the faces are learnt from their values and checked on the last two, and the
    profile written (with the faces when the check kept them) is read by `read --profile`."""
    chosen = _nell(dice_photos)
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps(chosen))
    target = tmp_path / "nell.json"
    code = main(["calibrate", "--yes", "--from-images", str(dice_photos), "--labels",
                 str(labels), "--profile", str(target)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "3 throws to learn from, 2 to check with" in out
    assert "dice of known value to learn the faces from" in out
    assert "read with the faces learnt from others" in out
    notes = json.loads((tmp_path / "nell.calibration.json").read_text())
    judged = notes["faces"]
    data = json.loads(target.read_text())
    assert ("adaptation" in data) == judged["kept"]
    # A die side chosen by the count is judged by the values too, and kept only if they say so.
    sized = notes["die_side"]
    assert (data.get("die_side") is not None) == (sized is not None and sized["kept"])
    assert judged["with"]["dice"] == judged["without"]["dice"] >= 20  # all five photos judge
    if judged["kept"]:
        assert data["adaptation"]["model"] == shipped_readers().base_face.digest
        assert judged["dice"] >= 20 and judged["with"]["correct"] > judged["without"]["correct"]
    code = main(["read", "--json", "--profile", str(target),
                 str(dice_photos / chosen[0]["image"])])
    assert code == 0 and json.loads(capsys.readouterr().out.splitlines()[0])["dice"]


@pytest.mark.dataset
def test_labels_file_errors_are_one_line(dice_photos: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "labels.json"
    bad.write_text(json.dumps([{"image": "images/none.jpg", "dice": []}]))
    code = main(["calibrate", "--yes", "--from-images", str(dice_photos), "--labels", str(bad),
                 "--profile", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert code == 1 and "images/none.jpg is not in" in err and len(err.splitlines()) == 1
    code = main(["calibrate", "--yes", "--camera", "simulated", "--expect", "3", "--labels",
                 str(bad)])
    assert code == 2 and "--labels goes with --from-images" in capsys.readouterr().err
    assert not (tmp_path / "p.json").exists()


@pytest.mark.dataset
def test_a_careless_installer_does_no_harm(dice_photos: Path) -> None:
    """One value in ten given wrong: each slip is set aside (the plain reader reads its die
    as another value) and no right value is; the calibration with them keeps or refuses the
    faces as with the right values, and what it keeps reads photos of the source it never
    saw with no more wrong values than no adaptation."""
    from calibration.report import Reporter
    from calibration.session import Settings, calibrate_photos
    from calibration.sources import PhotoThrows
    from vision import load_image

    chosen = _nell(dice_photos)
    labels = load_labels(dice_photos / "manifest.json", dice_photos)
    truth = [labels[r["image"]] for r in chosen]
    values = careless(truth, 0.1, 421)
    slips = [(k, d.center) for k, dice in enumerate(values)
             for d, right in zip(dice, truth[k], strict=True) if d.value != right.value]
    assert len(slips) == round(0.1 * sum(map(len, truth))) >= 2
    images = [load_image(dice_photos / r["image"]) for r in chosen]
    names = [r["image"] for r in chosen]
    readers = shipped_readers()
    learnt = adapt.learn(adapt.cut(images, values, None, names, readers=readers),
                         readers.base_face)
    assert sorted(learnt.doubted) == sorted(
        f"{names[k]} at {c[0]:.0f},{c[1]:.0f}: given {values[k][j].value}, reads "
        f"{truth[k][j].value}" for k, c in slips
        for j in [next(j for j, d in enumerate(values[k]) if d.center == c)])
    assert not adapt.learn(adapt.cut(images, truth, None, names, readers=readers),
                           readers.base_face).doubted

    def calibrated(given: list[list[Labelled]]) -> Profile:
        photos = PhotoThrows.split([], images, [len(v) for v in given], names, given)
        outcome = calibrate_photos(photos, Settings(), Reporter(out=io.StringIO(), bars=False))
        assert outcome.passed and outcome.judged is not None
        return outcome.profile

    sloppy, right = calibrated(values), calibrated(truth)
    assert (sloppy.adaptation is None) == (right.adaptation is None)
    if sloppy.adaptation is not None:
        others = [r for r in _nell(dice_photos, 13) if r not in chosen][:8]
        judged = faces.judge([load_image(dice_photos / r["image"]) for r in others],
                             [labels[r["image"]] for r in others], sloppy, shipped_readers())
        assert judged.with_it.wrong + judged.with_it.extra <= (
            judged.without.wrong + judged.without.extra)


def test_the_simulated_tray_tells_the_values_live() -> None:
    """Live on the simulated tray, its truth gives each throw's values (a perfect installer):
    the faces are learnt, judged on every throw with values, and said; rendered dice read
    right without them, so they are not kept."""
    from calibration.report import Reporter
    from calibration.session import Settings, calibrate_live
    from calibration.sources import LiveThrows, SimulatedTable
    from firmware_host.simulation.camera import SimulatedCamera
    from firmware_host.simulation.tray import SimulatedTray

    tray = SimulatedTray(seed=3)
    camera = SimulatedCamera(tray)
    camera.open()
    live = LiveThrows(camera, SimulatedTable(tray, seed=3))
    ui = Reporter(out=io.StringIO(), bars=False)
    try:
        outcome = calibrate_live(live, Settings(expect=3, throws=2, checks=1), None, ui,
                                 live.told_values)
    finally:
        camera.close()
    assert outcome.passed and outcome.judged is not None
    assert outcome.judged.with_it.dice == outcome.judged.without.dice == 9
    assert outcome.judged.without.correct == 9 and outcome.profile.adaptation is None
    assert any("6 dice of known value to learn the faces from" in line for line in ui.lines)
    assert live.told_values("x", np.zeros((4, 4, 3), np.uint8)) == []


def test_photos_without_labels_ask_the_installer(tmp_path: Path) -> None:
    """`--from-images` without a labels file, on a terminal: each throw's reading is shown
    and the installer's answer (here Enter: every value right) gives its values; the faces
    are learnt from them and judged on every throw."""
    from calibration.report import Reporter
    from calibration.session import Settings, calibrate_photos
    from calibration.sources import PhotoThrows
    from tests.test_calibration import _throws

    _throws(tmp_path, throws=3, seed=4)
    asked: list[str] = []
    ui = Reporter(out=io.StringIO(), bars=False)

    def installer(prompt: str) -> str:
        asked.append(prompt)
        return ""

    outcome = calibrate_photos(PhotoThrows.from_folder(tmp_path, 3), Settings(expect=3), ui,
                               faces.labelled_reading(installer, ui.say))
    assert len(asked) == 3  # two throws learnt from, one checked with
    assert any(line.startswith("  throw-0.png: 1) ") for line in ui.lines)
    assert outcome.judged is not None and outcome.judged.without.dice == 9


def test_bench_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "calibrate", "--careless", "0.1"]) == 2
    err = capsys.readouterr().err
    assert "--careless F goes with --labels" in err and len(err.splitlines()) == 1


def test_a_labels_file_without_boxes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Values given without boxes are placed on the dice read of those values: the faces are
    learnt from them."""
    from tests.test_calibration import _throws

    faces_thrown = _throws(tmp_path, throws=3, seed=6)
    records = [{"image": f"throw-{k}.png", "dice": [{"value": v, "bbox": None} for v in values]}
               for k, values in enumerate(faces_thrown)]
    (tmp_path / "labels.json").write_text(json.dumps(records))
    code = main(["calibrate", "--yes", "--from-images", str(tmp_path), "--labels",
                 str(tmp_path / "labels.json"), "--profile", str(tmp_path / "p.json")])
    out = capsys.readouterr().out
    assert code == 0 and "6 dice of known value to learn the faces from" in out
    notes = json.loads((tmp_path / "p.calibration.json").read_text())
    assert notes["faces"]["with"]["dice"] == 9


def test_the_tuned_network_lives_beside_its_profile(tmp_path: Path) -> None:
    """Written before the profile that names it; the backup's network kept as long as the
    backup is, an older one no profile names removed."""
    from test_vision_readers import no_face_network

    from calibration import store
    from vision.face_net import DEFAULT_MODEL

    net = shipped_readers().base_face
    path = tmp_path / "red.json"
    first = Adaptation(net.digest, DEFAULT_MODEL.read_bytes())
    second = Adaptation(net.digest, no_face_network())
    written = store.save(path, Profile(adaptation=first), None, {}, {})
    assert written["tuned network"].name == first.file_name("red")
    store.save(path, Profile(adaptation=second), None, {}, {})
    kept = sorted(p.name for p in tmp_path.glob("red.face-*.onnx"))
    assert kept == sorted([first.file_name("red"), second.file_name("red")])  # one is the .bak's
    store.save(path, Profile(), None, {}, {})
    assert [p.name for p in tmp_path.glob("red.face-*.onnx")] == [second.file_name("red")]
    assert Profile.load(path.with_name("red.json.bak")).adaptation.network == no_face_network()


def test_without_pytorch_the_faces_are_not_learnt_and_it_says_so(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from calibration import tuning
    from calibration.report import Reporter
    from calibration.session import Settings, calibrate_photos
    from calibration.sources import PhotoThrows
    from tests.test_calibration import _throws

    _throws(tmp_path, throws=3, seed=4)
    monkeypatch.setattr(tuning, "available", lambda: False)
    ui = Reporter(out=io.StringIO(), bars=False)
    asked: list[str] = []
    outcome = calibrate_photos(PhotoThrows.from_folder(tmp_path, 3), Settings(expect=3), ui,
                               faces.labelled_reading(asked.append, ui.say))
    assert not asked  # the values would serve nothing: not asked for
    assert outcome.passed and outcome.judged is None and outcome.profile.adaptation is None
    assert any("needs PyTorch (pip install 'dicetower[learn]')" in line for line in ui.lines)
