"""`vision.lab.net_training` (what both training scripts share) and the dataset's halves."""

from __future__ import annotations

import importlib
import json

import cv2
import numpy as np
import pytest

from vision.lab import net_training
from vision.lab.scoring import half_of


def test_the_halves_are_every_other_record_and_together_the_whole() -> None:
    records = [{"image": f"images/{k}.jpg"} for k in range(7)]
    even, odd = half_of(records, "even"), half_of(records, "odd")
    assert [r["image"] for r in even] == [f"images/{k}.jpg" for k in (0, 2, 4, 6)]
    assert [r["image"] for r in odd] == [f"images/{k}.jpg" for k in (1, 3, 5)]
    assert half_of(records, "all") == half_of(records, None) == records
    with pytest.raises(ValueError, match="half must be"):
        half_of(records, "first")


def test_dataset_images_yield_the_half_and_skip_unreadable_files(tmp_path) -> None:
    (tmp_path / "images").mkdir()
    records = []
    for k in range(5):
        name = f"images/{k}.png"
        if k == 2:
            (tmp_path / name).write_text("not an image")
        else:
            cv2.imwrite(str(tmp_path / name), np.full((8, 8, 3), k * 10, np.uint8))
        records.append({"image": name, "source": "test", "dice": []})
    (tmp_path / "manifest.json").write_text(json.dumps(records))
    said: list[str] = []
    got = list(net_training.dataset_images(tmp_path, "even", said.append, every=2))
    assert [rec["image"] for rec, _ in got] == ["images/0.png", "images/4.png"]
    assert [int(image[0, 0, 0]) for _, image in got] == [0, 40]
    assert any("skipped images/2.png" in line for line in said)
    assert "  2/3 images" in said


def test_relit_keeps_the_patch_shape_and_is_the_same_for_one_seed() -> None:
    patch = np.random.default_rng(1).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    a = net_training.relit(patch, np.random.default_rng(5), blur=(0.5, 1.5), noise=8.0)
    b = net_training.relit(patch, np.random.default_rng(5), blur=(0.5, 1.5), noise=8.0)
    assert a.shape == patch.shape and a.dtype == np.uint8
    assert np.array_equal(a, b)
    others = [net_training.relit(patch, np.random.default_rng(s), (0.5, 1.5), 8.0)
              for s in range(6, 12)]
    assert any(not np.array_equal(a, o) for o in others)


def test_the_command_line_options_and_their_defaults(tmp_path) -> None:
    parser = net_training.parser("train", "Train.", tmp_path / "model.onnx", epochs=7)
    args = parser.parse_args([])
    assert (args.half, args.seed, args.epochs, args.threads) == ("all", 421, 7, 2)
    assert args.out == str(tmp_path / "model.onnx")
    with pytest.raises(SystemExit):
        parser.parse_args(["--half", "first"])


def test_training_without_the_dataset_says_where_it_looked(tmp_path) -> None:
    pytest.importorskip("torch", reason="the training extra is not installed")
    problem = net_training.setup(1, tmp_path / "nowhere")
    assert problem is not None and "nowhere" in problem and "manifest.json" in problem
    (tmp_path / "manifest.json").write_text("[]")
    assert net_training.setup(1, tmp_path) is None


def test_print_scenes_are_seeded_and_keep_the_judged_fonts_out() -> None:
    from vision.lab import print_scenes

    assert np.array_equal(print_scenes.scene(200_001), print_scenes.scene(200_001))
    assert not np.array_equal(print_scenes.scene(200_001), print_scenes.scene(200_002))
    # tests/test_vision_no_dice.py judges the pipeline on these four faces, upright.
    judged = {cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX,
              cv2.FONT_HERSHEY_TRIPLEX}
    assert not judged & set(print_scenes.FONTS)
    for seed in range(200_000, 200_006):
        image = print_scenes.scene(seed)
        assert image.shape == (*print_scenes.SIZE, 3) and image.dtype == np.uint8
        assert float(image.std()) > 10.0  # print, not a blank card


def test_print_samples_are_all_none_and_few_per_scene() -> None:
    from vision.lab.face_samples import PRINT_PER_SCENE, print_samples

    samples = print_samples(range(200_000, 200_004))
    assert samples and all(s.label == 0 and s.group == "print" for s in samples)
    assert len(samples) <= 4 * PRINT_PER_SCENE


def test_cloths_are_seeded_dotted_and_their_samples_all_none() -> None:
    from vision.lab import print_scenes
    from vision.lab.face_samples import CLOTH_SEEDS, PRINT_PER_SCENE, cloth_samples

    first = CLOTH_SEEDS.start
    assert np.array_equal(print_scenes.cloth(first), print_scenes.cloth(first))
    assert not np.array_equal(print_scenes.cloth(first), print_scenes.cloth(first + 1))
    for seed in range(first, first + 4):
        image = print_scenes.cloth(seed)
        assert image.shape == (*print_scenes.SIZE, 3) and image.dtype == np.uint8
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        ink = (grey > grey.mean()).astype(np.uint8)
        ink = ink if ink.mean() < 0.5 else 1 - ink
        assert cv2.connectedComponents(ink)[0] - 1 > 20  # many dots, not a plain cloth
    samples = cloth_samples(range(first, first + 3))
    assert samples and all(s.label == 0 and s.group == "cloth" for s in samples)
    assert len(samples) <= 3 * PRINT_PER_SCENE


def test_price_lists_are_seeded_dotted_print_and_their_samples_all_none() -> None:
    from vision.lab import print_scenes
    from vision.lab.face_samples import PRICE_SEEDS, PRINT_PER_SCENE, print_samples

    first = PRICE_SEEDS.start
    assert np.array_equal(print_scenes.price_list(first), print_scenes.price_list(first))
    assert not np.array_equal(print_scenes.price_list(first), print_scenes.price_list(first + 1))
    samples = print_samples(range(first, first + 3), draw=print_scenes.price_list)
    assert samples and all(s.label == 0 and s.group == "print" for s in samples)
    assert len(samples) <= 3 * PRINT_PER_SCENE


def test_varied_samples_hold_each_die_of_the_tray_and_a_few_strays() -> None:
    from vision.lab.face_samples import STRAYS_PER_VARIED, VARIED_SEEDS, varied_samples
    from vision.lab.render import render_tray, varied_tray

    seeds = range(VARIED_SEEDS.start, VARIED_SEEDS.start + 6)
    samples = varied_samples(seeds)
    dice = [t for seed in seeds
            for t in render_tray(varied_tray(np.random.default_rng(seed)), seed=seed).truth]
    assert all(s.group == "varied" and 0 <= s.label <= 6 for s in samples)
    # Every die is a sample with its value (a leaning one: "none"), then strays, all "none".
    valued = sorted(s.label for s in samples if s.label)
    assert valued == sorted(t.value for t in dice if not t.cocked)
    strays = len(samples) - len(dice)
    assert 0 < strays <= len(seeds) * STRAYS_PER_VARIED


def test_rendered_samples_say_where_their_pips_are_print_has_none() -> None:
    from vision.lab.face_samples import VARIED_SEEDS, print_samples, varied_samples
    from vision.straightening import straighten

    samples = varied_samples(range(VARIED_SEEDS.start, VARIED_SEEDS.start + 3))
    valued = [s for s in samples if s.label]
    assert valued and all(s.pips is not None for s in samples)
    # Each carries the foreground around it, the die in it (what a repainting paints).
    assert all(s.body.shape == s.crop.shape[:2] for s in samples)
    assert all(s.body[s.body.shape[0] // 2, s.body.shape[1] // 2] > 0 for s in valued)
    for s in valued:
        size = s.crop.shape[0]
        assert np.all((s.pips >= 0) & (s.pips < size))
        # The die's own pips lie on its top face, around the crop's centre; others' beyond.
        near = np.linalg.norm(s.pips - size / 2.0, axis=1) < 0.75 * s.side
        assert np.count_nonzero(near) == s.label
    # A pip the sample says is there is darker or lighter than the face around it: seen in
    # the straightened patch at the place the sample maps it to.
    one = next(s for s in valued if s.label == 1 or s.label == 5)
    c = one.crop.shape[0] / 2.0
    patch, _ = straighten(one.crop, (c, c), 0.0, one.side)
    grey = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY).astype(float)
    middle = min(one.pips, key=lambda p: np.linalg.norm(p - c))
    x, y = (middle - c) * (patch.shape[0] / 1.5 / one.side) + patch.shape[0] / 2.0
    ring = [grey[round(y + dy), round(x + dx)] for dx, dy in ((8, 0), (-8, 0), (0, 8), (0, -8))]
    assert abs(grey[round(y), round(x)] - np.median(ring)) > 25
    assert all(len(s.pips) == 0 for s in print_samples(range(200_000, 200_002)))


def test_dataset_samples_pips_are_unknown_their_dice_foreground(dice_photos) -> None:
    from vision.lab.face_samples import dataset_samples

    samples = dataset_samples(dice_photos, "even", leave_out="nell-byler/dice_detection")
    assert samples and all(s.pips is None for s in samples)
    # The ivory dice stand out from the desk: the middle of a labelled die is foreground.
    valued = [s for s in samples if s.label and s.group == "matteop65"]
    middles = [s.body[s.body.shape[0] // 2, s.body.shape[1] // 2] > 0 for s in valued]
    assert np.mean(middles) > 0.9


def test_the_pip_map_marks_each_pip_and_is_unknown_without_pips() -> None:
    from vision.lab.face_net_train import PIP_GRID, pip_map
    from vision.straightening import PATCH_SCALE, PATCH_SIDE

    cell = PATCH_SIDE * PATCH_SCALE / PIP_GRID
    grid = pip_map(np.array([[2.5 * cell, 7.2 * cell], [10.9 * cell, 3.0 * cell]]))
    assert grid.shape == (PIP_GRID, PIP_GRID)
    assert grid[7, 2] == 1.0 and grid[3, 10] == 1.0 and np.count_nonzero(grid == 1.0) == 2
    assert 0.0 < grid[7, 3] < 1.0 and grid[0, 15] < 1e-6
    assert np.all(pip_map(np.zeros((0, 2))) == 0.0)
    assert np.all(np.isnan(pip_map(None)))


@pytest.mark.parametrize("kind", ["any colour", "smoky"])
def test_recoloured_samples_hold_each_die_of_their_tray(kind: str) -> None:
    from vision.lab import face_samples
    from vision.lab.render import any_colour_tray, render_tray
    from vision.lab.render_smoky import smoky_tray

    seeds, cut, draw = {
        "any colour": (face_samples.ANY_COLOUR_SEEDS, face_samples.any_colour_samples,
                       any_colour_tray),
        "smoky": (face_samples.SMOKY_SEEDS, face_samples.smoky_samples, smoky_tray),
    }[kind]
    seeds = range(seeds.start, seeds.start + 3)
    samples = cut(seeds)
    dice = []
    for seed in seeds:
        try:
            dice += render_tray(draw(np.random.default_rng(seed)), seed=seed).truth
        except ValueError:  # a tray whose dice do not fit is skipped, as in training
            continue
    assert {s.group for s in samples} == {kind}
    assert sorted(s.label for s in samples if s.label) == sorted(
        t.value for t in dice if not t.cocked)


def test_tower_trays_hold_a_few_small_dice_of_one_set_every_kind_as_often() -> None:
    from vision.lab.face_samples import TOWER_SEEDS, tower_samples
    from vision.lab.render import VARIED_DICE, set_of, tower_tray
    from vision.lab.render_varied import TOWER_SIDE

    kinds = []
    for seed in TOWER_SEEDS[:400]:
        try:
            spec = tower_tray(np.random.default_rng(seed))
        except ValueError:  # a cocked die that did not fit: skipped as varied trays are
            continue
        assert 2 <= len(spec.dice) <= 5
        assert len({(d.body_bgr, d.pip_bgr) for d in spec.dice}) == 1
        assert all(TOWER_SIDE[0] * 0.97 <= d.side <= TOWER_SIDE[1] * 1.03 for d in spec.dice)
        kinds.append(VARIED_DICE[set_of(spec.dice[0])].kind)
    shares = np.bincount(np.unique(kinds, return_inverse=True)[1]) / len(kinds)
    assert len(shares) == 5 and 0.14 < shares.min() <= shares.max() < 0.26  # evenly: 0.2 each
    samples = tower_samples(TOWER_SEEDS[:3])
    assert samples and all(s.group == "tower" for s in samples) and any(s.label for s in samples)


def test_faint_samples_are_dice_with_pips_barely_off_the_body_or_overexposed() -> None:
    from vision.lab.face_samples import FAINT_SEEDS, faint_samples

    seeds = range(FAINT_SEEDS.start, FAINT_SEEDS.start + 4)
    samples = faint_samples(seeds)
    assert samples and all(s.group == "faint" and 0 <= s.label <= 6 for s in samples)
    assert any(s.label for s in samples)
    again = faint_samples(seeds)
    assert all(np.array_equal(a.crop, b.crop) and a.label == b.label
               for a, b in zip(samples, again, strict=True))
    # By turns: dark dice whose pips are a few levels off the body, white dice overexposed.
    first, second = faint_samples(seeds[:1]), faint_samples(seeds[1:2])
    assert np.median(first[0].crop) < 150 < np.median(second[0].crop)


def test_the_lean_checks_varied_trays_hold_leaning_dice() -> None:
    from vision.lab.lean_net_train import VARIED_SEEDS, rendered_samples, varied_spec

    samples = rendered_samples(range(VARIED_SEEDS.start, VARIED_SEEDS.start + 12),
                               draw=varied_spec)
    leaning = sum(s.label for s in samples)
    assert 0 < leaning < len(samples)


@pytest.mark.parametrize(("script", "option", "seeds"), [
    ("face_net_train", "--varied", "VARIED_SEEDS"), ("lean_net_train", "--varied", "VARIED_SEEDS"),
    ("face_net_train", "--faint", "FAINT_SEEDS"), ("face_net_train", "--cloths", "CLOTH_SEEDS"),
    ("face_net_train", "--tower", "TOWER_SEEDS"), ("lean_net_train", "--tower", "TOWER_SEEDS"),
    ("face_net_train", "--any-colour", "ANY_COLOUR_SEEDS"),
    ("face_net_train", "--print", "PRINT_SEEDS")])
def test_the_rendered_trays_are_counted_and_bounded(script: str, option: str, seeds: str,
                                                    capsys) -> None:
    module = importlib.import_module(f"vision.lab.{script}")
    most = len(getattr(module, seeds))
    for wrong in ("-1", str(most + 1)):
        with pytest.raises(SystemExit) as stop:
            module.main([option, wrong, "--epochs", "1"])
        assert stop.value.code == 2
        assert f"{option}: 0 to {most}" in capsys.readouterr().err


def test_the_faint_pips_levels_are_checked(capsys) -> None:
    from vision.lab import face_net_train

    for wrong in (["20", "6"], ["-1", "6"], ["6", "300"]):
        with pytest.raises(SystemExit) as stop:
            face_net_train.main(["--faint-levels", *wrong, "--epochs", "1"])
        assert stop.value.code == 2
        assert "--faint-levels: LOW and HIGH within 0..255" in capsys.readouterr().err


def test_the_lean_checks_tower_throws_each_hold_a_die_leaning_on_another() -> None:
    from vision.lab.lean_net_train import TOWER_SEEDS, rendered_samples, tower_spec

    specs = [tower_spec(seed) for seed in TOWER_SEEDS[:20]]
    drawn = [s for s in specs if s is not None]
    assert len(drawn) >= 8
    assert all(2 <= len(s.dice) <= 5 and max(d.side for d in s.dice) <= 52 for s in drawn)
    samples = rendered_samples(TOWER_SEEDS[:20], draw=tower_spec)
    assert len(samples) == sum(len(s.dice) for s in drawn)
    assert sum(s.label for s in samples) >= len(drawn)  # at least the die on another


def test_cut_samples_are_kept_for_the_same_options_and_cut_anew_for_others(
        tmp_path, monkeypatch) -> None:
    from vision.lab import face_net_train
    from vision.lab.face_samples import Sample

    cuts = []

    def collect(args, readers):
        cuts.append(args.varied)
        return [Sample(np.full((8, 8, 3), args.varied, np.uint8), 3.0, 1, "rendered")]

    monkeypatch.setattr(face_net_train, "collect", collect)
    parser = net_training.parser("x", "x", tmp_path / "m.onnx", 1)
    net_training.add_networks(parser, "finder")
    for name, default in (("--varied", 1), ("--tower", 0), ("--any-colour", 0),
                          ("--any-colour-marbled", 0.3), ("--smoky", 0), ("--faint", 0),
                          ("--print", 0), ("--cloths", 0)):
        parser.add_argument(name, type=type(default), default=default)
    parser.add_argument("--faint-levels", type=float, nargs=2, default=(6.0, 20.0))
    parser.add_argument("--dots", default=True)
    kept = tmp_path / "samples.pkl"
    first = face_net_train.cached_samples(kept, parser.parse_args([]), None)
    again = face_net_train.cached_samples(kept, parser.parse_args([]), None)
    assert cuts == [1] and np.array_equal(first[0].crop, again[0].crop)
    other = face_net_train.cached_samples(kept, parser.parse_args(["--varied", "2"]), None)
    assert cuts == [1, 2] and other[0].crop[0, 0, 0] == 2


def test_a_slanted_patch_squeezes_one_direction_and_its_pips_follow() -> None:
    from vision.lab.face_net_train import augmented, slanted
    from vision.lab.face_samples import VARIED_SEEDS, varied_samples

    # A squeeze of 0.6 along x about the patch's centre: x distances shrink, y ones stay.
    forward = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    squeezed = slanted(forward, 72, 0.6, 0.0)
    c = np.array([36.0, 36.0])
    for point, expected in (((46.0, 36.0), (42.0, 36.0)), ((36.0, 26.0), (36.0, 26.0)),
                            ((36.0, 36.0), (36.0, 36.0))):
        got = squeezed[:, :2] @ np.array(point) + squeezed[:, 2]
        assert np.allclose(got, expected), (point, got)
    # Along 90 degrees, it is y that shrinks.
    across = slanted(forward, 72, 0.6, 90.0)
    assert np.allclose(across[:, :2] @ (c + np.array([0, 10])) + across[:, 2],
                       c + np.array([0, 6]))
    # In an augmented patch, the pips it reports still lie on the die's pips, slanted or not.
    sample = next(s for s in varied_samples(range(VARIED_SEEDS.start, VARIED_SEEDS.start + 3))
                  if s.label == 6)
    for slant in (0.0, 0.4):
        for seed in range(6):
            patch, pips = augmented(sample, np.random.default_rng(seed), slant=slant)
            grey = cv2.GaussianBlur(cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY), (0, 0), 1.0)
            own = sorted(pips, key=lambda p: np.linalg.norm(p - c))[:6]  # the die's, in the middle
            assert all(3 <= x < 69 and 3 <= y < 69 for x, y in own)
            at = np.array([grey[round(y), round(x)] for x, y in own], float)
            # The six pips of one face look alike: all far darker or all far lighter than
            # the face's middle (where a six has no pip).
            middle = float(grey[36, 36])
            assert np.all(np.abs(at - middle) > 20) and (np.all(at < middle)
                                                         or np.all(at > middle)), (slant, seed)
