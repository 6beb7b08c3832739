"""The networks a reading uses, handed to it: the face network, the die finder and the lean
check, together.

Whoever runs the camera (the tower's controller, `dicetower read`, a bench, a calibration)
makes its `Readers` once and passes them to `vision.read_dice`; nothing in the reading picks
a network by itself. `shipped` gives the networks shipped beside the package, loaded once;
`Readers.from_files` names other model files (a network trained on part of the data, to
measure it on the rest)::

    readers = Readers.from_files(face="even.onnx")    # the others: the shipped files
    dice = read_dice(image, profile, readers=readers)

A profile's adaptation to its dice (`vision.adaptation`) is the face network tuned to them,
for the readings made with that profile: `Readers.with_profile`, which `read_dice` applies.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, replace

from vision.adaptation import Adaptation, adapted
from vision.face_net import DEFAULT_MODEL as FACE_MODEL
from vision.face_net import FaceNet, FaceReader
from vision.finder import DEFAULT_MODEL as FINDER_MODEL
from vision.finder import DieFinder
from vision.lean_net import DEFAULT_MODEL as LEAN_MODEL
from vision.lean_net import LeanNet
from vision.profile import Profile

ModelPath = str | os.PathLike[str]


@dataclass(frozen=True)
class Readers:
    """The networks one reading uses: ``face`` reads each straightened die (`vision.face_net`,
    or a profile's adaptation of it), ``finder`` finds the dice in the frame
    (`vision.finder`), ``lean`` tells a flat die from a leaning one (`vision.lean_net`)."""

    face: FaceReader
    finder: DieFinder
    lean: LeanNet

    @classmethod
    def from_files(cls, face: ModelPath | None = None, finder: ModelPath | None = None,
                   lean: ModelPath | None = None) -> Readers:
        """The networks of these ONNX files (None: the shipped one), each file loaded once
        however often it is named; FileNotFoundError naming the network when a file is
        absent."""
        return cls(_face(str(face or FACE_MODEL)), _finder(str(finder or FINDER_MODEL)),
                   _lean(str(lean or LEAN_MODEL)))

    @property
    def base_face(self) -> FaceReader:
        """The face network as its model file has it: a profile's adaptation taken off (what
        an adaptation is tuned from, `calibration.tuning`)."""
        tuned_from = self.face.base if isinstance(self.face, FaceNet) else None
        return tuned_from or self.face

    def with_profile(self, profile: Profile | None) -> Readers:
        """These networks as a reading with ``profile`` uses them: the face network tuned to
        the profile's dice, when it has one tuned from this face network's model file (one
        tuned from another is ignored, said once in one line: `vision.adaptation.adapted`).
        A face network that is no `FaceNet` (a stand-in) was tuned from nothing: it reads as
        it is."""
        adaptation = profile.adaptation if profile is not None else None
        if adaptation is None:
            return self
        return _with_adaptation(self, adaptation)


@functools.cache
def shipped() -> Readers:
    """The networks shipped beside the package, loaded once."""
    return Readers.from_files()


# Per profile: every frame the tower reads with one profile uses the same tuned network,
# checked against the model file and loaded once, not at every frame.
@functools.lru_cache(maxsize=8)
def _with_adaptation(readers: Readers, adaptation: Adaptation) -> Readers:
    base = readers.base_face
    if not isinstance(base, FaceNet):
        return readers
    net = adapted(base, adaptation)
    return readers if net is None else replace(readers, face=net)


# Per path: a bench or a training script naming one file many times loads it once.
@functools.lru_cache(maxsize=4)
def _face(path: str) -> FaceNet:
    return FaceNet(path)


@functools.lru_cache(maxsize=4)
def _finder(path: str) -> DieFinder:
    return DieFinder(path)


@functools.lru_cache(maxsize=4)
def _lean(path: str) -> LeanNet:
    return LeanNet(path)
