"""`vision.lab.rendered_bench`: rendered trays' readings counted against their truth."""

from __future__ import annotations

import numpy as np
import pytest

import vision
from vision.lab.render import DieSpec, TraySpec, render_tray
from vision.lab.rendered_bench import RenderedCounts, count_tray, main, measure, tray_for_seed

CORNERS = ((0.0, 0.0),) * 4


def die(value: int | None, centre, reason: str | None = None) -> vision.Die:
    return vision.Die(value, centre, CORNERS, 0.9, reason)


@pytest.fixture(scope="module")
def shot():
    return render_tray(TraySpec(dice=(
        DieSpec(3, (100, 100), 40), DieSpec(4, (300, 100), 40),
        DieSpec(5, (300, 300), 40, tilt_deg=25),
    )))


def counted(shot, readings) -> RenderedCounts:
    counts = RenderedCounts()
    count_tray(shot, readings, counts)
    return counts


def test_each_die_is_counted_once_by_its_reading(shot) -> None:
    three, four, leaning = shot.truth
    assert leaning.cocked and not three.cocked
    counts = counted(shot, [die(3, three.center), die(None, four.center, "cocked"),
                            die(5, leaning.center), die(2, (600, 440))])
    assert counts == RenderedCounts(flat_right=1, flat_unsure=1, flat_cocked=1,
                                    leaning_valued=1, extra_values=1)
    counts = counted(shot, [die(6, three.center), die(None, leaning.center, "cocked")])
    assert counts == RenderedCounts(flat_wrong=1, flat_missed=1, leaning_unsure=1)
    assert (counts.flat, counts.leaning) == (2, 1)


def test_the_nearest_reading_counts_and_a_second_one_with_a_value_is_extra(shot) -> None:
    three = shot.truth[0]
    x, y = three.center
    counts = counted(shot, [die(4, (x + 12, y)), die(3, (x + 2, y))])
    assert counts.flat_right == 1 and counts.flat_wrong == 0
    assert counts.extra_values == 1
    away = counted(shot, [die(3, (x + 0.6 * three.side, y))])
    assert away == RenderedCounts(flat_missed=2, leaning_missed=1, extra_values=1)


def test_a_seed_always_draws_the_same_tray() -> None:
    a, b = tray_for_seed(7003), tray_for_seed(7003)
    assert np.array_equal(a.image, b.image) and a.truth == b.truth
    assert not np.array_equal(a.image, tray_for_seed(7004).image)


def test_measure_counts_every_true_die() -> None:
    seeds = range(7000, 7003)
    counts = measure(seeds)
    truth = [t for s in seeds for t in tray_for_seed(s).truth]
    assert counts.flat == sum(not t.cocked for t in truth)
    assert counts.leaning == sum(t.cocked for t in truth)


def test_an_empty_seed_range_is_refused(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["7000", "7000"])
    assert stop.value.code == 2
    assert "seed range is empty" in capsys.readouterr().err


def test_a_tower_throw_has_exactly_its_dice_and_is_timed(capsys) -> None:
    for seed in (7000, 7001):
        shot = tray_for_seed(seed, dice=5)
        assert len(shot.truth) == 5 and not any(t.cocked for t in shot.truth)
    varied = tray_for_seed(7000, dice=3, varied=True)
    assert len(varied.truth) == 3
    assert not np.array_equal(varied.image[:, :, :], tray_for_seed(7000, dice=3).image)
    times: list[float] = []
    counts = measure(range(7000, 7002), dice=5, times=times)
    assert counts.flat == 10 and len(times) == 2 and all(t > 0 for t in times)
    assert main(["7000", "7001", "--dice", "5"]) == 0
    assert "read_dice ms: median" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        main(["7000", "7001", "--dice", "0"])
    assert stop.value.code == 2


def test_a_varied_trays_dice_are_also_counted_by_their_set(capsys) -> None:
    from vision.lab.render import set_of

    seeds = range(7000, 7003)
    by_set: dict[str, RenderedCounts] = {}
    counts = measure(seeds, tower=True, by_set=by_set)
    shots = [tray_for_seed(s, tower=True) for s in seeds]
    names = [set_of(d) for shot in shots for d in shot.spec.dice]
    assert None not in names and set(by_set) == set(names)
    for name, c in by_set.items():
        assert c.flat + c.leaning == names.count(name)
    for field_ in ("flat_right", "flat_unsure", "flat_missed", "leaning_valued"):
        assert sum(getattr(c, field_) for c in by_set.values()) == getattr(counts, field_)
    assert set_of(DieSpec(3, (100, 100), 40, body_bgr=(1, 2, 3))) is None
    with pytest.raises(SystemExit) as stop:
        main(["7000", "7001", "--tower", "--varied"])
    assert stop.value.code == 2
    assert "--tower draws its own dice" in capsys.readouterr().err


def test_the_networks_named_are_the_ones_that_read(capsys, tmp_path) -> None:
    class Blind:
        """A face network that sees no die face anywhere."""

        def probabilities(self, patches):
            out = np.zeros((len(patches), 7), np.float32)
            out[:, 0] = 1.0
            return out

    from dataclasses import replace

    from vision.readers import Readers

    shipped = Readers.from_files()
    seeing = measure(range(7000, 7002), dice=3, readers=shipped)
    blind = measure(range(7000, 7002), dice=3, readers=replace(shipped, face=Blind()))
    assert seeing.flat_right > 0 and blind.flat_right == 0 and blind.flat == seeing.flat
    assert main(["7000", "7001", "--face", str(tmp_path / "none.onnx")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "none.onnx" in err
