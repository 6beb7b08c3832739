"""Train the lean check (`vision.lean_net`) reproducibly and write it as ONNX.

Usage::

    python -m vision.lab.lean_net_train [DATASET] [--half even|odd|all] [--out FILE] [--seed N]
                                        [--face FILE] [--finder FILE]

Needs the training extra (``pip install -e '.[train]'``: PyTorch); the product itself
runs the result on ONNX Runtime alone. Same seed and library versions, same model.

Leaning dice come from rendered trays (`vision.lab.render`, seeds far from those of the tests),
which vary the camera's height (how wide a flat die's side faces show), the image size, die
sizes, colours, floors and light; each holds up to two dice leaning on another die and up
to two pairs of touching dice (a neighbour's face beside a die is no side face); with
``--varied N``, N trays of the bar's variety (`varied_tray`) add dark, translucent and marbled
dice, hard shadows, glare and dice leaning on the tray's wall (the shipped model has none:
docs/lab/vision-finder.md); ``--tower N`` N tower's throws (`tower_tray`: two to five small
dice, every kind of dice set as often), each with a die leaning on another. Real flat dice
come from the dice-photos dataset: each die `vision.read_dice` reads (without the lean
check; with the shipped face network and die finder, or those ``--face`` and ``--finder``
name) with its labelled value, cut where it was read. The dataset labels no leaning dice:
its few dice that lean on the tray wall are taken as flat. Each epoch draws new shifts,
scales, mirror images, lighting and colour swaps of every die.

``--half even|odd`` takes every other image of the manifest (the bench's halves), so
``dicetower bench vision --half odd --lean lean_even.onnx`` measures how often the even
model stops real flat dice it has never seen.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.lab import net_training
from vision.lab.face_samples import label_centres
from vision.lab.net_training import dataset_images, fit, relit, square_around
from vision.lean_net import (
    DEFAULT_MODEL,
    INPUT_SIDE,
    PATCH_SCALE,
    distance_from_centre,
    lean_patch,
    to_input,
)
from vision.pipeline import read_dice
from vision.readers import Readers

RENDER_SEEDS = range(200_000, 202_000)  # tests use seeds below 10,000
VARIED_SEEDS = range(210_000, 211_000)  # the bar's variety (`varied_tray`)
TOWER_SEEDS = range(215_000, 215_800)  # a tower's throws of every kind (`tower_spec`)
CROP_FACTOR = 1.5 * PATCH_SCALE  # stored crop side / die side: room for shifts and turns
IMAGE_SIZES = ((640, 480), (640, 640), (800, 600), (480, 640))
EPOCHS = 60
# Each real flat die is drawn this many times an epoch: the check must not stop real dice,
# and rendered ones far outnumber them.
REAL_REPEATS = 3


@dataclass
class Sample:
    crop: np.ndarray  # BGR, the die centred, CROP_FACTOR x side wide, as in the image
    side: float  # die side in crop pixels
    toward: tuple[float, float]  # unit vector from the die to the image centre
    distance: float  # from the image centre, x the image's larger side
    label: int  # 1: leaning


def tray_spec(seed: int):
    """The rendered tray of one training seed."""
    from vision.lab.render import random_tray

    rng = np.random.default_rng(seed)
    width, height = IMAGE_SIZES[int(rng.integers(len(IMAGE_SIZES)))]
    touching, cocked = int(rng.integers(0, 3)), int(rng.integers(0, 3))
    n = int(rng.integers(max(3, 2 * (touching + cocked)), 10))
    camera = float(rng.uniform(1.1, 2.6)) * max(width, height)
    while True:
        try:
            return random_tray(rng, n, width=width, height=height, side=(24.0, 64.0),
                               touching=touching, cocked=cocked, camera_height=camera)
        except ValueError:  # no room for so many dice of that size: fewer
            if n <= 2 * (touching + cocked):
                touching, cocked = 0, max(0, cocked - 1)
            n = max(1, n - 1)


def varied_spec(seed: int):
    """A tray of the bar's variety (`varied_tray`: dice of every kind, hard shadows, glare)
    with, at random, a die leaning on the tray's wall and one leaning on another die; None when
    its dice do not fit."""
    from vision.lab.render import varied_tray

    rng = np.random.default_rng(seed)
    try:
        return varied_tray(rng, cocked=int(rng.integers(0, 2)), leaning=int(rng.integers(0, 2)))
    except ValueError:
        return None


def tower_spec(seed: int):
    """A tower's throw of the bar's variety (`tower_tray`: two to five small dice, every kind
    of dice set as often) with a die leaning on another and, at random, one on the tray's
    wall; None when its dice do not fit."""
    from vision.lab.render import tower_tray

    rng = np.random.default_rng(seed)
    try:
        return tower_tray(rng, cocked=1, leaning=int(rng.integers(0, 2)))
    except ValueError:
        return None


def cut(image: np.ndarray, center: tuple[float, float], side: float, label: int) -> Sample:
    """The die at ``center`` (``side`` px) of an image, as a sample."""
    h, w = image.shape[:2]
    crop = square_around(image, center, max(8, math.ceil(CROP_FACTOR * side)))
    middle = (w / 2.0, h / 2.0)
    dx, dy = middle[0] - center[0], middle[1] - center[1]
    norm = math.hypot(dx, dy)
    toward = (dx / norm, dy / norm) if norm > 1e-6 else (0.0, -1.0)
    return Sample(crop, side, toward, distance_from_centre(center, middle, max(w, h)), label)


def tray_samples(image: np.ndarray, truths) -> list[Sample]:
    """One sample per die of a rendered tray, at its truth (top-face centre and side)."""
    return [cut(image, t.center, t.side, int(t.cocked)) for t in truths]


def dataset_samples(dataset: Path, half: str, log=print, leave_out: str | None = None,
                    readers: Readers | None = None) -> list[Sample]:
    """Flat samples: the dataset's dice as `vision.read_dice` reads them with ``readers``
    (None: the shipped networks; without the lean check), where the reading has the labelled
    value within half a die of a labelled die."""
    samples: list[Sample] = []
    for rec, image in dataset_images(dataset, half, log, every=100, leave_out=leave_out):
        labels = label_centres(rec)
        for die in read_dice(image, readers=readers, lean_check=False):
            side = math.dist(*die.corners[:2])
            if die.value is not None and any(
                    v == die.value and math.dist(die.center, (x, y)) <= 0.5 * side
                    for x, y, v, _ in labels):
                samples.append(cut(image, die.center, side, 0))
    return samples


def rendered_samples(seeds=RENDER_SEEDS, log=print, draw=tray_spec) -> list[Sample]:
    """One sample per die of the rendered trays of ``seeds`` (``draw(seed)`` makes a seed's
    tray, None to skip it)."""
    from vision.lab.render import render_tray

    samples: list[Sample] = []
    for k, seed in enumerate(seeds, 1):
        if k % 250 == 0:
            log(f"  {k}/{len(seeds)} trays, {len(samples)} dice")
        spec = draw(seed)
        if spec is None:
            continue
        shot = render_tray(spec, seed=seed)
        samples += tray_samples(shot.image, shot.truth)
    return samples


def augmented(sample: Sample, rng: np.random.Generator) -> np.ndarray:
    """The sample cut as the pipeline would, under a random shift, scale, mirror and light."""
    c = sample.crop.shape[0] / 2.0
    # The pipeline knows a die's side only roughly (from its pips' pitch, or its neighbours'
    # for a one): the check must not hang on it.
    side = sample.side * rng.uniform(0.8, 1.25)
    shift = rng.normal(0.0, 0.05 * sample.side, 2)
    turn = math.radians(rng.normal(0.0, 4.0))
    tx, ty = sample.toward
    tx, ty = tx * math.cos(turn) - ty * math.sin(turn), tx * math.sin(turn) + ty * math.cos(turn)
    centre = (c + shift[0], c + shift[1])
    patch = lean_patch(sample.crop, centre, side, (centre[0] + 100 * tx, centre[1] + 100 * ty))
    if rng.random() < 0.5:
        patch = patch[:, ::-1]  # a mirror image keeps the centre straight up
    return relit(patch, rng, blur=(0.4, 1.0), noise=6.0)


def build_model():
    """Three small conv layers and a small classifier (about 2M multiply-adds per die)."""
    from torch import nn

    def conv(cin: int, cout: int) -> list:
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    return nn.Sequential(
        *conv(4, 16), nn.MaxPool2d(2),
        *conv(16, 32), nn.MaxPool2d(2),
        *conv(32, 32), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.3), nn.Linear(32 * (INPUT_SIDE // 8) ** 2, 32), nn.ReLU(),
        nn.Linear(32, 2),
    )


def train(samples: list[Sample], seed: int, epochs: int = EPOCHS, log=print):
    """A trained model (PyTorch, eval mode)."""
    labels = np.array([s.label for s in samples])
    return fit(build_model, labels, 2,
               lambda idx, rng: to_input([augmented(samples[i], rng) for i in idx],
                                         [samples[i].distance for i in idx]),
               seed, epochs, log)


def export(model, out: Path) -> None:
    """Write the model as ONNX, for any batch size."""
    net_training.export(model, (4, INPUT_SIDE, INPUT_SIDE), out)


def main(argv: list[str] | None = None) -> int:
    parser = net_training.parser("python -m vision.lab.lean_net_train", __doc__.split("\n\n")[0],
                                 DEFAULT_MODEL, EPOCHS)
    parser.add_argument("--trays", type=int, default=len(RENDER_SEEDS))
    parser.add_argument("--varied", type=int, default=0, metavar="N",
                        help=f"add N trays of the bar's variety, with dice leaning on its wall "
                        f"(at most {len(VARIED_SEEDS)}; default 0, as the shipped model)")
    parser.add_argument("--tower", type=int, default=0, metavar="N",
                        help=f"add N tower's throws of every kind of dice, each with a die "
                        f"leaning on another (at most {len(TOWER_SEEDS)}; default 0)")
    net_training.add_networks(parser, "face", "finder")
    args = parser.parse_args(argv)
    if not 0 <= args.varied <= len(VARIED_SEEDS):
        parser.error(f"--varied: 0 to {len(VARIED_SEEDS)}")
    if not 0 <= args.tower <= len(TOWER_SEEDS):
        parser.error(f"--tower: 0 to {len(TOWER_SEEDS)}")
    dataset = Path(args.dataset)
    if problem := net_training.setup(args.threads, dataset):
        print(problem, file=sys.stderr)
        return 2
    try:
        readers = net_training.readers(args)
    except (FileNotFoundError, ValueError) as exc:
        print(f"lean_net_train: {exc}", file=sys.stderr)
        return 2
    began = time.perf_counter()
    print(f"reading flat dice in {dataset} (half: {args.half})")
    samples = dataset_samples(dataset, args.half, leave_out=args.leave_out,
                              readers=readers) * REAL_REPEATS
    print(f"rendering {args.trays} trays")
    samples += rendered_samples(range(RENDER_SEEDS.start, RENDER_SEEDS.start + args.trays))
    if args.varied:
        print(f"rendering {args.varied} trays of the bar's variety")
        samples += rendered_samples(VARIED_SEEDS[:args.varied], draw=varied_spec)
    if args.tower:
        print(f"rendering {args.tower} tower's throws")
        samples += rendered_samples(TOWER_SEEDS[:args.tower], draw=tower_spec)
    leaning = sum(s.label for s in samples)
    print(f"{len(samples)} dice: {leaning} leaning, {len(samples) - leaning} flat")
    model = train(samples, args.seed, args.epochs)
    export(model, Path(args.out))
    print(f"wrote {args.out} in {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
