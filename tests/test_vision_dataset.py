"""`read_dice` on a small fixed sample of the real photos, and the bench agreeing with score.py.

The photos are third-party data read from ../shared/datasets/dice-photos (or $DICE_PHOTOS);
every test here skips cleanly when the folder is absent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import pytest

from firmware_host.cli import main
from vision import load_image, read_dice
from vision.lab.scoring import load_manifest, score

PER_SOURCE = 4  # images per source in the sample: every 25th image of the source


def sample(dataset: Path) -> list[dict]:
    """A fixed, spread-out sample of each source's images (by manifest order)."""
    by_source: dict[str, list[dict]] = {}
    for rec in load_manifest(dataset):
        by_source.setdefault(rec["source"], []).append(rec)
    picked = []
    for records in by_source.values():
        step = max(1, len(records) // PER_SOURCE)
        picked.extend(records[::step][:PER_SOURCE])
    return picked


@pytest.fixture(scope="module")
def readings(dice_photos: Path) -> tuple[list[dict], list[dict]]:
    cv2.setNumThreads(1)
    records = sample(dice_photos)
    predictions = [
        {"image": rec["image"],
         "dice": [d.to_json() for d in read_dice(load_image(dice_photos / rec["image"]))]}
        for rec in records
    ]
    return records, predictions


def test_the_sample_covers_every_source(readings) -> None:
    records, _ = readings
    sources = {rec["source"] for rec in records}
    assert len(sources) >= 3
    assert len(records) <= PER_SOURCE * len(sources)


def test_no_silent_misreads_on_the_sample(readings) -> None:
    records, predictions = readings
    overall = score(records, predictions)["overall"]
    # A wrong value costs a player: the sample must have none (the whole set has ~0.5%).
    assert overall["wrong"] + overall["extra"] == 0, overall


def test_most_sample_dice_are_read(readings) -> None:
    records, predictions = readings
    result = score(records, predictions)
    assert result["overall"]["recall"] >= 0.6, result["overall"]
    ivory = result["per_source"]["matteop65/Dice_Detection_Recognition"]
    assert ivory["recall"] >= 0.85, ivory


def test_every_reading_has_a_consistent_outline(readings) -> None:
    _, predictions = readings
    for pred in predictions:
        for die in pred["dice"]:
            xs = [c[0] for c in die["corners"]]
            ys = [c[1] for c in die["corners"]]
            assert min(xs) - 1 <= die["center"][0] <= max(xs) + 1
            assert min(ys) - 1 <= die["center"][1] <= max(ys) + 1
            assert (die["value"] is None) == (die["reason"] is not None)


def test_bench_agrees_with_the_dataset_scoring_script(dice_photos: Path, tmp_path, capsys) -> None:
    script = dice_photos.parent.parent / "tools" / "score.py"
    if not script.is_file():
        pytest.skip(f"no scoring script at {script}")
    predictions = tmp_path / "readings.jsonl"
    limit = 6
    assert main(["bench", "vision", str(dice_photos), "--json", "--limit", str(limit),
                 "--predictions", str(predictions)]) == 0
    bench = json.loads(capsys.readouterr().out)
    done = subprocess.run(
        [sys.executable, str(script), str(dice_photos), str(predictions), "--json", "--subset",
         "--quiet"],
        capture_output=True, text=True, check=True,
    )
    reference = json.loads(done.stdout)
    keys = ("gt_dice", "correct", "wrong", "unsure", "missed", "extra", "extra_null",
            "recall", "precision")
    assert reference["overall"]["images"] == limit
    for key in keys:
        assert bench["overall"][key] == pytest.approx(reference["overall"][key]), key
    for source, row in reference["per_source"].items():
        for key in keys:
            assert bench["per_source"][source][key] == pytest.approx(row[key]), (source, key)
    assert bench["overall"]["ms"]["median"] == pytest.approx(reference["overall"]["ms"]["median"])


def test_split_parts_that_could_only_be_blanks_change_nothing_unread(
    dice_photos: Path, monkeypatch
) -> None:
    # A die-shaped region large enough for two dice is read whole and split; most such parts
    # are halves of one die, blanks to the network, which are not read. On the sample,
    # reading them anyway gives the same dice: they were dropped in the end.
    from vision import scene_reading

    cv2.setNumThreads(1)
    images = [load_image(dice_photos / rec["image"]) for rec in sample(dice_photos)]
    skipped = []
    blank_part = scene_reading._blank_part

    def spy(cand, probs) -> bool:
        skipped.append(blank_part(cand, probs))
        return skipped[-1]

    monkeypatch.setattr(scene_reading, "_blank_part", spy)
    skipping = [read_dice(image) for image in images]
    assert sum(skipped) >= 5
    monkeypatch.setattr(scene_reading, "_blank_part", lambda cand, probs: False)
    assert [read_dice(image) for image in images] == skipping
