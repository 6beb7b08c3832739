"""The pipeline's sizes and copies: the die size found (or assumed), dice of several sizes in one
image, re-reads at other sizes, the working copy and the sharpest copy patches are cut from."""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest
from test_vision_combined import _net

import vision
import vision.pipeline as pipeline
from vision import scene_reading, straightening
from vision.detect import Candidate, Look
from vision.finder import Spot
from vision.lab.render import (
    DieSpec,
    RenderedTray,
    TraySpec,
    random_tray,
    render_tray,
)
from vision.lab.rendered_bench import tray_for_seed
from vision.readers import shipped

# --- white dice on a white floor: no die body to give the size or the centre ---------------

def _white_on_paper(side: float, seed: int) -> RenderedTray:
    rng = np.random.default_rng(seed)
    dice = tuple(DieSpec(int(v), (160 + 160 * k, 240 + 30 * (k % 2)), side,
                         angle_deg=float(rng.uniform(0, 90)))
                 for k, v in enumerate(rng.integers(1, 7, 3)))
    return render_tray(TraySpec(floor="paper", dice=dice, shadow_strength=0.1), seed=seed)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_white_dice_smaller_than_the_assumed_size_are_read(seed: int) -> None:
    # No body stands out, so no die size is found; the assumed one (a tenth of the image) is
    # a third too large, and the size the network sees dice best at is used instead.
    shot = _white_on_paper(36, seed)
    assert pipeline.quick_die_side(shot.image) is None
    got = sorted(d.value for d in vision.read_dice(shot.image) if d.value is not None)
    assert got == sorted(t.value for t in shot.truth)


def _spot(side: float, score: float) -> Spot:
    return Spot((0.0, 0.0), side, 0.0, score, 0.0)


@pytest.mark.parametrize(("measured", "spots", "side"), [
    (40.0, [(38.0, 0.9), (44.0, 0.9)], 40.0),   # measured, and it explains the dice found
    (90.0, [(38.0, 0.9), (44.0, 0.9)], 41.0),   # measured on a patch of floor: the finder's
    (40.0, [(90.0, 0.2)], 40.0),                # the finder sure of no die
    (None, [(38.0, 0.9)], 38.0),                # none measured: the finder's
    (None, [(90.0, 0.2)], None),                # nor any die found: sizes are tried (below)
    (None, [(51.0, 0.9), (41.0, 0.7), (28.0, 0.5)], None),  # dice found of two sizes: tried
])
def test_the_typical_die_side_is_the_one_that_explains_the_dice_found(
    measured: float | None, spots: list[tuple[float, float]], side: float | None
) -> None:
    assert pipeline._checked_side(measured, [_spot(*s) for s in spots]) == side


def test_the_finders_side_is_tried_where_no_die_body_gave_one() -> None:
    def found(side: float, score: float) -> Candidate:
        return Candidate((0.0, 0.0), (side, side), 0.0, False, "found", score=score)

    spots = [found(20.0, 0.9), found(22.0, 0.8), found(30.0, 0.6), found(64.0, 0.3)]
    assert pipeline._finders_side(spots) == (22.0,)   # the median of the sure ones
    assert pipeline._finders_side([found(64.0, 0.3)]) == ()


def test_the_die_size_is_the_one_the_network_sees_dice_best_at(monkeypatch) -> None:
    class SureAtOneSize:
        """A network sure of a four only on patches where the die is 30 px."""

        def probabilities(self, patches):
            probs = np.tile(np.r_[0.9, np.full(6, 0.1 / 6)], (len(patches), 1))
            if self.side == 30.0:
                probs[:, 0], probs[:, 4] = 0.02, 0.9
            return probs

    net = SureAtOneSize()

    def straighten(image, center, angle, side, zoom=1.0):
        net.side = round(side, 6)
        return np.zeros((72, 72, 3), np.uint8), np.eye(2, 3)

    monkeypatch.setattr(pipeline, "straighten", straighten)
    monkeypatch.setattr(pipeline, "TRIAL_SIDES", (0.6, 1.0, 1.5))
    clusters = [Candidate((50.0, 50.0), (50.0, 50.0), 0.0, False, "pips")]
    source = pipeline.Source(np.zeros((100, 100, 3), np.uint8), 1.0)
    assert pipeline._size_seen_best(source, clusters, 50.0, net) == 30.0
    assert pipeline._size_seen_best(source, [], 50.0, net) == 50.0  # no pip cluster: as assumed
    # Dice far smaller than assumed: only the die finder's size, tried too, reaches them.
    assert pipeline._size_seen_best(source, clusters, 100.0, net) != 30.0
    assert pipeline._size_seen_best(source, clusters, 100.0, net, also=(30.0,)) == 30.0


def test_the_pips_of_a_four_seed_a_candidate_at_its_centre() -> None:
    from vision.detect import pip_seeds

    # Four dark pips 0.56 side apart on a white die on white paper, side 40: the corners of a
    # four are further apart than neighbouring pips, so only the wider grouping joins them.
    lab = np.full((200, 200, 3), (235, 128, 128), np.uint8)
    for x, y in ((89, 89), (111, 89), (89, 111), (111, 111)):
        cv2.circle(lab, (x, y), 3, (40, 128, 128), -1)
    seeds = pip_seeds(lab, 40.0)
    assert min(math.dist(s, (100, 100)) for s in seeds) < 1.0


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_small_dice_beside_larger_ones_are_read_at_their_own_size(seed: int) -> None:
    # Dark dice 26 px wide beside green ones of 46 px: the typical die side is the large
    # dice's, and a die body half its side is still a die.
    rng = np.random.default_rng(seed)
    big = [DieSpec(int(rng.integers(1, 7)), (120 + 200 * k, 150), 46, float(rng.uniform(0, 90)),
                   (60, 200, 60), (240, 240, 240)) for k in range(3)]
    small = [DieSpec(int(rng.integers(1, 7)), (120 + 200 * k, 330), 26,
                     float(rng.uniform(0, 90)), (70, 30, 60), (240, 240, 240)) for k in range(3)]
    shot = render_tray(TraySpec(floor="paper", dice=tuple(big + small)), seed=seed)
    got = sorted(d.value for d in vision.read_dice(shot.image) if d.value is not None)
    assert got == sorted(t.value for t in shot.truth)


def _found(cand: Candidate, value: int | None) -> scene_reading.Found:
    """A stub reading of ``cand``: ``value``, or unsure."""
    die = vision.Die(value, cand.center, tuple(map(tuple, cand.corners())), 0.9,
                     None if value else "not a pip face")
    return scene_reading.Found(die, (0 if value else 1, -0.9), cand.center, cand)


@pytest.mark.parametrize(("distance", "own_side", "same"), [
    (31.0, 30.0, True),    # a die no larger than typical: 0.8 typical sides (32 px) reach
    (33.0, 30.0, False),
    (75.0, 100.0, True),   # a die of 100 px reaches 0.8 of its own side: its rim, its pips
    (85.0, 100.0, False),
])
def test_a_reading_is_of_a_die_within_its_reach(
    distance: float, own_side: float, same: bool
) -> None:
    die = _found(Candidate((200.0, 200.0), (own_side, own_side), 0.0, False, "body"), 4)
    assert scene_reading.same_die((200.0 + distance, 200.0), die, 40.0) is same


@pytest.mark.parametrize(("parts_read", "expected"), [
    ((1, 2), [1, 2]),   # both parts read: two dice, the whole region's "two" is dropped
    ((None, None), [2]),  # no part reads: the region is one die, as read whole
])
def test_a_region_read_whole_and_split_is_two_dice_when_both_parts_read(
    monkeypatch, parts_read: tuple[int | None, int | None], expected: list[int]
) -> None:
    whole = Candidate((50.0, 50.0), (84.0, 40.0), 0.0, False, "body", region=0)
    parts = [Candidate((28.0, 50.0), (40.0, 40.0), 0.0, False, "split", region=0),
             Candidate((72.0, 50.0), (40.0, 40.0), 0.0, False, "split", region=0)]
    work = np.zeros((100, 100, 3), np.uint8)
    look = Look(work, work, np.zeros((100, 100), np.uint8))
    values = {whole.center: 2, parts[0].center: parts_read[0], parts[1].center: parts_read[1]}

    def read(mask, cand, side, polarity, view, *, net, sized=False):
        return _found(cand, values[cand.center])

    class Net:
        def probabilities(self, patches):
            return np.tile(_net(2, 0.9), (len(patches), 1))

    readers = replace(shipped(), face=Net())
    scene = scene_reading.Scene(look, pipeline.Source(work, 1.0), 1.0, 40.0, [whole, *parts], None,
                                readers=readers)
    monkeypatch.setattr(pipeline, "prepare", lambda image, profile=None, readers=None: scene)
    monkeypatch.setattr(scene_reading, "read_candidate", read)
    dice = pipeline.read_dice(work)
    assert sorted(d.value for d in dice if d.value is not None) == expected


@pytest.mark.parametrize(("by_factor", "expected"), [
    ({1.25: 5}, 5),             # a five fits its grid only at 1.25 times the size used
    ({1.25: 5, 1.5: 5}, 5),     # ... and at 1.5 times
    ({0.8: 4, 1.25: 5}, None),  # two sizes, two faces: still unsure
    ({0.8: 5, 1.5: 4}, None),   # ... whichever sizes they are
    ({0.8: 5, 1.25: 2}, None),  # ... also when the other face has few pips
    ({0.8: 2}, None),           # a two read only at another size is too little to go on
    ({}, None),                 # no size reads
])
def test_an_unsure_die_is_read_again_at_other_sizes(
    monkeypatch, by_factor: dict[float, int], expected: int | None
) -> None:
    cand = Candidate((50.0, 50.0), (40.0, 40.0), 0.0, False, "body")
    work = np.zeros((100, 100, 3), np.uint8)

    def read(mask, cand, side, polarity, view, *, net, sized=False):
        return _found(cand, by_factor.get(round(view.side / 40.0, 2)))

    class Net:
        def probabilities(self, patches):
            return np.tile(_net(5, 0.9), (len(patches), 1))

    monkeypatch.setattr(scene_reading, "read_candidate", read)
    view = straightening.View(40.0, *pipeline.straighten(work, cand.center, 0.0, 40.0))
    found = scene_reading.read_resized(pipeline.Source(work, 1.0), np.zeros((100, 100), np.uint8),
                                       cand, 40.0, None, view, net=Net())
    # An unsure trial is never what comes back ({}: every size unsure): a patch cut larger
    # takes in a neighbour, and the network's word alone is asked only of the die as first
    # cut (`vision.every_way`).
    assert (found.die.value if found else None) == expected


@pytest.mark.parametrize(("net", "reads"), [
    (_net(2, 0.9), 0),     # only a two is possible: too few pips to stand, nothing is read
    (_net(0, 0.9), 0),     # no face at all
    (_net(4, 0.9), 3),     # a four is possible: every size is read
])
def test_sizes_the_network_rules_out_are_not_read(monkeypatch, net, reads: int) -> None:
    cand = Candidate((50.0, 50.0), (40.0, 40.0), 0.0, False, "body")
    work = np.zeros((100, 100, 3), np.uint8)
    calls = []

    def read(mask, cand, side, polarity, view, *, net, sized=False):
        calls.append(view.side)
        return _found(cand, None)

    class Net:
        def probabilities(self, patches):
            return np.tile(net, (len(patches), 1))

    monkeypatch.setattr(scene_reading, "read_candidate", read)
    view = straightening.View(40.0, *pipeline.straighten(work, cand.center, 0.0, 40.0))
    assert scene_reading.read_resized(pipeline.Source(work, 1.0), np.zeros((100, 100), np.uint8),
                                      cand, 40.0, None, view, net=Net()) is None
    assert len(calls) == reads


@pytest.mark.parametrize("seed", range(6))
def test_a_die_much_larger_than_the_rest_is_read(seed: int) -> None:
    # A die 1.56 times the side of the others: its region is too large to be taken at its own
    # size, and at the typical size its pips miss their grid.
    rng = np.random.default_rng(seed)
    small = [DieSpec(int(rng.integers(1, 7)), (110 + 140 * k, 130 + 200 * (k % 2)), 36,
                     float(rng.uniform(0, 90)), (40, 40, 200), (240, 240, 240))
             for k in range(4)]
    big = DieSpec(int(rng.integers(3, 7)), (330, 360), 56, float(rng.uniform(0, 90)),
                  (40, 40, 200), (240, 240, 240))
    shot = render_tray(TraySpec(floor="grey", dice=(*small, big)), seed=seed)
    got = sorted(d.value for d in vision.read_dice(shot.image) if d.value is not None)
    assert got == sorted(t.value for t in shot.truth)


def test_the_pip_readers_percentiles_are_numpys_to_the_last_bit() -> None:
    from vision.pips import percentile

    rng = np.random.default_rng(11)
    for _ in range(300):
        n = int(rng.integers(1, 3000))
        values = (rng.random(n) * 100).astype(np.float32)
        if rng.random() < 0.3:
            values = np.round(values)  # ties
        for q in (50, 98, 99):
            assert percentile(values, q) == float(np.percentile(values, q))


def test_medians_of_8_bit_images_are_numpys() -> None:
    from vision.histogram import median_u8

    rng = np.random.default_rng(12)
    for _ in range(300):
        h, w = (int(v) for v in rng.integers(1, 60, 2))
        channels = int(rng.integers(1, 4))
        # Narrow ranges too: most values tied, the two middle ranks often on one level.
        image = rng.integers(0, int(rng.integers(1, 257)), (h, w, channels)).astype(np.uint8)
        mask = rng.random((h, w)) < rng.uniform(0.05, 1.0)
        mask.flat[0] = True
        assert np.array_equal(median_u8(image, mask), np.median(image[mask], axis=0))
        assert np.array_equal(median_u8(image, mask.astype(np.uint8) * 255),
                              np.median(image[mask], axis=0))
        assert np.array_equal(median_u8(image[::2, ::3, 0]),
                              [np.median(image[::2, ::3, 0])])  # a strided view, one channel
    with pytest.raises(ValueError, match="no pixels"):
        median_u8(image, np.zeros(image.shape[:2], bool))


def test_the_floor_in_shade_is_told_from_a_die() -> None:
    from vision.detect import SHADOW_CHROMA, SHADOW_RANGE, _shadow

    floor = np.full((1, 4, 3), (160, 140, 150), np.uint8)
    lab = np.array([[(112, 136, 143),    # the floor's hue at 70 % of its lightness: shade
                     (112, 100, 143),    # as dark, another hue: a die
                     (40, 131, 133),     # a quarter of its lightness: a dark die
                     (158, 140, 150)]],  # hardly darker: no shade
                   np.uint8)
    assert _shadow(lab, floor, np.arange(4)).tolist() == [True, False, False, False]
    # The same rule, written out, on random pixels: the tabulated lightness ratios are exact.
    rng = np.random.default_rng(5)
    floor = rng.integers(0, 256, (100, 100, 3)).astype(np.float64)
    darker = rng.uniform(0.3, 1.1, (100, 100, 1))  # around both ends of the shade's range
    lab = np.concatenate([darker * (floor[..., :1] + 1) - 1,
                          128 + darker * (floor[..., 1:] - 128) + rng.normal(0, 5, (100, 100, 2))],
                         axis=2)
    lab, floor = (np.clip(np.round(x), 0, 255).astype(np.uint8) for x in (lab, floor))
    pix, ground = lab.reshape(-1, 3).astype(np.float32), floor.reshape(-1, 3).astype(np.float32)
    ratio = (pix[:, 0] + 1) / (ground[:, 0] + 1)
    hue = np.abs(pix[:, 1:] - 128 - ratio[:, None] * (ground[:, 1:] - 128)).sum(axis=1)
    expected = (ratio >= SHADOW_RANGE[0]) & (ratio <= SHADOW_RANGE[1]) & (hue < SHADOW_CHROMA)
    assert 1000 < expected.sum() < 9000
    assert np.array_equal(_shadow(lab, floor, np.arange(lab.size // 3)), expected)


@pytest.mark.parametrize(("shape", "scale", "side", "whole", "zoom"), [
    ((800, 1000), 0.25, 200.0, 4, 1.0),   # dice stay 50 px: reduced by 4, the working size
    ((800, 1000), 0.5, 64.0, 1, 2.0),     # a die reduced by 2 would be under PATCH_SIDE
    ((801, 1001), 0.3, None, 3, 1.0 / 0.9),  # no size known: never below the working size
    ((480, 640), 1.0, 30.0, 1, 1.0),      # small dice: the input itself
])
def test_patches_are_cut_from_the_sharpest_copy_that_is_cheap_to_make(
    shape, scale: float, side: float | None, whole: int, zoom: float
) -> None:
    bgr = np.random.default_rng(0).integers(0, 256, (*shape, 3), dtype=np.uint8)
    source = pipeline.patch_source(bgr, scale, side)
    assert source.image.shape[:2] == (shape[0] // whole, shape[1] // whole)
    assert source.zoom == pytest.approx(zoom)
    if whole == 1:
        assert source.image is bgr


def test_a_die_straightened_from_a_larger_copy_is_the_same_die() -> None:
    # A smooth random image and its half: a die straightened from the larger one (zoom 2),
    # at the same working coordinates, looks the same, and maps back to the same place.
    rng = np.random.default_rng(3)
    large = cv2.GaussianBlur(rng.integers(0, 256, (400, 400, 3), dtype=np.uint8), (0, 0), 6)
    small = cv2.resize(large, (200, 200), interpolation=cv2.INTER_AREA)
    a, back_a = pipeline.straighten(small, (97.0, 103.0), 20.0, 40.0)
    b, back_b = pipeline.straighten(large, (97.0, 103.0), 20.0, 40.0, zoom=2.0)
    np.testing.assert_allclose(back_a, back_b, atol=1e-9)
    assert np.abs(a.astype(int) - b.astype(int)).mean() < 2.0


@pytest.mark.parametrize("side", [50.0, 70.0])
def test_dice_are_found_at_the_working_size_and_read_from_the_input(side: float) -> None:
    # Whatever their size in the image, dice are found in a reduced working copy and
    # straightened from the input itself (dice under 96 px: no whole reduction keeps 48 px).
    rng = np.random.default_rng(11)
    dice = tuple(DieSpec(v, (120.0 + 130 * k, 240.0), side, float(rng.uniform(0, 90)),
                         (235, 235, 235), (30, 30, 30)) for k, v in enumerate((2, 5, 6, 3)))
    shot = render_tray(TraySpec(floor="felt", dice=dice), seed=11)
    scene = pipeline.prepare(shot.image)
    assert scene.scale < 1.0 and scene.look.image.shape[0] == round(480 * scene.scale)
    assert np.array_equal(scene.source.image, shot.image)
    assert scene.source.zoom == pytest.approx(1.0 / scene.scale)
    got = sorted(d.value for d in vision.read_dice(shot.image) if d.value is not None)
    assert got == [2, 3, 5, 6]


@pytest.mark.parametrize("seed", [21, 22, 23])
def test_the_die_size_pass_sees_the_outlines_the_filled_foreground_has(seed: int) -> None:
    # The die-size pass skips filling holes (pips, glare) in its mask: filling them leaves
    # every region's outer outline, and so the size, as it is.
    from vision.detect import die_pixels, estimate_side, foreground

    shot = render_tray(random_tray(np.random.default_rng(seed), 6), seed=seed)
    lab = cv2.cvtColor(shot.image, cv2.COLOR_BGR2Lab)
    raw, filled = die_pixels(lab), foreground(lab)
    assert np.count_nonzero(filled) > np.count_nonzero(raw)  # there were holes to fill

    def outlines(mask: np.ndarray) -> list[np.ndarray]:
        return list(cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)[0])

    assert [c.tolist() for c in outlines(raw)] == [c.tolist() for c in outlines(filled)]
    assert estimate_side(outlines(raw), lab.shape[:2]) == estimate_side(outlines(filled),
                                                                         lab.shape[:2])


def test_the_finders_side_reads_a_tray_no_die_body_gave_a_size() -> None:
    # Two white dice touching on green felt: their one region is no die's size, and the size
    # assumed for the frame lost both. The finder measured each.
    shot = tray_for_seed(9126, tower=True)
    assert pipeline.quick_die_side(shot.image) is None
    got = sorted(d.value for d in vision.read_dice(shot.image) if d.value is not None)
    assert got == sorted(t.value for t in shot.truth) == [5, 5]


def _few_pips_on_a_spot(value: int, side: float, below: float) -> bool:
    """`_part_of_larger` on a lone die of ``value`` as if a face of few pips (its own, or
    two) had been read on a finder's spot ``side`` x its own, ``below`` x its side under its
    centre."""
    shot = render_tray(TraySpec(640, 480, "felt", dice=(DieSpec(value, (320, 240), 40),)),
                       seed=3)
    scene = pipeline.prepare(shot.image)
    truth, k = shot.truth[0], scene.scale
    spot_side = truth.side * side * k
    centre = (truth.center[0] * k, (truth.center[1] - below * truth.side) * k)
    spot = Candidate(centre, (spot_side, spot_side), 0.0, False, "found", score=0.9)
    view = straightening.views(scene.source, [(spot, spot_side)], scene.readers.face)[0]
    read = min(value, scene_reading.FEW_PIPS_FOUND)
    item = scene_reading.Found(vision.Die(read, centre, ((0.0, 0.0),) * 4, 0.9), (0, 0), centre,
                               spot)
    return scene_reading._part_of_larger(scene.source, item, view, scene.readers.face)


@pytest.mark.parametrize(("value", "side", "below", "larger"), [
    (5, 0.7, 0.15, True),    # two pips of a five through a spot sized too small
    (6, 0.7, 0.15, True),    # (at 0.65 of the die the network reads no face there at all)
    (2, 1.0, 0.0, False),    # a two seen whole stays a two wider
    (2, 0.9, 0.05, False),
    (1, 0.9, 0.07, False),
])
def test_a_face_of_few_pips_on_a_spot_is_looked_at_wider(value: int, side: float,
                                                          below: float, larger: bool) -> None:
    assert _few_pips_on_a_spot(value, side, below) is larger


def _scene_of(candidates: list[Candidate], side: float = 40.0) -> pipeline.Scene:
    """A scene of ``candidates`` alone (what `_all_explained` looks at)."""
    return replace(pipeline.prepare(np.full((120, 160, 3), 200, np.uint8)),
                   candidates=candidates, side=side)


def _spot_at(x: float, y: float, score: float) -> Candidate:
    return Candidate((x, y), (40.0, 40.0), 0.0, False, "found", score=score)


@pytest.mark.parametrize(("read", "spots", "explained"), [
    ([4, 2], [(100, 100, 0.9), (300, 100, 0.8)], True),    # every sure die read: nothing left
    ([4, None], [(100, 100, 0.9), (300, 100, 0.8)], False),  # an unsure die: other sizes tried
    ([4], [(100, 100, 0.9), (300, 100, 0.8)], False),      # a sure die not read
    ([4, 2], [(100, 100, 0.9), (300, 100, 0.2)], True),    # ... the finder unsure of it
    ([4, 2], [(100, 100, 0.2), (300, 100, 0.2)], False),   # the finder sure of none: no check
    ([], [(100, 100, 0.9)], False),                        # nothing read
])
def test_a_second_size_is_tried_only_where_the_first_reading_left_something(
    read: list[int | None], spots: list[tuple[float, float, float]], explained: bool
) -> None:
    found = [_spot_at(*s) for s in spots]
    kept = [_found(cand, value) for cand, value in zip(found, read, strict=False)]
    assert pipeline._all_explained(kept, _scene_of(found)) is explained


def test_a_frame_whose_dice_are_all_read_is_read_once(monkeypatch) -> None:
    # Two green dice touching: their one region is no die, so none sizes the frame; the
    # finder sizes it, and the first reading reads both. Reading it again at other sizes
    # would cost a second reading for nothing.
    shot = tray_for_seed(7038, tower=True)
    assert pipeline.quick_die_side(shot.image) is None
    tried = []
    real = pipeline._size_seen_best
    monkeypatch.setattr(pipeline, "_size_seen_best",
                        lambda *a, **k: tried.append(1) or real(*a, **k))
    got = sorted(d.value for d in vision.read_dice(shot.image) if d.value is not None)
    assert got == sorted(t.value for t in shot.truth) and not tried
    # Two small white dice touching on felt: the finder's first look sizes one of them far
    # too small (its spot showed two pips of a five); its closer look sizes both, and the
    # first reading reads them.
    shot = tray_for_seed(9126, tower=True)
    sides = sorted(s.side for s in shipped().finder.find(shot.image))
    assert sides == pytest.approx(sorted(t.side for t in shot.truth), rel=0.2)
    got = sorted(d.value for d in vision.read_dice(shot.image) if d.value is not None)
    assert got == [5, 5] and not tried
