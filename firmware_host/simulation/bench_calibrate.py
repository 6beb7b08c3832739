"""`dicetower bench calibrate`: does calibrating help, and never hurt? Before/after tables.

1. **Photos** (the dice-photos dataset): per source, at most ``--images`` images chosen by a
   seeded rule (`random.Random(seed).sample` of the source's images sorted by name) are given
   to the calibration as throws, with the number of dice each shows (what an installer knows
   at the bar; never the values or the boxes). The rest of the source is then read without
   a profile and with the profile the calibration saved (none if it refused), and scored
   with the dataset's own rule (vision's lab scoring). ``--labels``: the calibration is
   given the chosen images' values too (what an installer confirms), and learns the dice's
   faces; ``--careless F``: that share of the values given is wrong (seeded), as a careless
   installer's; ``--loso DIR``: each source is calibrated and read by the networks trained
   without it (`vision.lab.loso`), as dice the project never saw.
2. **Simulated trays under hard light** (``--simulated``): for each light (dim, warm,
   coloured, one strong lamp with hard shadows, glare), the live calibration runs on the
   simulated camera, then fresh throws are read by the uncalibrated tower (no profile, the
   camera as it was) and by the calibrated one (the profile and the light chosen), against
   the simulated tray's truth: recall and precision (``--labels``: the tray tells the
   calibration each die's value, as an installer confirming each reading).

Times (ms) are of `read_dice` alone, one core.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from firmware_host.argtypes import positive_int

COLUMNS = ("dice", "correct", "wrong", "unsure", "missed", "extra")
LIGHTS: dict[str, dict[str, Any]] = {
    "dim, red dice": {"exposure": 0.12, "noise": 5.0, "colours": "red/white"},
    "dim, black dice, slate": {"exposure": 0.2, "noise": 5.0, "colours": "black/white",
                               "floor": "slate"},
    "warm bulb, red dice": {"white_balance": (0.45, 0.9, 1.6), "colours": "red/white"},
    "neon, blue dice": {"white_balance": (1.6, 0.45, 1.3), "colours": "blue/white"},
    "hard lamp": {"light_azimuth_deg": 160.0, "light_elevation_deg": 22.0,
                  "shadow_strength": 0.75, "gradient": 0.5},
    "glare, white dice": {"exposure": 3.2, "gloss": 1.5, "colours": "white/black"},
}


def _scoring() -> Any:
    """Vision's lab scoring (the dataset's matching rule), imported when a bench runs."""
    from vision.lab import scoring

    return scoring


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "calibrate", help="calibration before/after: dataset sources, simulated hard light")
    add_arguments(parser)
    parser.set_defaults(func=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", nargs="?", default=None,
                        help="the dice-photos folder (default: $DICE_PHOTOS or the shared one)")
    parser.add_argument("--images", type=positive_int, default=5,
                        help="images per source to calibrate on (default 5)")
    parser.add_argument("--seed", type=int, default=421, help="the seeded choice (default 421)")
    parser.add_argument("--sources", default=None,
                        help="comma-separated source name prefixes (default: all)")
    parser.add_argument("--simulated", action="store_true",
                        help="also the simulated trays under hard light")
    parser.add_argument("--only-simulated", action="store_true",
                        help="only the simulated trays")
    parser.add_argument("--throws", type=positive_int, default=12,
                        help="simulated throws read before and after, per light (default 12)")
    parser.add_argument("--labels", action="store_true",
                        help="give the calibration the dice's values (faces learnt)")
    parser.add_argument("--careless", type=float, default=0.0, metavar="F",
                        help="with --labels: this share of the values given wrong (seeded)")
    parser.add_argument("--loso", metavar="DIR", type=Path, default=None,
                        help="each source calibrated and read by the networks trained "
                        "without it (python -m vision.lab.loso train DIR)")
    parser.add_argument("--dice", metavar="SET", default=None,
                        help="the simulated trays' dice, under every light: a set of the bar's "
                        "variety (e.g. 'marbled green/white'; default: each light's own)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


@dataclass
class Row:
    name: str
    counts: dict[str, int]
    ms: list[float]

    def recall(self) -> float:
        return self.counts["correct"] / self.counts["dice"] if self.counts["dice"] else 0.0

    def precision(self) -> float:
        given = self.counts["correct"] + self.counts["wrong"] + self.counts["extra"]
        return self.counts["correct"] / given if given else 1.0

    def to_json(self) -> dict[str, Any]:
        ms = sorted(self.ms)
        return {**self.counts, "recall": round(self.recall(), 4),
                "precision": round(self.precision(), 4),
                "ms_median": round(ms[len(ms) // 2], 2) if ms else None}


def _read(image: Any, profile: Any, readers: Any) -> tuple[list[Any], float]:
    from vision import read_dice

    start = time.perf_counter()
    dice = read_dice(image, profile, readers=readers)
    return dice, (time.perf_counter() - start) * 1000.0


def careless(values: list[list[Any]], share: float, seed: int) -> list[list[Any]]:
    """``values`` (`calibration.labels.Labelled` per throw) with ``share`` of them wrong: the
    dice picked and their wrong values drawn by ``seed``."""
    from dataclasses import replace

    rng = random.Random(seed)
    flat = [(k, j) for k, dice in enumerate(values) for j in range(len(dice))]
    wrong = set(rng.sample(flat, round(share * len(flat))))
    return [[replace(d, value=rng.choice([v for v in range(1, 7) if v != d.value]))
             if (k, j) in wrong else d for j, d in enumerate(dice)]
            for k, dice in enumerate(values)]


def _networks(loso: Path | None, source: str) -> Any:
    """The networks a source is read by: the shipped ones, or those trained without it."""
    from vision import shipped_readers

    if loso is None:
        return shipped_readers()
    from vision.lab.loso import left_out

    return left_out(loso, source)


def dataset_rows(dataset: Path, images: int, seed: int, sources: list[str] | None,
                 say: Any = print, *, labels: bool = False, wrong: float = 0.0,
                 loso: Path | None = None) -> list[dict[str, Any]]:
    """Per source: what the calibration chose, and the rest of the source before and after."""
    from calibration.dice import replace_profile
    from calibration.errors import CalibrationError
    from calibration.labels import load_labels
    from calibration.report import Reporter
    from calibration.session import Settings, calibrate_photos
    from calibration.sources import PhotoThrows
    from vision import load_image

    scoring = _scoring()
    records = scoring.load_manifest(dataset)
    sizes = dict(zip((r["image"] for r in records), scoring.die_sizes(records), strict=True))
    by_source: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        by_source.setdefault(rec["source"], []).append(rec)
    out = []
    for source, recs in sorted(by_source.items()):
        if sources and not any(source.startswith(s) for s in sources):
            continue
        recs = sorted(recs, key=lambda r: r["image"])
        chosen = random.Random(seed).sample(recs, min(images, len(recs)))
        rest = [r for r in recs if r not in chosen]
        pictures = [load_image(dataset / r["image"]) for r in chosen]
        values = None
        if labels:  # the labels file an installer would write: the chosen records themselves
            values = list(load_labels(_manifest_of(chosen), dataset).values())
            values = careless(values, wrong, seed) if wrong else values
        photos = PhotoThrows.split([], pictures, [len(r["dice"]) for r in chosen],
                                   [r["image"] for r in chosen], values)
        log = io.StringIO()
        before, after = Row("before", dict.fromkeys(COLUMNS, 0), []), Row(
            "after", dict.fromkeys(COLUMNS, 0), [])
        readers = _networks(loso, source)
        start = time.process_time()
        try:
            outcome = calibrate_photos(photos, Settings(), Reporter(out=log, bars=False),
                                       readers=readers)
        except CalibrationError as exc:
            outcome, stopped = None, str(exc)
        seconds = time.process_time() - start
        profile = outcome.profile if outcome and outcome.passed else None
        runs = [(before, None), (after, profile)]
        if profile is not None and profile.adaptation is not None:
            # The same profile without the faces learnt: what they alone change.
            unlearnt = Row("no faces", dict.fromkeys(COLUMNS, 0), [])
            runs.append((unlearnt, replace_profile(profile, adaptation=None)))
        for rec in rest:
            image = load_image(dataset / rec["image"])
            for row, prof in runs:
                dice, ms = _read(image, prof, readers)
                tally = scoring.score_image(rec, sizes[rec["image"]],
                                            [d.to_json() for d in dice], ms)
                row.counts["dice"] += tally.gt_dice
                for name in COLUMNS[1:]:
                    row.counts[name] += getattr(tally, name)
                row.ms.append(ms)
        from calibration.dice import describe_profile

        if outcome is None:
            verdict = f"stopped: {stopped}"
        elif profile is None:
            verdict = "refused: " + "; ".join(outcome.check.advice
                                              or ["reads worse than no profile"])
        else:
            verdict = describe_profile(profile)
        faces = _faces_lines(log.getvalue())
        say(f"{source}: calibrated on {', '.join(Path(r['image']).name for r in chosen)} -> "
            f"{verdict} ({seconds:.1f} s of CPU)" + "".join(f"\n  {f}" for f in faces))
        out.append({"source": source, "calibrated_on": [r["image"] for r in chosen],
                    "saved": profile is not None, "verdict": verdict, "faces": faces,
                    "calibration_cpu_s": round(seconds, 2),
                    "profile": profile.to_dict() if profile else None, "images": len(rest),
                    "before": before.to_json(), "after": after.to_json(),
                    **({"no faces": runs[2][0].to_json()} if len(runs) > 2 else {})})
    return out


def _faces_lines(log: str) -> list[str]:
    """What a calibration's log says of the dice's faces learnt and of the choices the values
    judged (die side, pip polarity)."""
    return [line.strip() for line in log.splitlines()
            if "faces learnt" in line or "faces are not learnt" in line or "slip" in line
            or "die side of" in line
            or "pips only is" in line]


def _manifest_of(records: list[dict[str, Any]]) -> Path:
    """The records as a labels file (a temporary one: `load_labels` reads files)."""
    import json
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(records, file)
    return Path(file.name)


def simulated_rows(throws: int, seed: int, say: Any = print, *,
                   labels: bool = False, dice_set: str | None = None
                   ) -> list[dict[str, Any]]:
    """Per light: the live calibration on the simulated tray, then fresh throws before and
    after, against the tray's truth; ``dice_set`` names the dice of every light's tray."""
    from calibration.controls import light_knobs
    from calibration.dice import replace_profile
    from calibration.errors import CalibrationError
    from calibration.report import Reporter
    from calibration.session import Settings, calibrate_live
    from calibration.sources import LiveThrows, SimulatedTable, still_image
    from firmware_host.simulation.camera import SimulatedCamera
    from firmware_host.simulation.tray import SimulatedTray
    from vision import shipped_readers

    readers = shipped_readers()
    out = []
    for k, (name, light) in enumerate(LIGHTS.items()):
        options = dict(light) | ({"colours": dice_set} if dice_set else {})
        tray_options = {key: options.pop(key) for key in ("noise", "colours", "floor")
                        if key in options}
        rows = {}
        for phase in ("before", "after"):
            tray = SimulatedTray(seed=seed + k, **tray_options, **options)
            camera = SimulatedCamera(tray)
            camera.open()
            table = SimulatedTable(tray, seed=seed + k)
            profile = None
            chosen: dict[str, float] = {}
            if phase == "after":
                live = LiveThrows(camera, table)
                knobs = light_knobs(camera, tray.set_ring, tray.ring)
                as_it_was = [(knob, knob.current) for knob in knobs]
                log = io.StringIO()
                try:
                    outcome = calibrate_live(live, Settings(expect=3), knobs,
                                             Reporter(out=log, bars=False),
                                             live.told_values if labels else None,
                                             readers=readers)
                except CalibrationError as exc:
                    say(f"{name}: calibration stopped: {exc}")
                    outcome = None
                profile = outcome.profile if outcome and outcome.passed else None
                chosen = outcome.light if outcome and profile is not None else {}
                if profile is None:  # as the tower does: nothing saved, the light as it was
                    for knob, value in as_it_was:
                        knob.set(value)
            row = Row(phase, dict.fromkeys(COLUMNS, 0), [])
            # The same profile without the faces learnt, on the same pictures: what they
            # alone change.
            unlearnt = (replace_profile(profile, adaptation=None)
                        if profile is not None and profile.adaptation is not None else None)
            plain = Row("no faces", dict.fromkeys(COLUMNS, 0), [])
            tray.reseed(seed * 7 + k)  # the same throws before and after, as far as the light
            rng = random.Random(seed * 7 + k)
            for _ in range(throws):
                faces = [rng.randint(1, 6) for _ in range(3)]
                truth = tray.throw(faces)
                image = still_image(camera)
                dice, ms = _read(image, profile, readers)
                _tally(row, truth, dice, tray.layout.side)
                row.ms.append(ms)
                if unlearnt is not None:
                    dice, ms = _read(image, unlearnt, readers)
                    _tally(plain, truth, dice, tray.layout.side)
                    plain.ms.append(ms)
            camera.close()
            rows[phase] = row
            if unlearnt is not None:
                rows["no faces"] = plain
            if phase == "after":
                rows["light"] = chosen  # type: ignore[assignment]
                rows["saved"] = profile is not None  # type: ignore[assignment]
        faces = _faces_lines(log.getvalue())
        say(f"{name}: light chosen {rows['light'] or 'none'}; profile "
            f"{'saved' if rows['saved'] else 'refused'}" + "".join(f"\n  {f}" for f in faces))
        out.append({"light": name, "chosen": rows["light"], "saved": rows["saved"],
                    "faces": faces,
                    "before": rows["before"].to_json(), "after": rows["after"].to_json(),
                    **({"no faces": rows["no faces"].to_json()} if "no faces" in rows
                       else {})})
    return out


def _tally(row: Row, truth: Any, dice: list[Any], side: float) -> None:
    """Each resting die matched to the nearest reading within 0.6 of a side, once."""
    left = list(dice)
    for die in truth.dice:
        row.counts["dice"] += 1
        near = [d for d in left if math.dist(d.center, die.center) <= 0.6 * side]
        if not near:
            row.counts["missed"] += 1
            continue
        match = min(near, key=lambda d: math.dist(d.center, die.center))
        left.remove(match)
        if match.value is None:
            row.counts["unsure"] += 1
        elif match.value == die.value:
            row.counts["correct"] += 1
        else:
            row.counts["wrong"] += 1
    row.counts["extra"] += sum(d.value is not None for d in left)


def table(rows: list[dict[str, Any]], key: str) -> str:
    head = f"{key:<28}{'':>9}" + "".join(f"{c:>8}" for c in COLUMNS) + (
        f"{'recall':>8}{'precis':>8}{'ms_med':>8}")
    lines = [head, "-" * len(head)]
    for row in rows:
        for phase in ("before", "after", "no faces"):
            if phase not in row:
                continue
            r = row[phase]
            lines.append(f"{(row[key] if phase == 'before' else '')[:28]:<28}{phase:>9}"
                         + "".join(f"{r[c]:>8}" for c in COLUMNS)
                         + f"{r['recall']:>8.3f}{r['precision']:>8.3f}"
                         + f"{r['ms_median'] if r['ms_median'] is not None else '-':>8}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    import os

    import cv2

    cv2.setNumThreads(1)
    result: dict[str, Any] = {"seed": args.seed, "images": args.images}
    say = (lambda text: print(text, file=sys.stderr)) if args.json else print
    if args.careless and (not args.labels or not 0.0 <= args.careless < 1.0):
        print("dicetower bench calibrate: --careless F goes with --labels, 0 <= F < 1",
              file=sys.stderr)
        return 2
    if args.dice is not None:
        from vision.lab.render import VARIED_DICE

        if args.dice not in VARIED_DICE:
            print(f"dicetower bench calibrate: --dice {args.dice!r}: not a dice set; one of "
                  f"{', '.join(VARIED_DICE)}", file=sys.stderr)
            return 2
    if not args.only_simulated:
        scoring = _scoring()
        dataset = Path(args.dataset or os.environ.get("DICE_PHOTOS") or scoring.DEFAULT_DATASET)
        if not (dataset / "manifest.json").is_file():
            print(f"dicetower bench calibrate: {dataset}: no dice-photos dataset (manifest.json)"
                  " there; name it or set $DICE_PHOTOS", file=sys.stderr)
            return 2
        try:
            records = scoring.load_manifest(dataset)  # one line naming what is wrong
        except ValueError as exc:
            print(f"dicetower bench calibrate: {exc}; name another dataset", file=sys.stderr)
            return 2
        try:  # the die sizes dataset_rows reads, so that a broken manifest is one line here
            known = sorted({r["source"] for r in records})
            scoring.die_sizes(records)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            print(f"dicetower bench calibrate: {dataset / 'manifest.json'}: not a dice-photos "
                  f"manifest ({type(exc).__name__}: {exc}); name another dataset",
                  file=sys.stderr)
            return 2
        sources = None
        if args.sources is not None:
            sources = [s.strip() for s in args.sources.split(",") if s.strip()]
            unknown = [s for s in sources if not any(k.startswith(s) for k in known)]
            if not sources or unknown:
                what = f"no source starts with {unknown[0]!r}" if unknown else "no source named"
                print(f"dicetower bench calibrate: --sources {args.sources!r}: {what}; "
                      f"sources: {', '.join(known)}", file=sys.stderr)
                return 2
        if args.loso is not None:
            from vision.lab.loso import missing

            problem = next(filter(None, (missing(args.loso, s) for s in known
                                         if not sources or any(s.startswith(p)
                                                               for p in sources))), None)
            if problem:
                print(f"dicetower bench calibrate: --loso: {problem}", file=sys.stderr)
                return 2
        result["dataset"] = dataset_rows(dataset, args.images, args.seed, sources, say,
                                         labels=args.labels, wrong=args.careless,
                                         loso=args.loso)
        if not args.json:
            print(table(result["dataset"], "source"))
    if args.simulated or args.only_simulated:
        result["simulated"] = simulated_rows(args.throws, args.seed, say, labels=args.labels,
                                             dice_set=args.dice)
        if not args.json:
            print(table(result["simulated"], "light"))
    if args.json:
        print(json.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m firmware_host.simulation.bench_calibrate",
                                     description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
