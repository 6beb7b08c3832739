"""Training the die finder (`vision.finder`): ``python -m vision.lab.finder_train``.

The finder learns from rendered trays of every kind of dice, floor and light the renderer
draws, and from the dice-photos dataset's photos, each shown turned, mirrored, scaled and
relit at random (`vision.lab.finder_data`). ``--leave-out SOURCE`` trains without one of the
dataset's sources, so that source can judge a finder that never saw it. PyTorch is imported
only here: the product runs the exported ONNX file on ONNX Runtime alone.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from vision.finder import CHANNELS, DEFAULT_MODEL, standardised
from vision.lab.finder_data import batches, empty_samples, photo_samples, render_samples
from vision.lab.scoring import DEFAULT_DATASET, half_of, load_manifest

SEED = 421
CROP = 160  # training crops, pixels at the finder's scale
BATCH = 16
# Apart from every seed the tests and benches draw: the first half of the trays as the
# tests' renderer draws them, the second half from the bar's variety (`varied_tray`).
RENDER_SEEDS = range(900_000, 902_400)
VARIED_FROM = 901_200
RECOLOUR = 0.0  # share of the photos' crops whose dice are repainted (`vision.lab.recolour`)
# Frames without a die (cloths of dots, print), seeds apart from the face network's and the
# tests' scenes: the finder trained on dice alone was sure of a polka cloth's dots, and of a
# speck of white paper as a white die's one (docs/lab/vision-finder.md).
EMPTY_SEEDS = range(960_000, 960_300)
EMPTY = 300
# Training steps of the shipped finder: 9,000 found twice as many of a source's dice it never
# saw as 3,000 did (docs/lab/vision-finder.md).
STEPS = 9000


def build():
    """The finder network: an encoder down to 1/16 of the input with dilated convolutions
    (a die of up to about 90 input pixels lies within its reach), and a decoder back to
    1/STRIDE with the encoder's finer maps joined in. The layers at 1/STRIDE, where most of
    the pixels are, are kept narrow: about 100M multiply-adds for a 320x240 input."""
    import torch
    from torch import nn

    def conv(cin: int, cout: int, stride: int = 1, dilation: int = 1, k: int = 3
             ) -> nn.Sequential:
        pad = dilation if k == 3 else 0
        return nn.Sequential(
            nn.Conv2d(cin, cout, k, stride, padding=pad, dilation=dilation, bias=False),
            nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    class Finder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.d1 = conv(3, 12, 2)                                   # 1/2
            self.d2 = conv(12, 24, 2)                                  # 1/4
            self.d3 = nn.Sequential(conv(24, 32, 2), conv(32, 32))     # 1/8
            self.d4 = nn.Sequential(conv(32, 48, 2), conv(48, 48, dilation=2),
                                    conv(48, 48, dilation=4))          # 1/16
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.u3 = conv(48 + 32, 32)
            self.u2 = nn.Sequential(conv(32 + 24, 16, k=1), conv(16, 16))
            self.head = nn.Conv2d(16, len(CHANNELS), 1)

        def forward(self, x):
            x2 = self.d2(self.d1(x))
            x3 = self.d3(x2)
            x4 = self.d4(x3)
            y = self.u3(torch.cat([self.up(x4), x3], 1))
            y = self.u2(torch.cat([self.up(y), x2], 1))
            return self.head(y)

    model = Finder()
    with torch.no_grad():  # a low prior for a die at each cell: few cells hold one
        model.head.bias.zero_()
        model.head.bias[0] = -4.0
    return model


def loss(out, target, weight):
    """The centre's penalty-reduced focal loss (most cells hold no die; near a centre, less
    is asked) plus L1 for the offsets, side and turn, and cross-entropy for the lean, each at
    the cells where it is known."""
    import torch
    import torch.nn.functional as F

    p = torch.sigmoid(out[:, 0]).clamp(1e-4, 1 - 1e-4)
    t = target[:, 0]
    pos = (t >= 1.0).float()
    focal = -(pos * (1 - p) ** 2 * torch.log(p)
              + (1 - pos) * (1 - t) ** 4 * p**2 * torch.log(1 - p))
    n = pos.sum().clamp(min=1.0)
    centre = focal.sum() / n
    w = weight[:, 1:6]
    box = (w * (out[:, 1:6] - target[:, 1:6]).abs()).sum() / n
    lean = (weight[:, 6] * F.binary_cross_entropy_with_logits(
        out[:, 6], target[:, 6], reduction="none")).sum() / weight[:, 6].sum().clamp(min=1.0)
    return centre + box + 0.5 * lean


def draw_tray(seed: int):
    """The rendered tray of a training seed (None when the draw cannot fit its dice)."""
    from vision.lab.render import varied_tray

    rng = np.random.default_rng(seed)
    if seed < VARIED_FROM:
        return plain_tray(rng)
    try:
        return varied_tray(rng)
    except ValueError:
        return None


def plain_tray(rng: np.random.Generator):
    """A tray as the tests' renderer draws it: dice of 25 to 120 px of every colour, touching
    and leaning ones, sometimes a hand (None when the draw cannot fit its dice)."""
    from vision.lab.render import random_tray

    side = float(np.exp(rng.uniform(math.log(25), math.log(120))))
    most = max(1, min(14, int(640 * 480 / (side * 2.6) ** 2)))
    n = int(rng.integers(1, most + 1))
    cocked = int(rng.integers(0, 2)) if n >= 3 else 0
    touching = int(rng.integers(0, 2)) if n >= 2 + 2 * cocked else 0
    try:
        return random_tray(rng, n, side=(0.9 * side, 1.1 * side), cocked=cocked,
                           touching=touching, hand=bool(rng.random() < 0.2))
    except ValueError:
        return None


def train(samples, steps: int, seed: int, log=print, recolour: float = 0.0):
    """The finder trained for ``steps`` batches of ``samples`` (``recolour`` of the photos'
    crops with their dice repainted); PyTorch, eval mode."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = build()
    opt = torch.optim.AdamW(model.parameters(), lr=4e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=4e-3, total_steps=steps)
    feed = batches(samples, rng, BATCH, CROP, standardised, recolour)
    model.train()
    start, running = time.monotonic(), 0.0
    for step in range(1, steps + 1):
        x, t, w = (torch.from_numpy(a) for a in next(feed))
        opt.zero_grad()
        value = loss(model(x), t, w)
        value.backward()
        opt.step()
        sched.step()
        running = 0.98 * running + 0.02 * value.item() if step > 1 else value.item()
        if step % 100 == 0:
            log(f"  step {step}/{steps}: loss {running:.3f} ({time.monotonic() - start:.0f} s)")
    return model.eval()


def export(model, out: Path) -> None:
    """The model as ONNX (opset 13) for a frame of any size (multiples of 16 pixels)."""
    import torch

    out.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(model, torch.zeros(1, 3, 240, 320), str(out), input_names=["frame"],
                      output_names=["grid"], opset_version=13, dynamo=False,
                      dynamic_axes={"frame": {2: "h", 3: "w"}, "grid": {2: "gh", 3: "gw"}})


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vision.lab.finder_train",
                                description="Train the die finder (PyTorch, CPU).")
    p.add_argument("dataset", nargs="?", default=str(DEFAULT_DATASET))
    p.add_argument("--out", default=str(DEFAULT_MODEL), help="ONNX file to write")
    p.add_argument("--leave-out", metavar="SOURCE", default=None,
                   help="train without this dataset source (e.g. nell-byler/dice_detection)")
    p.add_argument("--half", choices=("even", "odd", "all"), default="all",
                   help="train on every other dataset image only (the bench's halves)")
    p.add_argument("--steps", type=int, default=STEPS,
                   help=f"training steps (default {STEPS}, as the shipped finder)")
    p.add_argument("--renders", type=int, default=len(RENDER_SEEDS))
    p.add_argument("--cache", default=None, help="folder to keep the rendered trays in")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--threads", type=int, default=1, help="PyTorch threads")
    p.add_argument("--empty", type=int, default=EMPTY, metavar="N",
                   help=f"frames without a die to learn from (cloths of dots, print; at most "
                        f"{len(EMPTY_SEEDS)}; default %(default)s, as the shipped model)")
    p.add_argument("--recolour", type=float, default=RECOLOUR, metavar="SHARE",
                   help="repaint the dice of this share of the photos' crops in colours of "
                   f"any hue (default {RECOLOUR:g}, as the shipped finder)")
    args = p.parse_args(argv)
    if not 0 <= args.recolour <= 1:
        p.error("--recolour: 0 to 1")
    try:
        import torch
    except ImportError:
        print("finder_train: training needs PyTorch: pip install -e '.[train]'",
              file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, args.threads))
    cv2.setNumThreads(1)
    dataset = Path(args.dataset)
    try:
        records = half_of(load_manifest(dataset), args.half)
    except ValueError as exc:
        print(f"finder_train: {exc}", file=sys.stderr)
        return 2
    names = {r["image"] for r in records}
    if args.leave_out and args.leave_out not in {r["source"] for r in records}:
        print(f"finder_train: no source {args.leave_out!r} in the dataset", file=sys.stderr)
        return 2
    started = time.monotonic()
    photos = photo_samples(dataset, lambda r: r["image"] in names
                           and r["source"] != args.leave_out, bodies=args.recolour > 0)
    first = RENDER_SEEDS.start
    renders = render_samples(range(first, first + args.renders),
                             Path(args.cache) if args.cache else None, draw_tray)
    empty = empty_samples(EMPTY_SEEDS[:max(0, args.empty)])
    print(f"{len(photos)} photos, {len(renders)} renders, {len(empty)} frames without dice "
          f"({time.monotonic() - started:.0f} s)")
    # Photos and renders weigh alike, however many of each there are.
    samples = photos * max(1, round(len(renders) / max(1, len(photos)))) + renders + empty
    model = train(samples, args.steps, args.seed, recolour=args.recolour)
    export(model, Path(args.out))
    print(f"wrote {args.out} ({time.monotonic() - started:.0f} s in all)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
