"""Synthetic dice-tray photos with ground truth, for tests without the dataset and the demo tray.

Each die is modelled as a cube with rounded edges, posed in 3D (rotation about the vertical axis,
an optional lean when it rests on another die) and seen by a pinhole camera above the tray centre,
so dice away from the centre show a side face, as in real photos. Faces carry pips with the real
layout (centres at 0.25/0.5/0.75 of the face, diameter about 0.19 of the side, darker rims);
the floor is textured (grey card, wood, felt, paper, slate), dice cast soft shadows, and the image
gets a lighting gradient, vignetting, blur, sensor noise and optionally JPEG compression.
Everything is numpy + OpenCV and deterministic for a given seed.

    spec = random_tray(np.random.default_rng(7), n_dice=5, cocked=1)
    shot = render_tray(spec, seed=7)          # shot.image (BGR uint8), shot.truth (DieTruth, ...)

`varied_tray(rng)` (from `vision.lab.render_varied`) draws trays of the bar's variety instead:
many dice sets (translucent, marbled), floors, a ring light or a hard low lamp, glare, warm or
cold light, dice of 25 to 120 px, leaning and cocked dice, hands.

`python -m vision.lab.render --out DIR [--varied]` writes example PNGs (and their truth as
JSON). What can be drawn is in `vision.lab.render_specs`, how it is drawn in
`vision.lab.render_draw`, `render_texture` and `render_light`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from vision.lab.render_any_colour import any_colour_tray
from vision.lab.render_draw import (
    Camera,
    die_faces,
    draw_die,
    draw_hand,
    draw_order,
    hand_mask,
    light_vector,
    shadow_polygon,
    soft_blur,
)
from vision.lab.render_light import die_glint, floor_glare, lighting
from vision.lab.render_specs import (
    ALL_FLOORS,
    BGR,
    COCKED_TILT_DEG,
    COLOUR_COMBOS,
    FLOORS,
    PIP_LAYOUTS,
    SKIN_TONES,
    DieSpec,
    DieTruth,
    HandSpec,
    Point,
    RenderedTray,
    TraySpec,
)
from vision.lab.render_texture import draw_floor, draw_rim
from vision.lab.render_varied import (
    VARIED_DICE,
    DiceSet,
    VariedScene,
    set_of,
    tower_tray,
    varied_scene,
    varied_tray,
)

__all__ = [
    "ALL_FLOORS", "BGR", "COCKED_TILT_DEG", "COLOUR_COMBOS", "FLOORS", "PIP_LAYOUTS",
    "SKIN_TONES", "VARIED_DICE", "DiceSet", "DieSpec", "DieTruth", "HandSpec", "Point",
    "RenderedTray", "TraySpec", "VariedScene", "any_colour_tray", "draw_truth", "main",
    "random_tray", "render_tray", "set_of", "tower_tray", "varied_scene", "varied_tray",
]


def render_tray(spec: TraySpec, seed: int = 0) -> RenderedTray:
    """Render `spec` to a BGR uint8 image with its truth; same spec and seed, same pixels."""
    rng = np.random.default_rng(seed)
    camera = Camera(spec.width, spec.height, spec.camera_height)
    light = light_vector(spec)
    img = draw_floor(spec, rng)
    draw_rim(img, spec, light)
    if spec.glare > 0:
        img += floor_glare(spec)[..., None]

    # Soft shadows first, on the floor only.
    shadow = np.zeros((spec.height, spec.width), np.float32)
    sides = [d.side for d in spec.dice]
    for die in spec.dice:
        poly = shadow_polygon(die_faces(die), light)
        cv2.fillConvexPoly(shadow, np.round(poly * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
    hand_masks = [hand_mask(hand, spec.width, spec.height, rng) for hand in spec.hands]
    if sides:
        sigma = (0.18 * float(np.median(sides)) + 0.5) * spec.shadow_softness
        shadow = soft_blur(shadow, sigma)
    for hand, mask in zip(spec.hands, hand_masks, strict=True):
        # A hand hovers: its shadow is offset away from the light and very soft.
        shift = -light[:2] / max(light[2], 0.2) * hand.size * 0.5
        moved = cv2.warpAffine(mask, np.float32([[1, 0, shift[0]], [0, 1, shift[1]]]),
                               (spec.width, spec.height))
        shadow = np.maximum(shadow, 0.8 * soft_blur(moved, hand.size * 0.3))
    img *= 1 - spec.shadow_strength * np.clip(shadow, 0, 1)[..., None]

    truths: list[DieTruth | None] = [None] * len(spec.dice)
    for i in draw_order(spec.dice, camera):
        glint = die_glint(spec, camera.project(np.array([*spec.dice[i].center, spec.dice[i].side])))
        truths[i] = draw_die(img, spec.dice[i], camera, light, spec.gloss, glint)
    outlines = []
    for hand, mask in zip(spec.hands, hand_masks, strict=True):
        draw_hand(img, mask, hand, rng)
        contours, _ = cv2.findContours((mask > 0.5).astype(np.uint8), cv2.RETR_EXTERNAL,
                                       cv2.CHAIN_APPROX_SIMPLE)
        if contours:
            outlines.append(max(contours, key=cv2.contourArea).reshape(-1, 2))

    gains = np.array(spec.white_balance, np.float32) * spec.exposure
    img *= lighting(spec)[..., None] * gains[None, None, :]
    if spec.blur_sigma > 0:
        img = cv2.GaussianBlur(img, (0, 0), spec.blur_sigma)
    if spec.noise_sigma > 0:
        img += rng.normal(0.0, spec.noise_sigma, img.shape).astype(np.float32)
    image = np.clip(img + 0.5, 0, 255).astype(np.uint8)
    if spec.jpeg_quality is not None:
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, spec.jpeg_quality])
        if ok:
            image = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return RenderedTray(image, tuple(t for t in truths if t is not None), tuple(outlines), spec)


# --------------------------------------------------------------------------------------------
# Random trays


def _lab(colour: BGR) -> np.ndarray:
    return cv2.cvtColor(np.uint8([[colour]]), cv2.COLOR_BGR2LAB)[0, 0].astype(float)


def _far_enough(points: list[tuple[Point, float]], centre: Point, radius: float) -> bool:
    return all(math.dist(centre, c) >= r + radius for c, r in points)


def random_tray(
    rng: np.random.Generator,
    n_dice: int,
    *,
    width: int = 640,
    height: int = 480,
    side: float | tuple[float, float] = (30.0, 48.0),
    floor: str | None = None,
    palette: Sequence[str] | None = None,
    values: Sequence[int] | None = None,
    touching: int = 0,
    cocked: int = 0,
    hand: bool = False,
    min_contrast: float = 30.0,
    **tray_options: object,
) -> TraySpec:
    """A tray of `n_dice` dice at random places, values, rotations and colours.

    Dice never overlap. `touching` pairs stand face to face; `cocked` dice lean on another
    die (each uses two of the `n_dice`). `palette` names entries of COLOUR_COMBOS (default:
    all of them); combos whose body is within `min_contrast` (Lab distance) of the floor are
    skipped. `hand` adds a skin-coloured blob entering from an image edge, clear of the dice.
    `values` fixes the faces, in the order of the returned dice: touching pairs first, then
    (supporting, leaning) pairs, then lone dice. Light, exposure, blur and noise are drawn at
    random; keyword arguments go to TraySpec and win (e.g. noise_sigma=0, camera_height=math.inf).
    Same generator state, same tray.
    """
    if n_dice < 0 or touching < 0 or cocked < 0:
        raise ValueError("n_dice, touching and cocked must not be negative")
    if 2 * (touching + cocked) > n_dice:
        raise ValueError(
            f"{touching} touching pairs and {cocked} cocked dice need at least "
            f"{2 * (touching + cocked)} dice, got {n_dice}"
        )
    if values is not None and len(values) != n_dice:
        raise ValueError(f"values has {len(values)} entries for {n_dice} dice")
    floor = floor or str(rng.choice(list(FLOORS)))
    if floor not in ALL_FLOORS:
        raise ValueError(f"unknown floor {floor!r}; one of {', '.join(ALL_FLOORS)}")
    floor_colour = ALL_FLOORS[floor]
    names = list(palette or COLOUR_COMBOS)
    unknown = [n for n in names if n not in COLOUR_COMBOS]
    if unknown:
        raise ValueError(f"unknown colour combos {unknown}; known: {', '.join(COLOUR_COMBOS)}")
    usable = [
        n for n in names
        if np.linalg.norm(_lab(COLOUR_COMBOS[n][0]) - _lab(floor_colour)) >= min_contrast
    ]
    if not usable:
        raise ValueError(f"no colour combo in {names} contrasts with the {floor} floor")
    lo, hi = (side, side) if isinstance(side, int | float) else side
    base_side = float(rng.uniform(lo, hi))
    # Dice of one set share their make: edge rounding and pip size.
    make = {"corner_radius": float(rng.uniform(0.1, 0.2)),
            "pip_diameter": float(rng.uniform(0.17, 0.21))}

    taken: list[tuple[Point, float]] = []
    hands: list[HandSpec] = []
    if hand:
        edge = int(rng.integers(4))
        along = rng.uniform(0.25, 0.75)
        centre, angle = [
            ((along * width, 0.0), 90.0),
            ((float(width), along * height), 180.0),
            ((along * width, float(height)), 270.0),
            ((0.0, along * height), 0.0),
        ][edge]
        size = 1.8 * base_side
        hands.append(HandSpec(centre, size, angle + rng.uniform(-20, 20),
                              SKIN_TONES[int(rng.integers(len(SKIN_TONES)))]))
        taken.append((centre, size * 2.9))

    def pick_colours() -> tuple[BGR, BGR, bool]:
        return COLOUR_COMBOS[usable[int(rng.integers(len(usable)))]]

    def place(radius: float) -> Point:
        # Room for the side face that perspective shows toward the image centre, too.
        margin = radius + 0.45 * base_side + 2
        for _ in range(2000):
            centre = (rng.uniform(margin, width - margin), rng.uniform(margin, height - margin))
            if _far_enough(taken, centre, radius):
                taken.append((centre, radius))
                return centre
        raise ValueError(f"cannot fit {n_dice} dice of side {base_side:.0f} px in "
                         f"{width}x{height}; use fewer or smaller dice")

    value_iter = iter(values) if values is not None else None

    def next_value() -> int:
        return int(next(value_iter)) if value_iter is not None else int(rng.integers(1, 7))

    def die(centre: Point, angle: float, **extra: object) -> DieSpec:
        body, pips, translucent = pick_colours()
        s = base_side * rng.uniform(0.97, 1.03)
        return DieSpec(next_value(), centre, s, angle, body, pips, translucent=translucent,
                       **make, **extra)  # type: ignore[arg-type]

    dice: list[DieSpec] = []
    half_diag = base_side * 0.75  # circumscribed radius plus a little room
    for _ in range(touching):
        angle = rng.uniform(0, 360)
        centre = place(2.2 * half_diag)
        a = math.radians(angle + 90 * int(rng.integers(4)))
        gap = base_side * 0.52 * 1.02
        slide = base_side * rng.uniform(-0.25, 0.25)
        offset = np.array([math.cos(a), math.sin(a)]) * gap
        across = np.array([-math.sin(a), math.cos(a)]) * slide / 2
        for sign in (-1, 1):
            c = np.array(centre) + sign * (offset + across)
            dice.append(die((float(c[0]), float(c[1])), angle))
    for _ in range(cocked):
        angle = rng.uniform(0, 360)
        tilt = rng.uniform(20.0, 35.0)
        centre = place(2.6 * half_diag)
        a = math.radians(angle + 90 * int(rng.integers(4)))
        t = math.radians(tilt)
        dist = base_side / 2 * (1 + math.cos(t) + math.sin(t)) + 0.5
        half = dist / 2
        u = np.array([math.cos(a), math.sin(a)])
        support = np.array(centre) - u * half
        leaner = np.array(centre) + u * half
        dice.append(die((float(support[0]), float(support[1])), angle))
        dice.append(die((float(leaner[0]), float(leaner[1])), angle + rng.uniform(-4, 4),
                        tilt_deg=tilt, tilt_toward_deg=math.degrees(a)))
    while len(dice) < n_dice:
        dice.append(die(place(half_diag), rng.uniform(0, 360)))
    # Lamps, windows and cameras differ from bar to bar: vary them unless told otherwise.
    warmth = float(rng.uniform(-0.06, 0.06))
    light = {
        "light_azimuth_deg": float(rng.uniform(0, 360)),
        "light_elevation_deg": float(rng.uniform(50, 80)),
        "shadow_strength": float(rng.uniform(0.15, 0.4)),
        "gradient": float(rng.uniform(0.0, 0.2)),
        "exposure": float(rng.uniform(0.85, 1.12)),
        "white_balance": (1.0 - warmth, 1.0, 1.0 + warmth),
        "blur_sigma": float(rng.uniform(0.4, 1.0)),
        "noise_sigma": float(rng.uniform(1.0, 3.5)),
    }
    options = {**light, **tray_options}
    return TraySpec(width=width, height=height, floor=floor, dice=tuple(dice),
                    hands=tuple(hands), **options)  # type: ignore[arg-type]


def draw_truth(shot: RenderedTray) -> np.ndarray:
    """A copy of the image with each die's top face outlined and labelled ('?' when cocked)."""
    image = shot.image.copy()
    for truth in shot.truth:
        colour = (0, 140, 255) if truth.cocked else (40, 200, 40)
        corners = np.round(np.array(truth.corners)).astype(np.int32)
        cv2.polylines(image, [corners], True, colour, 1, cv2.LINE_AA)
        label = "?" if truth.cocked else str(truth.value)
        x, y = corners[:, 0].min(), corners[:, 1].min() - 4
        cv2.putText(image, label, (int(x), int(max(y, 10))), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                    colour, 1, cv2.LINE_AA)
    for outline in shot.hands:
        cv2.polylines(image, [outline.astype(np.int32)], True, (200, 80, 200), 1, cv2.LINE_AA)
    return image


# --------------------------------------------------------------------------------------------
# Command line


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m vision.render`: write example trays as PNG (+ truth JSON)."""
    parser = argparse.ArgumentParser(
        prog="python -m vision.render", description="Render synthetic dice-tray images."
    )
    parser.add_argument("--out", required=True, type=Path,
                        help="a .png file, or a folder for --count images")
    parser.add_argument("--count", type=int, default=1, help="images to write (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--varied", action="store_true",
                        help="the bar's variety (varied_tray): dice sets, floors, ring light, "
                             "hard lamp, glare, white balance, sizes 25-120 px, hands")
    parser.add_argument("--dice", type=int, default=None,
                        help="dice per tray (default 5; --varied: as many as fit of 1-8)")
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument("--side", type=float, default=None, help="die side in px (default random)")
    parser.add_argument("--floor", choices=sorted(ALL_FLOORS), default=None)
    parser.add_argument("--light", choices=("hard", "lamp", "ring"), default=None,
                        help="--varied: the kind of light (default random)")
    parser.add_argument("--touching", type=int, default=0, help="touching pairs")
    parser.add_argument("--cocked", type=int, default=None,
                        help="dice leaning on another (default 0; --varied: random)")
    parser.add_argument("--hand", action="store_true", help="add a hand-like blob")
    parser.add_argument("--noise", type=float, default=None,
                        help="sensor noise sigma in grey levels (default random 1..3.5)")
    parser.add_argument("--truth", action="store_true", help="also write NAME.json with truth")
    parser.add_argument("--show-truth", action="store_true",
                        help="draw each die's top-face outline and value (cocked: '?')")
    args = parser.parse_args(argv)

    if args.count < 1:
        parser.error("--count must be at least 1")
    single = args.out.suffix.lower() == ".png"
    if single and args.count != 1:
        parser.error("--out names one .png file; give a folder for --count > 1")
    folder = args.out.parent if single else args.out
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(args.count):
        seed = args.seed + k
        try:
            spec = _example_spec(args, seed)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        shot = render_tray(spec, seed)
        image = draw_truth(shot) if args.show_truth else shot.image
        name = "varied" if args.varied else "tray"
        path = args.out if single else folder / f"{name}_{seed:04d}.png"
        if not cv2.imwrite(str(path), image):
            print(f"error: cannot write {path}", file=sys.stderr)
            return 1
        if args.truth:
            path.with_suffix(".json").write_text(
                json.dumps([t.to_json() for t in shot.truth], indent=1) + "\n"
            )
        print(f"{path}: {len(shot.truth)} dice, values "
              f"{[t.value for t in shot.truth]}, cocked {sum(t.cocked for t in shot.truth)}")
    return 0


def _example_spec(args: argparse.Namespace, seed: int) -> TraySpec:
    """The tray the command line asks for, for `seed`."""
    rng = np.random.default_rng(seed)
    if args.varied:
        spec = varied_tray(
            rng, args.dice, width=args.width, height=args.height, cocked=args.cocked,
            touching=args.touching or None, hands=1 if args.hand else None,
            light=args.light, floor=args.floor,
            **({} if args.side is None else {"side": args.side}),
        )
        return spec if args.noise is None else replace(spec, noise_sigma=args.noise)
    return random_tray(
        rng, 5 if args.dice is None else args.dice, width=args.width, height=args.height,
        side=args.side or (30.0 * min(args.width, args.height) / 480,
                           48.0 * min(args.width, args.height) / 480),
        floor=args.floor, touching=args.touching, cocked=args.cocked or 0, hand=args.hand,
        **({} if args.noise is None else {"noise_sigma": args.noise}),
    )


if __name__ == "__main__":
    sys.exit(main())
