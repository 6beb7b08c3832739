"""`dicetower bench vision --variants`: the variants, their maps back, and what "changed" means."""

from __future__ import annotations

import json
import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from firmware_host.cli import main as dicetower
from vision.lab.scoring import DEFAULT_DATASET
from vision.lab.variants import GEOMETRIC, VARIANTS, goals, pick, reading


@pytest.mark.parametrize("name", [*GEOMETRIC, "scale0.5", "scale1.5"])
def test_a_point_of_a_variant_maps_back_to_where_it_was(name: str) -> None:
    image = np.zeros((120, 160, 3), np.uint8)
    x, y = 37, 81
    cv2.circle(image, (x, y), 6, (255, 255, 255), -1)
    shown, back = VARIANTS[name](image, np.random.default_rng(0))
    m = cv2.moments(cv2.cvtColor(shown, cv2.COLOR_BGR2GRAY), binaryImage=False)
    # Pixel centres: the spot's centroid is at (x + 0.5, y + 0.5) in continuous coordinates.
    found = back(m["m10"] / m["m00"] + 0.5, m["m01"] / m["m00"] + 0.5)
    assert found == pytest.approx((x + 0.5, y + 0.5), abs=1.0)


@pytest.mark.parametrize("name", ["bright0.6", "bright1.4", "noise8", "jpeg40", "jpeg95", "grey"])
def test_the_other_variants_keep_the_pixels_in_place(name: str) -> None:
    image = np.random.default_rng(1).integers(0, 256, (40, 60, 3), dtype=np.uint8)
    shown, back = VARIANTS[name](image, np.random.default_rng(0))
    assert shown.shape[:2] == image.shape[:2]
    assert back(12.5, 30.25) == (12.5, 30.25)
    assert not np.array_equal(shown.reshape(40, 60, -1)[..., 0], image[..., 0])


def test_noise_is_seeded() -> None:
    image = np.full((20, 20, 3), 128, np.uint8)
    first = VARIANTS["noise8"](image, np.random.default_rng([0, 3]))[0]
    again = VARIANTS["noise8"](image, np.random.default_rng([0, 3]))[0]
    other = VARIANTS["noise8"](image, np.random.default_rng([0, 4]))[0]
    assert np.array_equal(first, again) and not np.array_equal(first, other)


def test_a_reading_is_the_multiset_of_values_with_unsure_dice_as_their_own() -> None:
    two_fours = [{"value": 4}, {"value": 4}, {"value": None}]
    assert reading(two_fours) == reading([{"value": None}, {"value": 4}, {"value": 4}])
    assert reading(two_fours) != reading([{"value": 4}, {"value": None}, {"value": None}])
    assert reading(two_fours) != reading([{"value": 4}, {"value": 4}])
    assert reading(two_fours) != reading([{"value": 4}, {"value": 4}, {"value": None},
                                          {"value": None}])


def test_a_seeded_subset_is_the_same_every_time_and_in_manifest_order() -> None:
    records = [{"image": f"{i}.jpg"} for i in range(50)]
    subset = pick(records, 10, 5)
    assert subset == pick(records, 10, 5) and len(subset) == 10
    assert [int(r["image"][:-4]) for r in subset] == sorted(int(r["image"][:-4]) for r in subset)
    assert pick(records, 10, 6) != subset
    assert pick(records, None, 5) == records and pick(records, 80, 5) == records


def test_goals_name_what_a_variant_misses() -> None:
    def row(recall: float, precision: float, share: float) -> dict:
        return {"recall": recall, "precision": precision, "changed_share": share}

    rows = {"original": row(0.9, 0.995, 0.0), "rot90": row(0.9, 0.995, 0.04),
            "noise8": row(0.86, 0.98, 0.07), "grey": row(0.89, 0.99, 0.081)}
    assert goals(rows) == {"original": [], "rot90": ["changed"],
                           "noise8": ["precision", "recall"], "grey": ["changed"]}


USAGE_ERRORS = [
    (["--variants", "--limit", "-1"], "--limit must be at least 0"),
    (["--limit", "-3"], "--limit must be at least 0"),
    (["--variants", "--seed", "-1"], "--seed must be at least 0"),
    (["--unpadded"], "--unpadded goes with --throws"),
    (["--throws", "--variants"], "--throws and --variants do not go together"),
    (["--predictions", "{tmp}/missing/out.jsonl"], "does not exist"),
    (["--variants", "--predictions", "{tmp}"], "is a folder"),
]


@pytest.mark.parametrize("named", [False, True])
@pytest.mark.parametrize(("argv", "said"), USAGE_ERRORS)
def test_bench_usage_errors_come_before_looking_for_the_dataset(
    argv: list[str], said: str, named: bool, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    empty = tmp_path / "no-photos"  # neither a dataset nor anything else
    monkeypatch.setenv("DICE_PHOTOS", str(empty))
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert dicetower(["bench", "vision", *([str(empty)] if named else []), *argv]) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1, err
    assert "manifest" not in err and "DICE_PHOTOS" not in err


def test_good_options_then_look_for_the_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DICE_PHOTOS", str(tmp_path))
    argv = ["bench", "vision", "--variants", "--limit", "0", "--seed", "3",
            "--predictions", str(tmp_path / "out.jsonl")]
    assert dicetower(argv) == 2
    err = capsys.readouterr().err
    assert "manifest.json" in err and err.count("\n") == 1
    assert not (tmp_path / "out.jsonl").exists()


DATASET = Path(os.environ.get("DICE_PHOTOS") or DEFAULT_DATASET)


@pytest.mark.skipif(not (DATASET / "manifest.json").exists(), reason="dice-photos not present")
def test_bench_variants_reads_a_subset_and_reports_every_variant(capsys) -> None:
    status = dicetower(["bench", "vision", str(DATASET), "--variants", "--limit", "2", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 0 and out["images"] == 2
    assert set(out["variants"]) == {"original", *VARIANTS}
    for name, row in out["variants"].items():
        assert row["images"] == 2
        assert row["changed"] == len(out["changed"].get(name, []))
        assert 0 <= row["changed_share"] <= 1
    assert out["variants"]["original"]["changed"] == 0
