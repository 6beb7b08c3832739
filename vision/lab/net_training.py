"""What the training scripts of the face network and the lean check share.

The training loop (class-balanced loss, AdamW with a one-cycle schedule, deterministic
algorithms), the ONNX export the product runs, and the command line's common options and
setup, with the networks a script cuts its samples with (`add_networks`). PyTorch is
imported only inside these functions: the product runs the models on ONNX Runtime alone and
does not need it installed.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.image_io import ImageError, load_image
from vision.lab.networks import NETWORKS
from vision.lab.scoring import DEFAULT_DATASET, half_of, load_manifest
from vision.onnx_model import NO_NETWORK, NetworkFileError
from vision.readers import Readers

BATCH = 128
SEED = 421


def dataset_images(
    dataset: Path, half: str, log: Callable[[str], None] = print, every: int = 50,
    leave_out: str | None = None,
) -> Iterator[tuple[dict[str, Any], np.ndarray]]:
    """(manifest record, BGR image) of each image of the dataset's ``half``, less those of the
    source ``leave_out``; images that cannot be read are skipped. Progress goes to ``log``
    every ``every`` images."""
    records = [r for r in half_of(load_manifest(dataset), half) if r["source"] != leave_out]
    for k, rec in enumerate(records, 1):
        if k % every == 0:
            log(f"  {k}/{len(records)} images")
        try:
            image = load_image(dataset / rec["image"])
        except ImageError:
            log(f"  skipped {rec['image']}: cannot be read")
            continue
        yield rec, image


def square_around(image: np.ndarray, center: tuple[float, float], size: int) -> np.ndarray:
    """The ``size`` x ``size`` square of ``image`` centred on ``center`` (sub-pixel; the
    border repeated beyond the image): a sample's crop, augmented at every epoch."""
    m = np.array([[1.0, 0.0, size / 2.0 - center[0]], [0.0, 1.0, size / 2.0 - center[1]]])
    return cv2.warpAffine(image, m, (size, size), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_REPLICATE)


def relit(
    patch: np.ndarray, rng: np.random.Generator, blur: tuple[float, float], noise: float
) -> np.ndarray:
    """A BGR patch as another camera under other light would show it: its colour channels
    swapped at random (dice of other colours), sometimes grey, brighter or darker, sometimes
    blurred (a Gaussian of sigma in ``blur``), with sensor noise up to ``noise``."""
    patch = patch.astype(np.float32)
    if rng.random() < 0.5:
        patch = patch[:, :, rng.permutation(3)]
    if rng.random() < 0.15:
        patch = np.repeat(patch.mean(axis=2, keepdims=True), 3, axis=2)
    patch = patch * rng.uniform(0.6, 1.4) + rng.uniform(-40, 40)
    if rng.random() < 0.25:
        patch = cv2.GaussianBlur(patch, (0, 0), rng.uniform(*blur))
    patch += rng.normal(0.0, rng.uniform(0, noise), patch.shape).astype(np.float32)
    return np.clip(patch, 0, 255).astype(np.uint8)


def fit(
    build: Callable[[], object],
    labels: np.ndarray,
    n_classes: int,
    batch_input: Callable[[np.ndarray, np.random.Generator], np.ndarray],
    seed: int,
    epochs: int,
    log: Callable[[str], None] = print,
    aux: Callable[[Any, Any, np.ndarray], tuple[Any, Any]] | None = None,
):
    """The model ``build()`` makes, trained on samples of ``labels``; PyTorch, eval mode.

    ``batch_input(indices, rng)`` gives the network's input for those samples (augmented
    anew at each call). Each class weighs the same in the loss, however many samples it has.
    With ``aux``, ``batch_input`` gives (input, more) and ``aux(model, input, more)`` the
    logits and a loss of another task, added to the classes' loss. Same seed, samples and
    library versions: the same weights.
    """
    import torch
    from torch import nn

    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    rng = np.random.default_rng(seed)
    model = build()
    counts = np.bincount(labels, minlength=n_classes).astype(np.float64)
    weights = torch.tensor(counts.sum() / (n_classes * np.maximum(counts, 1)),
                           dtype=torch.float32)
    loss_fn = nn.CrossEntropyLoss(weight=weights)
    steps = epochs * math.ceil(len(labels) / BATCH)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    for epoch in range(epochs):
        model.train()
        order = rng.permutation(len(labels))
        total, right, seen = 0.0, 0, 0
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            given = batch_input(idx, rng)
            x = torch.from_numpy(given[0] if aux else given)
            y = torch.from_numpy(labels[idx])
            opt.zero_grad()
            if aux:
                out, more = aux(model, x, given[1])
                loss = loss_fn(out, y) + more
            else:
                out = model(x)
                loss = loss_fn(out, y)
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
            right += int((out.argmax(1) == y).sum())
            seen += len(idx)
        log(f"  epoch {epoch + 1}/{epochs}: loss {total / seen:.3f}, "
            f"accuracy {right / seen:.3f}")
    return model.eval()


def export(model, input_shape: tuple[int, int, int], out: Path) -> None:
    """Write the model as ONNX (opset 13) for an input of ``input_shape`` (channels, height,
    width) and any batch size."""
    import torch

    out.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, *input_shape)
    torch.onnx.export(model, dummy, str(out), input_names=["patch"], output_names=["logits"],
                      dynamic_axes={"patch": {0: "n"}, "logits": {0: "n"}}, opset_version=13,
                      dynamo=False)


def parser(prog: str, description: str, default_out: Path, epochs: int) -> argparse.ArgumentParser:
    """The options every training script takes: dataset, half, output, seed, epochs, threads."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("dataset", nargs="?", default=str(DEFAULT_DATASET))
    p.add_argument("--half", choices=("even", "odd", "all"), default="all",
                   help="train on every other dataset image only (the bench's halves)")
    p.add_argument("--leave-out", metavar="SOURCE", default=None,
                   help="train without this dataset source (e.g. nell-byler/dice_detection), "
                   "to measure the networks on a source they never saw")
    p.add_argument("--out", default=str(default_out), help="ONNX file to write")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--epochs", type=int, default=epochs)
    p.add_argument("--threads", type=int, default=2, help="PyTorch threads")
    return p


def add_networks(p: argparse.ArgumentParser, *names: str) -> None:
    """Options naming the networks (of `NETWORKS`: ``face``, ``finder``, ``lean``) a script
    reads with instead of the shipped ones: a network trained without the ``--leave-out``
    source, for one, to cut the samples with."""
    for name in names:
        p.add_argument(f"--{name}", metavar="FILE", default=None,
                       help=f"read with this {NETWORKS[name]} (ONNX; default: the shipped one)")


def readers(args: argparse.Namespace) -> Readers:
    """The networks the options of `add_networks` name (the shipped ones where none is named);
    FileNotFoundError, or ValueError for a file that holds no network this project can run."""
    files = {name: getattr(args, name, None) for name in NETWORKS}
    try:
        return Readers.from_files(**files)
    except NetworkFileError:
        named = " or ".join(str(f) for f in files.values() if f)
        raise ValueError(f"{named}: {NO_NETWORK}") from None


def setup(threads: int, dataset: Path) -> str | None:
    """Set the threads PyTorch and OpenCV use; why training cannot start, or None."""
    try:
        import torch
    except ImportError:
        return "training needs PyTorch: pip install -e '.[train]'"
    torch.set_num_threads(max(1, threads))
    cv2.setNumThreads(1)
    if not (dataset / "manifest.json").is_file():
        return f"no dice-photos dataset at {dataset} (manifest.json missing)"
    return None
