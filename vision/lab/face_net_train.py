"""Train the face network (`vision.face_net`) reproducibly and write it as ONNX.

Usage::

    python -m vision.lab.face_net_train [DATASET] [--half even|odd|all] [--out FILE] [--seed N]
                                        [--finder FILE] [--varied N] [--tower N] [--faint N]
                                        [--any-colour N] [--any-colour-marbled SHARE]
                                        [--faint-levels LOW HIGH] [--no-dots] [--cloths N]

Needs the training extra (``pip install -e '.[train]'``: PyTorch); the product itself
runs the result on ONNX Runtime alone. Same dataset, seed and library versions, same model.

Samples are cut the way the pipeline sees dice: every image goes through
`vision.pipeline.prepare` (with the shipped die finder, or the one ``--finder`` names: the
left-out finder of `vision.lab.loso`), and each die candidate is labelled by the dataset's labels (a
candidate near a labelled die's centre takes its value, one far from every labelled die is
"none": a speck, a tray mark, a pip cluster of a side face). Every labelled die is also cut at
its labelled centre. Rendered trays (`vision.lab.render`, seeds far from those of the tests) add
dice of other colours and dice leaning on another die, which are "none": their top face is
not flat, and the game asks for a re-throw; ``--varied N`` trays of the bar's variety
(`varied_tray`: dark, coloured, translucent and marbled dice with dark or light pips, hard
shadows, glare) add the dice no photo of the dataset shows, ``--tower N`` trays a tower's
two to five small dice with every kind of dice set as often, ``--any-colour N`` trays of
dice each of random colours (`any_colour_tray`: no catalogue holds every die), and
``--faint N`` trays dice
whose pips barely show (dark dice with pips a few levels off the body, white dice
overexposed on a light floor). Pages of print (`vision.lab.print_scenes`) add letters as
"none": a round letter's counter is a one's pip to every pip reader; price lists add their
dotted leaders, and dotted cloths plain dots in rows, as "none" too (``--no-dots`` leaves
them out). The defaults are the shipped model's recipe (docs/lab/vision-face-training.md).
Each epoch
draws new rotations (any angle: a die has no upright), shifts, scales, lighting, colour
swaps and JPEG re-encodings of every sample.

``--half even|odd`` trains on every other image of the manifest (the bench's halves), so
``dicetower bench vision --half odd --face even.onnx`` measures the even model on images it
has never seen.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from vision.detect import Candidate
from vision.face_net import CLASSES, DEFAULT_MODEL, INPUT_SIDE, to_input
from vision.lab import net_training
from vision.lab.net_training import dataset_images, fit, relit, square_around
from vision.lab.print_scenes import cloth, price_list
from vision.lab.print_scenes import scene as print_scene
from vision.lab.render_any_colour import ANY_MARBLED, ANY_TRANSLUCENT, any_colour_tray
from vision.lab.scoring import die_sizes, load_manifest
from vision.pipeline import prepare
from vision.readers import Readers
from vision.scene_reading import Scene
from vision.straightening import candidate_side, straighten

CROP_FACTOR = 2.4  # stored crop side / die side: room for any rotation of the patch
NEAR = 0.3  # x die size: a candidate this close to a labelled die's centre is that die
FAR = 0.9  # x die size: one farther than this from every labelled die is no die
DIE_BOX_TO_SIDE = 0.85  # top-face side / shorter side of a whole-die box (it has side faces)
RENDER_SEEDS = range(100_000, 100_400)  # tests use seeds below 10,000
VARIED_SEEDS = range(110_000, 110_600)  # the bar's variety (`varied_tray`): other dice, light
STRAYS_PER_VARIED = 6  # candidates far from every die kept per varied tray: shadows, glare
PRINT_SEEDS = range(200_000, 200_480)  # pages of print (`vision.lab.print_scenes.scene`)
PRINT_PER_SCENE = 24  # candidates kept per print scene: many scenes rather than many letters
CLOTH_SEEDS = range(220_000, 220_160)  # dotted cloths: plain dots in rows are no face
PRICE_SEEDS = range(230_000, 230_060)  # price lists: a leader's dots are no three
FAINT_SEEDS = range(240_000, 240_400)  # dice whose pips barely show (`faint_samples`)
TOWER_SEEDS = range(250_000, 250_600)  # a tower's few small dice of every kind (`tower_samples`)
ANY_COLOUR_SEEDS = range(260_000, 260_600)  # dice of any colours (`any_colour_tray`)
EPOCHS = 30  # the shipped model's; 120 read seen photos a little better, unseen ones no better
VARIED = 600  # varied trays in the shipped model's samples
FAINT = 200  # trays of faint pips in them
TOWER = 0  # trays of a tower's few small dice: measured, dropped (vision-face-training.md)
ANY_COLOUR = 400  # trays of dice of any colours in them (vision-face-training.md)
# Pages of print in them: with the trays of any colours, 160 left a network taking print for
# dice (vision-face-training.md).
PRINT = 480
FAINT_LEVELS = (6.0, 20.0)  # how far a faint die's pips lie from its body (levels of 255)
# The shipped model is the mean of two networks (`vision.lab.face_mean`) trained with the
# defaults but for these options: each is unsure where the other is not.
MEMBERS = (["--cloths", "80", "--faint-levels", "3", "14"], [])


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
    crop = square_around(image, (center[0] * zoom, center[1] * zoom), size)
    return Sample(crop, side, label, group)


def _candidate_sample(scene: Scene, cand: Candidate, label: int, group: str) -> Sample:
    """A candidate cut at the side the pipeline straightens it at."""
    return _sample(scene, cand.center, candidate_side(cand, scene.side), label, group)


def label_centres(rec: dict) -> list[tuple[float, float, int, float | None]]:
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


def dataset_samples(dataset: Path, half: str, log=print, leave_out: str | None = None,
                    readers: Readers | None = None) -> list[Sample]:
    """Labelled candidate and labelled-centre samples from the dataset's images, found with
    ``readers`` (None: the shipped networks)."""
    # The typical die size of an image is measured over the whole manifest, as the bench does.
    records = load_manifest(dataset)
    sizes = dict(zip((r["image"] for r in records), die_sizes(records), strict=True))
    samples: list[Sample] = []
    for rec, image in dataset_images(dataset, half, log, leave_out=leave_out):
        scene = prepare(image, readers=readers)
        s = sizes[rec["image"]] * scene.scale
        labels = [(x * scene.scale, y * scene.scale, v, own * scene.scale if own else None)
                  for x, y, v, own in label_centres(rec)]
        group = rec["source"].split("/")[0]
        for cand in scene.readable:
            dists = [math.dist(cand.center, (x, y)) / s for x, y, _, _ in labels]
            nearest = int(np.argmin(dists)) if dists else -1
            if nearest >= 0 and dists[nearest] <= NEAR:
                label = labels[nearest][2]
            elif (not dists or min(dists) > FAR) and rec.get("bbox_kind") != "none":
                label = 0
            else:
                continue
            samples.append(_candidate_sample(scene, cand, label, group))
        for x, y, v, own in labels:
            side = own if own and 0.7 * scene.side <= own <= 1.4 * scene.side else scene.side
            samples.append(_sample(scene, (x, y), side, v, group))
    return samples


def _dice_of(shot, scene: Scene) -> list[tuple[tuple[float, float], float, int]]:
    """Each die a rendered ``shot`` holds as (centre, side, label) in the working pixels of
    its ``scene``: a flat die's label its value, a leaning one's "none" (the game asks for a
    re-throw)."""
    return [((t.center[0] * scene.scale, t.center[1] * scene.scale), t.side * scene.scale,
             0 if t.cocked else t.value) for t in shot.truth]


def rendered_samples(seeds=RENDER_SEEDS, readers: Readers | None = None) -> list[Sample]:
    """Dice from rendered trays: flat ones with their value, leaning ones as "none"."""
    from vision.lab.render import random_tray, render_tray

    samples: list[Sample] = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        touching, cocked = int(rng.integers(0, 2)), int(rng.integers(0, 3))
        n = int(rng.integers(2 * (touching + cocked), 9)) if touching + cocked else 3
        spec = random_tray(rng, max(n, 1), touching=touching, cocked=cocked)
        shot = render_tray(spec, seed=seed)
        scene = prepare(shot.image, readers=readers)
        samples += [_sample(scene, *die, "rendered") for die in _dice_of(shot, scene)]
    return samples


def varied_samples(seeds=VARIED_SEEDS, readers: Readers | None = None,
                   draw=None, group: str = "varied") -> list[Sample]:
    """Dice from trays of the bar's variety (dark, coloured, translucent and marbled dice, light
    pips, hard shadows, glare): flat ones with their value, leaning ones as "none", and a few
    candidates far from every die (a shadow's edge, a glint, a hand) as "none". ``draw(rng)``
    draws another kind of them (a TraySpec, ValueError when it cannot)."""
    from vision.lab.render import render_tray, varied_tray

    draw = draw or varied_tray
    samples: list[Sample] = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        try:
            spec = draw(rng)
        except ValueError:
            continue
        shot = render_tray(spec, seed=seed)
        scene = prepare(shot.image, readers=readers)
        dice = _dice_of(shot, scene)
        samples += [_sample(scene, *die, group) for die in dice]
        far = [c for c in scene.readable
               if all(math.dist(c.center, center) > FAR * side for center, side, _ in dice)]
        for k in rng.permutation(len(far))[:STRAYS_PER_VARIED]:
            samples.append(_candidate_sample(scene, far[int(k)], 0, group))
    return samples


def any_colour_samples(seeds=ANY_COLOUR_SEEDS, readers: Readers | None = None,
                       marbled: float = ANY_MARBLED) -> list[Sample]:
    """Dice of any colours (`vision.lab.render_any_colour.any_colour_tray`, ``marbled`` of them
    marbled), as `varied_samples` cuts them."""
    return varied_samples(seeds, readers, draw=functools.partial(any_colour_tray,
                                                                 marbled=marbled),
                          group="any colour")


def tower_samples(seeds=TOWER_SEEDS, readers: Readers | None = None) -> list[Sample]:
    """Dice from a tower's throws (`vision.lab.render.tower_tray`), as `varied_samples` cuts
    them."""
    from vision.lab.render import tower_tray

    return varied_samples(seeds, readers, draw=tower_tray, group="tower")


def print_samples(seeds=PRINT_SEEDS[:PRINT], readers: Readers | None = None,
                  draw=None, group: str = "print") -> list[Sample]:
    """Candidates found on pages of print (`vision.lab.print_scenes`; ``draw(seed)`` draws
    another kind of them, e.g. its price lists), all "none": a letter's counter is no pip."""
    draw = draw or print_scene
    samples: list[Sample] = []
    for seed in seeds:
        scene = prepare(draw(seed), readers=readers)
        usable = scene.readable
        rng = np.random.default_rng(seed)
        for k in rng.permutation(len(usable))[:PRINT_PER_SCENE]:
            samples.append(_candidate_sample(scene, usable[int(k)], 0, group))
    return samples


def cloth_samples(seeds=CLOTH_SEEDS, readers: Readers | None = None) -> list[Sample]:
    """Candidates found on dotted cloths (`vision.lab.print_scenes.cloth`), all "none": plain
    dots in rows are no face."""
    return print_samples(seeds, readers, draw=cloth, group="cloth")


def faint_samples(seeds=FAINT_SEEDS, readers: Readers | None = None,
                  levels: tuple[float, float] = FAINT_LEVELS) -> list[Sample]:
    """Dice whose pips barely show, two kinds by turns: dark dice whose pips are a few levels
    off the body (worn paint: only the pits' rims show them), and white dice overexposed on a
    light floor, whose pips are pale. Flat ones with their value, leaning ones as "none"."""
    from vision.lab.render import random_tray, render_tray

    samples: list[Sample] = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        faint = seed % 2 == 0
        if faint:
            spec = random_tray(rng, int(rng.integers(2, 7)), cocked=int(rng.integers(0, 2)),
                               floor=str(rng.choice(["grey", "wood", "paper", "plastic"])))
            # A body far from the floor (the die shows) and pips within a few levels of it.
            body = rng.uniform(25, 110, 3) * (1 + rng.uniform(-0.15, 0.15))
            pips = body + rng.choice([-1, 1]) * rng.uniform(*levels)
            spec = replace(spec, dice=tuple(
                replace(d, body_bgr=tuple(float(c) for c in body),
                        pip_bgr=tuple(float(c) for c in np.clip(pips, 0, 255)),
                        translucent=False, marble_bgr=None) for d in spec.dice))
        else:
            spec = random_tray(rng, int(rng.integers(2, 6)), palette=["white/black",
                               "ivory/black"], floor="wood", min_contrast=0.0,
                               floor_bgr=tuple(float(c) for c in rng.uniform(185, 245, 3)),
                               exposure=float(rng.uniform(1.2, 1.5)))
        shot = render_tray(spec, seed=seed)
        scene = prepare(shot.image, readers=readers)
        samples += [_sample(scene, *die, "faint") for die in _dice_of(shot, scene)]
    return samples


def augmented(sample: Sample, rng: np.random.Generator) -> np.ndarray:
    """The sample straightened as the pipeline would, under a random pose and lighting."""
    c = sample.crop.shape[0] / 2.0
    side = sample.side * rng.uniform(0.88, 1.14)
    shift = rng.normal(0.0, 0.06 * sample.side, 2)
    patch, _ = straighten(sample.crop, (c + shift[0], c + shift[1]), rng.uniform(0, 360), side)
    patch = relit(patch, rng, blur=(0.5, 1.5), noise=8.0)
    if rng.random() < 0.3:
        # A webcam's MJPEG or a re-saved photo: its 8x8 blocks and lost detail.
        ok, data = cv2.imencode(".jpg", patch, [cv2.IMWRITE_JPEG_QUALITY,
                                                int(rng.integers(25, 96))])
        patch = cv2.imdecode(data, cv2.IMREAD_COLOR) if ok else patch
    return patch


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
    labels = np.array([s.label for s in samples])
    return fit(build_model, labels, len(CLASSES),
               lambda idx, rng: to_input([augmented(samples[i], rng) for i in idx]),
               seed, epochs, log)


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
    args = parser.parse_args(argv)
    if not 0 <= args.varied <= len(VARIED_SEEDS):
        parser.error(f"--varied: 0 to {len(VARIED_SEEDS)}")
    if not 0 <= args.tower <= len(TOWER_SEEDS):
        parser.error(f"--tower: 0 to {len(TOWER_SEEDS)}")
    if not 0 <= args.any_colour <= len(ANY_COLOUR_SEEDS):
        parser.error(f"--any-colour: 0 to {len(ANY_COLOUR_SEEDS)}")
    if not 0 <= args.any_colour_marbled <= 1 - ANY_TRANSLUCENT:
        parser.error(f"--any-colour-marbled: 0 to {1 - ANY_TRANSLUCENT:.2f}")
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
    counts = np.bincount([s.label for s in samples], minlength=len(CLASSES))
    print(f"{len(samples)} samples: " + ", ".join(
        f"{name} {n}" for name, n in zip(CLASSES, counts, strict=True)))
    model = train(samples, args.seed, args.epochs)
    export(model, Path(args.out))
    print(f"wrote {args.out} in {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
