"""The networks a reading uses, passed in (`vision.readers`): `read_dice` reads with the ones it
is given and no environment variable picks others, a profile's adaptation takes the face
network's place, and the bench, the training scripts and the tower name theirs."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from test_vision_loso import _photos
from test_vision_throws import die, drawn_photo, record

import vision.readers as readers_module
from firmware_host.cli import main as dicetower
from vision import Profile, read_dice
from vision.adaptation import Adaptation, _warn_other_model
from vision.face_net import CLASSES, FaceNet
from vision.face_net import DEFAULT_MODEL as FACE_MODEL
from vision.finder import DEFAULT_MODEL as FINDER_MODEL
from vision.lab import loso, net_training
from vision.lab.render import DieSpec, TraySpec, render_tray
from vision.lean_net import DEFAULT_MODEL as LEAN_MODEL
from vision.readers import Readers, shipped

OLD_VARIABLES = ("DICETOWER_FACE_NET", "DICETOWER_FINDER_NET", "DICETOWER_LEAN_NET")


def _tray() -> np.ndarray:
    """A three and a five on the rendered tray, far apart."""
    return render_tray(TraySpec(dice=(DieSpec(3, (200, 240), 40, 10.0),
                                      DieSpec(5, (440, 240), 40, 30.0))), seed=4).image


def _values(dice) -> list[int]:
    return sorted(d.value for d in dice if d.value is not None)


class _NoFace:
    """A face network that sees no die face anywhere."""

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        probs = np.zeros((len(patches), len(CLASSES)), np.float32)
        probs[:, 0] = 1.0
        return probs


class _CountingFinder:
    """The shipped die finder, counting the frames it is shown."""

    def __init__(self) -> None:
        self.frames = 0

    def find(self, bgr: np.ndarray):
        self.frames += 1
        return shipped().finder.find(bgr)


def test_read_dice_reads_with_the_networks_it_is_given() -> None:
    image = _tray()
    assert _values(read_dice(image)) == [3, 5]
    assert _values(read_dice(image, readers=shipped())) == [3, 5]
    blind = replace(shipped(), face=_NoFace())
    assert _values(read_dice(image, readers=blind)) == []
    finder = _CountingFinder()
    assert _values(read_dice(image, readers=replace(shipped(), finder=finder))) == [3, 5]
    assert finder.frames == 1


def test_no_environment_variable_picks_a_network(monkeypatch, tmp_path) -> None:
    image = _tray()
    before = [d.to_json() for d in read_dice(image)]
    for name in OLD_VARIABLES:
        monkeypatch.setenv(name, str(tmp_path / "bogus.onnx"))
    # Loaded afresh under those variables: a network found through one would not be there.
    for cached in (readers_module.shipped, readers_module._face, readers_module._finder,
                   readers_module._lean):
        cached.cache_clear()
    assert [d.to_json() for d in read_dice(image)] == before
    fresh = Readers.from_files()
    assert (fresh.face.path, fresh.finder.path, fresh.lean.path) == (
        FACE_MODEL, FINDER_MODEL, LEAN_MODEL)


def test_from_files_names_other_files_each_loaded_once(tmp_path) -> None:
    copy = Path(shutil.copy(FACE_MODEL, tmp_path / "face.onnx"))
    named = Readers.from_files(face=copy)
    assert named.face.path == copy and Readers.from_files(face=str(copy)).face is named.face
    assert named.finder is shipped().finder and named.lean is shipped().lean
    assert shipped() is shipped()
    with pytest.raises(FileNotFoundError, match=r"lean network model not found: .*other\.onnx"):
        Readers.from_files(lean=tmp_path / "other.onnx")


def no_face_network() -> bytes:
    """The shipped face network's file with its last layer changed to see no die face
    anywhere (the "no face" class's bias raised far above the others)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(FACE_MODEL))
    logits = next(n for n in model.graph.node if n.output[0] == model.graph.output[0].name)
    for k, tensor in enumerate(model.graph.initializer):
        if tensor.name == logits.input[2]:
            biases = numpy_helper.to_array(tensor).copy()
            biases[0] += 50.0
            model.graph.initializer[k].CopyFrom(numpy_helper.from_array(biases, tensor.name))
    return model.SerializeToString()


def _no_face_layer(model: str) -> Adaptation:
    """A tuned network that sees no die face anywhere, tuned from the model of digest
    ``model``."""
    return Adaptation(model, no_face_network())


def test_a_profiles_adaptation_is_the_face_network_of_its_readings(caplog) -> None:
    image = _tray()
    net = shipped().face
    profile = Profile(adaptation=_no_face_layer(net.digest))
    adapted = shipped().with_profile(profile)
    assert isinstance(adapted.face, FaceNet) and adapted.face.base is net
    assert adapted.face.digest == profile.adaptation.digest != net.digest
    assert adapted.finder is shipped().finder and adapted.lean is shipped().lean
    # Adapted again from the model file, not on top of the tuned network.
    assert adapted.with_profile(profile).face.base is net
    assert adapted.base_face is net and shipped().base_face is net
    assert _values(read_dice(image, profile)) == []
    assert _values(read_dice(image, profile, readers=shipped())) == []
    assert _values(read_dice(image, Profile())) == [3, 5]
    # Tuned from another model: ignored, said in one line; a stand-in was tuned from nothing.
    other = Profile(adaptation=_no_face_layer("0" * 64))
    _warn_other_model.cache_clear()  # said once a process: another test may have said it
    assert shipped().with_profile(other) is shipped()
    assert "another face network" in caplog.text
    assert _values(read_dice(image, other)) == [3, 5]
    stand_in = replace(shipped(), face=_NoFace())
    assert stand_in.with_profile(profile) is stand_in


# --- who makes the readers: the bench, the training scripts, the tower ------------------------

def _copies(folder: Path) -> tuple[Path, Path, Path]:
    """Copies of the shipped face network, die finder and lean check under other names."""
    folder.mkdir()
    return tuple(Path(shutil.copy(model, folder / f"{name}.onnx")) for name, model in
                 (("face", FACE_MODEL), ("finder", FINDER_MODEL), ("lean", LEAN_MODEL)))


def _throws(folder: Path) -> Path:
    """A drawn photo set holding one three-dice throw (`bench vision --throws`)."""
    rec = record([die(2, 100, 100), die(5, 160, 100), die(3, 120, 160)], image="images/a.png")
    (folder / "images").mkdir(parents=True)
    cv2.imwrite(str(folder / rec["image"]), drawn_photo(rec))
    (folder / "manifest.json").write_text(json.dumps([rec]))
    return folder


@pytest.mark.parametrize("mode", [[], ["--throws"], ["--variants", "--limit", "1"]],
                         ids=["photos", "throws", "variants"])
def test_bench_vision_reads_with_the_networks_it_names(tmp_path, monkeypatch, mode) -> None:
    photos = _throws(tmp_path / "photos") if "--throws" in mode else _photos(tmp_path / "photos")
    face, finder, lean = _copies(tmp_path / "nets")
    seen = []

    def reading(image, profile=None, *, readers=None, lean_check=True):
        seen.append((readers.face.path, readers.finder.path, readers.lean.path))
        return []

    monkeypatch.setattr("vision.read_dice", reading)
    assert dicetower(["bench", "vision", str(photos), "--face", str(face), "--finder",
                      str(finder), "--lean", str(lean), *mode]) == 0
    assert seen and set(seen) == {(face, finder, lean)}


def test_bench_vision_reads_the_same_with_the_same_networks_named(tmp_path, capsys) -> None:
    photos = _photos(tmp_path / "photos")
    face = _copies(tmp_path / "nets")[0]
    assert dicetower(["bench", "vision", str(photos), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert dicetower(["bench", "vision", str(photos), "--json", "--face", str(face)]) == 0
    named = json.loads(capsys.readouterr().out)
    assert named["networks"] == {"face": str(face)} and "networks" not in plain
    assert named["overall"]["correct"] == plain["overall"]["correct"] > 0


def test_bench_vision_says_in_one_line_what_is_wrong_with_a_network(tmp_path, capsys) -> None:
    photos = _photos(tmp_path / "photos")
    text = tmp_path / "notes.onnx"
    text.write_text("not a network")
    (tmp_path / "loso").mkdir()
    for options, said in (
        (["--face", str(tmp_path / "none.onnx")], "--face"),
        (["--lean", str(text)], "no ONNX network"),
        (["--loso", str(tmp_path / "loso"), "--finder", str(text)], "do not go together"),
    ):
        assert dicetower(["bench", "vision", str(photos), *options]) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, err


def test_a_training_script_cuts_its_samples_with_the_networks_named(tmp_path) -> None:
    _, finder, _ = _copies(tmp_path / "nets")
    parser = net_training.parser("train", "a training script", tmp_path / "out.onnx", 1)
    net_training.add_networks(parser, "face", "finder")
    named = net_training.readers(parser.parse_args(["--finder", str(finder)]))
    assert named.finder.path == finder and named.face is shipped().face
    assert net_training.readers(parser.parse_args([])) == shipped()


def test_loso_train_gives_the_face_network_the_left_out_finder(tmp_path, monkeypatch) -> None:
    from vision.lab import face_mean
    from vision.lab.face_net_train import MEMBERS

    runs = []
    monkeypatch.setattr(loso.subprocess, "run", lambda command, **kw: runs.append((command, kw)))
    monkeypatch.setattr(face_mean, "mean", lambda members, out: None)
    loso.train(tmp_path, tmp_path / "photos", ["owner/repo"], steps=1, epochs=1, threads=1)
    faces = [command for command, _ in runs if "vision.lab.face_net_train" in command]
    assert len(faces) == len(MEMBERS)
    assert all(face[face.index("--finder") + 1] == str(loso.folder(tmp_path, "owner/repo")
                                                       / loso.FINDER_FILE) for face in faces)
    assert len(runs) == 1 + len(MEMBERS) and not any("env" in kw for _, kw in runs)


def test_the_tower_reads_every_frame_with_its_readers(tmp_path) -> None:
    from firmware_host.controller.controller import Controller
    from firmware_host.hub import GameHub
    from firmware_host.hub.journal import Journal
    from firmware_host.simulation.camera import SimulatedCamera
    from firmware_host.simulation.tray import SimulatedTray
    from hardware import EXAMPLE_PINMAP, SimulatedTower, load_pinmap, simulated_pinmap

    journal = Journal(tmp_path / "journal.sqlite3")
    tower = SimulatedTower(simulated_pinmap(load_pinmap(EXAMPLE_PINMAP)), tokens=10)
    blind = replace(shipped(), face=_NoFace())
    try:
        assert Controller(SimulatedCamera(SimulatedTray(seed=3)), tower, GameHub(),
                          journal).readers is shipped()
        controller = Controller(SimulatedCamera(SimulatedTray(seed=3)), tower, GameHub(),
                                journal, readers=blind)
        assert controller.readers is blind
        assert _values(controller._read(_tray())) == []
        controller.use_profile(Profile())
        assert _values(controller._read(_tray())) == []
    finally:
        tower.close()
        journal.close()
