"""Where profiles live, and writing one: in place, the previous one kept as a backup.

Profiles live in the user's configuration folder (`platformdirs`: ``~/.config/dicetower/
profiles`` on Linux), one per dice set: ``default.json``, ``red.json`` (``--name red``),
or any path (``--profile PATH``). Beside ``NAME.json``:

- ``NAME.empty-<digest>.png``: its empty-tray image (named by content, so the backup's
  own image stays as long as the backup does);
- ``NAME.face-<digest>.onnx``: the face network tuned to its dice, when calibration learnt
  them (`vision.adaptation`; named by content, as the empty tray);
- ``NAME.calibration.json``: what the calibration chose and measured (the light settings
  locked, the check's counts), for the installer and for support;
- ``NAME.preview/``: an annotated picture of each step.

Re-running replaces them; the previous profile and its notes are kept as ``NAME.json.bak``
and ``NAME.calibration.json.bak`` (one generation). Files are written whole, then renamed
into place: an interrupted write leaves the previous profile as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import platformdirs

from calibration.errors import CalibrationError
from vision import Profile
from vision.adaptation import save_beside
from vision.profile import stem_of

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")


def profiles_dir() -> Path:
    """The folder of the user's profiles."""
    return Path(platformdirs.user_config_dir("dicetower")) / "profiles"


def check_name(name: str) -> str:
    """``name`` if it can name a profile file; `ValueError` saying what can."""
    if not NAME.match(name):
        raise ValueError(f"--name {name!r}: use letters, digits, - and _ (at most 40), e.g. "
                         "red or ivory-dice")
    return name


def profile_path(name: str = "default", path: str | os.PathLike[str] | None = None) -> Path:
    """The profile file: ``path`` when given, else ``name``.json among the user's profiles."""
    if path is not None:
        return Path(path).expanduser()
    return profiles_dir() / f"{check_name(name)}.json"


def _write(target: Path, data: bytes) -> None:
    temporary = target.with_name(target.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, target)


def _png(image: np.ndarray) -> bytes:
    ok, buffer = cv2.imencode(".png", image)
    if not ok:
        raise CalibrationError("cannot encode the empty-tray image")
    return buffer.tobytes()


def save(path: Path, profile: Profile, empty: np.ndarray | None, notes: dict[str, Any],
         previews: dict[str, np.ndarray]) -> dict[str, Path]:
    """Write the profile (and its empty tray, notes and previews) at ``path``, keeping the
    previous profile as ``.bak``; the files written, by kind."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CalibrationError(f"cannot create {path.parent} ({exc.strerror})") from None
    if path.is_dir():
        raise CalibrationError(f"{path} is a folder; give a file name for the profile")
    written: dict[str, Path] = {}
    stem = stem_of(path)
    data = profile.to_dict(stem)
    try:
        if profile.adaptation is not None:
            written["tuned network"] = save_beside(profile.adaptation, path.parent, stem)
        if empty is not None:
            png = _png(empty)
            image = path.with_name(f"{stem}.empty-{hashlib.sha1(png).hexdigest()[:10]}.png")
            if not image.exists():
                _write(image, png)
            data["background"] = image.name  # beside the profile: Profile.load finds it
            written["empty tray"] = image
        notes_path = path.with_name(f"{stem}.calibration.json")
        for current in (path, notes_path):
            if current.exists():
                backup = current.with_name(current.name + ".bak")
                shutil.copy2(current, backup)
                written[f"backup of {current.name}"] = backup
        _write(path, (json.dumps(data, indent=2) + "\n").encode())
        written["profile"] = path
        _write(notes_path, (json.dumps(notes, indent=2) + "\n").encode())
        written["notes"] = notes_path
        written["previews"] = write_previews(path.with_name(f"{stem}.preview"), previews)
        _prune(path, stem)
    except OSError as exc:
        raise CalibrationError(f"cannot write the profile at {path} ({exc.strerror})") from None
    return written


def write_previews(folder: Path, previews: dict[str, np.ndarray]) -> Path:
    """Each preview as ``folder/<step>.png`` (the folder emptied of older previews first)."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    for name, image in previews.items():
        cv2.imwrite(str(folder / f"{name}.png"), image)
    return folder


def _prune(path: Path, stem: str) -> None:
    """Remove empty-tray images and tuned networks that neither the profile nor its backup
    names."""
    kept = set()
    for file in (path, path.with_name(path.name + ".bak")):
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            kept.add(data.get("background"))
            kept.add((data.get("adaptation") or {}).get("network"))
        except (OSError, ValueError, AttributeError):
            continue
    for companion in (*path.parent.glob(f"{stem}.empty-*.png"),
                      *path.parent.glob(f"{stem}.face-*.onnx")):
        if companion.name not in kept:
            companion.unlink()


def saved_profiles() -> list[Path]:
    """The user's named profiles."""
    folder = profiles_dir()
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.json") if not p.name.endswith(".calibration.json"))


def light_settings(profile: str | os.PathLike[str]) -> dict[str, float]:
    """The light a calibration chose for ``profile`` (from its ``NAME.calibration.json``):
    ``ring`` (0..1) and the camera controls it locked (``ExposureTime``, ``AnalogueGain``);
    empty when the profile was not made by `calibrate` or chose nothing."""
    path = Path(profile)
    try:
        notes = json.loads(path.with_name(f"{stem_of(path)}.calibration.json").read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    light = notes.get("light") if isinstance(notes, dict) else None
    if not isinstance(light, dict):
        return {}
    return {key: float(value) for key, value in light.items()
            if key in LIGHT_KEYS and isinstance(value, (int, float))
            and not isinstance(value, bool)}


# What `light_settings` gives back: the ring light and the camera controls a sweep locks.
LIGHT_KEYS = ("ring", "ExposureTime", "AnalogueGain")
