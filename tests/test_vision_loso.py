"""Leave one source out (`vision.lab.loso`, `bench vision --loso`): each source read by the
networks trained without it, and the errors of a folder that lacks them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from firmware_host.cli import main as dicetower
from vision.face_net import DEFAULT_MODEL as FACE_MODEL
from vision.finder import DEFAULT_MODEL as FINDER_MODEL
from vision.lab import loso
from vision.lab.render import random_tray, render_tray
from vision.lean_net import DEFAULT_MODEL as LEAN_MODEL


def _networks(root: Path, source: str) -> Path:
    """A left-out folder for ``source`` holding copies of the shipped networks."""
    where = loso.folder(root, source)
    where.mkdir(parents=True)
    shutil.copy(FINDER_MODEL, where / loso.FINDER_FILE)
    shutil.copy(FACE_MODEL, where / loso.FACE_FILE)
    return where


def test_left_out_gives_the_networks_trained_without_the_source(tmp_path) -> None:
    where = _networks(tmp_path, "owner/repo")
    readers = loso.left_out(tmp_path, "owner/repo")
    assert readers.finder.path == where / loso.FINDER_FILE
    assert readers.face.path == where / loso.FACE_FILE
    assert readers.lean.path == LEAN_MODEL  # the lean check is the shipped one ...
    lean = shutil.copy(LEAN_MODEL, tmp_path / "lean.onnx")
    assert loso.left_out(tmp_path, "owner/repo", lean).lean.path == tmp_path / "lean.onnx"


def test_a_missing_network_is_said_in_one_line(tmp_path) -> None:
    where = _networks(tmp_path, "owner/repo")
    (where / loso.FACE_FILE).unlink()
    problem = loso.missing(tmp_path, "owner/repo")
    assert problem is not None and "owner/repo" in problem and "\n" not in problem
    with pytest.raises(FileNotFoundError, match="trained without owner/repo"):
        loso.left_out(tmp_path, "owner/repo")


def _photos(folder: Path) -> Path:
    """A two-source photo set of rendered trays, in the dataset's manifest format."""
    (folder / "images").mkdir(parents=True)
    records = []
    for k, source in enumerate(("alpha/dice", "beta/dice")):
        shot = render_tray(random_tray(np.random.default_rng(50 + k), 3, side=(40, 48)), seed=k)
        name = f"images/{k}.png"
        cv2.imwrite(str(folder / name), shot.image)
        dice = [{"value": t.value, "bbox": [t.center[0] - t.side / 2, t.center[1] - t.side / 2,
                                            t.side, t.side]} for t in shot.truth]
        records.append({"image": name, "source": source, "width": 640, "height": 480,
                        "bbox_kind": "die", "dice": dice})
    (folder / "manifest.json").write_text(json.dumps(records))
    return folder


def test_bench_vision_reads_each_source_with_its_left_out_networks(tmp_path, capsys) -> None:
    photos = _photos(tmp_path / "photos")
    root = tmp_path / "loso"
    for source in ("alpha/dice", "beta/dice"):
        _networks(root, source)
    assert dicetower(["bench", "vision", str(photos), "--json"]) == 0
    shipped = json.loads(capsys.readouterr().out)
    assert dicetower(["bench", "vision", str(photos), "--json", "--loso", str(root)]) == 0
    left = json.loads(capsys.readouterr().out)
    # The same networks under other names read the same.
    assert left["overall"]["correct"] == shipped["overall"]["correct"] > 0


def test_each_photo_is_read_with_its_own_source_left_out(tmp_path, monkeypatch, capsys) -> None:
    photos = _photos(tmp_path / "photos")
    root = tmp_path / "loso"
    for source in ("alpha/dice", "beta/dice"):
        _networks(root, source)
    seen: list[tuple[Path, Path]] = []

    def reading(image, profile=None, *, readers=None, lean_check=True):
        seen.append((readers.finder.path, readers.face.path))
        return []

    monkeypatch.setattr("vision.read_dice", reading)
    assert dicetower(["bench", "vision", str(photos), "--loso", str(root)]) == 0
    assert seen == [(loso.folder(root, s) / loso.FINDER_FILE, loso.folder(root, s) / loso.FACE_FILE)
                    for s in ("alpha/dice", "beta/dice")]
    assert "trained without it" in capsys.readouterr().out


def test_bench_vision_loso_errors_before_reading(tmp_path, capsys) -> None:
    photos = _photos(tmp_path / "photos")
    assert dicetower(["bench", "vision", str(photos), "--loso", str(tmp_path / "none")]) == 2
    assert "no such folder" in capsys.readouterr().err
    root = tmp_path / "loso"
    _networks(root, "alpha/dice")
    assert dicetower(["bench", "vision", str(photos), "--loso", str(root)]) == 2
    err = capsys.readouterr().err
    assert "trained without beta/dice" in err and len(err.strip().splitlines()) == 1
    assert dicetower(["bench", "vision", str(photos), "--loso", str(root), "--variants"]) == 2
    assert dicetower(["bench", "vision", str(photos), "--loso", str(root), "--throws"]) == 2


def test_loso_train_refuses_an_unknown_source(tmp_path, capsys) -> None:
    photos = _photos(tmp_path / "photos")
    assert loso.main(["train", str(tmp_path / "out"), "--dataset", str(photos),
                      "--source", "gamma/dice"]) == 2
    assert "no source 'gamma/dice'" in capsys.readouterr().err


def test_loso_train_makes_the_face_network_as_the_shipped_one(tmp_path, monkeypatch) -> None:
    """The finder, then each member of the shipped face network with its own options, each
    without the source and cut by its left-out finder, then their mean."""
    from vision.lab import face_mean
    from vision.lab.face_net_train import MEMBERS

    photos = _photos(tmp_path / "photos")
    ran, meant = [], []
    monkeypatch.setattr(loso.subprocess, "run", lambda cmd, check: ran.append(cmd))
    monkeypatch.setattr(face_mean, "mean", lambda members, out: meant.append((members, out)))
    assert loso.main(["train", str(tmp_path / "out"), "--dataset", str(photos),
                      "--source", "alpha/dice", "--epochs", "2"]) == 0
    where = tmp_path / "out" / "alpha"
    assert [cmd[2] for cmd in ran] == ["vision.lab.finder_train",
                                       *["vision.lab.face_net_train"] * len(MEMBERS)]
    assert all(cmd[cmd.index("--leave-out") + 1] == "alpha/dice" for cmd in ran)
    for cmd, options in zip(ran[1:], MEMBERS, strict=True):
        assert cmd[len(cmd) - len(options):] == options
        assert cmd[cmd.index("--finder") + 1] == str(where / "finder_net.onnx")
        assert cmd[cmd.index("--epochs") + 1] == "2"
    members = [Path(cmd[cmd.index("--out") + 1]) for cmd in ran[1:]]
    assert meant == [(members, where / "face_net.onnx")]


def test_loso_train_trains_the_members_side_by_side(tmp_path, monkeypatch) -> None:
    """With ``--jobs 2`` the members run at once, and their mean waits for both."""
    import threading

    from vision.lab import face_mean
    from vision.lab.face_net_train import MEMBERS

    photos = _photos(tmp_path / "photos")
    together = threading.Barrier(len(MEMBERS), timeout=10)
    ran, meant = [], []

    def run(cmd, check):
        if cmd[2] == "vision.lab.face_net_train":
            together.wait()  # breaks (and the training fails) unless every member runs at once
        ran.append(cmd[2])

    monkeypatch.setattr(loso.subprocess, "run", run)
    monkeypatch.setattr(face_mean, "mean", lambda members, out: meant.append(list(ran)))
    assert loso.main(["train", str(tmp_path / "out"), "--dataset", str(photos),
                      "--source", "alpha/dice", "--jobs", str(len(MEMBERS))]) == 0
    assert meant == [["vision.lab.finder_train", *["vision.lab.face_net_train"] * len(MEMBERS)]]


def test_loso_train_refuses_no_jobs(tmp_path, capsys) -> None:
    photos = _photos(tmp_path / "photos")
    assert loso.main(["train", str(tmp_path / "out"), "--dataset", str(photos),
                      "--jobs", "0"]) == 2
    assert "--jobs" in capsys.readouterr().err
