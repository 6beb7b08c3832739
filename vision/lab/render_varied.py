"""Varied trays for the renderer (`vision.lab.render`): the variety of bars, not one easy scene.

`varied_tray(rng)` draws a whole tray at random: dice bodies red, ivory, white, black, blue,
green, yellow, translucent and marbled, with dark pips on light bodies, light pips on dark ones
and coloured pips; floors of felt, wood, light plastic, white board, card, paper and slate; a
ring light (even, nearly shadowless), an ordinary lamp, or one hard lamp low over the horizon
with long sharp shadows; glare on the floor and the dice tops; warm, neutral or cold white
balance; blur, sensor noise and JPEG; dice from 25 to 120 px a side in a 640x480 frame;
touching dice, dice cocked on another die, dice leaning on the tray's wall; hands.

    spec = varied_tray(np.random.default_rng(3))          # a TraySpec, truth exact as always
    shot = render_tray(spec, seed=3)

`varied_scene(rng)` draws only the conditions (dice set, floor, light, camera, die size), for
callers that place the dice themselves (the simulated tray of `dicetower demo --scene varied`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np

from vision.lab.render_draw import Camera, die_faces
from vision.lab.render_specs import ALL_FLOORS, BGR, SKIN_TONES, DieSpec, HandSpec, Point, TraySpec


@dataclass(frozen=True)
class DiceSet:
    """The look of a set of dice: body and pip colours, translucent plastic, a marbled swirl."""

    kind: str  # "dark pips", "light pips", "coloured pips", "translucent", "marbled"
    body: BGR
    pips: BGR
    translucent: bool = False
    marble: BGR | None = None


def _set(kind: str, body: BGR, pips: BGR, marble: BGR | None = None) -> DiceSet:
    return DiceSet(kind, body, pips, kind == "translucent", marble)


#: The dice sets `varied_tray` draws from (BGR colours).
VARIED_DICE: dict[str, DiceSet] = {
    "ivory/black": _set("dark pips", (200, 228, 238), (30, 28, 30)),
    "white/black": _set("dark pips", (236, 236, 234), (25, 25, 28)),
    "yellow/black": _set("dark pips", (40, 206, 238), (28, 28, 30)),
    "light green/black": _set("dark pips", (150, 220, 150), (30, 30, 30)),
    "black/white": _set("light pips", (38, 36, 36), (232, 232, 230)),
    "red/white": _set("light pips", (38, 32, 196), (236, 236, 236)),
    "blue/white": _set("light pips", (176, 78, 32), (236, 236, 236)),
    "green/white": _set("light pips", (72, 158, 42), (236, 236, 236)),
    "navy/white": _set("light pips", (96, 40, 20), (230, 230, 230)),
    "white/red": _set("coloured pips", (234, 234, 232), (40, 36, 192)),
    "white/blue": _set("coloured pips", (236, 236, 234), (170, 80, 30)),
    "ivory/green": _set("coloured pips", (200, 228, 238), (50, 120, 30)),
    "black/gold": _set("coloured pips", (36, 34, 34), (70, 180, 225)),
    "red/gold": _set("coloured pips", (40, 30, 170), (80, 195, 235)),
    "translucent red/white": _set("translucent", (70, 50, 215), (240, 240, 240)),
    "translucent blue/white": _set("translucent", (205, 120, 60), (240, 240, 240)),
    "translucent green/white": _set("translucent", (110, 190, 70), (245, 245, 245)),
    "translucent amber/white": _set("translucent", (60, 160, 230), (245, 245, 245)),
    "translucent smoke/white": _set("translucent", (120, 115, 110), (245, 245, 245)),
    "marbled light blue/white": _set("marbled", (214, 170, 110), (250, 250, 250),
                                     (246, 242, 236)),
    "marbled red/black": _set("marbled", (40, 34, 180), (240, 240, 240), (34, 30, 32)),
    "marbled green/white": _set("marbled", (60, 130, 30), (25, 25, 25), (226, 232, 228)),
    "marbled purple/white": _set("marbled", (140, 50, 110), (90, 200, 240), (235, 230, 235)),
    "marbled blue/black": _set("marbled", (170, 80, 30), (240, 240, 240), (40, 30, 25)),
    "marbled yellow/orange": _set("marbled", (40, 200, 240), (30, 28, 30), (30, 120, 235)),
    # Two colours stirred, pips of a third, as many bars' dice: blue or green swirled with a
    # dark colour under red or yellow pips, amber with brown under black ones.
    "marbled blue/red": _set("marbled", (160, 100, 30), (45, 40, 200), (32, 30, 34)),
    "marbled green/yellow": _set("marbled", (60, 125, 40), (50, 205, 235), (38, 50, 30)),
    "marbled amber/black": _set("marbled", (50, 120, 190), (30, 28, 30), (28, 66, 118)),
}

#: How often each kind of dice set is drawn.
DICE_KIND_WEIGHTS: dict[str, float] = {
    "dark pips": 0.3, "light pips": 0.25, "coloured pips": 0.12, "translucent": 0.15,
    "marbled": 0.18,
}

#: Floors as bars have them: (floor kind, colour) and how often each is drawn.
VARIED_FLOORS: tuple[tuple[str, BGR, float], ...] = (
    ("felt", (48, 102, 34), 0.08), ("felt", (110, 60, 20), 0.05),
    ("felt", (40, 30, 120), 0.04), ("felt", (32, 32, 34), 0.04), ("felt", (45, 25, 90), 0.04),
    ("wood", (150, 192, 224), 0.08), ("wood", (90, 140, 190), 0.07), ("wood", (60, 95, 140), 0.05),
    ("plastic", (208, 212, 214), 0.09), ("plastic", (190, 215, 225), 0.06),
    ("plastic", (225, 210, 185), 0.05),
    ("white", (242, 243, 243), 0.15),
    ("grey", (176, 178, 180), 0.07), ("paper", (226, 229, 230), 0.07),
    ("slate", (62, 60, 58), 0.06),
)

#: Kinds of light and how often each is drawn.
LIGHT_WEIGHTS: dict[str, float] = {"ring": 0.3, "hard": 0.25, "lamp": 0.45}

MIN_CONTRAST = 15.0  # Lab distance below which a dice set is not put on a floor
SIDE_RANGE = (25.0, 120.0)  # die side in pixels, for a 640x480 frame
TOWER_SIDE = (25.0, 50.0)  # die side (px) of a tower's dice in a 640x480 frame


@dataclass(frozen=True)
class VariedScene:
    """The conditions of one varied tray, without the dice's places.

    `side` is the dice's side in pixels; `sets` names the VARIED_DICE on the tray (one, or a
    few when the dice are mixed); `light` is "ring", "hard" or "lamp"; `tray` holds TraySpec
    keyword arguments (floor, light, glare, white balance, blur, noise, JPEG, camera);
    `make` the DieSpec keyword arguments shared by the dice (edge rounding, pip size).
    """

    side: float
    sets: tuple[str, ...]
    light: str
    tray: dict[str, Any] = field(default_factory=dict)
    make: dict[str, float] = field(default_factory=dict)


def lab_of(colour: BGR) -> np.ndarray:
    """A BGR colour in OpenCV's 8-bit Lab, as floats (distances between colours)."""
    return cv2.cvtColor(np.uint8([[colour]]), cv2.COLOR_BGR2LAB)[0, 0].astype(float)


def _pick(rng: np.random.Generator, weights: dict[str, float]) -> str:
    names = list(weights)
    p = np.array([weights[n] for n in names], float)
    return names[int(rng.choice(len(names), p=p / p.sum()))]


#: The TraySpec options of each kind of light, as (low, high) ranges drawn in this order.
LIGHT_RANGES: dict[str, dict[str, tuple[float, float]]] = {
    # around the lens: even, from straight above, shadows all but gone
    "ring": {"light_azimuth_deg": (0, 360), "light_elevation_deg": (82, 90),
             "shadow_strength": (0.03, 0.1), "shadow_softness": (1.5, 2.5),
             "gradient": (0.0, 0.05), "vignette": (0.02, 0.1), "exposure": (0.8, 1.15)},
    # one bare bulb low over the horizon: long, dark, sharp shadows
    "hard": {"light_azimuth_deg": (0, 360), "light_elevation_deg": (12, 25),
             "shadow_strength": (0.45, 0.7), "shadow_softness": (0.06, 0.2),
             "gradient": (0.1, 0.3), "vignette": (0.05, 0.2), "exposure": (0.85, 1.3)},
    # an ordinary lamp
    "lamp": {"light_azimuth_deg": (0, 360), "light_elevation_deg": (40, 75),
             "shadow_strength": (0.15, 0.4), "shadow_softness": (0.6, 1.3),
             "gradient": (0.0, 0.2), "vignette": (0.02, 0.2), "exposure": (0.7, 1.2)},
}


def _light(rng: np.random.Generator, kind: str) -> dict[str, Any]:
    """TraySpec options of one kind of light (a key of LIGHT_RANGES), drawn in its order."""
    return {key: float(rng.uniform(lo, hi)) for key, (lo, hi) in LIGHT_RANGES[kind].items()}


def _white_balance(rng: np.random.Generator) -> tuple[float, float, float]:
    """Neutral, warm (tungsten: less blue, more red) or cold (daylight LEDs), as (B, G, R)."""
    r = rng.random()
    if r < 0.4:
        w = float(rng.uniform(-0.04, 0.04))
        return (1.0 - w, 1.0, 1.0 + w)
    if r < 0.7:
        return (float(rng.uniform(0.72, 0.88)), 1.0, float(rng.uniform(1.1, 1.25)))
    return (float(rng.uniform(1.1, 1.25)), 1.0, float(rng.uniform(0.8, 0.92)))


def varied_scene(
    rng: np.random.Generator,
    *,
    width: int = 640,
    height: int = 480,
    side: float | tuple[float, float] = SIDE_RANGE,
    light: str | None = None,
    floor: str | None = None,
    dice: str | None = None,
) -> VariedScene:
    """Conditions of a varied tray at random: dice set(s), floor, light, camera, die size.

    `side` fixes the die side or the range it is drawn from (log-uniform, in pixels of a
    640x480 frame, scaled with the frame); `light` ("ring", "hard", "lamp"), `floor` (one of
    ALL_FLOORS) and `dice` (one of VARIED_DICE) fix those. Same generator state, same scene.
    """
    if light is not None and light not in LIGHT_WEIGHTS:
        raise ValueError(f"unknown light {light!r}; one of {', '.join(LIGHT_WEIGHTS)}")
    if floor is not None and floor not in ALL_FLOORS:
        raise ValueError(f"unknown floor {floor!r}; one of {', '.join(ALL_FLOORS)}")
    if dice is not None and dice not in VARIED_DICE:
        raise ValueError(f"unknown dice {dice!r}; one of {', '.join(VARIED_DICE)}")
    scale = min(width, height) / 480.0
    lo, hi = (side, side) if isinstance(side, int | float) else side
    base_side = float(math.exp(rng.uniform(math.log(lo), math.log(hi)))) * scale

    floors = [f for f in VARIED_FLOORS if floor is None or f[0] == floor]
    if floors:
        weights = np.array([f[2] for f in floors])
        floor_kind, floor_bgr, _ = floors[int(rng.choice(len(floors), p=weights / weights.sum()))]
    else:  # a floor VARIED_FLOORS has no entry for: its own colour
        floor_kind, floor_bgr = str(floor), ALL_FLOORS[str(floor)]
    # Felt, wood and plastic come in many shades (of one hue: no lilac wood).
    shade = rng.uniform(0.88, 1.1)
    floor_bgr = tuple(int(np.clip(c * shade * rng.uniform(0.97, 1.03), 0, 255)) for c in floor_bgr)

    def usable(name: str) -> bool:
        return bool(np.linalg.norm(lab_of(VARIED_DICE[name].body) - lab_of(floor_bgr))
                    >= MIN_CONTRAST)

    def one_set() -> str:
        if dice is not None:
            return dice
        for _ in range(20):
            kind = _pick(rng, DICE_KIND_WEIGHTS)
            names = [n for n, s in VARIED_DICE.items() if s.kind == kind and usable(n)]
            if names:
                return names[int(rng.integers(len(names)))]
        return "white/black" if usable("white/black") else "black/white"

    # Most trays hold one set; some a mix of sets, as a bar's dice cup often does.
    sets = [one_set()] if dice is not None or rng.random() < 0.75 else [
        one_set() for _ in range(int(rng.integers(2, 4)))]
    kind = light or _pick(rng, LIGHT_WEIGHTS)
    tray: dict[str, Any] = {"floor": floor_kind, "floor_bgr": floor_bgr, **_light(rng, kind)}
    tray["white_balance"] = _white_balance(rng)
    # A camera's auto exposure keeps a light floor from burning out (glare still may).
    peak = max(c * g for c, g in zip(floor_bgr, tray["white_balance"], strict=True))
    peak *= tray["exposure"] * (1 + tray["gradient"] / 2)
    if peak > 240:
        tray["exposure"] *= 240 / peak
    tray["gloss"] = float(rng.uniform(0.0, 0.2))
    tray.update(glare=0.0, glare_at=None, glare_radius=0.0)
    if rng.random() < 0.3:
        tray["glare"] = float(rng.uniform(0.35, 1.0))
        tray["glare_at"] = (float(rng.uniform(0.1, 0.9) * width),
                            float(rng.uniform(0.1, 0.9) * height))
        tray["glare_radius"] = float(rng.uniform(0.06, 0.18) * max(width, height))
    # Blur in proportion: a small die's pips vanish under a blur a large die shrugs off.
    tray["blur_sigma"] = float(rng.uniform(0.3, min(2.2, 0.5 + 0.04 * base_side)))
    tray["noise_sigma"] = float(math.exp(rng.uniform(math.log(0.8), math.log(8.0))))
    tray["jpeg_quality"] = int(rng.integers(30, 96)) if rng.random() < 0.5 else None
    tray["camera_height"] = (None if rng.random() < 0.4
                             else float(rng.uniform(1.1, 3.0) * max(width, height)))
    make = {"corner_radius": float(rng.uniform(0.08, 0.22)),
            "pip_diameter": float(rng.uniform(0.15, 0.23))}
    return VariedScene(base_side, tuple(sets), kind, tray, make)


def _count(rng: np.random.Generator, given: int | None, p: float, most: int) -> int:
    if given is not None:
        if given < 0:
            raise ValueError("counts of dice and hands must not be negative")
        return given
    return int(rng.binomial(most, p))


def varied_tray(
    rng: np.random.Generator,
    n_dice: int | None = None,
    *,
    width: int = 640,
    height: int = 480,
    cocked: int | None = None,
    leaning: int | None = None,
    touching: int | None = None,
    hands: int | None = None,
    side: float | tuple[float, float] = SIDE_RANGE,
    light: str | None = None,
    floor: str | None = None,
    dice: str | None = None,
) -> TraySpec:
    """A tray drawn from the bar's variety (see the module's docstring), with exact truth.

    `n_dice` None: as many as fit of 1..8. `cocked` dice rest on another die (each uses two
    dice), `leaning` dice lean on the tray's wall (drawn when there are any), `touching` pairs
    stand face to face, `hands` reach in from the edges; None draws each at random (now and
    then one), a number asks for exactly that many. `side`, `light`, `floor` and `dice` go to
    `varied_scene`. Raises ValueError when the dice asked for do not fit. Same generator
    state, same tray.
    """
    scene = varied_scene(rng, width=width, height=height, side=side, light=light, floor=floor,
                         dice=dice)
    s = scene.side
    n_cocked = _count(rng, cocked, 0.15, 1)
    n_leaning = _count(rng, leaning, 0.1, 2)
    n_touching = _count(rng, touching, 0.2, 2)
    n_hands = _count(rng, hands, 0.12, 1)
    strict = n_dice is not None
    if n_dice is None:
        n_dice = max(int(rng.integers(1, 9)), 2 * (n_cocked + n_touching) + n_leaning)
    if n_dice < 0:
        raise ValueError("n_dice must not be negative")
    if 2 * (n_cocked + n_touching) + n_leaning > n_dice:
        raise ValueError(f"{n_cocked} cocked, {n_leaning} leaning and {n_touching} touching "
                         f"pairs need more than {n_dice} dice")
    # A wall's top seen from above: a band a few pixels wide, whatever the dice's size.
    wall = (float(np.clip(rng.uniform(0.3, 0.6) * s, 6.0, 0.05 * min(width, height)))
            if n_leaning or rng.random() < 0.25 else 0.0)
    camera = Camera(width, height, scene.tray["camera_height"])
    taken: list[tuple[Point, float]] = []
    dice_specs: list[DieSpec] = []
    hand_specs: list[HandSpec] = []

    def fits(die: DieSpec, inset: float) -> bool:
        corners = camera.project(np.concatenate([f.corners for f in die_faces(die)]))
        return bool(corners.min(axis=0).min() >= inset and corners[:, 0].max() <= width - inset
                    and corners[:, 1].max() <= height - inset)

    def free(centre: Point, radius: float) -> bool:
        return all(math.dist(centre, c) >= r + radius for c, r in taken)

    def spot(radius: float) -> Point | None:
        margin = wall + radius + 2
        if 2 * margin >= min(width, height):
            return None
        for _ in range(300):
            c = (float(rng.uniform(margin, width - margin)),
                 float(rng.uniform(margin, height - margin)))
            if free(c, radius):
                return c
        return None

    def die(centre: Point, angle: float, **extra: Any) -> DieSpec:
        look = VARIED_DICE[scene.sets[int(rng.integers(len(scene.sets)))]]
        return DieSpec(int(rng.integers(1, 7)), centre, s * float(rng.uniform(0.97, 1.03)),
                       angle % 360, look.body, look.pips, translucent=look.translucent,
                       marble_bgr=look.marble, marble_seed=int(rng.integers(1 << 30)),
                       **scene.make, **extra)

    def short(what: str) -> None:
        if strict:
            raise ValueError(f"cannot fit {what} of side {s:.0f} px in {width}x{height}; use "
                             "fewer or smaller dice")

    for _ in range(n_hands):
        edge = int(rng.integers(4))
        out = [(0.0, -1.0), (1.0, 0.0), (0.0, 1.0), (-1.0, 0.0)][edge]
        size = float(np.clip(2.2 * s, 30.0, 0.22 * min(width, height)))
        along = float(rng.uniform(0.2, 0.8))
        at = [(along * width, 0.0), (float(width), along * height), (along * width, float(height)),
              (0.0, along * height)][edge]
        # The palm partly outside the picture, the fingers reaching in.
        centre = (at[0] + out[0] * 0.6 * size, at[1] + out[1] * 0.6 * size)
        angle = math.degrees(math.atan2(-out[1], -out[0])) + float(rng.uniform(-25, 25))
        hand_specs.append(HandSpec(centre, size, angle,
                                   SKIN_TONES[int(rng.integers(len(SKIN_TONES)))]))
        taken.append((centre, 2.7 * size))

    half_diag = 0.75 * s
    for _ in range(n_cocked):  # one die resting on another, as in `random_tray`
        centre = spot(2.6 * half_diag)
        if centre is None:
            short("a cocked die")
            continue
        angle = float(rng.uniform(0, 360))
        tilt = float(rng.uniform(20.0, 35.0))
        a = math.radians(angle + 90 * int(rng.integers(4)))
        t = math.radians(tilt)
        half = (s / 2 * (1 + math.cos(t) + math.sin(t)) + 0.5) / 2
        u = np.array([math.cos(a), math.sin(a)])
        support = die(tuple(np.array(centre) - u * half), angle)
        leaner = die(tuple(np.array(centre) + u * half), angle + float(rng.uniform(-4, 4)),
                     tilt_deg=tilt, tilt_toward_deg=math.degrees(a))
        if fits(support, wall + 1) and fits(leaner, 1):
            taken.append((centre, 2.6 * half_diag))
            dice_specs += [support, leaner]
    for _ in range(n_leaning):
        placed = _lean_on_wall(rng, die, fits, free, wall, width, height, s)
        if placed is None:
            short("a die leaning on the wall")
            continue
        taken.append((placed.center, 1.2 * half_diag))
        dice_specs.append(placed)
    for _ in range(n_touching):
        centre = spot(2.2 * half_diag)
        if centre is None:
            short("a touching pair")
            continue
        angle = float(rng.uniform(0, 360))
        a = math.radians(angle + 90 * int(rng.integers(4)))
        gap = s * float(rng.uniform(0.5, 0.52))
        slide = s * float(rng.uniform(-0.3, 0.3)) / 2
        offset = np.array([math.cos(a), math.sin(a)]) * gap
        across = np.array([-math.sin(a), math.cos(a)]) * slide
        pair = [die(tuple(np.array(centre) + k * (offset + across)), angle) for k in (-1, 1)]
        if all(fits(d, wall + 1) for d in pair):
            taken.append((centre, 2.2 * half_diag))
            dice_specs += pair
    for _ in range(200):
        if len(dice_specs) >= n_dice:
            break
        centre = spot(half_diag)
        if centre is None:
            break
        # Now and then a die rests slightly askew (on a crumb, a seam): not cocked.
        extra = ({"tilt_deg": float(rng.uniform(2.0, 7.0)),
                  "tilt_toward_deg": float(rng.uniform(0, 360))} if rng.random() < 0.08 else {})
        lone = die(centre, float(rng.uniform(0, 360)), **extra)
        if fits(lone, wall + 1):
            taken.append((centre, half_diag))
            dice_specs.append(lone)
    if len(dice_specs) < n_dice:
        short(f"{n_dice} dice")
    return TraySpec(width=width, height=height, dice=tuple(dice_specs), hands=tuple(hand_specs),
                    rim=wall, **scene.tray)


def tower_tray(rng: np.random.Generator, **counts: int) -> TraySpec:
    """A tower's throw from the bar's variety: two to five small dice (`TOWER_SIDE`) of one
    set, the set's kind (dark pips, light pips, coloured pips, translucent, marbled) drawn
    evenly: a bar's mix draws the hard kinds rarely, and among a tower's few small dice they
    are the ones lost. ``counts`` (cocked, leaning, touching, hands) go to `varied_tray`.
    Raises ValueError when its dice do not fit, as `varied_tray`."""
    kinds = sorted({s.kind for s in VARIED_DICE.values()})
    kind = kinds[int(rng.integers(len(kinds)))]
    names = [n for n, s in VARIED_DICE.items() if s.kind == kind]
    return varied_tray(rng, int(rng.integers(2, 6)), side=TOWER_SIDE,
                       dice=names[int(rng.integers(len(names)))], **counts)


def set_of(die: DieSpec) -> str | None:
    """The name of the VARIED_DICE set a drawn die belongs to (None: another look)."""
    return next((name for name, s in VARIED_DICE.items()
                 if (s.body, s.pips, s.marble) == (die.body_bgr, die.pip_bgr, die.marble_bgr)),
                None)


def _lean_on_wall(rng: np.random.Generator, die: Any, fits: Any, free: Any, wall: float,
                  width: int, height: int, s: float) -> DieSpec | None:
    """A die leaning on one of the tray's walls: its bottom edge on the floor, its top edge
    against the wall's inner face, the top face tilted toward the wall."""
    for _ in range(60):
        edge = int(rng.integers(4))
        toward = (270.0, 0.0, 90.0, 180.0)[edge]  # top, right, bottom, left wall
        u = np.array([math.cos(math.radians(toward)), math.sin(math.radians(toward))])
        tilt = float(rng.uniform(15.0, 35.0))
        probe = die((0.0, 0.0), toward + float(rng.uniform(-4, 4)), tilt_deg=tilt,
                    tilt_toward_deg=toward)
        reach = float(max(np.concatenate([f.corners for f in die_faces(probe)])[:, :2] @ u))
        # Where the wall's inner face stands, measured along u from the image origin.
        plane = (-wall, width - wall, height - wall, -wall)[edge]
        across = plane - reach - 0.3
        along = float(rng.uniform(wall + 1.5 * s, (width if edge in (0, 2) else height)
                                  - wall - 1.5 * s))
        centre = (along, across) if edge == 2 else (across, along) if edge == 1 else (
            (along, -across) if edge == 0 else (-across, along))
        if free(centre, 1.2 * 0.75 * s):
            placed = replace(probe, center=centre)
            if fits(placed, 1):
                return placed
    return None
