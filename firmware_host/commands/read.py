"""The `dicetower read` subcommand: read the dice in one or more images of the tray."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("read", help="read the dice in images of the tray")
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="image files to read")
    parser.add_argument("--profile", metavar="P", help="calibration profile (JSON)")
    parser.add_argument(
        "--json", action="store_true", help="one JSON line per image (machine-readable)"
    )
    parser.add_argument(
        "--annotate", metavar="DIR", help="write each image with outlines and values to DIR"
    )
    parser.set_defaults(func=run)


def _summary(path: str, dice: list, ms: float) -> str:
    read = [d for d in dice if d.value is not None]
    unsure = [d for d in dice if d.value is None]
    values = " ".join(str(d.value) for d in sorted(read, key=lambda d: d.value))
    line = f"{path}: {len(dice)} dice"
    if read:
        line += f", values {values}"
    if unsure:
        reasons = ", ".join(sorted({d.reason or "?" for d in unsure}))
        line += f", {len(unsure)} unsure ({reasons})"
    return line + f" [{ms:.1f} ms]"


def run(args: argparse.Namespace) -> int:
    # OpenCV and the dice reader: loaded when the command runs.
    import cv2

    from vision import ImageError, Profile, annotate, load_image, read_dice, shipped_readers

    profile = None
    if args.profile:
        try:
            profile = Profile.load(args.profile)  # its errors name the file
        except ValueError as exc:
            print(f"dicetower read: {exc}", file=sys.stderr)
            return 2
        try:
            profile.background_image()  # a missing empty tray is told now, not per image
        except ValueError as exc:  # an ImageError: it names the image, not the profile
            print(f"dicetower read: {args.profile}: {exc}", file=sys.stderr)
            return 2
    out_dir = Path(args.annotate) if args.annotate else None
    if out_dir:
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            print(f"dicetower read: --annotate {out_dir}: is a file; give a folder for the "
                  "annotated images", file=sys.stderr)
            return 2
        except OSError as exc:
            print(f"dicetower read: --annotate {out_dir}: cannot create it ({exc.strerror})",
                  file=sys.stderr)
            return 2
    readers = shipped_readers()  # the networks, loaded once for every image
    failed = 0
    for path in args.images:
        try:
            image = load_image(path)
            start = time.perf_counter()
            try:
                dice = read_dice(image, profile, readers=readers)
            except ValueError as exc:  # a profile that does not fit this camera's images
                raise ImageError(f"{path}: {exc}") from exc
            except Exception as exc:
                # One image the pipeline cannot handle must cost one line, not the batch.
                raise ImageError(f"{path}: cannot be read ({type(exc).__name__}: {exc})"
                                 ) from exc
            ms = (time.perf_counter() - start) * 1000.0
        except ImageError as exc:
            failed += 1
            if args.json:
                print(json.dumps({"image": path, "error": str(exc)}), flush=True)
            else:
                print(f"dicetower read: {exc}", file=sys.stderr)
            continue
        if args.json:
            line = {"image": path, "dice": [_die_json(d) for d in dice], "ms": round(ms, 2)}
            print(json.dumps(line), flush=True)
        else:
            print(_summary(path, dice, ms), flush=True)
        if out_dir:
            target = out_dir / (Path(path).stem + ".png")
            if not cv2.imwrite(str(target), annotate(image, dice)):
                failed += 1
                print(f"dicetower read: cannot write {target}", file=sys.stderr)
    return 1 if failed else 0


def _die_json(die) -> dict:
    data = die.to_json()
    data.pop("alternatives", None)
    return data
