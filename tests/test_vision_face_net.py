"""The face network: the shipped model, its input, and reproducible training."""

from __future__ import annotations

import re

import cv2
import numpy as np
import pytest

from vision import face_net, finder, lean_net
from vision.lab.render import random_tray, render_tray
from vision.onnx_model import NetworkFileError
from vision.readers import shipped
from vision.straightening import straighten


def rendered_patches(seeds: range) -> tuple[list[np.ndarray], list[int]]:
    """Straightened patches of the flat dice of rendered trays (seeds the model never saw),
    each cut at its true centre and size, with their values."""
    patches, values = [], []
    for seed in seeds:
        shot = render_tray(random_tray(np.random.default_rng(seed), 5), seed=seed)
        for truth in shot.truth:
            if not truth.cocked:
                patches.append(straighten(shot.image, truth.center, 0.0, truth.side)[0])
                values.append(truth.value)
    return patches, values


def test_the_shipped_model_reads_rendered_dice() -> None:
    patches, values = rendered_patches(range(20, 32))
    probs = shipped().face.probabilities(patches)
    assert probs.shape == (len(patches), len(face_net.CLASSES))
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-4)
    assert ((probs >= 0) & (probs <= 1)).all()
    right = np.mean(probs.argmax(axis=1) == np.array(values))
    assert right >= 0.9, f"only {right:.2f} of {len(values)} rendered dice read right"


def test_an_empty_patch_is_no_face() -> None:
    floor = np.full((72, 72, 3), (120, 130, 125), np.uint8)
    probs = shipped().face.probabilities([floor])[0]
    assert probs.argmax() == 0


def test_input_is_standardised_per_patch() -> None:
    flat = np.full((72, 72, 3), 200, np.uint8)
    x = face_net.to_input([flat, np.zeros((72, 72, 3), np.uint8)])
    assert x.shape == (2, 3, face_net.INPUT_SIDE, face_net.INPUT_SIDE)
    assert np.isfinite(x).all() and not x.any()
    assert shipped().face.probabilities([]).shape == (0, len(face_net.CLASSES))


def test_patches_reduced_together_are_reduced_as_each_alone() -> None:
    rng = np.random.default_rng(5)
    patches = [rng.integers(0, 256, (72, 72, 3), dtype=np.uint8) for _ in range(5)]
    together = face_net.to_input(patches)
    for k, patch in enumerate(patches):
        small = cv2.resize(patch, (face_net.INPUT_SIDE,) * 2, interpolation=cv2.INTER_AREA)
        x = small.astype(np.float32)
        x -= x.mean()
        x /= max(float(x.std()), 4.0)
        np.testing.assert_allclose(together[k], x.transpose(2, 0, 1), rtol=0, atol=1e-5)
    # Patches of several sizes are reduced one by one, to the same result.
    mixed = face_net.to_input([*patches[:2], rng.integers(0, 256, (60, 60, 3), dtype=np.uint8)])
    np.testing.assert_array_equal(mixed[:2], together[:2])


def test_a_missing_model_file_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="face network model not found"):
        face_net.FaceNet(tmp_path / "none.onnx")


def test_the_features_and_last_layer_give_the_networks_logits() -> None:
    # A profile's adaptation refits the last layer on the features: both must be the ones the
    # network computes its readings with.
    net = face_net.FaceNet(face_net.DEFAULT_MODEL)
    patches, _ = rendered_patches(range(40, 42))
    weights, biases = net.classifier()
    logits = net.features(patches) @ weights.T + biases
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(e / e.sum(axis=1, keepdims=True), net.probabilities(patches),
                               atol=1e-5)


@pytest.mark.parametrize("model", ["junk", "finder", "lean"])
def test_a_file_that_holds_no_face_network_is_a_clear_error(tmp_path, model) -> None:
    path = {"finder": finder.DEFAULT_MODEL, "lean": lean_net.DEFAULT_MODEL}.get(model)
    if path is None:
        path = tmp_path / "junk.onnx"
        path.write_bytes(b"not a network")
    with pytest.raises(NetworkFileError, match=re.escape(f"face network model {path}")):
        face_net.FaceNet(path)


def test_training_is_reproducible_and_exports_what_onnx_runtime_runs(tmp_path) -> None:
    torch = pytest.importorskip(
        "torch", reason="training needs PyTorch: pip install -e '.[train]' (make train-deps)"
    )
    from vision.lab import face_net_train
    from vision.lab.face_samples import rendered_samples

    samples = rendered_samples(range(100_000, 100_004))
    assert {s.label for s in samples} - {0}, "rendered trays give dice with values"
    first = face_net_train.train(samples, seed=5, epochs=1, log=lambda *a: None)
    second = face_net_train.train(samples, seed=5, epochs=1, log=lambda *a: None)
    for (name, a), (_, b) in zip(first.state_dict().items(), second.state_dict().items(),
                                 strict=True):
        assert torch.equal(a, b), f"{name} differs between two runs with one seed"
    out = tmp_path / "model.onnx"
    face_net_train.export(first, out)
    patches, _ = rendered_patches(range(40, 42))
    with torch.no_grad():
        expected = torch.softmax(first(torch.from_numpy(face_net.to_input(patches))), 1).numpy()
    assert np.allclose(face_net.FaceNet(out).probabilities(patches), expected, atol=1e-4)


def test_training_to_find_the_pips_too_is_reproducible_and_exports_the_face_alone(
        tmp_path) -> None:
    torch = pytest.importorskip(
        "torch", reason="training needs PyTorch: pip install -e '.[train]' (make train-deps)"
    )
    from vision.lab import face_net_train
    from vision.lab.face_samples import rendered_samples

    samples = rendered_samples(range(100_000, 100_003))
    plain = face_net_train.train(samples, seed=5, epochs=1, log=lambda *a: None, pips=0.0)
    runs = [face_net_train.train(samples, seed=5, epochs=1, log=lambda *a: None, pips=1.0)
            for _ in range(2)]
    first, second = (dict(run.state_dict()) for run in runs)
    assert first.keys() == second.keys() and any(k.startswith("pips.") for k in first)
    assert all(torch.equal(first[k], second[k]) for k in first)
    # The pip map's loss moved the face's own layers: it is a training of its own.
    assert not torch.equal(first["early.0.weight"], plain.state_dict()["early.0.weight"])
    out = tmp_path / "model.onnx"
    face_net_train.export(runs[0], out)
    net = face_net.FaceNet(out)  # the shipped interface: one output, a fully connected last
    patches, _ = rendered_patches(range(40, 42))
    with torch.no_grad():
        expected = torch.softmax(runs[0](torch.from_numpy(face_net.to_input(patches))), 1)
    assert np.allclose(net.probabilities(patches), expected.numpy(), atol=1e-4)
