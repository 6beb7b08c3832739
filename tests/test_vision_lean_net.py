"""The lean check: its patches, the shipped model, its place in `read_dice`, reproducible
training."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import vision
from vision import lean_net
from vision.lab.render import DieSpec, TraySpec, random_tray, render_tray
from vision.readers import shipped


@pytest.mark.parametrize("centre", [(300, 100), (500, 300), (100, 300), (300, 500),
                                    (480, 460)])
def test_the_image_centre_is_straight_up_in_a_lean_patch(centre) -> None:
    # A die-sized grey square with a red mark on its side toward `centre`.
    image = np.full((600, 600, 3), 200, np.uint8)
    die = np.array([300.0, 300.0])
    image[280:321, 280:321] = 90
    toward = (np.array(centre) - die) / np.linalg.norm(np.array(centre) - die)
    mark = np.round(die + 30 * toward).astype(int)
    image[mark[1] - 4 : mark[1] + 5, mark[0] - 4 : mark[0] + 5] = (0, 0, 255)
    patch = lean_net.lean_patch(image, die, 40.0, centre)
    assert patch.shape == (lean_net.INPUT_SIDE, lean_net.INPUT_SIDE, 3)
    red = (patch[:, :, 2] > 150) & (patch[:, :, 0] < 100)
    ys, xs = np.nonzero(red)
    half = lean_net.INPUT_SIDE / 2
    assert ys.mean() < half - 3 and abs(xs.mean() - half + 0.5) < 2


def test_a_lean_patch_of_a_larger_source_is_the_same_die() -> None:
    # Cut from an image `zoom` times the working size, the patch shows the same thing.
    shot = render_tray(TraySpec(dice=(DieSpec(5, (260, 200), 40, 20.0),)), seed=1)
    big = np.repeat(np.repeat(shot.image, 2, axis=0), 2, axis=1)
    small = lean_net.lean_patch(shot.image, (260, 200), 40.0, (320, 240))
    large = lean_net.lean_patch(big, (260, 200), 40.0, (320, 240), zoom=2.0)
    assert np.abs(small.astype(int) - large.astype(int)).mean() < 6


def test_distance_is_in_units_of_the_larger_side() -> None:
    assert lean_net.distance_from_centre((0, 0), (300, 400), 1000) == pytest.approx(0.5)


def test_input_is_standardised_with_a_distance_channel() -> None:
    flat = np.full((32, 32, 3), 200, np.uint8)
    x = lean_net.to_input([flat, np.zeros((32, 32, 3), np.uint8)], [0.25, 0.5])
    assert x.shape == (2, 4, lean_net.INPUT_SIDE, lean_net.INPUT_SIDE)
    assert not x[:, :3].any()
    assert (x[0, 3] == 0.25).all() and (x[1, 3] == 0.5).all()
    assert shipped().lean.leaning([], []).shape == (0,)


def test_a_missing_model_file_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="lean network model not found"):
        lean_net.LeanNet(tmp_path / "none.onnx")


def truth_patches(seeds: range) -> tuple[list[np.ndarray], list[float], list[bool]]:
    """Lean patches of every die of rendered trays with one leaning die (seeds the model
    never saw), cut at its true centre and size."""
    patches, distances, leaning = [], [], []
    for seed in seeds:
        shot = render_tray(random_tray(np.random.default_rng(seed), 5, cocked=1), seed=seed)
        h, w = shot.image.shape[:2]
        for truth in shot.truth:
            patches.append(lean_net.lean_patch(shot.image, truth.center, truth.side,
                                               (w / 2, h / 2)))
            distances.append(lean_net.distance_from_centre(truth.center, (w / 2, h / 2),
                                                           max(w, h)))
            leaning.append(truth.cocked)
    return patches, distances, leaning


def test_the_shipped_model_tells_leaning_dice_from_flat_ones() -> None:
    patches, distances, leaning = truth_patches(range(8000, 8030))
    p = shipped().lean.leaning(patches, distances)
    assert ((p >= 0) & (p <= 1)).all()
    flagged = p >= lean_net.LEAN_SURE
    truth = np.array(leaning)
    caught = flagged[truth].mean()
    false = flagged[~truth].mean()
    assert caught >= 0.85, f"only {caught:.2f} of {truth.sum()} leaning dice caught"
    assert false <= 0.03, f"{false:.2f} of {(~truth).sum()} flat dice taken for leaning"


class _StubLean:
    def __init__(self, answer: float) -> None:
        self.answer = answer
        self.calls: list[list[float]] = []
        self.beside: list[list[bool]] = []

    def leaning(self, patches, distances, beside=None):
        self.calls.append(list(distances))
        self.beside.append(list(beside))
        return np.full(len(patches), self.answer, np.float32)


def _with(lean: _StubLean) -> vision.Readers:
    """The shipped networks, the lean check ``lean`` in its place."""
    return replace(shipped(), lean=lean)


def test_a_read_die_the_check_finds_leaning_on_another_is_cocked() -> None:
    # Two dice 1.5 sides apart (each may lean on the other) and one far from both (it may
    # lean on the tray's wall).
    shot = render_tray(TraySpec(dice=(DieSpec(4, (290, 240), 40, 10.0),
                                      DieSpec(2, (350, 240), 40, 30.0),
                                      DieSpec(6, (560, 400), 40, 0.0))), seed=3)
    stub = _StubLean(0.95)
    dice = sorted(vision.read_dice(shot.image, readers=_with(stub)), key=lambda d: d.center[0])
    assert [d.value for d in dice] == [None, None, None]
    assert [d.alternatives for d in dice] == [(4,), (2,), (6,)]
    assert all(d.reason == "cocked" and d.confidence <= 0.05 + 1e-6 for d in dice)
    # Every read die was looked at in one pass, the two neighbours about 30 px from the
    # centre of a 640 px image (perspective moves a top face outward a little).
    assert len(stub.calls) == 1 and len(stub.calls[0]) == 3
    assert sum(abs(d * 640 - 30) < 2.5 for d in stub.calls[0]) == 2
    # The neighbours have a die beside them to lean on.
    assert sum(stub.beside[0]) >= 2
    # Not sure enough, or the check left out: read as usual.
    unsure = _with(_StubLean(lean_net.LEAN_SURE - 0.1))
    assert sorted(d.value for d in vision.read_dice(shot.image, readers=unsure)) == [2, 4, 6]
    left_out = vision.read_dice(shot.image, readers=_with(_StubLean(0.95)), lean_check=False)
    assert sorted(d.value for d in left_out) == [2, 4, 6]


def test_a_die_with_no_other_near_is_checked_too() -> None:
    # A die leaning on the tray's wall has no other die beside it.
    shot = render_tray(TraySpec(dice=(DieSpec(3, (200, 240), 40, 10.0),
                                      DieSpec(5, (440, 240), 40, 30.0))), seed=4)
    stub = _StubLean(1.0)
    dice = vision.read_dice(shot.image, readers=_with(stub))
    assert [d.reason for d in dice] == ["cocked", "cocked"]
    assert sorted(d.alternatives for d in dice) == [(3,), (5,)]
    assert len(stub.calls) == 1 and len(stub.calls[0]) == 2
    # Six sides apart and five from the frame's edges: nothing beside either to lean on.
    assert stub.beside == [[False, False]]
    # A check that finds nothing leaning leaves them read.
    flat = _with(_StubLean(0.0))
    assert sorted(d.value for d in vision.read_dice(shot.image, readers=flat)) == [3, 5]


def test_training_is_reproducible_and_exports_what_onnx_runtime_runs(tmp_path) -> None:
    torch = pytest.importorskip(
        "torch", reason="training needs PyTorch: pip install -e '.[train]' (make train-deps)"
    )
    from vision.lab import lean_net_train

    samples = lean_net_train.rendered_samples(range(200_000, 200_004), log=lambda *a: None)
    assert {s.label for s in samples} == {0, 1}, "rendered trays give flat and leaning dice"
    first = lean_net_train.train(samples, seed=5, epochs=1, log=lambda *a: None)
    second = lean_net_train.train(samples, seed=5, epochs=1, log=lambda *a: None)
    for (name, a), (_, b) in zip(first.state_dict().items(), second.state_dict().items(),
                                 strict=True):
        assert torch.equal(a, b), f"{name} differs between two runs with one seed"
    out = tmp_path / "model.onnx"
    lean_net_train.export(first, out)
    patches, distances, _ = truth_patches(range(40, 42))
    with torch.no_grad():
        logits = first(torch.from_numpy(lean_net.to_input(patches, distances)))
        expected = torch.softmax(logits, 1)[:, 1].numpy()
    assert np.allclose(lean_net.LeanNet(out).leaning(patches, distances), expected, atol=1e-4)



def test_a_die_by_the_frame_s_edge_may_lean_on_the_tray_s_wall() -> None:
    shot = render_tray(TraySpec(dice=(DieSpec(3, (50, 240), 40, 10.0),
                                      DieSpec(5, (400, 240), 40, 30.0))), seed=4)
    stub = _StubLean(0.0)
    dice = vision.read_dice(shot.image, readers=_with(stub))
    # Asked in the order read: the die a side from the frame's edge has its wall beside it.
    asked = sorted(zip((d.center[0] for d in dice), stub.beside[0], strict=True))
    assert sorted(d.value for d in dice) == [3, 5]
    assert [flag for _, flag in asked] == [True, False]
