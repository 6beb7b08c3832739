"""The four steps of a calibration, one after the other, from photos or a live camera.

    outcome = calibrate_photos(PhotoThrows.from_folder(folder, expect=3), Settings(expect=3))
    outcome = calibrate_live(LiveThrows(camera, table), Settings(expect=3), knobs=knobs)

Both give an `Outcome`: the profile (its empty tray in memory, not yet written), the preview
of each step, and the check's verdict. Both read with the ``readers`` they are given (the
tower's; None: the shipped networks). Input the tool cannot use is a `CalibrationError`; a
camera that stops is the camera's own `CameraError`: either way nothing is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from calibration import adapt, faces, tuning
from calibration import check as check_step
from calibration import choices as choices_step
from calibration import dice as dice_step
from calibration import light as light_step
from calibration import tray as tray_step
from calibration.controls import Knob, lock
from calibration.errors import CalibrationError
from calibration.labels import Labelled, place_by_reading
from calibration.report import Reporter
from calibration.sources import LiveThrows, PhotoThrows
from vision import Profile, Readers, annotate, read_dice, shipped_readers


@dataclass
class Settings:
    """What the installer told: dice per throw, the tray's corners, where the keep zone is,
    and (live) how many throws to learn from and to check with."""

    expect: int | None = None
    tray: list[tuple[float, float]] | None = None
    keep: str = "right"
    throws: int = 4
    checks: int = 3


@dataclass
class Outcome:
    """A finished calibration: ``profile`` is saved only if ``check.passed``."""

    profile: Profile
    empty: np.ndarray | None
    findings: dice_step.DiceFindings
    check: check_step.CheckResult
    light: dict[str, float] = field(default_factory=dict)
    previews: dict[str, np.ndarray] = field(default_factory=dict)
    tray: list[tuple[float, float]] | None = None
    learnt: adapt.Learnt | None = None  # the dice's faces learnt from their values
    judged: faces.Judgement | None = None  # ... and checked with and without
    # the count's choices (die side, pip polarity) judged by the values
    choices: list[choices_step.Judgement] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.check.passed


def _tray_step(empty: np.ndarray | None, settings: Settings, ui: Reporter,
               previews: dict[str, np.ndarray], readers: Readers, *, light_later: bool = False
               ) -> tuple[Profile, Any]:
    """Step 1 on an empty-tray image (or none): the profile of the tray, and its outline.
    ``light_later``: the light step comes next and may brighten a dim tray."""
    quad = settings.tray
    if empty is None:
        if quad is None:
            ui.say("  no empty tray given: no empty-tray image and no zones (the whole "
                   "picture is read)")
            return Profile(), None
        ui.say("  no empty tray given: zones from --tray, no empty-tray image")
    else:
        if not light_later:
            tray_step.check_light(empty, "the empty tray")
        if quad is None:
            quad = tray_step.find_tray(empty)
            if quad is None:
                raise CalibrationError("no tray found in the picture of the empty tray: point "
                                       "the camera at the tray, clear it, or give its corners "
                                       "with --tray x,y;x,y;x,y;x,y")
            ui.say("  tray found: corners " + "; ".join(f"{x:.0f},{y:.0f}" for x, y in quad))
        else:
            tray_step.check_inside(quad, empty.shape)
            ui.say("  tray corners from --tray")
    roll, keep = tray_step.propose_zones(quad, settings.keep)
    profile = Profile(zones=[roll], keep_zone=keep)
    if empty is not None:
        found = [d for d in read_dice(empty, profile, readers=readers) if d.value is not None]
        if found:
            raise CalibrationError(f"the tray is not empty: {len(found)} dice read in the "
                                   "picture of the empty tray; take them out and start again")
        profile.use_empty_tray(empty)
        previews["1-tray"] = tray_step.draw(empty, quad, roll, keep)
        ui.preview("1-tray", previews["1-tray"])
    ui.say(f"  roll zone and {'keep zone' if keep else 'no keep zone'} proposed "
           f"(keep zone: {settings.keep})")
    return profile, quad


def _dice_step(images: list[np.ndarray], expects: list[int], base: Profile, ui: Reporter,
               previews: dict[str, np.ndarray], readers: Readers) -> dice_step.DiceFindings:
    # One reading with the tray's profile, then the die sizes tried: about 20 profiles.
    with ui.progress(20, "profiles tried") as tick:
        findings = dice_step.learn(images, expects, base, tick, readers=readers)
    sides = dice_step.mean_side(findings.sides)
    ui.say(f"  {len(findings.sides)} dice read in {len(images)} throws"
           + (f", {sides:.0f} px a side by their pips" if sides else ""))
    ui.say(f"  chosen: {dice_step.describe(findings)} ({findings.tried} profiles tried)")
    a, p = findings.agreement, findings.plain
    ui.say(f"  dice read of those thrown: {a.read}/{a.expected} (before: {p.read}/{p.expected})")
    if findings.readings:
        previews["3-dice"] = annotate(images[0], findings.readings[0])
        ui.preview("3-dice", previews["3-dice"])
    return findings


def _fallbacks(profile: Profile, base: Profile) -> list[Profile]:
    """The profile, then the tray's part alone (zones, empty tray): the first the check
    passes is kept, so that a die size that misreads the check throws does not cost the
    zones and the empty tray. (The dice's choices were made together, so they go together.)"""
    chosen = (profile.die_side, profile.pip_polarity, profile.dice_colors)
    return [profile] if chosen == (None, None, []) else [profile, base]


def _check_step(images: list[np.ndarray], expects: list[int], profile: Profile,
                base: Profile, empty: np.ndarray | None, ui: Reporter,
                previews: dict[str, np.ndarray], readers: Readers
                ) -> tuple[Profile, check_step.CheckResult]:
    candidates = _fallbacks(profile, base)
    with ui.progress(len(images) * len(candidates), "check throws read") as tick:
        for k, candidate in enumerate(candidates):
            result = check_step.check(images, expects, candidate,
                                      check_step.floor_colour(empty), readers=readers)
            tick(len(images))
            if result.passed:
                break
            if k + 1 < len(candidates):
                ui.say(f"  {dice_step.describe_profile(candidate)}: reads the check throws "
                       "worse than no profile; trying without the dice's part")
    for k, (image, throw) in enumerate(zip(images, result.throws, strict=True), 1):
        previews[f"4-check-{k}"] = annotate(image, throw.dice)
        ui.preview(f"4-check-{k}", previews[f"4-check-{k}"])
        values = " ".join(map(str, throw.values)) or "nothing"
        unsure = f", {throw.unsure} unsure" if throw.unsure else ""
        ui.say(f"  throw {k}: {throw.expected} dice thrown, read {values}{unsure} "
               f"(sure {throw.sure:.0%})")
    w, wo = result.with_profile, result.without
    ui.say(f"  with the profile: {w.read} read, {w.missing} missed, {w.over + w.stray} "
           f"strays; without: {wo.read} read, {wo.missing} missed, {wo.over + wo.stray} strays")
    if result.passed and candidate is not profile:
        ui.say(f"  kept: {dice_step.describe_profile(candidate)}")
    return candidate, result


def _expects(images: list[np.ndarray], given: list[int] | None, readers: Readers
             ) -> list[int]:
    """Dice per throw: as told, or (without --expect) as many as the plain reader finds."""
    if given is not None:
        return given
    return [max(1, len(read_dice(image, readers=readers))) for image in images]


# Who gives the values of a throw's dice: (name, picture, the tray's profile) -> the dice.
Labeller = Callable[[str, np.ndarray, Profile | None], list[Labelled]]


def _values(images: Sequence[np.ndarray], given: list[list[Labelled]] | None,
            labeller: Labeller | None, base: Profile, names: Sequence[str], what: str,
            ui: Reporter, readers: Readers) -> list[list[Labelled]] | None:
    """The dice's values for ``images``: as given (a labels file; dice given without a box
    placed by the reading), else asked of ``labeller``, else None (nothing learnt of the
    faces). Without PyTorch, nothing can learn the faces: the values are not asked for, and
    the run says so."""
    if (given is not None or labeller is not None) and not tuning.available():
        ui.say("  the dice's faces are not learnt: that needs PyTorch "
               "(pip install 'dicetower[learn]')")
        return None
    if given is not None:
        return [place_by_reading(dice, read_dice(image, base, readers=readers))
                if any(d.center is None for d in dice) else dice
                for image, dice in zip(images, given, strict=True)]
    if labeller is None:
        return None
    ui.say(f"  the values of the {what} throws' dice:")
    return [labeller(names[k] if k < len(names) else f"throw {k + 1}", image, base)
            for k, image in enumerate(images)]


def _faces_step(images: Sequence[np.ndarray], labelled: list[list[Labelled]] | None,
                base: Profile, names: Sequence[str], ui: Reporter, readers: Readers
                ) -> list[adapt.Patches]:
    """Step 3, with values: patches of these dice cut from each throw, to tune the face
    network on at the check (with the check throws' own)."""
    if labelled is None:
        return []
    parts = _cut(images, labelled, base, names, readers)
    dice = sum(len(set(p.die) - {-1}) for p in parts)
    if not dice:
        ui.say("  no die with a value to learn the faces from")
        return []
    ui.say(f"  {dice} dice of known value to learn the faces from "
           f"({sum(len(p.patches) for p in parts)} patches)")
    return parts


def _cut(images: Sequence[np.ndarray], labelled: Sequence[list[Labelled]], base: Profile,
         names: Sequence[str], readers: Readers) -> list[adapt.Patches]:
    """The patches of each throw (one `adapt.Patches` per throw, empty without values)."""
    return [adapt.cut([image], [dice], base, [names[k] if k < len(names) else
                                               f"throw {k + 1}"], readers=readers)
            for k, (image, dice) in enumerate(zip(images, labelled, strict=True))]


def _faces_check(images: Sequence[np.ndarray], labelled: Sequence[list[Labelled]],
                 parts: list[adapt.Patches], profile: Profile, ui: Reporter, readers: Readers
                 ) -> tuple[Profile, adapt.Learnt | None, faces.Judgement | None]:
    """Step 4, with values: every throw with values read with the face network tuned on
    other throws and without it; the network tuned on every throw kept only where they
    read better."""
    if not parts or not any(p.patches for p in parts):
        return profile, None, None
    with ui.progress(len(images), "throws read with the faces learnt from others") as tick:
        judged = faces.cross_judge(images, labelled, parts, profile, readers, tick)
    ui.say(f"  each throw read with the faces learnt from others: {judged.with_it}; "
           f"without: {judged.without}")
    if not judged.kept:
        ui.say("  the faces learnt are not kept: they read the throws no better")
        return profile, None, judged
    start = time.monotonic()
    learnt = adapt.learn(adapt.merged(parts), readers.base_face)
    for doubt in learnt.doubted:
        ui.say(f"  set aside, the value given looks like a slip: {doubt}")
    if learnt.adaptation is None:
        return profile, None, judged
    ui.say(f"  the faces learnt are kept (from all {learnt.dice} dice, "
           f"{time.monotonic() - start:.0f} s): they read the throws better")
    return replace_adaptation(profile, learnt.adaptation), learnt, judged


def _choices_check(images: Sequence[np.ndarray], labelled: Sequence[list[Labelled]],
                   profile: Profile, findings: dice_step.DiceFindings,
                   result: check_step.CheckResult, ui: Reporter, readers: Readers
                   ) -> tuple[Profile, list[choices_step.Judgement]]:
    """With values: the die side and pip polarity chosen by the count kept only if they read
    the throws' values better (`calibration.choices`); the throws already read with them are
    not read again."""
    readings = ([*findings.readings, *(t.dice for t in result.throws)]
                if profile is findings.profile else None)
    with ui.progress(len(images), "throws read without the count's choices") as tick:
        kept, judged = choices_step.keep_choices(images, labelled, profile, readers, readings)
        tick(len(images))
    for judgement in judged:
        ui.say(choices_step.described(judgement))
    return kept, judged


def replace_adaptation(profile: Profile, adaptation: Any) -> Profile:
    """A copy of ``profile`` with ``adaptation``, sharing its empty tray."""
    return dice_step.replace_profile(profile, adaptation=adaptation)


def calibrate_photos(photos: PhotoThrows, settings: Settings,
                     ui: Reporter | None = None, labeller: Labeller | None = None, *,
                     readers: Readers | None = None) -> Outcome:
    """The four steps on pictures: step 2 only measures the light, nothing can change it.
    The dice's values come from the photos' labels, else from ``labeller``, else nowhere
    (the faces are then not learnt)."""
    ui = ui or Reporter()
    readers = shipped_readers() if readers is None else readers
    previews: dict[str, np.ndarray] = {}
    ui.step(1, "the empty tray")
    empty = tray_step.median_image(photos.empties) if photos.empties else None
    if empty is not None and empty.shape != photos.learn_images[0].shape:
        raise CalibrationError("the empty tray and the throws are not of one size: take them "
                               "with the same camera")
    base, quad = _tray_step(empty, settings, ui, previews, readers)
    ui.step(2, "the light")
    first = photos.learn_images[0]
    tray_step.check_light(first, "the first throw")
    ui.say(f"  pictures: nothing to tune (lightness {tray_step.lightness(first):.0f} of 255, "
           f"glare {check_step.glare(first):.1%})")
    ui.step(3, "the dice")
    if photos.learn_expects is None:
        ui.say("  no --expect: the count of each throw is what the reader finds (it cannot "
               "tell dice it misses)")
    n_learn = len(photos.learn_images)
    learn_names, check_names = photos.names[:n_learn], photos.names[n_learn:]
    learn_labels = _values(photos.learn_images, photos.learn_labels, labeller, base,
                           learn_names, "learnt", ui, readers)
    learn_expects = _expects(photos.learn_images, photos.learn_expects or _counts(learn_labels),
                             readers)
    findings = _dice_step(photos.learn_images, learn_expects, base, ui, previews, readers)
    parts = _faces_step(photos.learn_images, learn_labels, base, learn_names, ui, readers)
    ui.step(4, "the check")
    check_labels = (_values(photos.check_images, photos.check_labels, labeller, base,
                            check_names, "check", ui, readers) if parts
                    else photos.check_labels)
    check_expects = _expects(photos.check_images, photos.check_expects or _counts(check_labels),
                             readers)
    profile, result = _check_step(photos.check_images, check_expects, findings.profile, base,
                                  empty, ui, previews, readers)
    learnt = judged = None
    chosen_judged: list[choices_step.Judgement] = []
    if result.passed and parts:
        check_labels = check_labels or [[] for _ in photos.check_images]
        parts += _cut(photos.check_images, check_labels, base, check_names, readers)
        images = [*photos.learn_images, *photos.check_images]
        labelled = [*(learn_labels or []), *(check_labels or [])]
        profile, chosen_judged = _choices_check(images, labelled, profile, findings, result,
                                                ui, readers)
        profile, learnt, judged = _faces_check(images, labelled, parts, profile, ui, readers)
    return Outcome(profile, empty, findings, result, {}, previews, quad, learnt, judged,
                   chosen_judged)


def _counts(labelled: list[list[Labelled]] | None) -> list[int] | None:
    """Dice per throw, from their values given (None without)."""
    return None if labelled is None else [len(dice) for dice in labelled]


def calibrate_live(live: LiveThrows, settings: Settings, knobs: list[Knob] | None = None,
                   ui: Reporter | None = None, labeller: Labeller | None = None, *,
                   readers: Readers | None = None) -> Outcome:
    """The four steps on a live camera: throws made by the live source's table; with a
    ``labeller`` (the installer confirming each reading, the simulated tray's truth), the
    dice's faces are learnt and checked too."""
    ui = ui or Reporter()
    readers = shipped_readers() if readers is None else readers
    if settings.expect is None:
        raise CalibrationError("--expect N is needed with a camera: how many dice the game uses")
    n = settings.expect
    previews: dict[str, np.ndarray] = {}
    ui.step(1, "the empty tray")
    live.table.clear()
    empty = tray_step.median_image(live.empty_frames())
    base, quad = _tray_step(empty, settings, ui, previews, readers, light_later=bool(knobs))
    ui.step(2, "the light")
    chosen: dict[str, float] = {}
    if knobs:
        image = live.throw(n)
        plain = Profile()  # the light is judged on every die in view; the floor will change
        total = 1 + sum(len(k.values) for k in knobs)
        with ui.progress(total, "light settings tried") as tick:
            best, best_image, _ = light_step.sweep(
                knobs, live.grab, lambda i: read_dice(i, plain, readers=readers), n, tick)
        chosen = dict(best.settings)
        locked = lock(live.camera)
        ui.say(f"  chosen: {light_step.describe(best)}"
               + (" (automatic exposure locked)" if locked else ""))
        previews["2-light"] = annotate(best_image, read_dice(best_image, plain, readers=readers))
        ui.preview("2-light", previews["2-light"])
        del image
        # The empty tray again, under the light chosen: the floor is compared with it.
        live.table.clear()
        empty = tray_step.median_image(live.empty_frames())
        # Where the sweep read dice under this light, a dark floor (slate, black felt, a dim
        # bar under bright dice) is the floor's colour, not a reason to refuse the light that
        # reads the dice best.
        if not best.read:
            tray_step.check_light(empty, "the empty tray under the light chosen")
        elif (level := tray_step.lightness(empty)) < tray_step.TOO_DIM:
            ui.say(f"  the empty tray is dark (lightness {level:.0f} of 255), but the dice "
                   "read under this light")
        base.use_empty_tray(empty)
    else:
        tray_step.check_light(empty, "the empty tray")
        ui.say("  this camera offers no light controls and no ring light is given: the light "
               f"stays as it is (lightness {tray_step.lightness(empty):.0f} of 255)")
    ui.step(3, "the dice")
    with ui.progress(settings.throws, "throws") as tick:
        images = []
        for _ in range(settings.throws):
            images.append(live.throw(n))
            tick(1)
    findings = _dice_step(images, [n] * len(images), base, ui, previews, readers)
    learn_labels = _values(images, None, labeller, base, [], "learnt", ui, readers)
    parts = _faces_step(images, learn_labels, base, [], ui, readers)
    ui.step(4, "the check")
    checks = [live.throw(n) for _ in range(settings.checks)]
    profile, result = _check_step(checks, [n] * len(checks), findings.profile, base, empty, ui,
                                  previews, readers)
    learnt = judged = None
    chosen_judged: list[choices_step.Judgement] = []
    if result.passed and parts:
        check_labels = _values(checks, None, labeller, base, [], "check", ui, readers)
        check_labels = check_labels or [[] for _ in checks]
        parts += _cut(checks, check_labels, base, [], readers)
        thrown = [*images, *checks]
        labelled = [*(learn_labels or []), *check_labels]
        profile, chosen_judged = _choices_check(thrown, labelled, profile, findings, result,
                                                ui, readers)
        profile, learnt, judged = _faces_check(thrown, labelled, parts, profile, ui, readers)
    return Outcome(profile, empty, findings, result, chosen, previews, quad, learnt, judged,
                   chosen_judged)
