"""`vision.lab.scoring`: the dataset's matching rule and metrics, without the dataset."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.lab.scoring import die_sizes, match_image, min_cost_assignment, score, score_image


def _record(kind: str, dice: list[dict], image: str = "images/src/a.jpg", source: str = "src"):
    return {"image": image, "source": source, "width": 640, "height": 480,
            "bbox_kind": kind, "dice": dice}


def _brute_force_cost(cost: list[list[float]]) -> float:
    n, m = len(cost), len(cost[0])
    if n <= m:
        orders = itertools.permutations(range(m), n)
        return min(sum(cost[i][p[i]] for i in range(n)) for p in orders)
    orders = itertools.permutations(range(n), m)
    return min(sum(cost[p[j]][j] for j in range(m)) for p in orders)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.integers(1, 5).flatmap(
        lambda n: st.integers(1, 5).flatmap(
            lambda m: st.lists(
                st.lists(st.floats(0, 100, allow_nan=False), min_size=m, max_size=m),
                min_size=n, max_size=n,
            )
        )
    )
)
def test_assignment_is_one_to_one_and_minimal(cost: list[list[float]]) -> None:
    pairs = min_cost_assignment(cost)
    assert len(pairs) == min(len(cost), len(cost[0]))
    assert len({i for i, _ in pairs}) == len(pairs) == len({j for _, j in pairs})
    total = sum(cost[i][j] for i, j in pairs)
    assert total == pytest.approx(_brute_force_cost(cost), abs=1e-6)


def test_die_boxes_match_inside_the_grown_box_only() -> None:
    rec = _record("die", [{"value": 3, "bbox": [100, 100, 40, 40]}])
    (size,) = die_sizes([rec])
    assert size == pytest.approx(40.0)
    # Box grown by 0.25 * 40 = 10 px on each side: 90..150.
    assert match_image(rec, size, [(148.0, 120.0)]) == [0]
    assert match_image(rec, size, [(152.0, 120.0)]) == [None]


def test_pip_boxes_match_within_a_radius_of_the_die_size() -> None:
    # A "four" pip box of 30 px: S = 30 / 0.75 = 40, radius 0.75 * S = 30 px from its centre.
    rec = _record("pips", [{"value": 4, "bbox": [100, 100, 30, 30]}])
    (size,) = die_sizes([rec])
    assert size == pytest.approx(40.0)
    assert match_image(rec, size, [(115.0 + 29.0, 115.0)]) == [0]
    assert match_image(rec, size, [(115.0 + 31.0, 115.0)]) == [None]


def test_single_die_crops_match_any_prediction_nearest_the_centre() -> None:
    rec = _record("none", [{"value": 5, "bbox": None}])
    (size,) = die_sizes([rec])
    assert match_image(rec, size, [(10.0, 10.0), (330.0, 250.0)]) == [1]


def test_matching_is_value_blind_so_a_misread_counts_as_wrong() -> None:
    rec = _record("die", [{"value": 3, "bbox": [100, 100, 40, 40]},
                          {"value": 6, "bbox": [300, 100, 40, 40]}])
    (size,) = die_sizes([rec])
    dice = [{"value": 6, "center": [120, 120]}, {"value": None, "center": [320, 120]},
            {"value": 2, "center": [500, 400]}, {"value": None, "center": [500, 50]}]
    tally = score_image(rec, size, dice)
    assert (tally.correct, tally.wrong, tally.unsure, tally.missed) == (0, 1, 1, 0)
    assert (tally.extra, tally.extra_null) == (1, 1)
    assert tally.precision == 0.0
    assert tally.recall == 0.0


def test_a_photo_where_fewer_than_half_the_dice_are_found_is_counted_lost() -> None:
    three = [{"value": v, "bbox": [200 * k, 0, 40, 40]} for k, v in enumerate((1, 2, 3))]
    rec = _record("die", three)
    (size,) = die_sizes([rec])
    one_found = [{"value": None, "center": [20, 20]}]
    two_found = [*one_found, {"value": 5, "center": [220, 20]}]
    assert score_image(rec, size, one_found).half_lost == 1
    assert score_image(rec, size, two_found).half_lost == 0  # found, even if unsure or wrong


def test_score_reports_per_source_and_overall_metrics() -> None:
    two = [{"value": 1, "bbox": [0, 0, 40, 40]}, {"value": 2, "bbox": [200, 0, 40, 40]}]
    a = _record("die", two, image="images/a/1.jpg", source="a")
    b = _record("die", [{"value": 4, "bbox": [0, 0, 40, 40]}], image="images/b/1.jpg", source="b")
    predictions = [
        {"image": a["image"], "dice": [{"value": 1, "center": [20, 20]}], "ms": 10.0},
        {"image": b["image"], "dice": [{"value": 5, "center": [20, 20]}], "ms": 30.0},
    ]
    result = score([a, b], predictions)
    overall = result["overall"]
    assert (overall["gt_dice"], overall["correct"], overall["wrong"], overall["missed"]) == (
        3, 1, 1, 1)
    assert overall["recall"] == pytest.approx(1 / 3)
    assert overall["precision"] == pytest.approx(0.5)
    assert overall["ms"]["median"] == pytest.approx(20.0)
    assert overall["ms"]["mean"] == pytest.approx(20.0)
    assert result["per_source"]["a"]["correct"] == 1
    assert result["per_source"]["b"]["wrong"] == 1


@pytest.mark.parametrize(("text", "words"), [
    (None, "no such file"),
    ("not json", "not JSON"),
    ("[]", "no image records"),
    ('{"x": 1}', "no image records"),
    ('[{"source": "s", "dice": []}]', "record 1 is not an image record"),
    ('[{"image": "a.jpg", "source": "s", "dice": [{"bbox": null}]}]', "record 1"),
])
def test_a_manifest_that_is_not_one_is_refused_in_one_line(
    tmp_path: Path, text: str | None, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from firmware_host.cli import main
    from vision.lab.scoring import load_manifest

    if text is not None:
        (tmp_path / "manifest.json").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=words):
        load_manifest(tmp_path)
    assert main(["bench", "vision", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err
