"""Scenes with no dice, for training the face network to say "no face": pages of print and
patterned cloths.

A round letter's counter on its ink is a light round mark on an even dark ground, as a
one's pip is. The pip readers cannot tell them apart (see docs/lab/vision-notebook.md,
"Scenes with no dice"); a network that has seen them as "none" can, and its "none" is what
keeps a menu on the tray from scoring.

The pages here are drawn with other fonts and words than those
`tests/test_vision_no_dice.py` judges the pipeline on: OpenCV's slanted and script faces,
its plain and small faces, French words; the tests use its four upright faces (simplex,
duplex, complex, triplex) on English prose. Everything is seeded.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

# The tests' fonts are cv2.FONT_HERSHEY_SIMPLEX, DUPLEX, COMPLEX and TRIPLEX, upright: kept
# out, slanted versions of them in.
FONTS = (
    cv2.FONT_HERSHEY_PLAIN,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
    cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
    cv2.FONT_HERSHEY_SCRIPT_COMPLEX,
    cv2.FONT_HERSHEY_SIMPLEX | cv2.FONT_ITALIC,
    cv2.FONT_HERSHEY_DUPLEX | cv2.FONT_ITALIC,
    cv2.FONT_HERSHEY_COMPLEX | cv2.FONT_ITALIC,
    cv2.FONT_HERSHEY_TRIPLEX | cv2.FONT_ITALIC,
    cv2.FONT_HERSHEY_PLAIN | cv2.FONT_ITALIC,
)
TEXT = (
    "apero bouchon comptoir goblet gobelet jeton manche partie tournee pression demi pinte "
    "olive fromage saucisson bonbon gagne perdu bravo bonne soiree ouvert du lundi au samedi "
    "happy hour boissons chaudes chocolat cappuccino limonade sirop grenadine menthe orange "
    "gaufre crepe pomme poire abricot quiche omelette burger salade bol de soupe rouge rose "
    "blanc 0123456789 ABCDEFG HIJKLMNOP QRSTUVWXYZ"
)
WORDS = tuple(TEXT.split())
SIZE = (480, 640)


def _colours(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(ground, ink) BGR: dark on light paper mostly, sometimes chalk on a slate or a
    coloured print."""
    if rng.random() < 0.25:
        ground = tuple(int(v) for v in rng.integers(15, 80, 3))
        ink = tuple(int(v) for v in rng.integers(180, 256, 3))
    else:
        ground = tuple(int(v) for v in rng.integers(170, 256, 3))
        ink = tuple(int(v) for v in rng.integers(0, 110, 3))
    return ground, ink


class Sheet(NamedTuple):
    """A blank sheet and the print drawn on it: ink, font, scale, stroke, and the height and
    baseline of its letters."""

    image: np.ndarray
    ink: tuple[int, ...]
    font: int
    scale: float
    stroke: int
    height: int
    base: int


def _sheet(rng: np.random.Generator, scales: tuple[float, float]) -> Sheet:
    """A blank sheet of one of `_colours`, with one of FONTS at a scale within ``scales``."""
    ground, ink = _colours(rng)
    image = np.full((*SIZE, 3), ground, np.uint8)
    font = int(FONTS[rng.integers(len(FONTS))])
    scale = float(rng.uniform(*scales))
    stroke = max(1, round(scale * rng.uniform(1.0, 1.8)))
    (_, height), base = cv2.getTextSize("Hg", font, scale, stroke)
    return Sheet(image, ink, font, scale, stroke, height, base)


def _as_seen(image: np.ndarray, rng: np.random.Generator,
             zoom: tuple[float, float]) -> np.ndarray:
    """``image`` as a camera sees a card lying on the tray: turned by any angle, zoomed
    within ``zoom``, and half the time blurred a little."""
    h, w = image.shape[:2]
    turn = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), float(rng.uniform(0, 360)),
                                   float(rng.uniform(*zoom)))
    image = cv2.warpAffine(image, turn, (w, h), borderMode=cv2.BORDER_REFLECT)
    if rng.random() < 0.5:
        image = cv2.GaussianBlur(image, (0, 0), float(rng.uniform(0.5, 1.2)))
    return image


def page(rng: np.random.Generator) -> np.ndarray:
    """A page of print: lines of words in one font, at a size where letters are about a die's
    size or smaller."""
    image, ink, font, scale, stroke, height, base = _sheet(rng, (0.9, 3.4))
    h, w = SIZE
    y = height + int(rng.integers(4, 20))
    while y < h:
        x = int(rng.integers(4, 40))
        line = ""
        while True:
            longer = f"{line} {WORDS[rng.integers(len(WORDS))]}".strip()
            if x + cv2.getTextSize(longer, font, scale, stroke)[0][0] > w - 8:
                break
            line = longer
        cv2.putText(image, line, (x, y), font, scale, ink, stroke, cv2.LINE_AA)
        y += int((height + base) * rng.uniform(1.2, 1.8))
    return image


def scene(seed: int) -> np.ndarray:
    """Scene ``seed``: a page of print, turned by any angle and blurred a little, as a camera
    would see a card lying on the tray."""
    rng = np.random.default_rng(seed)
    return _as_seen(page(rng), rng, (0.8, 1.2))


def cloth(seed: int) -> np.ndarray:
    """Cloth ``seed``: a tablecloth or coaster print of plain dots (any spacing, size, colours
    and angle, in a square or staggered grid, sometimes jittered), seen as a camera would.

    A plain dot of a pip's size in a row of its like is what a face's pips look like to any
    reader that counts round marks; only a network that has seen such cloths as "none" can
    tell them from a face. `tests/test_vision_no_dice.py` judges three upright staggered
    polka cloths with fixed spacings; these are drawn at other angles and spacings.
    """
    rng = np.random.default_rng(seed)
    h, w = SIZE
    ground, ink = _colours(rng)
    if rng.random() < 0.5:
        ground, ink = ink, ground
    spacing = float(rng.uniform(16, 80))
    radius = max(2, round(spacing * rng.uniform(0.1, 0.34)))
    staggered = rng.random() < 0.5
    jitter = spacing * (rng.uniform(0, 0.15) if rng.random() < 0.4 else 0.0)
    side = int(np.hypot(h, w)) + 2 * int(spacing)
    big = np.full((side, side, 3), ground, np.uint8)
    for row, y in enumerate(np.arange(spacing / 2, side, spacing)):
        offset = spacing / 2 if staggered and row % 2 else 0.0
        for x in np.arange(spacing / 2 + offset, side, spacing):
            dx, dy = rng.normal(0, jitter, 2) if jitter else (0.0, 0.0)
            cv2.circle(big, (round(x + dx), round(y + dy)), radius, ink, -1, cv2.LINE_AA)
    turn = cv2.getRotationMatrix2D((side / 2.0, side / 2.0), float(rng.uniform(0, 360)), 1.0)
    turn[:, 2] -= ((side - w) / 2.0, (side - h) / 2.0)
    image = cv2.warpAffine(big, turn, (w, h), borderMode=cv2.BORDER_REFLECT)
    if rng.random() < 0.5:
        image = cv2.GaussianBlur(image, (0, 0), float(rng.uniform(0.5, 1.5)))
    return image


def price_list(seed: int) -> np.ndarray:
    """Price list ``seed``: lines of "item ....... price" with dotted leaders (dots of any size
    and spacing, in one of the training fonts), turned and blurred as `scene` is.

    A leader's dots are pips in a row: three of them inside a die's outline are a three to any
    reader that counts round marks.
    """
    rng = np.random.default_rng(seed)
    image, ink, font, scale, stroke, height, base = _sheet(rng, (0.7, 1.8))
    h, w = SIZE
    radius = int(rng.integers(1, 5))
    spacing = radius * float(rng.uniform(2.5, 6.0)) + 2
    y = height + int(rng.integers(10, 40))
    while y < h:
        x = int(rng.integers(4, 60))
        item = " ".join(WORDS[rng.integers(len(WORDS))] for _ in range(int(rng.integers(1, 3))))
        price = f"{rng.integers(1, 30)},{rng.integers(0, 10)}0"
        cv2.putText(image, item, (x, y), font, scale, ink, stroke, cv2.LINE_AA)
        start = x + cv2.getTextSize(item, font, scale, stroke)[0][0] + int(spacing)
        price_x = w - 8 - cv2.getTextSize(price, font, scale, stroke)[0][0]
        dot_y = y - int(rng.uniform(0.0, 0.5) * height)
        for dot_x in np.arange(start, price_x - spacing, spacing):
            cv2.circle(image, (round(dot_x), dot_y), radius, ink, -1, cv2.LINE_AA)
        if price_x > start:
            cv2.putText(image, price, (price_x, y), font, scale, ink, stroke, cv2.LINE_AA)
        y += int((height + base) * rng.uniform(1.6, 2.6))
    return _as_seen(image, rng, (0.8, 1.3))
