"""Two lean checks as one file (`vision.lab.lean_either`): leaning when either says so."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.lean_net import DEFAULT_MODEL, INPUT_SIDE, LeanNet

torch = pytest.importorskip("torch", reason="the training extra is not installed")

from vision.lab import net_training  # noqa: E402
from vision.lab.lean_either import either, main  # noqa: E402
from vision.lab.lean_net_train import build_model  # noqa: E402


def _other_check(path: Path) -> Path:
    """A second lean check of the same shape with other (seeded) weights."""
    torch.manual_seed(3)
    model = build_model().eval()
    net_training.export(model, (4, INPUT_SIDE, INPUT_SIDE), path)
    return path


def test_the_combined_check_leans_when_either_does(tmp_path: Path) -> None:
    other = _other_check(tmp_path / "other.onnx")
    out = tmp_path / "either.onnx"
    either(DEFAULT_MODEL, other, out)
    rng = np.random.default_rng(0)
    patches = [rng.integers(0, 256, (INPUT_SIDE, INPUT_SIDE, 3), dtype=np.uint8)
               for _ in range(12)]
    distances = list(rng.uniform(0, 0.6, 12))
    first = LeanNet(DEFAULT_MODEL).leaning(patches, distances)
    second = LeanNet(other).leaning(patches, distances)
    both = LeanNet(out).leaning(patches, distances)
    assert not np.allclose(first, second)  # the test needs two checks that disagree
    np.testing.assert_allclose(both, np.maximum(first, second), atol=1e-5)
    # A die with nothing beside it to lean on is asked of the second check alone; a file of
    # one check asks it of every die.
    beside = [k % 3 == 0 for k in range(12)]
    np.testing.assert_allclose(LeanNet(out).leaning(patches, distances, beside),
                               np.where(beside, np.maximum(first, second), second), atol=1e-5)
    np.testing.assert_allclose(LeanNet(other).leaning(patches, distances, [False] * 12),
                               second, atol=1e-6)
    with pytest.raises(ValueError, match="12 lean patches but 2 beside flags"):
        LeanNet(out).leaning(patches, distances, [True, False])


def test_bad_files_are_one_line_errors(tmp_path: Path, capsys) -> None:
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a network")
    assert main([str(DEFAULT_MODEL), str(junk), "--out", str(tmp_path / "x.onnx")]) == 2
    assert main([str(DEFAULT_MODEL), str(tmp_path / "none.onnx"), "--out",
                 str(tmp_path / "x.onnx")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("lean_either: ") for line in err)
    assert not (tmp_path / "x.onnx").exists()
