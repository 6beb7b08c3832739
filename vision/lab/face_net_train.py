"""Train the face network (`vision.face_net`) reproducibly and write it as ONNX.

Usage::

    python -m vision.lab.face_net_train [DATASET] [--half even|odd|all] [--out FILE] [--seed N]
                                        [--finder FILE] [--varied N] [--tower N] [--faint N]
                                        [--any-colour N] [--any-colour-marbled SHARE]
                                        [--faint-levels LOW HIGH] [--no-dots] [--cloths N]
                                        [--pips WEIGHT] [--samples FILE]

Needs the training extra (``pip install -e '.[train]'``: PyTorch); the product itself
runs the result on ONNX Runtime alone. Same dataset, seed and library versions, same model.

The samples (`vision.lab.face_samples`) are cut the way the pipeline sees dice, with the
shipped die finder or the one ``--finder`` names (the left-out finder of `vision.lab.loso`):
the dataset's photos, rendered trays (``--varied N`` of the bar's variety, ``--tower N`` of a
tower's few small dice, ``--any-colour N`` of dice of any colours, ``--faint N`` of dice whose
pips barely show), pages of print, price lists' dotted leaders and dotted cloths (``--no-dots``
leaves the last two out). The defaults are the shipped model's recipe
(docs/lab/vision-face-training.md). Each epoch draws new rotations (any angle: a die has no
upright), shifts, scales, lighting, colour swaps and JPEG re-encodings of every sample.
``--pips WEIGHT`` also asks the network where the pips of the faces in a patch are, where
the renderer knows it (`pip_map`); ``--samples FILE`` keeps the cut samples for the next run.

``--half even|odd`` trains on every other image of the manifest (the bench's halves), so
``dicetower bench vision --half odd --face even.onnx`` measures the even model on images it
has never seen.
"""

from __future__ import annotations

import argparse
import functools
import pickle
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from vision.face_net import CLASSES, DEFAULT_MODEL, INPUT_SIDE, to_input
from vision.lab import net_training
from vision.lab.face_samples import (
    ANY_COLOUR_SEEDS,
    CLOTH_SEEDS,
    FAINT_LEVELS,
    FAINT_SEEDS,
    PRICE_SEEDS,
    PRINT_SEEDS,
    SMOKY_SEEDS,
    TOWER_SEEDS,
    VARIED_SEEDS,
    Sample,
    any_colour_samples,
    cloth_samples,
    dataset_samples,
    faint_samples,
    print_samples,
    rendered_samples,
    smoky_samples,
    tower_samples,
    varied_samples,
)
from vision.lab.net_training import fit, relit
from vision.lab.print_scenes import price_list
from vision.lab.recolour import recoloured
from vision.lab.render_any_colour import ANY_MARBLED, ANY_TRANSLUCENT
from vision.straightening import PATCH_SCALE, PATCH_SIDE, straightening, to_image, warped

EPOCHS = 30  # the shipped model's; 120 read seen photos a little better, unseen ones no better
VARIED = 600  # varied trays in the shipped model's samples
FAINT = 200  # trays of faint pips in them
TOWER = 0  # trays of a tower's few small dice: measured, dropped (vision-face-training.md)
ANY_COLOUR = 400  # trays of dice of any colours in them (vision-face-training.md)
SMOKY = 400  # trays of smoky and swirled dice with coloured pips (vision-face-training.md)
# Pages of print in them: with the trays of any colours, 160 left a network taking print for
# dice (vision-face-training.md).
PRINT = 480
# The shipped model is the mean of two networks (`vision.lab.face_mean`) trained with the
# defaults but for these options: each is unsure where the other is not.
MEMBERS = (["--cloths", "80", "--faint-levels", "3", "14"], [])
# The pip map (`pip_map`): cells a side, and how far a pip's cell reaches (cells); the weight
# of its loss in the shipped recipe.
PIP_GRID = INPUT_SIDE // 2
PIP_SIGMA = 0.8
PIPS = 1.0
RECOLOUR = 0.4  # share of patches whose die is repainted (`vision.lab.recolour`)
# How far a patch may be squeezed along a random direction, as a camera at a slant shows a
# face (0.3: down to 0.7 of its width, a camera about 45 degrees off the vertical); 0 leaves
# the straightening a turn and a scale alone, as the shipped model was trained.
SLANT = 0.0
WIDTH = 1.0  # the network's channels, times those of the shipped model (`build_model`)


def augmented(sample: Sample, rng: np.random.Generator, recolour: float = 0.0,
              slant: float = SLANT) -> tuple[np.ndarray, np.ndarray | None]:
    """The sample straightened as the pipeline would, under a random pose and lighting, its
    die repainted in other colours a share ``recolour`` of the time (`vision.lab.recolour`),
    half the time squeezed by up to ``slant`` along a random direction (`slanted`), and where
    its pips lie in that patch (None where unknown)."""
    c = sample.crop.shape[0] / 2.0
    side = sample.side * rng.uniform(0.88, 1.14)
    shift = rng.normal(0.0, 0.06 * sample.side, 2)
    forward = straightening((c + shift[0], c + shift[1]), rng.uniform(0, 360), side)
    size = round(PATCH_SIDE * PATCH_SCALE)
    if slant > 0 and rng.random() < 0.5:
        forward = slanted(forward, size, rng.uniform(1.0 - slant, 1.0), rng.uniform(0, 180))
    patch = warped(sample.crop, forward)
    pips = None
    if sample.pips is not None:
        pips = to_image(forward, sample.pips.astype(np.float64))
    if recolour > 0 and sample.body is not None and rng.random() < recolour:
        body = warped(sample.body, forward)
        patch = recoloured(patch, body, rng)
    patch = relit(patch, rng, blur=(0.5, 1.5), noise=8.0)
    if rng.random() < 0.3:
        # A webcam's MJPEG or a re-saved photo: its 8x8 blocks and lost detail.
        ok, data = cv2.imencode(".jpg", patch, [cv2.IMWRITE_JPEG_QUALITY,
                                                int(rng.integers(25, 96))])
        patch = cv2.imdecode(data, cv2.IMREAD_COLOR) if ok else patch
    return patch, pips


def slanted(forward: np.ndarray, size: int, squeeze: float, direction: float) -> np.ndarray:
    """The image-to-patch transform ``forward`` followed by a squeeze of the ``size``-pixel
    patch about its centre to ``squeeze`` of its width along ``direction`` degrees: a face
    seen at a slant (the pipeline straightens a turn and a scale, never a slant)."""
    a = np.deg2rad(direction)
    turn = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    squash = turn @ np.diag([squeeze, 1.0]) @ turn.T
    c = np.array([size / 2.0, size / 2.0])
    return np.hstack([squash @ forward[:, :2], (squash @ (forward[:, 2] - c) + c)[:, None]])


def pip_map(pips: np.ndarray | None) -> np.ndarray:
    """The pip map a patch's ``pips`` (patch pixels; None: unknown, all NaN) ask of the network:
    PIP_GRID x PIP_GRID cells, 1 at the cell of each pip's centre, falling off around it as a
    Gaussian of PIP_SIGMA cells (the penalty-reduced targets of the die finder's centres)."""
    if pips is None:
        return np.full((PIP_GRID, PIP_GRID), np.nan, np.float32)
    grid = np.zeros((PIP_GRID, PIP_GRID), np.float32)
    cell = PATCH_SIDE * PATCH_SCALE / PIP_GRID
    yy, xx = np.mgrid[0:PIP_GRID, 0:PIP_GRID].astype(np.float32) + 0.5
    for x, y in pips / cell:
        if not (0 <= x < PIP_GRID and 0 <= y < PIP_GRID):
            continue
        near = np.exp(-((xx - x) ** 2 + (yy - y) ** 2) / (2 * PIP_SIGMA**2))
        grid = np.maximum(grid, near)
        grid[int(y), int(x)] = 1.0
    return grid


def build_model(pip_head: bool = False, width: float = WIDTH):
    """The network: four small conv layers and a small classifier (about 5M multiply-adds per
    die, a fraction of a millisecond on one core; ``width`` times the channels, about its
    square times the multiply-adds). With ``pip_head``, its ``with_pips`` also
    gives the map of where it sees pips (`pip_map`), from its layers at half the input's
    size: training asks it where a face's pips are as well as which face it is. Only
    ``forward`` is exported."""
    import torch
    from torch import nn

    def conv(cin: int, cout: int) -> list:
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    a, b, c = (round(n * width) for n in (16, 32, 64))

    class FaceNetwork(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.early = nn.Sequential(*conv(3, a), nn.MaxPool2d(2), *conv(a, b), *conv(b, b))
            self.late = nn.Sequential(
                nn.MaxPool2d(2), *conv(b, c), nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.3),
                nn.Linear(c * (INPUT_SIDE // 8) ** 2, 64), nn.ReLU(),
                nn.Linear(64, len(CLASSES)))
            # Made only when asked for: its weights are drawn from the seed's stream.
            self.pips = nn.Conv2d(b, 1, 1) if pip_head else None

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.late(self.early(x))

        def with_pips(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            seen = self.early(x)
            return self.late(seen), self.pips(seen)[:, 0]

    return FaceNetwork()


def pip_loss(out, target):
    """The penalty-reduced focal loss of the pip map (the die finder's, for its centres), over
    the samples whose pips are known, per pip."""
    import torch

    known = ~torch.isnan(target[:, 0, 0])
    if not bool(known.any()):
        return out.sum() * 0.0
    p = torch.sigmoid(out[known]).clamp(1e-4, 1 - 1e-4)
    t = target[known]
    pos = (t >= 1.0).float()
    focal = -(pos * (1 - p) ** 2 * torch.log(p)
              + (1 - pos) * (1 - t) ** 4 * p**2 * torch.log(1 - p))
    return focal.sum() / pos.sum().clamp(min=1.0)


def train(samples: list[Sample], seed: int, epochs: int = EPOCHS, log=print,
          pips: float = PIPS, recolour: float = RECOLOUR, slant: float = SLANT,
          width: float = WIDTH):
    """A trained model (PyTorch, eval mode); ``pips``: the weight of the pip map's loss beside
    the face's (0: the face alone); ``recolour``: the share of patches whose die is repainted;
    ``slant``: how far a patch may be squeezed (`augmented`); ``width``: the network's
    channels (`build_model`)."""
    import torch

    labels = np.array([s.label for s in samples])

    def batch(idx: np.ndarray, rng: np.random.Generator):
        seen = [augmented(samples[i], rng, recolour, slant) for i in idx]
        x = to_input([patch for patch, _ in seen])
        return (x, np.stack([pip_map(p) for _, p in seen])) if pips > 0 else x

    def with_pips(model, x, maps):
        logits, out = model.with_pips(x)
        return logits, pips * pip_loss(out, torch.from_numpy(maps))

    return fit(functools.partial(build_model, pips > 0, width), labels, len(CLASSES), batch, seed,
               epochs, log, aux=with_pips if pips > 0 else None)


def export(model, out: Path) -> None:
    """Write the model as ONNX, for any batch size."""
    net_training.export(model, (3, INPUT_SIDE, INPUT_SIDE), out)


def main(argv: list[str] | None = None) -> int:
    parser = net_training.parser("python -m vision.lab.face_net_train",
                                 __doc__.split("\n\n")[0], DEFAULT_MODEL, EPOCHS)
    net_training.add_networks(parser, "finder")
    parser.add_argument("--varied", type=int, default=VARIED, metavar="N",
                        help=f"add N trays of the bar's variety (at most {len(VARIED_SEEDS)}; "
                        f"default {VARIED}, as the shipped model)")
    parser.add_argument("--tower", type=int, default=TOWER, metavar="N",
                        help=f"add N trays of a tower's few small dice, every kind of dice as "
                        f"often (at most {len(TOWER_SEEDS)}; default {TOWER}, as the shipped "
                        "model: they taught it no marbled dice)")
    parser.add_argument("--any-colour", type=int, default=ANY_COLOUR, metavar="N",
                        help=f"add N trays of dice of any colours (at most "
                        f"{len(ANY_COLOUR_SEEDS)}; default {ANY_COLOUR}, as the shipped model)")
    parser.add_argument("--any-colour-marbled", type=float, default=ANY_MARBLED,
                        metavar="SHARE", help="the share of those dice marbled (default "
                        "%(default).2f)")
    parser.add_argument("--smoky", type=int, default=SMOKY, metavar="N",
                        help=f"add N trays of smoky and swirled dice with coloured pips (at "
                        f"most {len(SMOKY_SEEDS)}; default {SMOKY})")
    parser.add_argument("--faint", type=int, default=FAINT, metavar="N",
                        help=f"add N trays of dice whose pips barely show (at most "
                        f"{len(FAINT_SEEDS)}; default {FAINT}, as the shipped model)")
    parser.add_argument("--faint-levels", type=float, nargs=2, default=FAINT_LEVELS,
                        metavar=("LOW", "HIGH"), help="how far the faint dice's pips lie from "
                        "their body, in levels of 255 (default %(default)s)")
    parser.add_argument("--print", type=int, default=PRINT, metavar="N",
                        help=f"add N pages of print as 'no face' (at most {len(PRINT_SEEDS)}; "
                        f"default {PRINT}, as the shipped model)")
    parser.add_argument("--dots", action=argparse.BooleanOptionalAction, default=True,
                        help="add price lists' dotted leaders and dotted cloths as 'no face' "
                        "(default: yes, as the shipped model)")
    parser.add_argument("--cloths", type=int, default=len(CLOTH_SEEDS), metavar="N",
                        help=f"with --dots: how many dotted cloths (at most {len(CLOTH_SEEDS)}, "
                        "the default)")
    parser.add_argument("--pips", type=float, default=PIPS, metavar="WEIGHT",
                        help="ask the network where the pips are too (rendered dice, print), "
                        f"with this weight beside the face (default {PIPS:g}, as the shipped "
                        "model)")
    parser.add_argument("--recolour", type=float, default=RECOLOUR, metavar="SHARE",
                        help="repaint the die of this share of the patches in colours of any "
                        f"hue (default {RECOLOUR:g}, as the shipped model)")
    parser.add_argument("--slant", type=float, default=SLANT, metavar="AMOUNT",
                        help="squeeze half the patches by up to this share along a random "
                        f"direction, a face seen at a slant (default {SLANT:g}, as the shipped "
                        "model)")
    parser.add_argument("--width", type=float, default=WIDTH, metavar="FACTOR",
                        help="the network's channels, times the shipped model's (default "
                        f"{WIDTH:g})")
    parser.add_argument("--samples", metavar="FILE", default=None,
                        help="keep the samples cut in FILE, and read them from it when it "
                        "holds those of these options")
    args = parser.parse_args(argv)
    if args.pips < 0:
        parser.error("--pips: a weight of 0 or more")
    if not 0 <= args.recolour <= 1:
        parser.error("--recolour: 0 to 1")
    if not 0.25 <= args.width <= 4:
        parser.error("--width: 0.25 to 4")
    if not 0 <= args.slant < 1:
        parser.error("--slant: 0 up to (not including) 1")
    if not 0 <= args.varied <= len(VARIED_SEEDS):
        parser.error(f"--varied: 0 to {len(VARIED_SEEDS)}")
    if not 0 <= args.tower <= len(TOWER_SEEDS):
        parser.error(f"--tower: 0 to {len(TOWER_SEEDS)}")
    if not 0 <= args.any_colour <= len(ANY_COLOUR_SEEDS):
        parser.error(f"--any-colour: 0 to {len(ANY_COLOUR_SEEDS)}")
    if not 0 <= args.any_colour_marbled <= 1 - ANY_TRANSLUCENT:
        parser.error(f"--any-colour-marbled: 0 to {1 - ANY_TRANSLUCENT:.2f}")
    if not 0 <= args.smoky <= len(SMOKY_SEEDS):
        parser.error(f"--smoky: 0 to {len(SMOKY_SEEDS)}")
    if not 0 <= args.print <= len(PRINT_SEEDS):
        parser.error(f"--print: 0 to {len(PRINT_SEEDS)}")
    if not 0 <= args.faint <= len(FAINT_SEEDS):
        parser.error(f"--faint: 0 to {len(FAINT_SEEDS)}")
    if not 0 <= args.cloths <= len(CLOTH_SEEDS):
        parser.error(f"--cloths: 0 to {len(CLOTH_SEEDS)}")
    if not 0 <= args.faint_levels[0] <= args.faint_levels[1] <= 255:
        parser.error("--faint-levels: LOW and HIGH within 0..255, LOW first")
    dataset = Path(args.dataset)
    if problem := net_training.setup(args.threads, dataset):
        print(problem, file=sys.stderr)
        return 2
    try:
        readers = net_training.readers(args)
    except (FileNotFoundError, ValueError) as exc:
        print(f"face_net_train: {exc}", file=sys.stderr)
        return 2
    began = time.perf_counter()
    samples = cached_samples(Path(args.samples), args, readers) if args.samples else (
        collect(args, readers))
    counts = np.bincount([s.label for s in samples], minlength=len(CLASSES))
    print(f"{len(samples)} samples: " + ", ".join(
        f"{name} {n}" for name, n in zip(CLASSES, counts, strict=True)))
    model = train(samples, args.seed, args.epochs, pips=args.pips, recolour=args.recolour,
                  slant=args.slant, width=args.width)
    export(model, Path(args.out))
    print(f"wrote {args.out} in {time.perf_counter() - began:.0f} s")
    return 0


#: The options that choose the samples (`collect`), which a file of samples keeps.
SAMPLE_OPTIONS = ("dataset", "half", "leave_out", "finder", "varied", "tower", "any_colour",
                  "any_colour_marbled", "smoky", "faint", "faint_levels", "print", "dots", "cloths")


def collect(args: argparse.Namespace, readers) -> list[Sample]:
    """The samples the options ask for, cut with ``readers``."""
    dataset = Path(args.dataset)
    print(f"cutting samples from {dataset} (half: {args.half})")
    samples = dataset_samples(dataset, args.half, leave_out=args.leave_out, readers=readers)
    print("rendering trays")
    samples += rendered_samples(readers=readers)
    if args.varied:
        print(f"rendering {args.varied} trays of the bar's variety")
        samples += varied_samples(VARIED_SEEDS[:args.varied], readers=readers)
    if args.tower:
        print(f"rendering {args.tower} trays of a tower's few small dice")
        samples += tower_samples(TOWER_SEEDS[:args.tower], readers=readers)
    if args.any_colour:
        print(f"rendering {args.any_colour} trays of dice of any colours")
        samples += any_colour_samples(ANY_COLOUR_SEEDS[:args.any_colour], readers=readers,
                                      marbled=args.any_colour_marbled)
    if args.smoky:
        print(f"rendering {args.smoky} trays of smoky and swirled dice")
        samples += smoky_samples(SMOKY_SEEDS[:args.smoky], readers=readers)
    if args.faint:
        print(f"rendering {args.faint} trays of dice whose pips barely show")
        samples += faint_samples(FAINT_SEEDS[:args.faint], readers=readers,
                                 levels=tuple(args.faint_levels))
    print(f"drawing {args.print} pages of print")
    samples += print_samples(PRINT_SEEDS[:args.print], readers=readers)
    if args.dots:
        print("drawing price lists and dotted cloths")
        samples += print_samples(PRICE_SEEDS, readers=readers, draw=price_list)
        samples += cloth_samples(CLOTH_SEEDS[:args.cloths], readers=readers)
    return samples


def cached_samples(path: Path, args: argparse.Namespace, readers) -> list[Sample]:
    """The samples of ``path`` when it holds those the options ask for, else those cut anew
    (`collect`) and kept there: cutting them takes minutes, and trying another training
    recipe on the same samples need not cut them again. (A lab file of this machine's, read
    only by this script: pickle keeps the arrays as they are.)"""
    wanted = {name: getattr(args, name) for name in SAMPLE_OPTIONS}
    wanted["faint_levels"] = tuple(wanted["faint_levels"])
    if path.is_file():
        with path.open("rb") as f:
            options, samples = pickle.load(f)
        if options == wanted:
            print(f"samples read from {path}")
            return samples
        print(f"{path} holds samples of other options: cutting them anew")
    samples = collect(args, readers)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        pickle.dump((wanted, samples), f, protocol=pickle.HIGHEST_PROTOCOL)
    return samples


if __name__ == "__main__":
    sys.exit(main())
