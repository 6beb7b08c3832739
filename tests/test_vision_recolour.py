"""Real dice of other colours (`vision.lab.recolour`): the die repainted, its pips still
pips, the floor as it was."""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.lab.recolour import PIP_CONTRAST, recoloured
from vision.lab.render_varied import lab_of


def ivory_die(size: int = 72) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """A light die with five dark pips on a mid-grey floor, its mask, and its pip centres."""
    patch = np.full((size, size, 3), (120, 130, 125), np.uint8)
    body = np.zeros((size, size), np.uint8)
    a, b = size // 6, size - size // 6
    cv2.rectangle(patch, (a, a), (b, b), (200, 228, 238), -1)
    cv2.rectangle(body, (a, a), (b, b), 255, -1)
    q = (b - a) // 4
    pips = [(a + q, a + q), (b - q, a + q), (size // 2, size // 2), (a + q, b - q),
            (b - q, b - q)]
    for centre in pips:
        cv2.circle(patch, centre, 4, (30, 28, 30), -1)
    return patch, body, pips


def test_the_die_is_repainted_its_floor_left_and_its_pips_stand_out() -> None:
    patch, body, pips = ivory_die()
    seen_colours = []
    for seed in range(12):
        out = recoloured(patch, body, np.random.default_rng(seed))
        assert out.shape == patch.shape and out.dtype == np.uint8
        # The floor, away from the die's edge, is the floor it was.
        assert np.array_equal(out[:6, :6], patch[:6, :6])
        inner_body = out[20, 36].astype(float)  # between the pips
        seen_colours.append(inner_body)
        pip = np.median([out[y, x] for x, y in pips], axis=0)
        gap = np.linalg.norm(lab_of(tuple(pip)) - lab_of(tuple(inner_body)))
        assert gap > 0.4 * PIP_CONTRAST, f"seed {seed}: pips {pip} on a body {inner_body}"
    # Dice of many colours, not one: the bodies spread over the colour space.
    assert np.ptp(np.array(seen_colours), axis=0).max() > 120


def test_the_same_seed_paints_the_same_die() -> None:
    patch, body, _ = ivory_die()
    first = recoloured(patch, body, np.random.default_rng(3))
    assert np.array_equal(first, recoloured(patch, body, np.random.default_rng(3)))
    assert not np.array_equal(first, recoloured(patch, body, np.random.default_rng(4)))


def test_a_patch_with_hardly_any_die_is_left_as_it_is() -> None:
    patch, _, _ = ivory_die()
    speck = np.zeros(patch.shape[:2], np.uint8)
    speck[30:36, 30:36] = 255
    assert np.array_equal(recoloured(patch, speck, np.random.default_rng(0)), patch)


def test_only_the_dice_of_the_foreground_are_repainted() -> None:
    from vision.lab.recolour import dice_only, foreground
    from vision.lab.render import random_tray, render_tray

    shot = render_tray(random_tray(np.random.default_rng(8), 4), seed=8)
    mask, side = foreground(shot.image)
    assert mask.shape == shot.image.shape[:2] and side is not None
    for t in shot.truth:  # every die's middle stands out from the floor
        assert mask[round(t.center[1]), round(t.center[0])] == 255
    # A cable, a shadow, a hand: what stands out away from every die is left out.
    stray = mask.copy()
    cv2.rectangle(stray, (0, 0), (40, 40), 255, -1)
    dice = [(*t.center, t.side) for t in shot.truth]
    assert all(math.dist(t.center, (20, 20)) > 2 * t.side for t in shot.truth)
    kept = dice_only(stray, dice)
    assert not kept[:41, :41].any()
    for x, y, _ in dice:
        assert kept[round(y), round(x)] == 255
    assert np.count_nonzero(kept) <= np.count_nonzero(mask)
