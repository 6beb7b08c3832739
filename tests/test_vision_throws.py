"""Three-dice throws cut from labelled photos (`vision.lab.throws`) and `bench vision --throws`.

The cutting rule is checked on small manifests built here (exact cuts, the floor's colour,
intruders, the photo's edge, determinism); the command on a drawn photo set and, when the
third-party dice-photos dataset is present, on its photos (marker ``dataset``; skipped with a
message otherwise).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import cv2
import numpy as np
import pytest

from firmware_host.cli import main
from vision.lab import throws as cutting
from vision.lab.scoring import die_sizes, load_manifest, score_image
from vision.lab.throws_bench import outcome

FLOOR = (40, 120, 200)  # BGR of the drawn floor


def die(value: int, x: float, y: float, side: float = 40.0) -> dict:
    return {"value": value, "bbox": [x, y, side, side]}


def record(dice: list[dict], kind: str = "die", width: int = 640, height: int = 480,
           image: str = "images/a.jpg") -> dict:
    return {"image": image, "source": "owner/repo", "width": width, "height": height,
            "bbox_kind": kind, "dice": dice}


def extents_overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_three_close_dice_give_their_union_grown_by_one_die_side() -> None:
    rec = record([die(2, 100, 100), die(5, 150, 100), die(3, 120, 150), die(6, 500, 400)])
    throws = cutting.cut_throws(rec, 40.0)
    assert [(t.box, t.dice, t.labels) for t in throws] == [((60, 60, 170, 170), (0, 1, 2),
                                                           (2, 3, 5))]


def test_fewer_than_three_dice_or_dice_without_boxes_give_nothing() -> None:
    assert cutting.cut_throws(record([die(1, 100, 100), die(2, 150, 100)]), 40.0) == []
    no_boxes = record([{"value": v, "bbox": None} for v in (1, 2, 3)], kind="none")
    assert cutting.cut_throws(no_boxes, 40.0) == []


def test_a_fourth_die_near_the_three_leaves_no_throw() -> None:
    # Its box reaches into the margin of the three's cut (x 60..230): no three of the four
    # can be cut without the other.
    rec = record([die(2, 100, 100), die(5, 150, 100), die(3, 120, 150), die(4, 225, 120)])
    assert cutting.cut_throws(rec, 40.0) == []
    # Moved one pixel clear of the cut, it is floor no more: the three are a throw again.
    rec["dice"][3]["bbox"][0] = 230
    assert [t.dice for t in cutting.cut_throws(rec, 40.0)] == [(0, 1, 2)]


def test_a_cut_leaving_the_photo_is_dropped() -> None:
    rec = record([die(2, 30, 100), die(5, 80, 100), die(3, 50, 150)])
    assert cutting.cut_throws(rec, 40.0) == []
    rec["dice"] = [die(2, 40, 100), die(5, 90, 100), die(3, 60, 150)]
    assert [t.box for t in cutting.cut_throws(rec, 40.0)] == [(0, 60, 170, 170)]


def test_dice_spread_wider_than_the_span_are_no_throw() -> None:
    far = 100 + cutting.MAX_SPAN * 40.0  # the third die's right edge 40 px past the span
    rec = record([die(2, 100, 100), die(5, 150, 100), die(3, far, 150)], width=1200)
    assert cutting.cut_throws(rec, 40.0) == []


def test_two_groups_give_two_throws_smallest_first() -> None:
    rec = record([die(1, 60, 60), die(2, 110, 60), die(3, 60, 110),
                  die(4, 400, 250), die(5, 480, 250), die(6, 440, 330)])
    throws = cutting.cut_throws(rec, 40.0)
    assert [t.dice for t in throws] == [(0, 1, 2), (3, 4, 5)]
    assert throws[0].box == (20, 20, 170, 170) and throws[1].box == (360, 210, 200, 200)


def test_pip_boxes_grow_to_a_die_and_a_one_takes_the_photos_size() -> None:
    rec = record([{"value": 2, "bbox": [100, 100, 30, 30]},
                  {"value": 1, "bbox": [200, 100, 8, 8]}], kind="pips")
    size = 30 / 0.75  # what `die_sizes` gives: the pip box's side over PIP_EXTENT
    (a, b) = cutting.die_extents(rec, size)
    assert a == pytest.approx((91, 91, 139, 139))  # 1.6 x 30 = 48, on the box's centre
    assert b[2] - b[0] == pytest.approx(48.0) and (b[0] + b[2]) / 2 == pytest.approx(204.0)


def random_record(rng: random.Random, k: int) -> dict:
    dice = [die(rng.randint(1, 6), rng.uniform(0, 600), rng.uniform(0, 440),
                rng.uniform(30, 50)) for _ in range(rng.randint(3, 12))]
    return record(dice, image=f"images/{k}.jpg")


def test_every_cut_holds_its_three_dice_whole_and_no_other_and_is_repeatable() -> None:
    rng = random.Random(7)
    records = [random_record(rng, k) for k in range(60)]
    throws = cutting.throws_of(records)
    assert len(throws) >= 20  # the rule must cut something out of scattered dice
    assert throws == cutting.throws_of(records)
    sizes = dict(zip((r["image"] for r in records), die_sizes(records), strict=True))
    by_image = {r["image"]: r for r in records}
    for t in throws:
        rec = by_image[t.image]
        x, y, w, h = t.box
        cut = (x, y, x + w, y + h)
        assert x >= 0 and y >= 0 and x + w <= 640 and y + h <= 480
        extents = cutting.die_extents(rec, sizes[t.image])
        for i, e in enumerate(extents):
            if i in t.dice:
                assert cut[0] <= e[0] and cut[1] <= e[1] and e[2] <= cut[2] and e[3] <= cut[3]
            else:
                assert not extents_overlap(cut, e)
        others = [o.box for o in throws if o.image == t.image and o is not t]
        assert not any(extents_overlap(cut, (a, b, a + c, b + d)) for a, b, c, d in others)


def drawn_photo(rec: dict) -> np.ndarray:
    """The record's dice drawn as ivory squares with dark pips on a plain floor."""
    image = np.zeros((rec["height"], rec["width"], 3), np.uint8)
    image[:] = FLOOR
    spots = {1: [(0, 0)], 2: [(-1, -1), (1, 1)], 3: [(-1, -1), (0, 0), (1, 1)],
             4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
             5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
             6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)]}
    for d in rec["dice"]:
        x, y, w, h = (int(t) for t in d["bbox"])
        cv2.rectangle(image, (x, y), (x + w - 1, y + h - 1), (225, 235, 240), -1)
        for sx, sy in spots[d["value"]]:
            centre = (round(x + w / 2 + sx * w / 4), round(y + h / 2 + sy * h / 4))
            cv2.circle(image, centre, max(2, w // 10), (30, 30, 30), -1, cv2.LINE_AA)
    return image


def test_the_frame_is_the_floors_colour_with_the_cut_in_its_middle() -> None:
    rec = record([die(2, 100, 100), die(5, 150, 100), die(3, 120, 150)])
    photo = drawn_photo(rec)
    photo[0:300, 0:300, 0] += np.arange(300, dtype=np.uint8)[None, :] % 3  # floor not flat
    (throw,) = cutting.cut_throws(rec, 40.0)
    cut = cutting.crop(photo, throw)
    framed, scale, (ox, oy) = cutting.frame(cut)
    assert framed.shape == (480, 640, 3) and scale == 1.0 and (ox, oy) == (235, 155)
    assert np.array_equal(framed[oy : oy + 170, ox : ox + 170], cut)
    assert tuple(framed[0, 0]) == tuple(cutting.floor_colour(cut)) == (41, 120, 200)
    assert tuple(framed[-1, -1]) == (41, 120, 200)


def test_a_cut_larger_than_the_frame_is_scaled_down_to_fit() -> None:
    cut = np.full((500, 1000, 3), 90, np.uint8)
    framed, scale, (ox, oy) = cutting.frame(cut)
    assert framed.shape == (480, 640, 3)
    assert scale == pytest.approx(0.64) and (ox, oy) == (0, 80)


def test_the_throws_labels_follow_the_cut_into_the_frame() -> None:
    rec = record([die(2, 100, 100), die(5, 150, 100), die(3, 120, 150)])
    (throw,) = cutting.cut_throws(rec, 40.0)
    framed = cutting.throw_record(rec, throw, 0.5, (10, 20), (640, 480))
    assert framed["dice"][0]["bbox"] == [30.0, 40.0, 20.0, 20.0]
    centres = [{"value": d["value"], "center": [b[0] + b[2] / 2, b[1] + b[3] / 2]}
               for d in framed["dice"] for b in [d["bbox"]]]
    assert score_image(framed, 20.0, centres).correct == 3
    assert score_image(framed, 20.0, [{**centres[0], "value": 6}]).wrong == 1


def test_outcomes() -> None:
    assert outcome([5, 2, 3], (2, 3, 5)) == "right"
    assert outcome([5, 2, 2], (2, 3, 5)) == "misread"
    assert outcome([5, None, 3], (2, 3, 5)) == "unsure"
    assert outcome([5, 3], (2, 3, 5)) == "fewer"
    assert outcome([5, 2, 3, None], (2, 3, 5)) == "more"


def run_json(argv: list[str], capsys) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def check_consistent(result: dict) -> None:
    rows = [result["overall"], *result["per_source"].values()]
    for row in rows:
        assert row["right"] + row["misread"] == row["accepted"]
        assert sum(row[k] for k in ("right", "misread", "fewer", "more", "unsure")) == \
            row["throws"]
        if row["throws"]:
            assert row["accepted_share"] == pytest.approx(row["accepted"] / row["throws"])
            assert row["right_share"] == pytest.approx(row["right"] / row["throws"])
            assert row["dice"]["gt_dice"] == 3 * row["throws"]
    for key in ("throws", "accepted", "right", "misread", "fewer", "more", "unsure"):
        assert result["overall"][key] == sum(r[key] for r in result["per_source"].values())


def test_the_command_on_a_drawn_photo_set(tmp_path: Path, capsys) -> None:
    recs = [record([die(2, 100, 100), die(5, 160, 100), die(3, 120, 160), die(6, 500, 380)],
                   image="images/a.png"),
            record([die(4, 300, 200), die(4, 360, 210)], image="images/b.png")]
    (tmp_path / "images").mkdir()
    for rec in recs:
        cv2.imwrite(str(tmp_path / rec["image"]), drawn_photo(rec))
    (tmp_path / "manifest.json").write_text(json.dumps(recs))
    out = tmp_path / "throws.jsonl"
    result = run_json(["bench", "vision", str(tmp_path), "--throws", "--json",
                       "--predictions", str(out)], capsys)
    assert result["padded"] is True and result["frame"] == [640, 480]
    assert result["overall"]["throws"] == 1 and result["overall"]["photos"] == 1
    check_consistent(result)
    (line,) = out.read_text().splitlines()
    reading = json.loads(line)
    assert reading["image"] == "images/a.png" and reading["box"] == [60, 60, 180, 180]
    assert reading["labels"] == [2, 3, 5] and reading["size"] == [640, 480]
    assert len(reading["values"]) == len(reading["dice"])
    unpadded = run_json(["bench", "vision", str(tmp_path), "--throws", "--unpadded",
                         "--json"], capsys)
    assert unpadded["padded"] is False and unpadded["overall"]["throws"] == 1


@pytest.mark.parametrize("argv", [["--unpadded"], ["--throws", "--variants"]])
def test_flags_that_do_not_go_together_are_a_usage_error(argv, capsys) -> None:
    assert main(["bench", "vision", "/nonexistent", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--" in err


@pytest.mark.dataset
def test_photos_of_the_dataset_give_throws_of_three_labelled_dice(dice_photos: Path) -> None:
    records = load_manifest(dice_photos)
    throws = cutting.throws_of(records)
    sources = {t.source for t in throws}
    assert len(throws) >= 50 and len(sources) == 2  # tai-studio's crops have no boxes
    by_image = {r["image"]: r for r in records}
    for t in throws:
        rec = by_image[t.image]
        assert len(set(t.dice)) == 3 and len(rec["dice"]) >= 3
        assert t.labels == tuple(sorted(rec["dice"][i]["value"] for i in t.dice))
        x, y, w, h = t.box
        assert x >= 0 and y >= 0 and x + w <= rec["width"] and y + h <= rec["height"]


@pytest.mark.dataset
def test_the_command_on_the_dataset(dice_photos: Path, tmp_path: Path, capsys) -> None:
    result = run_json(["bench", "vision", str(dice_photos), "--throws", "--json",
                       "--half", "odd", "--limit", "24"], capsys)
    assert {"dataset", "images", "padded", "frame", "rule", "overall", "per_source"} <= set(
        result)
    assert {"photos", "throws", "accepted", "right", "misread", "fewer", "more", "unsure",
            "accepted_share", "right_share", "misread_share", "dice", "ms"} <= set(
        result["overall"])
    assert result["images"] == 24 and result["overall"]["throws"] >= 5
    check_consistent(result)
