"""Face networks as one file (`vision.lab.face_mean`): the mean of their logits, with one last
layer that a profile's adaptation refits as it refits one network's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.face_net import INPUT_SIDE, FaceNet, to_input

torch = pytest.importorskip("torch", reason="the training extra is not installed")

from vision.lab import net_training  # noqa: E402
from vision.lab.face_mean import main, mean  # noqa: E402
from vision.lab.face_net_train import build_model  # noqa: E402


def _network(path: Path, seed: int) -> Path:
    """A face network of the shipped shape with seeded random weights."""
    torch.manual_seed(seed)
    net_training.export(build_model().eval(), (3, INPUT_SIDE, INPUT_SIDE), path)
    return path


def _logits(net: FaceNet, patches: list[np.ndarray]) -> np.ndarray:
    weights, biases = net.classifier()
    return net.features(patches) @ weights.T + biases


def test_the_mean_gives_the_mean_logits_through_one_last_layer(tmp_path: Path) -> None:
    paths = [_network(tmp_path / f"net{k}.onnx", k) for k in range(3)]
    out = tmp_path / "mean.onnx"
    mean(paths, out)
    rng = np.random.default_rng(0)
    patches = [rng.integers(0, 256, (INPUT_SIDE, INPUT_SIDE, 3), dtype=np.uint8)
               for _ in range(9)]
    each = [_logits(FaceNet(p), patches) for p in paths]
    assert not np.allclose(each[0], each[1])  # the test needs networks that disagree
    joined = FaceNet(out)
    weights, _ = joined.classifier()
    assert weights.shape == (7, 3 * FaceNet(paths[0]).classifier()[0].shape[1])
    np.testing.assert_allclose(_logits(joined, patches), np.mean(each, axis=0), atol=1e-4)
    # What ONNX Runtime computes for the file's output is that same last layer's.
    np.testing.assert_allclose(joined._net.run(to_input(patches)).reshape(9, -1),
                               np.mean(each, axis=0), atol=1e-4)


def test_bad_files_are_one_line_errors(tmp_path: Path, capsys) -> None:
    good = _network(tmp_path / "good.onnx", 0)
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a network")
    out = tmp_path / "x.onnx"
    assert main([str(good), str(junk), "--out", str(out)]) == 2
    assert main([str(good), str(tmp_path / "none.onnx"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("face_mean: ") for line in err)
    assert not out.exists()
    with pytest.raises(SystemExit) as stop:
        main([str(good), "--out", str(out)])
    assert stop.value.code == 2
