"""`read_dice`: one colour image of the tray in, the dice it shows out.

A reading, step by step; each step's details live in the module named:

1. normalise the input: dtype and channels (`vision.image_io.as_bgr`), and its brightness
   (`vision.exposure`: a dim picture brought up to the brightness later thresholds are set for);
2. the tray: with a profile, only the part around its zones is read, and its empty tray is
   the floor (`vision.profile`);
3. the die size: the profile's, or measured on a small copy (`vision.detect.quick_die_side`);
4. the working copy, where a die is about WORK_DIE_SIDE pixels, and the sharper source dice
   are straightened from (`vision.straightening`);
5. die candidates: die-shaped regions, split regions, pip clusters
   (`vision.detect.find_candidates`);
6. each candidate straightened and read, four readers under one rule, one reading per die
   (`vision.scene_reading`, `vision.combined`); a close-up's pips read as one die
   (`vision.close_up`); what the face network is sure is no face dropped;
7. when no die body gave the size, the size at which the network sees dice best is tried too;
8. the unsure: an unsure "die" of none of the profile's dice colours is none
   (`Profile.dice_coloured`), and a read die leaning on another is cocked (`check_lean`, with
   the network of `vision.lean_net`);
9. the dice in the input's pixels, those outside the profile's zones left out, and those cut
   by the edge of what is read that reach beyond them (a die on the tray's rim).

Anything that does not fit a face layout is reported unsure with a reason. The networks (the
die finder, the face network, the lean check) are the caller's (`vision.readers`): they travel
with the prepared image (`Scene.readers`) to every step that asks one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from typing import TypeVar

import numpy as np

from vision.close_up import close_up
from vision.combined import NET_SURE
from vision.detect import (
    Candidate,
    find_candidates,
    look_at,
    quick_die_side,
    quick_size,
)
from vision.every_way import read_every_way, steady, without_blanks
from vision.exposure import exposed
from vision.exposure import gain as exposure_gain
from vision.face_net import FaceReader
from vision.finder import SURE, Spot
from vision.image_io import as_bgr
from vision.lean_gap import LEAN_BRIDGED, leans_on
from vision.lean_net import LEAN_SURE, distance_from_centre, lean_patch
from vision.lean_shape import REACH, SQUARE_FACES, face_shape, flat_aspect, leans_toward
from vision.profile import Profile
from vision.readers import Readers, shipped
from vision.scene_reading import SAME_DIE, Found, Scene, read_scene
from vision.straightening import PATCH_SIDE, Source, patch_source, straighten, working_copy
from vision.types import Die

# A die the finder found: its spot, or the candidate made of it.
_Found = TypeVar("_Found", Spot, Candidate)

# Larger inputs are read at this size (longer side) and mapped back.
MAX_WORKING_SIDE = 1024
MIN_WORKING_SIDE = 160  # ... but never smaller than this
WORK_DIE_SIDE = 32.0  # die side (px) at the working size
# Die sides tried (x the one assumed) when no die body in the image gives the size.
TRIAL_SIDES = (0.6, 0.75, 0.9, 1.0, 1.15, 1.3, 1.5)
# The finder's spots it is SURE of (`vision.finder.SURE`, the belief that also sizes its
# closer look) check the frame's typical die side, which must be within SIDE_AGREES times
# their median.
SIDE_AGREES = 1.5
# x a spot's side: a classic candidate nearer than this to a spot, but not on it, is beside
# its die (see `_with_spots`).
BESIDE = 1.1


def read_dice(
    image: np.ndarray, profile: Profile | None = None, *, readers: Readers | None = None,
    lean_check: bool = True,
) -> list[Die]:
    """Every die in a BGR (or gray / BGRA) image of the tray, read or marked unsure.

    A die whose face reads but that the lean check (`vision.lean_net`) finds leaning on
    another die is reported cocked; ``lean_check=False`` leaves that out (the check's own
    training cuts the dice it reads). What the face network is sure shows no die face is
    not reported at all, not even as unsure (a fingertip, a speck), nor is an unsure "die"
    the die finder is not sure of while it is sure of others (`_nothing_seen`).

    With a profile: its die size and pip polarity are taken as known, dice outside its zones
    are left out (and the image around them is not read), its empty tray replaces the
    modelled floor, and an unsure "die" whose body matches none of its dice colours (a hand,
    a coaster) is no die. Its adaptation to its dice (`vision.adaptation`) is the face
    network's last layer for the whole reading.

    ``readers``: the networks to read with (`vision.readers`; None: the shipped ones)."""
    scene = prepare(image, profile, readers)
    kept = _read(scene)
    if not scene.sized and not _all_explained(kept, scene):
        # No die body gave the die size (white dice on a light floor): the size at which the
        # network sees dice best in the pip clusters is tried as well, and kept if more dice
        # read at it.
        trial = _size_seen_best(scene.source, scene.candidates, scene.side,
                                scene.readers.face, also=_finders_side(scene.candidates))
        if trial != scene.side:
            candidates, side = find_candidates(scene.look, trial)
            other = _read(replace(scene, side=side, candidates=candidates))
            if _values(other) > _values(kept):
                kept = other
    if profile and profile.dice_colors:
        kept = [k for k in kept if k.die.value is not None or profile.dice_coloured(
            scene.look.image, scene.look.mask, k.center, scene.side)]
    if lean_check:
        check_lean(kept, scene)
    dice = [scene.placed(k.die) for k in kept]
    if profile and profile.zones:
        reach = scene.side / scene.scale / math.sqrt(2.0)  # half a die's diagonal, input px
        dice = [d for d, k in zip(dice, kept, strict=True) if profile.in_zones(d.center)
                and not _on_the_rim(d, k.cand, profile, scene.box, reach)]
    return dice


def _on_the_rim(die: Die, cand: Candidate, profile: Profile,
                box: tuple[int, int, int, int], reach: float) -> bool:
    """Whether a die is cut by the edge of what is read (``box``: x0, y0, x1, y1 of the
    input) and reaches beyond the zones: a die bounced onto the tray's rim, half out of
    view. Its visible part's middle may lie just inside a zone, but no die of the throw lies
    partly out of the picture, so it is left out (the throw's count then says a die is
    missing) rather than read as cocked, or read by the pips that show: half a two is a
    one. A die may be cut when its region touches the edge, or, read from its pips in view
    (whose cluster lies inside, and whose face read may be smaller than the die), when its
    middle lies nearer the edge than ``reach``, half a die's diagonal: however it is
    turned, a die that far in is whole."""
    x0, y0, x1, y1 = box
    x, y = die.center
    cut = cand.touches_border or not (x0 + reach <= x <= x1 - reach
                                      and y0 + reach <= y <= y1 - reach)
    return cut and not all(profile.in_zones(corner) for corner in die.corners)


def prepare(image: np.ndarray, profile: Profile | None = None,
            readers: Readers | None = None) -> Scene:
    """Normalise an image, bring it to the working size and find its die candidates.

    A profile's zones limit the work to the part of the image around them, and its empty
    tray replaces the modelled floor. The scene is read with ``readers`` (None: the shipped
    networks), the profile's adaptation in (`Readers.with_profile`)."""
    readers = (shipped() if readers is None else readers).with_profile(profile)
    bgr = as_read(image, profile)
    shape = bgr.shape[:2]
    box = profile.zone_box(shape) if profile else (0, 0, shape[1], shape[0])
    x0, y0, x1, y1 = box
    bgr = bgr[y0:y1, x0:x1]
    h, w = bgr.shape[:2]
    spots = readers.finder.find(bgr)
    if profile and profile.die_side:
        side = measured = profile.die_side
    else:
        measured = quick_die_side(bgr, profile.floor(shape, box, quick_size((h, w)))
                                  if profile else None)
        side = _checked_side(measured, spots)
    # Work at a size where a die is about WORK_DIE_SIDE pixels (never enlarged): the same
    # pixel sizes then fit every camera, and large images cost no more than small ones.
    scale = min(1.0, MAX_WORKING_SIDE / max(h, w))
    if side is not None:
        scale = min(scale, WORK_DIE_SIDE / side)
    scale = max(scale, MIN_WORKING_SIDE / max(h, w), 1e-3)
    scale = min(scale, 1.0)
    source = patch_source(bgr, scale, side)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    seen = look_at(working_copy(source.image, size),
                   profile.floor(shape, box, size) if profile else None)
    side_hint = side * scale if side is not None else None
    candidates, side_found = find_candidates(seen, side_hint)
    if spots:
        candidates = _with_spots(spots, scale, (h, w), candidates)
    return Scene(seen, source, scale, side_found, candidates,
                 profile.pip_polarity if profile else None, sized=measured is not None,
                 box=box, input_size=(shape[1], shape[0]), readers=readers)


def _checked_side(side: float | None, spots: list[Spot]) -> float | None:
    """The frame's typical die side: the one measured on its foreground's regions when it
    explains the dice the finder found (their median side within SIDE_AGREES of it), else
    the finder's, which measured each die on its own (a patch of floor taken for a die, one
    large shadow, must not set the size every die is read at). With none measured, the
    finder's when the dice it is sure of are of one size, the largest at most SIDE_AGREES
    times the smallest (a size assumed for the whole frame lost every die of trays whose
    dice touch or cast long shadows); else none. Where none was measured, the reading also
    tries several sizes, the finder's among them, and keeps the one the face network reads
    best (`_size_seen_best`)."""
    sure = [s.side for s in _sure(spots)]
    if not sure:
        return side
    found = float(np.median(sure))
    if side is None:
        # Only dice the finder sizes alike make a size for the frame: one of its spots may
        # sit on a single pip, and a size it sets would read that pip as a one.
        return found if max(sure) <= SIDE_AGREES * min(sure) else None
    return side if 1 / SIDE_AGREES <= side / found <= SIDE_AGREES else found


def _finder_sure(candidates: Iterable[Candidate]) -> list[Candidate]:
    """The candidates the die finder gave (`_with_spots`) that it is sure of."""
    return _sure(c for c in candidates if c.source == "found")


def _sure(found: Iterable[_Found]) -> list[_Found]:
    """The dice the die finder is sure of (`vision.finder.SURE`), of its spots or of the
    candidates it gave (`_with_spots`)."""
    return [f for f in found if f.score >= SURE]


def _with_spots(spots: list[Spot], scale: float, shape: tuple[int, int],
                classic: list[Candidate]) -> list[Candidate]:
    """The die finder's spots (frame ``shape``, h and w) as candidates in working pixels
    (``scale`` x the frame), and the classic candidates but those just beside a spot."""
    h, w = shape
    found = []
    for spot in spots:
        corners = spot.corners()
        cut = bool(np.any(corners < 0) or np.any(corners[:, 0] > w) or np.any(corners[:, 1] > h))
        found.append(Candidate((spot.center[0] * scale, spot.center[1] * scale),
                               (spot.side * scale, spot.side * scale), spot.angle, cut,
                               "found", score=spot.score))
    # A classic candidate on a spot's die reads it a second time (a reading that disagrees
    # leaves it unsure: `read_scene`); one far from every spot is a die the finder missed;
    # one just beside a spot is the side face of a die seen at a slant, or a neighbour's.
    def kept(c: Candidate) -> bool:
        near = min((math.dist(c.center, f.center) / max(f.side, 1e-6) for f in found),
                   default=math.inf)
        return near < SAME_DIE or near >= BESIDE
    return found + [c for c in classic if kept(c)]


def as_read(image: np.ndarray, profile: Profile | None = None) -> np.ndarray:
    """``image`` as a reading sees it: checked, in BGR, and a dim one brought up
    (`vision.exposure`). With a profile's empty tray, a frame is read as it is: it is compared
    with the tray pixel by pixel, in the light calibration chose and locked for both (and a
    dark tray is no dim picture: the dice on it may be the brightest things in view). What
    is measured on a read image to be compared later with what the reader sees (the dice
    colours of a profile) is measured on this."""
    bgr = as_bgr(image)
    if profile is not None and profile.background_image() is not None:
        return bgr
    return exposed(bgr, exposure_gain(bgr))


def _read(scene: Scene) -> list[Found]:
    """One reading per die of a prepared scene (working pixels)."""
    kept = close_up(read_scene(scene), scene)
    # Blanks stay until here: in a close-up, they are the pips of one large die.
    net = scene.readers.face
    kept = steady(without_blanks(kept, net), net, scene.polarity)
    kept = read_every_way(kept, net)
    if _finder_sure(scene.candidates):
        kept = [k for k in kept if not _nothing_seen(k, scene)]
    if not scene.look.hue:
        # With no hue to tell shade by, shade stays in the foreground (`vision.detect`): a
        # region with nothing inside it to read ("low contrast") is taken for the shade it
        # most likely is (a shadow, the tray's wall), as a colour image's hue would have.
        kept = [k for k in kept if k.die.value is not None or k.die.reason != "low contrast"]
    return kept


def _nothing_seen(found: Found, scene: Scene) -> bool:
    """Whether ``found`` is a "die" no reader vouches for: unsure (not cocked), and the die
    finder is not SURE a die's top face lies there (no spot of that belief on it). An unsure
    reading says "a die is here, its face unknown"; where the finder doubts the die itself
    and nothing reads on it, it is most often the tray's wall, a label, a die's side face
    (docs/lab/vision-reading.md). Left out, it costs nothing a die would: the controller
    counts the dice it expects and takes no throw short of one. Asked only of a frame the
    finder is sure of some die in: one whose dice it sees none of (a die far larger than it
    learnt) is no frame for its doubt to judge."""
    if found.die.value is not None or found.die.reason == "cocked":
        return False
    reach = SAME_DIE * max(found.cand.side, scene.side)
    return not any(math.dist(c.center, found.center) <= reach
                   for c in _finder_sure(scene.candidates))


def _all_explained(kept: list[Found], scene: Scene) -> bool:
    """Whether a reading leaves nothing for another die size to read: it valued every die it
    kept, and every die the die finder is sure of (each sized on its own, none by a size for
    the whole frame) is one of them. A reading at another size then read no more dice on any
    frame measured (docs/lab/vision-reading.md), and it costs a second reading of the frame.
    A frame the finder is sure of no die in is not checked so, and tries the other sizes."""
    sure = _finder_sure(scene.candidates)
    if not sure or not kept or any(k.die.value is None for k in kept):
        return False
    reach = SAME_DIE * scene.side
    return all(any(math.dist(c.center, k.center) <= reach for k in kept) for c in sure)


def _finders_side(candidates: list[Candidate]) -> tuple[float, ...]:
    """The median side of the dice the die finder is sure of (working pixels), if any: each
    measured on its own, it is a size worth trying where no die body gave one."""
    sure = _finder_sure(candidates)
    return (float(np.median([c.side for c in sure])),) if sure else ()


def _size_seen_best(source: Source, candidates: list[Candidate], side: float,
                    net: FaceReader, also: tuple[float, ...] = ()) -> float:
    """Of the die sides ``side`` x TRIAL_SIDES and ``also``, the one at which the face
    network ``net`` is sure of a face on the most pip clusters (then: the surest on them
    overall). A default size can be far from the dice (a tenth of a frame that shows them
    from afar): the die finder's, in ``also``, reaches them."""
    clusters = [c for c in candidates if c.source == "pips"]
    if not clusters:
        return side
    best, best_score = side, (-1, 0.0)
    for trial in [factor * side for factor in TRIAL_SIDES] + list(also):
        probs = net.probabilities([straighten(source.image, c.center, 0.0, trial, source.zoom)[0]
                                   for c in clusters])
        values = probs[:, 1:].max(axis=1)
        score = (int(np.count_nonzero(values >= NET_SURE)), float(values.sum()))
        if score > best_score:
            best, best_score = trial, score
    return best


def check_lean(kept: list[Found], scene: Scene) -> None:
    """Report cocked each read die that the lean check (the scene's, `vision.lean_net`) is
    LEAN_SURE sure leans, on another die or on the tray's wall; or LEAN_BRIDGED sure, with
    no floor between it and a read die it may rest on (`vision.lean_gap`); or a four or five
    whose face is squeezed toward the nearest die (`vision.lean_shape`). Its top face is
    whole and fits a face, but the game asks for a re-throw."""
    centre, image_side = scene.centre, scene.image_side
    if centre is None or image_side is None:
        return
    # A die's side is its pips' grid's; a one has none (its outline is the side it was
    # straightened at, which for a leaning die takes in its side face): it takes the other
    # dice's, dice of a tray being of a size.
    read = [(k, math.dist(*k.die.corners[:2])) for k in kept if k.die.value is not None]
    sides = [side for k, side in read if k.die.value >= 2]
    typical = float(np.median(sides)) if sides else None
    checked = [(k, typical if k.die.value == 1 and typical is not None else side)
               for k, side in read]
    if not checked:
        return
    # The working copy shows a die about twice as wide as the check looks at it: enough.
    patches = [lean_patch(scene.look.image, k.center, side, centre) for k, side in checked]
    distances = [distance_from_centre(k.center, centre, image_side) for k, _ in checked]
    # What a die may lean on: the nearest other die (read or not) within REACH sides, or the
    # frame's edge (the tray's wall) within as many.
    near = {id(k): _nearest_within(k, kept, REACH * side) for k, side in checked}
    beside = [near[id(k)] is not None or scene.from_edge(k.center) <= REACH * side
              for k, side in checked]
    leanings = scene.readers.lean.leaning(patches, distances, beside)
    leaning_ids = _squeezed(checked, near, scene) | {
        id(k) for (k, _), leaning in zip(checked, leanings, strict=True) if leaning >= LEAN_SURE}
    # A die bridged to one found leaning already is the die that one rests on: only the
    # gaps to the others can tell a lean.
    others = [k.center for k, _ in checked if id(k) not in leaning_ids]
    every_centre = [k.center for k in kept]
    for (k, side), leaning in zip(checked, leanings, strict=True):
        if id(k) in leaning_ids or (
                leaning >= LEAN_BRIDGED
                and leans_on(scene.look.mask, k.center, side, others, every_centre)):
            k.die = replace(k.die, value=None, reason="cocked",
                            confidence=float(min(k.die.confidence, 1.0 - leaning)),
                            alternatives=(k.die.value,))


def _squeezed(checked: list[tuple[Found, float]],
              near: dict[int, tuple[float, float] | None], scene: Scene) -> set[int]:
    """The ids of the read fours and fives whose top face is squeezed toward the nearest other
    die (``near``: by id, within REACH sides, or None), as a die's leaning on it is
    (`vision.lean_shape`): the lean network, which sees a die at a third of the pips'
    resolution, lets some of them through."""
    square = [(k, side) for k, side in checked if k.die.value in SQUARE_FACES]
    if not any(near[id(k)] is not None for k, _ in square):
        return set()  # no four or five with a die to lean on: no pips to look at again
    source = scene.source
    shapes = {}
    for k, side in square:
        # Not turned: the patch's axes are the image's, and so is the shape's short axis.
        patch = straighten(source.image, k.center, 0.0, side, source.zoom)[0]
        shape = face_shape(patch, float(PATCH_SIDE), k.die.value, scene.polarity)
        if shape is not None:
            shapes[id(k)] = shape
    squeezed = set()  # ids: a Found compares by its arrays
    for k, side in square:
        shape, neighbour = shapes.get(id(k)), near[id(k)]
        if shape is None or neighbour is None:
            continue
        flat = flat_aspect([s for key, s in shapes.items() if key != id(k)])
        if leans_toward(shape, flat, k.center, side, neighbour):
            squeezed.add(id(k))
    return squeezed


def _nearest_within(found: Found, kept: list[Found], reach: float
                    ) -> tuple[float, float] | None:
    """The centre of the other reading of ``kept`` nearest ``found``, if within ``reach``."""
    others = [f.center for f in kept if f is not found]
    if not others:
        return None
    centre = min(others, key=lambda c: math.dist(c, found.center))
    return centre if math.dist(centre, found.center) <= reach else None


def _values(found: list[Found]) -> int:
    return sum(f.die.value is not None for f in found)
