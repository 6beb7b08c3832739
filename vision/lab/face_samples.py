"""The face network's training samples: dice cut the way the pipeline sees them, with their
values, and where the pips of the faces around them are when that is known.

Every dataset image goes through `vision.pipeline.prepare` (with the networks given: the
left-out finder of `vision.lab.loso`, say), and each die candidate is labelled by the
dataset's labels: a candidate near a labelled die's centre takes its value, one far from
every labelled die is "none" (a speck, a tray mark, a pip cluster of a side face). Every
labelled die is also cut at its labelled centre. Rendered trays (`vision.lab.render`, seeds
far from those of the tests) add dice of other colours and dice leaning on another die,
which are "none": their top face is not flat, and the game asks for a re-throw. Their truth
also says where every top face's pips are (`Sample.pips`): the training asks the network
to find them as well as to read the face (`vision.lab.face_net_train`). Pages of print
(`vision.lab.print_scenes`) add letters as "none", with no pips at all.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from vision.detect import Candidate
from vision.lab.net_training import dataset_images, square_around
from vision.lab.print_scenes import cloth
from vision.lab.print_scenes import scene as print_scene
from vision.lab.recolour import dice_only
from vision.lab.render_any_colour import ANY_MARBLED, any_colour_tray
from vision.lab.scoring import die_sizes, load_manifest
from vision.pipeline import prepare
from vision.readers import Readers
from vision.scene_reading import Scene
from vision.straightening import candidate_side

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
SMOKY_SEEDS = range(270_000, 270_600)  # smoky and swirled dice, coloured pips (`smoky_tray`)
FAINT_LEVELS = (6.0, 20.0)  # how far a faint die's pips lie from its body (levels of 255)
NO_PIPS = np.zeros((0, 2), np.float32)


@dataclass
class Sample:
    crop: np.ndarray  # BGR, the die centred, CROP_FACTOR x side wide
    side: float  # die side in crop pixels
    label: int  # index into CLASSES
    group: str  # where it came from, for the report
    # (n, 2) crop pixels of every top face's pip in the crop (side faces' are none); None
    # where nobody knows (the dataset's photos).
    pips: np.ndarray | None = None
    # The crop's dice, 255 where something stands out from the floor (the pipeline's own
    # mask) near a die known to be there, for `vision.lab.recolour`; None: no die known.
    body: np.ndarray | None = None


def _sample(scene: Scene, center: tuple[float, float], side: float, label: int,
            group: str, pips: np.ndarray | None = None, body: np.ndarray | None = None
            ) -> Sample:
    """The die at ``center`` (``side``, working pixels) cut from what the pipeline straightens
    it from, with those of ``pips`` (working pixels; None: unknown) that lie in the crop and
    the dice's mask ``body`` (working pixels: `_bodies`; None: unknown) around it."""
    image, zoom = scene.source
    side *= zoom
    size = max(8, math.ceil(CROP_FACTOR * side))
    crop = square_around(image, (center[0] * zoom, center[1] * zoom), size)
    if pips is not None:
        pips = (pips - np.asarray(center, np.float32)) * zoom + size / 2.0
        pips = pips[np.all((pips >= 0) & (pips < size), axis=1)].astype(np.float32)
    if body is not None:
        # The working copy's mask, brought to the crop's pixels (the source is ``zoom`` times
        # the working copy).
        to_crop = np.array([[zoom, 0.0, size / 2.0 - center[0] * zoom],
                            [0.0, zoom, size / 2.0 - center[1] * zoom]])
        body = cv2.warpAffine(body, to_crop, (size, size), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    return Sample(crop, side, label, group, pips, body)


def _candidate_sample(scene: Scene, cand: Candidate, label: int, group: str,
                      pips: np.ndarray | None = None, body: np.ndarray | None = None
                      ) -> Sample:
    """A candidate cut at the side the pipeline straightens it at."""
    return _sample(scene, cand.center, candidate_side(cand, scene.side), label, group, pips,
                   body)


def _bodies(scene: Scene, dice) -> np.ndarray:
    """The dice of a scene as its foreground shows them, near the dice known to be there
    (rows of x, y, side, working pixels): what `vision.lab.recolour` may repaint."""
    return dice_only(scene.look.mask, dice)


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
        body = _bodies(scene, [(x, y, own or s) for x, y, _, own in labels])
        for cand in scene.readable:
            dists = [math.dist(cand.center, (x, y)) / s for x, y, _, _ in labels]
            nearest = int(np.argmin(dists)) if dists else -1
            if nearest >= 0 and dists[nearest] <= NEAR:
                label = labels[nearest][2]
            elif (not dists or min(dists) > FAR) and rec.get("bbox_kind") != "none":
                label = 0
            else:
                continue
            samples.append(_candidate_sample(scene, cand, label, group, body=body))
        for x, y, v, own in labels:
            side = own if own and 0.7 * scene.side <= own <= 1.4 * scene.side else scene.side
            samples.append(_sample(scene, (x, y), side, v, group, body=body))
    return samples


def _pips_of(shot, scene: Scene) -> np.ndarray:
    """(n, 2) every top face's pip of a rendered ``shot``, in working pixels of its
    ``scene``."""
    pips = [p for t in shot.truth for p in t.pips]
    return np.array(pips, np.float32).reshape(-1, 2) * scene.scale if pips else NO_PIPS


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
        dice, pips = _dice_of(shot, scene), _pips_of(shot, scene)
        body = _bodies(scene, [(*centre, side) for centre, side, _ in dice])
        samples += [_sample(scene, *die, "rendered", pips, body) for die in dice]
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
        dice, pips = _dice_of(shot, scene), _pips_of(shot, scene)
        body = _bodies(scene, [(*centre, side) for centre, side, _ in dice])
        samples += [_sample(scene, *die, group, pips, body) for die in dice]
        far = [c for c in scene.readable
               if all(math.dist(c.center, center) > FAR * side for center, side, _ in dice)]
        for k in rng.permutation(len(far))[:STRAYS_PER_VARIED]:
            samples.append(_candidate_sample(scene, far[int(k)], 0, group, pips, body))
    return samples


def any_colour_samples(seeds=ANY_COLOUR_SEEDS, readers: Readers | None = None,
                       marbled: float = ANY_MARBLED) -> list[Sample]:
    """Dice of any colours (`vision.lab.render_any_colour.any_colour_tray`, ``marbled`` of them
    marbled), as `varied_samples` cuts them."""
    return varied_samples(seeds, readers, draw=functools.partial(any_colour_tray,
                                                                 marbled=marbled),
                          group="any colour")


def smoky_samples(seeds=SMOKY_SEEDS, readers: Readers | None = None) -> list[Sample]:
    """Smoky and swirled dice with coloured pips (`vision.lab.render_smoky.smoky_tray`), as
    `varied_samples` cuts them."""
    from vision.lab.render_smoky import smoky_tray

    return varied_samples(seeds, readers, draw=smoky_tray, group="smoky")


def tower_samples(seeds=TOWER_SEEDS, readers: Readers | None = None) -> list[Sample]:
    """Dice from a tower's throws (`vision.lab.render.tower_tray`), as `varied_samples` cuts
    them."""
    from vision.lab.render import tower_tray

    return varied_samples(seeds, readers, draw=tower_tray, group="tower")


def print_samples(seeds=PRINT_SEEDS, readers: Readers | None = None,
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
            samples.append(_candidate_sample(scene, usable[int(k)], 0, group, NO_PIPS))
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
        dice, pips = _dice_of(shot, scene), _pips_of(shot, scene)
        body = _bodies(scene, [(*centre, side) for centre, side, _ in dice])
        samples += [_sample(scene, *die, "faint", pips, body) for die in dice]
    return samples
