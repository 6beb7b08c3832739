"""The simulated tray: the demo's, the benchmarks' and the tests' tower.

`SimulatedTray` is the physical tray: which dice rest where (roll zone, keep zone, outside),
and what happens next (dice tumbling in, a hand reaching in, a die left cocked against
another, the 4D square turned). `SimulatedCamera` (`firmware_host.simulation.camera`) films
it: every frame is a picture drawn by the lab's renderer (`vision.lab.render`), so the
controller reads it with the real vision pipeline, exactly as it reads a real camera's frames.

    tray = SimulatedTray(seed=7)
    camera = SimulatedCamera(tray)
    tray.throw([4, 2, 1])                      # three dice tumble into the roll zone
    frame = camera.read()                      # blurred, moving dice...
    ...                                        # ...then still frames, each with fresh noise

Rendering a frame costs tens of milliseconds, so a still tray is drawn once and every frame of
it gets its own sensor noise and a slight flicker (a camera's frames of a still tray are never
identical), and only the frames in motion are drawn one by one. Frame times run on the
tray's own clock at ``fps``: `realtime=False` plays as fast as the machine can.

Light responds as on a real tower: the tray's ring light (`set_ring`, off unless set) adds
white light that evens out the bar lamp's shadows and colour; the camera's ExposureTime and
AnalogueGain (`set_controls`) scale the light before it clips, gain the noise too. Left
alone, every frame is as it was without them.

``scene="varied"`` draws every throw with other dice, floor, light, camera and die size
(`firmware_host.simulation.scene`); its profile then holds the zones only.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from firmware_host.simulation.scene import (
    SCENES,
    PlacedDie,
    Point,
    TrayLayout,
    TrayTruth,
    VariedLook,
    varied_look,
)
from vision import Profile
from vision.lab.render import VARIED_DICE, DieSpec, HandSpec, TraySpec, render_tray

NOISE_BANK = 4  # noise fields drawn once and shifted per frame (drawing one costs ~20 ms)
TUMBLE_FRAMES = 4  # frames of dice in flight, before they rest
MOVE_FRAMES = 2  # frames of a hand turning or moving dice that are already there
RING_LIGHT = 0.8  # light of the ring at full level, against the bar lamp's at exposure 1
REFERENCE_EXPOSURE = 10_000  # microseconds: the exposure at which the tray looks as drawn


@dataclass(frozen=True)
class _Shot:
    """One or more frames to show: a drawn picture, possibly held still for several frames."""

    image: np.ndarray
    truth: TrayTruth
    frames: int  # 0: held until something else happens
    noisy: bool


class SimulatedTray:
    """The physical tray of the simulation, shared by the camera and whoever plays on it.

    Thread-safe: a virtual player may throw from one thread while the camera films from
    another. ``colours`` names a dice set of the bar's variety (`vision.lab.render.VARIED_DICE`,
    which holds the plain `COLOUR_COMBOS` and marbled dice among others); ``floor`` one of
    its floors; light, noise and blur are those of an ordinary bar lamp over the tray.
    ``scene="varied"`` changes all of them (and the die size) at every throw instead.
    """

    def __init__(self, *, layout: TrayLayout | None = None, colours: str = "ivory/black",
                 floor: str = "felt", seed: int = 0, noise: float = 2.5,
                 jpeg_quality: int | None = None, scene: str = "classic",
                 **light: Any) -> None:
        if colours not in VARIED_DICE:  # the plain COLOUR_COMBOS are among them
            raise ValueError(f"unknown dice colours {colours!r}; one of "
                             f"{', '.join(VARIED_DICE)}")
        if scene not in SCENES:
            raise ValueError(f"unknown scene {scene!r}; one of {', '.join(SCENES)}")
        self.layout = layout or TrayLayout()
        self.colours = colours
        look = VARIED_DICE[colours]
        self.body, self.pips, self.translucent = look.body, look.pips, look.translucent
        self.marble = look.marble
        self.rng = np.random.default_rng(seed)
        self.noise = noise
        self.jpeg_quality = jpeg_quality
        self._lock = threading.Lock()
        # An ordinary bar lamp; ``light`` may change any of it (a low lamp, a warm bulb).
        lamp = {"gradient": 0.08, "vignette": 0.06, "light_azimuth_deg": 200.0,
                "light_elevation_deg": 65.0, "shadow_strength": 0.25, **light}
        self._base = TraySpec(width=self.layout.width, height=self.layout.height, floor=floor,
                              noise_sigma=0.0, blur_sigma=0.6, camera_height=None, **lamp)
        self._lamp = self._base  # the bar's own light, before the ring and the camera
        self._ring: float | None = None
        self._exposure = 1.0  # the camera's exposure, x REFERENCE_EXPOSURE
        self.scene = scene
        self._seed = seed
        self._looks = 0  # varied scene: looks drawn so far (one per throw)
        self._look: VariedLook | None = None  # varied scene: this throw's look
        self._empty_stale = False
        if scene == "varied":
            self._new_look()
        self._render_seed = seed
        self._empty_seed = seed + 1
        self._dice: tuple[PlacedDie, ...] = ()
        self._queue: deque[_Shot] = deque()
        self._still = self._draw(self._dice)
        self._empty = self._still.image
        self._noise_bank = [
            self.rng.normal(0.0, noise, (self.layout.height, self.layout.width, 3))
            .astype(np.float32) for _ in range(NOISE_BANK)
        ] if noise > 0 else []

    # ------------------------------------------------------------------ what it holds

    @property
    def dice(self) -> tuple[PlacedDie, ...]:
        with self._lock:
            return self._dice

    def empty_tray(self) -> np.ndarray:
        """The empty tray as the camera sees it, without noise (what calibration keeps)."""
        if self._empty_stale:
            self._empty = self._draw((), seed=self._empty_seed).image
            self._empty_stale = False
        return self._empty.copy()

    def profile(self, *, empty_tray: bool = True) -> Profile:
        """The calibration profile of this tray: zones, die size, dice colour, empty tray.
        The varied scene's holds the zones only (its dice and floor change at every throw)."""
        zones, keep = [list(self.layout.roll_zone)], list(self.layout.keep_zone)
        if self.scene == "varied":
            return Profile(zones=zones, keep_zone=keep)
        lab = cv2.cvtColor(np.uint8([[self.body]]), cv2.COLOR_BGR2LAB)[0, 0]
        dark_pips = sum(self.pips) < sum(self.body)
        profile = Profile(dice_colors=[tuple(float(c) for c in lab)],
                          pip_polarity="dark" if dark_pips else "light",
                          die_side=None,
                          zones=zones, keep_zone=keep)
        if empty_tray:
            profile.use_empty_tray(self.empty_tray())
        return profile

    # ------------------------------------------------------------------ the light

    ring = property(lambda self: self._ring, doc="The ring light's level (0..1); None: off.")
    def set_ring(self, level: float) -> None:
        """Set the ring light's level (0..1); the tray is seen under it from the next frame."""
        if not 0.0 <= level <= 1.0:
            raise ValueError(f"ring level must be between 0 and 1, not {level}")
        self._relight(float(level), self._exposure)

    def expose(self, factor: float) -> None:
        """The camera's exposure, as a factor of REFERENCE_EXPOSURE (from the camera)."""
        self._relight(self._ring, float(factor))

    def _lit(self, lamp: TraySpec, ring: float | None, exposure: float) -> TraySpec:
        """``lamp`` under the tray's ring light and the camera's exposure."""
        # The white ring over the tray dilutes the lamp's colour, shadows and fall-off.
        added = RING_LIGHT * (ring or 0.0)
        share = lamp.exposure / (lamp.exposure + added)
        return lamp if ring is None and exposure == 1.0 else replace(
            lamp, exposure=(lamp.exposure + added) * exposure, gradient=lamp.gradient * share,
            white_balance=tuple(share * g + 1.0 - share for g in lamp.white_balance),
            shadow_strength=lamp.shadow_strength * share)

    def _relight(self, ring: float | None, exposure: float) -> None:
        self._ring, self._exposure = ring, exposure
        base = self._lit(self._lamp, ring, exposure)
        with self._lock:
            self._base = base
        still, empty = self._draw(self.dice), self._draw((), seed=self._empty_seed)
        with self._lock:
            self._still, self._empty = replace(self._still, image=still.image), empty.image

    def reseed(self, seed: int) -> None:
        """Play on from a fresh generator: after ``reseed(s)`` the same throws land and are
        filmed the same way, whatever happened on the tray before (a calibration's throws)."""
        with self._lock:
            self.rng = np.random.default_rng(seed)
            self._render_seed = seed

    # ------------------------------------------------------------------ what happens

    def throw(self, faces: Sequence[int], *, keep: Sequence[int] = (), cocked: bool = False,
              hand: bool = False, outside: int = 0) -> TrayTruth:
        """Dice showing ``faces`` tumble into the roll zone; ``keep`` rest in the keep zone.

        ``cocked``: one thrown die ends leaning on another (needs two thrown dice).
        ``hand``: a hand reaches in after the dice have landed, pauses, and leaves.
        ``outside``: that many thrown dice bounce out of the tray (seen outside both zones).
        Returns what will rest on the tray once the dice are still.
        """
        faces = [int(f) for f in faces]
        if self.scene == "varied":
            self._new_look()
        kept = [self._keep_die(v, i) for i, v in enumerate(keep)]
        landed = self._scatter(faces, cocked=cocked and len(faces) >= 2, outside=outside)
        self._set([*landed, *kept], tumble=True, hand=hand)
        # ``hand``: a hand will come in before the dice are read (so the throw is not clean).
        return TrayTruth(tuple([*landed, *kept]), hand=hand)

    def place(self, dice: Sequence[PlacedDie], *, hand: bool = False,
              frames: int = MOVE_FRAMES) -> TrayTruth:
        """Move to exactly ``dice`` (4D: a die turned, the square rotated), a hand moving them."""
        self._set(list(dice), tumble=False, hand=hand, move_frames=frames)
        return TrayTruth(tuple(dice))

    def clear(self) -> None:
        """Take every die out of the tray (a hand sweeps them up)."""
        self._set([], tumble=False, hand=True, move_frames=MOVE_FRAMES)

    def square(self, faces: Sequence[int], *, centre: Point | None = None,
               spacing: float | None = None, angle: float = 0.0) -> list[PlacedDie]:
        """Dice for a 4D square: positions 0..3 clockwise (on screen) from the bottom-left
        corner, the fifth die (if any) beside the square. Not placed: give them to `place`."""
        x0, y0, x1, y1 = self.layout.box("roll")
        cx, cy = centre or ((x0 + x1) / 2, (y0 + y1) / 2)
        gap = spacing or self.layout.side * 2.0
        dice = []
        # Clockwise on screen (y down): bottom-left, top-left, top-right, bottom-right.
        corners = [(-1, 1), (-1, -1), (1, -1), (1, 1)]
        a = math.radians(angle)
        for value, (u, v) in zip(faces[:4], corners, strict=False):
            dx, dy = u * gap / 2, v * gap / 2
            x = cx + dx * math.cos(a) - dy * math.sin(a)
            y = cy + dx * math.sin(a) + dy * math.cos(a)
            dice.append(PlacedDie(int(value), (x, y), float(self.rng.uniform(-8, 8)), "roll"))
        if len(faces) > 4:
            dice.append(PlacedDie(int(faces[4]), (cx + 2.2 * gap, cy),
                                  float(self.rng.uniform(0, 90)), "roll"))
        return dice

    # ------------------------------------------------------------------ for the camera

    def next_shot(self) -> tuple[np.ndarray, TrayTruth, bool]:
        """(picture, truth, noisy) of the next frame; the camera adds noise when noisy."""
        with self._lock:
            while self._queue:
                shot = self._queue[0]
                if shot.frames == 0:
                    return shot.image, shot.truth, shot.noisy
                if shot.frames == 1:
                    self._queue.popleft()
                else:
                    self._queue[0] = replace(shot, frames=shot.frames - 1)
                return shot.image, shot.truth, shot.noisy
            return self._still.image, self._still.truth, True

    def noisy(self, image: np.ndarray) -> np.ndarray:
        """``image`` as one frame of a real sensor: fresh noise, a slight flicker."""
        if not self._noise_bank:
            return image
        field_ = self._noise_bank[int(self.rng.integers(len(self._noise_bank)))]
        shift = (int(self.rng.integers(self.layout.height)), int(self.rng.integers(
            self.layout.width)))
        noise = np.roll(field_, shift, axis=(0, 1))
        if self._look is not None:  # this throw's sensor, against the tray's own noise
            noise = noise * self._look.noise_gain
        flicker = float(self.rng.uniform(0.99, 1.01))
        frame = np.clip(image.astype(np.float32) * flicker + noise + 0.5, 0, 255).astype(np.uint8)
        # The user's --jpeg wins over the varied scene's own.
        quality = self.jpeg_quality if self.jpeg_quality is not None or self._look is None \
            else self._look.jpeg_quality
        if quality is not None:
            ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
            if ok:
                frame = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        return frame

    # ------------------------------------------------------------------ internals

    def _set(self, dice: list[PlacedDie], *, tumble: bool, hand: bool,
             move_frames: int = MOVE_FRAMES) -> None:
        shots: list[_Shot] = []
        before = self.dice
        if tumble:
            for k in range(TUMBLE_FRAMES):
                shots.append(_Shot(self._tumbling(dice, k), TrayTruth(tuple(dice), moving=True),
                                   1, noisy=True))
        else:
            for k in range(move_frames):
                moved = self._in_between(before, dice, (k + 1) / (move_frames + 1))
                drawn = self._draw(moved, hand=True, blur=1.6)
                shots.append(_Shot(drawn.image, TrayTruth(tuple(dice), moving=True, hand=True),
                                   1, noisy=True))
        still = self._draw(tuple(dice))
        if hand:
            reach = self._draw(tuple(dice), hand=True)
            # The hand rests in the tray for a while (longer than any settle hold), then leaves.
            shots.append(_Shot(reach.image, TrayTruth(tuple(dice), hand=True), 24, noisy=True))
        with self._lock:
            self._dice = tuple(dice)
            self._queue.extend(shots)
            self._still = _Shot(still.image, TrayTruth(tuple(dice)), 0, noisy=True)

    def _new_look(self) -> None:
        """Varied scene: this throw's look, from the seed and the throw's number."""
        self._look = look = varied_look(self._seed, self._looks, self.layout, self.noise)
        self._looks += 1
        self.layout = replace(self.layout, side=look.side)
        self._lamp = replace(self._lamp, **look.tray)
        base = self._lit(self._lamp, self._ring, self._exposure)
        with self._lock:
            self._base = base
        self._empty_stale = True

    def _draw(self, dice: Sequence[PlacedDie], *, hand: bool = False,
              blur: float | None = None, seed: int | None = None) -> _Shot:
        specs = tuple(self._spec(d, i) for i, d in enumerate(dice))
        hands: tuple[HandSpec, ...] = ()
        if hand:
            y = float(self.rng.uniform(0.3, 0.7)) * self.layout.height
            hands = (HandSpec((float(self.layout.width), y), 1.9 * self.layout.side,
                              180.0 + float(self.rng.uniform(-20, 20))),)
        spec = replace(self._base, dice=specs, hands=hands,
                       blur_sigma=blur if blur is not None else self._base.blur_sigma)
        if seed is None:
            self._render_seed += 1
        shot = render_tray(spec, seed=self._render_seed if seed is None else seed)
        return _Shot(shot.image, TrayTruth(tuple(dice), hand=hand), 0, noisy=True)

    def _spec(self, die: PlacedDie, index: int = 0) -> DieSpec:
        lift = 0.0
        if self._look is not None:
            return self._look.die_spec(die, index, self.layout.side)
        return DieSpec(die.value, die.center, self.layout.side, die.angle, self.body, self.pips,
                       tilt_deg=die.tilt, tilt_toward_deg=die.tilt_toward,
                       translucent=self.translucent, marble_bgr=self.marble,
                       marble_seed=index, lift=lift)

    def _tumbling(self, dice: list[PlacedDie], k: int) -> np.ndarray:
        """Dice in flight: coming down from the tower's chute (top of the roll zone), spinning,
        blurred by their speed."""
        x0, y0, x1, _ = self.layout.box("roll")
        start = ((x0 + x1) / 2, y0 + self.layout.side)
        t = (k + 1) / (TUMBLE_FRAMES + 1)
        flying = []
        for die in dice:
            if die.zone == "keep":
                flying.append(die)
                continue
            x = start[0] + (die.center[0] - start[0]) * t + float(self.rng.uniform(-12, 12))
            y = start[1] + (die.center[1] - start[1]) * t + float(self.rng.uniform(-12, 12))
            x = float(np.clip(x, 4, self.layout.width - 4))
            y = float(np.clip(y, 4, self.layout.height - 4))
            flying.append(PlacedDie(int(self.rng.integers(1, 7)), (x, y),
                                    float(self.rng.uniform(0, 90)), "roll"))
        return self._draw(flying, blur=2.5 * (1 - t) + 1.2).image

    def _in_between(self, before: Sequence[PlacedDie], after: Sequence[PlacedDie],
                    t: float) -> list[PlacedDie]:
        if len(before) != len(after):
            return list(after)
        return [replace(b, center=(b.center[0] + (a.center[0] - b.center[0]) * t,
                                   b.center[1] + (a.center[1] - b.center[1]) * t),
                        value=a.value if t > 0.5 else b.value)
                for b, a in zip(before, after, strict=True)]

    def _keep_die(self, value: int, index: int) -> PlacedDie:
        x0, y0, x1, y1 = self.layout.box("keep")
        step = self.layout.side * 1.8
        y = y0 + self.layout.side + index * step + float(self.rng.uniform(-4, 4))
        x = (x0 + x1) / 2 + float(self.rng.uniform(-10, 10))
        return PlacedDie(int(value), (x, min(y, y1 - self.layout.side)),
                         float(self.rng.uniform(0, 90)), "keep")

    def _scatter(self, faces: list[int], *, cocked: bool, outside: int) -> list[PlacedDie]:
        side = self.layout.side
        x0, y0, x1, y1 = self.layout.box("roll")
        margin = side * 1.1
        taken: list[tuple[Point, float]] = []
        dice: list[PlacedDie] = []

        def spot(radius: float) -> Point:
            for _ in range(500):
                c = (float(self.rng.uniform(x0 + margin, x1 - margin)),
                     float(self.rng.uniform(y0 + margin, y1 - margin)))
                if all(math.dist(c, p) >= r + radius for p, r in taken):
                    taken.append((c, radius))
                    return c
            raise ValueError("no room left in the simulated roll zone")

        values = list(faces)
        if cocked:
            # A leaning die rests against a die lying flat (the geometry of vision.render's
            # random trays): together they take the room of two dice side by side.
            support_value, leaner_value = values.pop(), values.pop()
            angle = float(self.rng.uniform(0, 360))
            tilt = float(self.rng.uniform(20.0, 35.0))
            centre = spot(2.0 * side)
            a = math.radians(angle + 90 * int(self.rng.integers(4)))
            tr = math.radians(tilt)
            half = (side / 2 * (1 + math.cos(tr) + math.sin(tr)) + 0.5) / 2
            u = (math.cos(a), math.sin(a))
            dice.append(PlacedDie(support_value, (centre[0] - u[0] * half,
                                                  centre[1] - u[1] * half), angle, "roll"))
            dice.append(PlacedDie(leaner_value, (centre[0] + u[0] * half,
                                                 centre[1] + u[1] * half),
                                  angle + float(self.rng.uniform(-4, 4)), "roll", leaning=True,
                                  tilt=tilt, tilt_toward=math.degrees(a)))
        for k, value in enumerate(values):
            if k < outside:
                # Bounced out: on the tray's rim, below the roll zone's edge.
                x = float(self.rng.uniform(x0 + side, x1 - side))
                dice.append(PlacedDie(value, (x, self.layout.height - side * 0.3),
                                      float(self.rng.uniform(0, 90)), "outside"))
                continue
            dice.append(PlacedDie(value, spot(0.8 * side), float(self.rng.uniform(0, 90)), "roll"))
        return dice
