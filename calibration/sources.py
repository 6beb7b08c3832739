"""Where calibration pictures come from: photos in a folder, or a live camera over the tray.

Photos (`PhotoThrows`): an empty tray where there is one (files whose name starts with
"empty", e.g. ``empty.jpg``, ``empty-2.png``; several are combined), every other image a
throw. The last third of the throws (at least one) are kept for the check, the rest are
learnt from; with one throw, it serves both.

A live camera (`LiveThrows`): the tray is filmed until it has been still for a moment, and
someone makes the throws: a person asked at the terminal (`PersonTable`), or the simulated
tray itself (`SimulatedTable`) when the camera is the simulated one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from calibration.errors import CalibrationError
from calibration.labels import Labelled
from firmware_host.camera.motion import moved, small_grey
from vision import ImageError, load_image

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")
EMPTY_PREFIX = "empty"
HOLD = 0.5  # seconds of frame time the tray must be still
MAX_WAIT = 30.0  # seconds of frame time before giving up on a tray that never rests
EMPTY_FRAMES = 5  # frames of the empty tray combined


@dataclass
class PhotoThrows:
    """Throws and empty-tray pictures given as images; ``expects``: dice per throw."""

    empties: list[np.ndarray]
    learn_images: list[np.ndarray]
    check_images: list[np.ndarray]
    learn_expects: list[int] | None = None
    check_expects: list[int] | None = None
    names: list[str] = field(default_factory=list)
    # The dice's values, per throw (`calibration.labels`), when a labels file gives them.
    learn_labels: list[list[Labelled]] | None = None
    check_labels: list[list[Labelled]] | None = None
    kind = "photos"

    @classmethod
    def split(cls, empties: list[np.ndarray], throws: Sequence[np.ndarray],
              expects: Sequence[int] | None = None,
              names: Sequence[str] = (),
              labels: Sequence[list[Labelled]] | None = None) -> PhotoThrows:
        """The last third of ``throws`` (at least one) for the check, the rest to learn."""
        if not throws:
            raise CalibrationError("no throws to learn from: give pictures of the dice in the "
                                   "tray")
        n = len(throws)
        checks = max(1, round(n / 3)) if n > 1 else 1

        def parts(items: Sequence[Any] | None) -> tuple[list[Any] | None, list[Any] | None]:
            if items is None:
                return None, None
            return list(items[: n - checks]) if n > 1 else list(items), list(items[n - checks:])

        learn, check = parts(throws)
        learn_ex, check_ex = parts(expects)
        learn_labels, check_labels = parts(labels)
        return cls(empties, learn or [], check or [], learn_ex, check_ex, list(names),
                   learn_labels, check_labels)

    @classmethod
    def from_labels(cls, folder: Path, labels: dict[str, list[Labelled]]) -> PhotoThrows:
        """The photos a labels file names (paths relative to ``folder``), in its order, with
        their dice's values; the empty tray from ``folder``'s files named empty*."""
        empties = [_load(p) for p in sorted(folder.iterdir()) if p.is_file()
                   and p.suffix.lower() in IMAGE_SUFFIXES
                   and p.name.lower().startswith(EMPTY_PREFIX)]
        names = list(labels)
        throws = [_load(folder / name) for name in names]
        values = [labels[name] for name in names]
        return cls.split(empties, throws, [len(v) for v in values], names, values)

    @classmethod
    def from_folder(cls, folder: Path, expect: int | None = None) -> PhotoThrows:
        if not folder.is_dir():
            raise CalibrationError(f"{folder}: no such folder")
        files = sorted(p for p in folder.iterdir()
                       if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
        empties, throws, names = [], [], []
        for path in files:
            image = _load(path)
            if path.name.lower().startswith(EMPTY_PREFIX):
                empties.append(image)
            else:
                throws.append(image)
                names.append(path.name)
        if not throws:
            raise CalibrationError(f"{folder}: no pictures of throws in it (images other than "
                                   f"{EMPTY_PREFIX}*: {', '.join(IMAGE_SUFFIXES)})")
        shapes = {i.shape[:2] for i in [*empties, *throws]}
        if empties and len(shapes) > 1:
            raise CalibrationError(f"{folder}: the pictures are not all of one size; the empty "
                                   "tray must be taken by the same camera as the throws")
        return cls.split(empties, throws, None if expect is None else [expect] * len(throws),
                         names)


def _load(path: Path) -> np.ndarray:
    try:
        return load_image(path)
    except ImageError as exc:
        raise CalibrationError(str(exc)) from None


class Table:
    """Whoever makes the throws: told to throw, and to empty the tray."""

    def throw(self, n: int) -> None:
        raise NotImplementedError

    def clear(self) -> None:
        raise NotImplementedError


class PersonTable(Table):
    """The installer at the terminal: asked, and the answer (Enter) waited for."""

    def __init__(self, ask: Callable[[str], None]) -> None:
        self.ask = ask

    def throw(self, n: int) -> None:
        self.ask(f"Throw the {n} dice into the roll zone, let them rest, then press Enter")

    def clear(self) -> None:
        self.ask("Take every die out of the tray, then press Enter")


class SimulatedTable(Table):
    """The simulated tray throws by itself: ``n`` dice of random faces (seeded)."""

    def __init__(self, tray: Any, seed: int = 0, say: Callable[[str], None] | None = None) -> None:
        self.tray = tray
        self.rng = np.random.default_rng(seed)
        self.say = say or (lambda text: None)
        self.last: list[Labelled] = []  # the dice of the last throw, as the tray knows them

    def throw(self, n: int) -> None:
        faces = [int(v) for v in self.rng.integers(1, 7, n)]
        self.say(f"(simulated tray: {n} dice thrown)")
        truth = self.tray.throw(faces)
        side = float(self.tray.layout.side)
        self.last = [Labelled(d.value, (float(d.center[0]), float(d.center[1])), side)
                     for d in truth.dice if d.zone != "outside" and not d.leaning]

    def clear(self) -> None:
        self.say("(simulated tray: the dice taken out)")
        self.tray.place([], frames=2)


def still_image(camera: Any, hold: float = HOLD, max_wait: float = MAX_WAIT) -> np.ndarray:
    """The first frame after the tray has been still for ``hold`` seconds of frame time.

    `CalibrationError` when it never rests within ``max_wait``; a `CameraError` from the
    camera goes up as it is (the caller says which step it stopped)."""
    first = camera.read()
    reference, since, start = small_grey(first), first.at, first.at
    while True:
        frame = camera.read()
        small = small_grey(frame)
        if moved(reference, small):
            reference, since = small, frame.at
        elif frame.at - since >= hold:
            return frame.image
        if frame.at - start > max_wait:
            raise CalibrationError(f"the tray never came to rest in {max_wait:.0f} s (a hand "
                                   "or something moving in view?)")


class LiveThrows:
    """Pictures from a live camera (opened by the caller), throws made by ``table``."""

    kind = "camera"

    def __init__(self, camera: Any, table: Table, *, hold: float = HOLD) -> None:
        self.camera = camera
        self.table = table
        self.hold = hold
        self._told: list[tuple[np.ndarray, list[Labelled]]] = []

    def empty_frames(self) -> list[np.ndarray]:
        """Frames of the empty tray, once it is still."""
        first = still_image(self.camera, self.hold)
        return [first, *(self.camera.read().image for _ in range(EMPTY_FRAMES - 1))]

    def throw(self, n: int) -> np.ndarray:
        """One still picture of a fresh throw of ``n`` dice."""
        self.table.throw(n)
        image = still_image(self.camera, self.hold)
        if isinstance(self.table, SimulatedTable):
            self._told.append((image, self.table.last))
        return image

    def told_values(self, name: str, image: np.ndarray, profile: Any = None) -> list[Labelled]:
        """The dice's values of a throw as the simulated tray knows them (a labeller for
        `calibration.session`: a perfect installer); none for another picture."""
        return next((list(values) for seen, values in self._told if seen is image), [])

    def grab(self) -> np.ndarray:
        """A frame taken after a change of light: one frame is let go for it to settle."""
        self.camera.read()
        return self.camera.read().image
