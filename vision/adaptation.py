"""A profile's adaptation of the face network to one bar's dice: the network, tuned.

The face network (`vision.face_net`) learnt dice of many kinds; a bar's own dice (dark,
marbled, with red pips) may lie where it hesitates. Calibration tunes a copy of it on patches
of those dice with their values (`calibration.tuning`): the same layers, size and speed, its
weights moved a little towards these dice. A reading with the profile reads with that copy
(`vision.readers.Readers.with_profile`); every rule that reads its probabilities stays as it
is.

The profile keeps the tuned model in a file beside itself, named by its content
(``NAME.face-<digest>.onnx``, written by `save_beside`), with the SHA-256 of the model it was
tuned from: tuned from another model than the tower's, it means nothing, so `adapted` ignores
it with a one-line warning.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from vision.face_net import CLASSES, FaceNet

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)  # one adaptation is itself: hashed as such
class Adaptation:
    """The tuned face network (``network``: its ONNX file's bytes), the SHA-256 (hex) of the
    model file it was tuned from (``model``) and what it learnt from (``patches``: how many
    per class, in `CLASSES` order)."""

    model: str
    network: bytes
    patches: tuple[int, ...] = ()

    @cached_property
    def digest(self) -> str:
        """The tuned network's SHA-256 (hex)."""
        return hashlib.sha256(self.network).hexdigest()

    def file_name(self, stem: str) -> str:
        """The name of its file beside the profile ``stem``.json: named by its content."""
        return f"{stem}.face-{self.digest[:12]}.onnx"

    def to_dict(self, stem: str) -> dict[str, Any]:
        """Its JSON form in the profile ``stem``.json (the network: its file's name)."""
        return {"model": self.model, "network": self.file_name(stem),
                "patches": list(self.patches)}

    @classmethod
    def from_dict(cls, data: Any, folder: str | os.PathLike[str] = ".") -> Adaptation:
        """An adaptation from its JSON form, its network read from ``folder``; ValueError
        saying what is wrong."""
        if (not isinstance(data, dict) or not isinstance(data.get("model"), str)
                or not isinstance(data.get("network"), str)):
            raise ValueError("an adaptation names the model it was tuned from and its file")
        name = Path(data["network"])
        if name.name != data["network"] or not name.name.endswith(".onnx"):
            raise ValueError(f"{data['network']!r} is no network file beside the profile")
        try:
            network = (Path(folder) / name).read_bytes()
        except OSError:
            raise ValueError(f"the dice's tuned network {name} is missing beside the profile "
                             "(calibrate again)") from None
        try:
            patches = tuple(int(n) for n in data.get("patches") or ())
        except (TypeError, ValueError):
            raise ValueError("an adaptation's patches are counts") from None
        if patches and len(patches) != len(CLASSES):
            raise ValueError(f"an adaptation counts its patches of {len(CLASSES)} classes")
        return cls(data["model"], network, patches)


def save_beside(adaptation: Adaptation, folder: str | os.PathLike[str], stem: str) -> Path:
    """Write the tuned network in ``folder`` beside the profile ``stem``.json (whole, then
    renamed into place; kept when already there: its name is its content); its path."""
    target = Path(folder) / adaptation.file_name(stem)
    if not target.exists():
        temporary = target.with_name(target.name + ".tmp")
        temporary.write_bytes(adaptation.network)
        os.replace(temporary, target)
    return target


def adapted(base: FaceNet, adaptation: Adaptation | None) -> FaceNet | None:
    """The tuned network of ``adaptation``, or None: without one, or when it was tuned from
    another model file than ``base``'s (said once, in one line)."""
    if adaptation is None:
        return None
    if adaptation.model != base.digest:
        _warn_other_model(adaptation.model[:12], base.digest[:12])
        return None
    return FaceNet.from_bytes(adaptation.network, f"the profile's tuned network "
                              f"{adaptation.digest[:12]}", base=base)


@cache
def _warn_other_model(theirs: str, ours: str) -> None:
    log.warning("the profile's adaptation to its dice was tuned from another face network "
                "(%s, this one %s): ignored; calibrate again to adapt it", theirs, ours)
