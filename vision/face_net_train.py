"""Train the face network (`vision.face_net`) reproducibly and write it as ONNX.

Usage::

    python -m vision.face_net_train [DATASET] [--half even|odd|all] [--out FILE] [--seed N]

Needs the training extra (``pip install -e '.[train]'``: PyTorch and onnx); the product itself
runs the result through OpenCV alone. Same dataset, seed and library versions, same model.

Samples are cut the way the pipeline sees dice: every image goes through
`vision.pipeline.prepare`, and each die candidate is labelled by the dataset's labels (a
candidate near a labelled die's centre takes its value, one far from every labelled die is
"none": a speck, a tray mark, a pip cluster of a side face). Every labelled die is also cut at
its labelled centre. Rendered trays (`vision.render`, seeds far from those of the tests) add
dice of other colours and dice leaning on another die, which are "none": their top face is
not flat, and the game asks for a re-throw. Each epoch draws new rotations (any angle: a
die has no upright), shifts, scales, lighting and colour swaps of every sample.

``--half even|odd`` trains on every other image of the manifest (the bench's halves), so
``dicetower bench vision --half odd`` with ``DICETOWER_FACE_NET`` set to the even model
measures it on images it has never seen.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.face_net import CLASSES, DEFAULT_MODEL, INPUT_SIDE, to_input
from vision.image_io import ImageError, load_image
from vision.pipeline import Scene, candidate_side, prepare, straighten
from vision.scoring import die_sizes, load_manifest

DEFAULT_DATASET = Path(__file__).resolve().parent.parent.parent / "shared/datasets/dice-photos"
CROP_FACTOR = 2.4  # stored crop side / die side: room for any rotation of the patch
NEAR = 0.3  # x die size: a candidate this close to a labelled die's centre is that die
FAR = 0.9  # x die size: one farther than this from every labelled die is no die
DIE_BOX_TO_SIDE = 0.85  # top-face side / shorter side of a whole-die box (it has side faces)
RENDER_SEEDS = range(100_000, 100_400)  # tests use seeds below 10,000
EPOCHS = 120
BATCH = 128


@dataclass
class Sample:
    crop: np.ndarray  # BGR, the die centred, CROP_FACTOR x side wide
    side: float  # die side in crop pixels
    label: int  # index into CLASSES
    group: str  # where it came from, for the report


def _sample(scene: Scene, center: tuple[float, float], side: float, label: int,
            group: str) -> Sample:
    """The die at ``center`` (``side``, working pixels) cut from what the pipeline straightens
    it from."""
    image, zoom = scene.source
    side *= zoom
    size = max(8, math.ceil(CROP_FACTOR * side))
    m = np.array([[1.0, 0.0, size / 2.0 - center[0] * zoom],
                  [0.0, 1.0, size / 2.0 - center[1] * zoom]])
    crop = cv2.warpAffine(image, m, (size, size), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_REPLICATE)
    return Sample(crop, side, label, group)


def _label_centres(rec: dict) -> list[tuple[float, float, int, float | None]]:
    """(x, y, value, whole-die box side or None) of each labelled die, in image pixels."""
    out = []
    for d in rec["dice"]:
        box = d.get("bbox")
        if isinstance(box, list | tuple) and len(box) == 4:
            x, y, w, h = (float(t) for t in box)
            own = DIE_BOX_TO_SIDE * min(w, h) if rec.get("bbox_kind") == "die" else None
            out.append((x + w / 2.0, y + h / 2.0, int(d["value"]), own))
        elif rec.get("bbox_kind") == "none" and len(rec["dice"]) == 1:
            out.append((rec["width"] / 2.0, rec["height"] / 2.0, int(d["value"]), None))
    return out


def dataset_samples(dataset: Path, half: str, log=print) -> list[Sample]:
    """Labelled candidate and labelled-centre samples from the dataset's images."""
    records = load_manifest(dataset)
    sizes = dict(zip((r["image"] for r in records), die_sizes(records), strict=True))
    if half != "all":
        records = records[0 if half == "even" else 1 :: 2]
    samples: list[Sample] = []
    for k, rec in enumerate(records, 1):
        if k % 50 == 0:
            log(f"  {k}/{len(records)} images, {len(samples)} samples")
        try:
            image = load_image(dataset / rec["image"])
        except ImageError:
            continue
        scene = prepare(image)
        s = sizes[rec["image"]] * scene.scale
        labels = [(x * scene.scale, y * scene.scale, v, own * scene.scale if own else None)
                  for x, y, v, own in _label_centres(rec)]
        group = rec["source"].split("/")[0]
        for cand in scene.candidates:
            if not math.isfinite(cand.side) or cand.side < 4:
                continue
            dists = [math.dist(cand.center, (x, y)) / s for x, y, _, _ in labels]
            nearest = int(np.argmin(dists)) if dists else -1
            if nearest >= 0 and dists[nearest] <= NEAR:
                label = labels[nearest][2]
            elif (not dists or min(dists) > FAR) and rec.get("bbox_kind") != "none":
                label = 0
            else:
                continue
            side = candidate_side(cand, scene.side)
            samples.append(_sample(scene, cand.center, side, label, group))
        for x, y, v, own in labels:
            side = own if own and 0.7 * scene.side <= own <= 1.4 * scene.side else scene.side
            samples.append(_sample(scene, (x, y), side, v, group))
    return samples


def rendered_samples(seeds=RENDER_SEEDS) -> list[Sample]:
    """Dice from rendered trays: flat ones with their value, leaning ones as "none"."""
    from vision.render import random_tray, render_tray

    samples: list[Sample] = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        touching, cocked = int(rng.integers(0, 2)), int(rng.integers(0, 3))
        n = int(rng.integers(2 * (touching + cocked), 9)) if touching + cocked else 3
        spec = random_tray(rng, max(n, 1), touching=touching, cocked=cocked)
        shot = render_tray(spec, seed=seed)
        scene = prepare(shot.image)
        for truth in shot.truth:
            x, y = truth.center[0] * scene.scale, truth.center[1] * scene.scale
            side = truth.side * scene.scale
            label = 0 if truth.cocked else truth.value
            samples.append(_sample(scene, (x, y), side, label, "rendered"))
    return samples


def augmented(sample: Sample, rng: np.random.Generator) -> np.ndarray:
    """The sample straightened as the pipeline would, under a random pose and lighting."""
    c = sample.crop.shape[0] / 2.0
    side = sample.side * rng.uniform(0.88, 1.14)
    shift = rng.normal(0.0, 0.06 * sample.side, 2)
    patch, _ = straighten(sample.crop, (c + shift[0], c + shift[1]), rng.uniform(0, 360), side)
    patch = patch.astype(np.float32)
    if rng.random() < 0.5:
        patch = patch[:, :, rng.permutation(3)]
    if rng.random() < 0.15:
        patch = np.repeat(patch.mean(axis=2, keepdims=True), 3, axis=2)
    patch = patch * rng.uniform(0.6, 1.4) + rng.uniform(-40, 40)
    if rng.random() < 0.25:
        patch = cv2.GaussianBlur(patch, (0, 0), rng.uniform(0.5, 1.5))
    patch += rng.normal(0.0, rng.uniform(0, 8), patch.shape).astype(np.float32)
    return np.clip(patch, 0, 255).astype(np.uint8)


def build_model():
    """The network: four small conv layers and a small classifier (about 5M multiply-adds per
    die, a fraction of a millisecond on one core)."""
    from torch import nn

    def conv(cin: int, cout: int) -> list:
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    return nn.Sequential(
        *conv(3, 16), nn.MaxPool2d(2),
        *conv(16, 32), *conv(32, 32), nn.MaxPool2d(2),
        *conv(32, 64), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.3), nn.Linear(64 * (INPUT_SIDE // 8) ** 2, 64), nn.ReLU(),
        nn.Linear(64, len(CLASSES)),
    )


def train(samples: list[Sample], seed: int, epochs: int = EPOCHS, log=print):
    """A trained model (PyTorch, eval mode)."""
    import torch
    from torch import nn

    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    rng = np.random.default_rng(seed)
    model = build_model()
    labels = np.array([s.label for s in samples])
    # Each class weighs the same, however many samples it has.
    counts = np.bincount(labels, minlength=len(CLASSES)).astype(np.float64)
    weights = torch.tensor(counts.sum() / (len(CLASSES) * np.maximum(counts, 1)),
                           dtype=torch.float32)
    loss_fn = nn.CrossEntropyLoss(weight=weights)
    steps = epochs * math.ceil(len(samples) / BATCH)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    for epoch in range(epochs):
        model.train()
        order = rng.permutation(len(samples))
        total, right, seen = 0.0, 0, 0
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            x = torch.from_numpy(to_input([augmented(samples[i], rng) for i in idx]))
            y = torch.from_numpy(labels[idx])
            opt.zero_grad()
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


def export(model, out: Path) -> None:
    """Write the model as ONNX (opset 13, fixed batch-free input shape)."""
    import torch

    out.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, 3, INPUT_SIDE, INPUT_SIDE)
    torch.onnx.export(model, dummy, str(out), input_names=["patch"], output_names=["logits"],
                      dynamic_axes={"patch": {0: "n"}, "logits": {0: "n"}}, opset_version=13,
                      dynamo=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.face_net_train",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", nargs="?", default=str(DEFAULT_DATASET))
    parser.add_argument("--half", choices=("even", "odd", "all"), default="all",
                        help="train on every other image only (the bench's halves)")
    parser.add_argument("--out", default=str(DEFAULT_MODEL), help="ONNX file to write")
    parser.add_argument("--seed", type=int, default=421)
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--threads", type=int, default=2, help="PyTorch threads")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("training needs PyTorch and onnx: pip install -e '.[train]'", file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, args.threads))
    cv2.setNumThreads(1)
    dataset = Path(args.dataset)
    if not (dataset / "manifest.json").is_file():
        print(f"no dice-photos dataset at {dataset} (manifest.json missing)", file=sys.stderr)
        return 2
    began = time.perf_counter()
    print(f"cutting samples from {dataset} (half: {args.half})")
    samples = dataset_samples(dataset, args.half)
    print("rendering trays")
    samples += rendered_samples()
    counts = np.bincount([s.label for s in samples], minlength=len(CLASSES))
    print(f"{len(samples)} samples: " + ", ".join(
        f"{name} {n}" for name, n in zip(CLASSES, counts, strict=True)))
    model = train(samples, args.seed, args.epochs)
    export(model, Path(args.out))
    print(f"wrote {args.out} in {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
