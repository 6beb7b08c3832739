"""Leave one source out: the networks trained without one of the dataset's sources, and that
source read by them, so a source judges networks that never saw it.

    python -m vision.lab.loso train DIR [--jobs 2]   # for each source: DIR/<owner>/ networks
    dicetower bench vision --loso DIR        # each photo read by its source's left-out networks

For each source, the die finder is trained without that source's photos (`finder_train`), then
the face network without them as the shipped one is made (its members by `face_net_train`,
their mean by `face_mean`), its samples cut by that same left-out finder (``--finder``):
nothing the networks learn comes from the photos they are measured on. The rendered trays they
learn from are drawn from seeds no test or bench draws. The lean check is the shipped one: it
only turns read dice into cocked ones, so on an unseen source it can lower recall, never raise
it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from vision.lab.finder_train import STEPS
from vision.lab.scoring import DEFAULT_DATASET, load_manifest
from vision.readers import Readers

FINDER_FILE = "finder_net.onnx"
FACE_FILE = "face_net.onnx"


def folder(root: Path, source: str) -> Path:
    """Where the networks trained without ``source`` (``owner/repo``) lie: ``root/owner``."""
    return root / source.split("/")[0]


def missing(root: Path, source: str) -> str | None:
    """What is missing of the networks trained without ``source``, in one line, or None."""
    where = folder(root, source)
    for name in (FINDER_FILE, FACE_FILE):
        if not (where / name).is_file():
            return (f"no network trained without {source}: {where / name} "
                    f"(python -m vision.lab.loso train {root} --source {source})")
    return None


def left_out(root: Path, source: str, lean: str | Path | None = None) -> Readers:
    """The networks trained without ``source``, to read its photos with (``readers=`` of
    `vision.read_dice`): its finder and face network, and the lean check ``lean`` (None: the
    shipped one). FileNotFoundError saying what is missing when they are not there."""
    problem = missing(root, source)
    if problem:
        raise FileNotFoundError(problem)
    where = folder(root, source)
    return Readers.from_files(face=where / FACE_FILE, finder=where / FINDER_FILE, lean=lean)


def train(root: Path, dataset: Path, sources: Sequence[str], steps: int, epochs: int,
          threads: int, jobs: int = 1) -> None:
    """For each source, the finder then the face network trained without it, in ``root``.
    Each runs in a process of its own; the face network's samples are cut by the left-out
    finder (``--finder``). The face network is made as the shipped one: its members
    (`face_net_train.MEMBERS`) trained ``jobs`` at a time (they only share the finder, so on
    two cores two at a time take the time of one), then their mean (`face_mean`)."""
    from vision.lab.face_mean import mean
    from vision.lab.face_net_train import MEMBERS

    def run(source: str, module: str, out: Path, extra: list[str]) -> None:
        print(f"{source}: {module} -> {out}", flush=True)
        subprocess.run([sys.executable, "-m", module, str(dataset), "--leave-out", source,
                        "--out", str(out), "--threads", str(threads), *extra], check=True)

    for source in sources:
        where = folder(root, source)
        where.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        run(source, "vision.lab.finder_train", where / FINDER_FILE, ["--steps", str(steps)])
        face_options = ["--epochs", str(epochs), "--finder", str(where / FINDER_FILE)]
        members = [where / f"face_net.{k}.onnx" for k in range(len(MEMBERS))]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            runs = [pool.submit(run, source, "vision.lab.face_net_train", out,
                                [*face_options, *options])
                    for out, options in zip(members, MEMBERS, strict=True)]
            for done in runs:
                done.result()  # a member that failed stops the source here
        mean(members, where / FACE_FILE)
        print(f"{source}: done in {time.monotonic() - began:.0f} s", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vision.lab.loso",
                                description="Train the networks without each dataset source.")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train the finder and the face network without each source")
    t.add_argument("root", help="folder to write one sub-folder of networks per source into")
    t.add_argument("--dataset", default=str(DEFAULT_DATASET))
    t.add_argument("--source", action="append",
                   help="only this source (repeatable; default: every source of the dataset)")
    t.add_argument("--steps", type=int, default=STEPS,
                   help=f"finder training steps (default {STEPS}, as the shipped finder)")
    t.add_argument("--epochs", type=int, default=30,
                   help="face network epochs (default 30, as the shipped one)")
    t.add_argument("--threads", type=int, default=1, help="threads of each training process")
    t.add_argument("--jobs", type=int, default=1,
                   help="face network members trained at once (default 1; 2 on two cores)")
    args = p.parse_args(argv)
    if args.jobs < 1 or args.threads < 1:
        print("loso: --jobs and --threads take a whole number of at least 1", file=sys.stderr)
        return 2
    dataset = Path(args.dataset)
    try:
        known = sorted({r["source"] for r in load_manifest(dataset)})
    except ValueError as exc:
        print(f"loso: {exc}", file=sys.stderr)
        return 2
    sources = args.source or known
    unknown = [s for s in sources if s not in known]
    if unknown:
        print(f"loso: no source {unknown[0]!r} in the dataset (known: {', '.join(known)})",
              file=sys.stderr)
        return 2
    try:
        train(Path(args.root), dataset, sources, args.steps, args.epochs, args.threads,
              args.jobs)
    except subprocess.CalledProcessError as exc:
        print(f"loso: training failed ({exc})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
