"""The pin map: the shipped example loads, and every kind of mistake is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import pinmap_text

from hardware.pinmap import (
    EXAMPLE_PINMAP,
    TIMING_BOUNDS,
    PinMapError,
    ServoConfig,
    Timing,
    load_pinmap,
    parse_pinmap,
)

# Two plain-LED seats, each with its own servo and beam: the smallest valid per-seat tower.
PER_SEAT = pinmap_text([(17, 12, 5), (27, 13, 6)], ring=18, buttons=(2, 3, 4))


def problems(text: str) -> list[str]:
    with pytest.raises(PinMapError) as exc:
        parse_pinmap(text, source="pinmap.toml")
    return exc.value.problems


def test_example_pinmap_loads_clean() -> None:
    pinmap = load_pinmap(EXAMPLE_PINMAP)
    assert pinmap.seat_count == 4
    assert pinmap.dispenser.layout == "pot"
    assert [s.light.kind for s in pinmap.seats] == ["rgb"] * 4
    assert pinmap.warnings == ()
    pins = [bcm for bcm, _, _ in pinmap.pin_uses()]
    assert len(pins) == len(set(pins)) == 23


def test_per_seat_pinmap_defaults() -> None:
    pinmap = parse_pinmap(PER_SEAT)
    assert [(s.servo, s.beam) for s in pinmap.seats] == [(12, 5), (13, 6)]
    assert pinmap.status is None
    assert pinmap.effects.buzzer is None
    assert pinmap.ring.level == 0.8
    assert pinmap.timing.long_press == 1.5


def test_duplicate_pin_names_both_keys() -> None:
    text = PER_SEAT.replace("led = 27", "led = 3")
    assert problems(text) == ["pinmap.toml: [seats.2].led: pin 3 is already used by [buttons].undo"]


def test_message_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "pinmap.toml"
    path.write_text(PER_SEAT.replace("pin = 18", "pin = 28"), encoding="utf-8")
    with pytest.raises(PinMapError) as exc:
        load_pinmap(path)
    assert str(exc.value) == f"{path}: [ring].pin: pin 28 is not a BCM GPIO number (0..27)"


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(PinMapError, match=r"nowhere\.toml: file not found"):
        load_pinmap(tmp_path / "nowhere.toml")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("pin = 18", 'pin = "18"',
         "[ring].pin: must be a BCM pin number (integer), not a string"),
        ("pin = 18", "pin = true", "[ring].pin: must be a BCM pin number (integer), not a boolean"),
        ("pin = 18", "pin = 18.0",
         "[ring].pin: must be a BCM pin number (integer), not a decimal number"),
        ("pin = 18", "pin = -1", "[ring].pin: pin -1 is not a BCM GPIO number (0..27)"),
        ("undo = 3\n", "", "[buttons].undo: missing field"),
        ("undo = 3\n", "undo = 3\nreset = 7\n",
         "[buttons].reset: unknown button (expected one of: new_game, stop, undo)"),
        ("[ring]\npin = 18", "[laser]\npin = 18",
         "[laser]: unknown device table (expected one of: seats, status, ring, effects, "
         "buttons, dispenser, servo, timing)"),
        ("[ring]\npin = 18", "[laser]\npin = 18", "[ring]: missing table"),
        ("beam = 5\n", "beam = 5\ncolour = 1\n", "[seats.1].colour: unknown key"),
        ("led = 17", "led = 17\nred = 20", "[seats.1]: give either red, green and blue"),
        ("led = 17", "red = 20\ngreen = 21", "[seats.1].blue: missing field"),
        ("led = 17\n", "", "[seats.1].led: missing field (or red, green and blue"),
        ('layout = "per_seat"', 'layout = "conveyor"',
         "[dispenser].layout: must be one of per_seat, pot, not 'conveyor'"),
        ('layout = "per_seat"', "", "[dispenser].layout: missing field"),
        ("servo = 13\n", "", "[seats.2].servo: missing field"),
        ("[seats.2]", "[seats.3]", "[seats]: seats must be numbered 1..N without gaps, found 1, 3"),
        ("[seats.2]", "[seats.11]", "[seats.11]: seat tables are numbered 1..10"),
        ('layout = "per_seat"', 'layout = "per_seat"\npusher = 19',
         '[dispenser].pusher: only used with layout = "pot"'),
        ('layout = "per_seat"', 'layout = "per_seat"\npush_angle = -18',
         "[dispenser].push_angle: must differ from rest_angle"),
        ('layout = "per_seat"', 'layout = "per_seat"\npush_angle = 120',
         "[dispenser].push_angle: must be between -90.0 and 90.0, not 120"),
        ("[ring]", "[timing]\npush_time = 0\n\n[ring]",
         "[timing].push_time: must be between 0.05 and 5 seconds, not 0"),
        ("[ring]", "[timing]\npush_time = 1e9\n\n[ring]",
         "[timing].push_time: must be between 0.05 and 5 seconds, not 1e+09"),
        ("[ring]", "[timing]\nbeam_window = nan\n\n[ring]",
         "[timing].beam_window: must be a finite number, not nan"),
        ("[ring]", "[servo]\nframe_ms = inf\n\n[ring]",
         "[servo].frame_ms: must be a finite number, not inf"),
        ("[ring]", "[timing]\nlong_press = 'long'\n\n[ring]",
         "[timing].long_press: must be a number, not a string"),
        ("[ring]", "[timing]\nstroke = 0.1\n\n[ring]", "[timing].stroke: unknown key"),
        ("[ring]", "[servo]\nmax_pulse_ms = 25\n\n[ring]",
         "[servo]: pulse widths must satisfy min_pulse_ms < max_pulse_ms < frame_ms"),
        ("pin = 18", "pin = 18\nlevel = 1.5", "[ring].level: must be between 0 and 1, not 1.5"),
        ("[ring]", "[status]\nled = 17\n\n[ring]",
         "[status].led: pin 17 is already used by [seats.1].led"),
        ("[ring]", "[effects]\nbuzzer = 12\n\n[ring]",
         "[effects].buzzer: pin 12 is already used by [seats.1].servo"),
    ],
)
def test_each_mistake_is_refused(old: str, new: str, expected: str) -> None:
    assert old in PER_SEAT
    found = problems(PER_SEAT.replace(old, new, 1))
    assert any(p.startswith(f"pinmap.toml: {expected}") for p in found), found


def test_device_must_be_a_table() -> None:
    text = "buttons = 3\n" + PER_SEAT.replace("[buttons]\nstop = 2\nundo = 3\nnew_game = 4\n", "")
    assert problems(text) == ["pinmap.toml: [buttons]: must be a table, not an integer"]


def test_seat_count_limits() -> None:
    one_seat = PER_SEAT.split("[seats.2]")[0] + "[ring]" + PER_SEAT.split("[ring]")[1]
    assert "pinmap.toml: [seats]: a tower needs 2 to 10 seats, found 1" in problems(one_seat)


def test_pot_layout_needs_chute_angles_in_range() -> None:
    example = EXAMPLE_PINMAP.read_text(encoding="utf-8")
    missing = example.replace("chute_angle = -18\n", "")
    assert "pinmap.toml: [seats.2].chute_angle: missing field" in problems(missing)
    wide = example.replace("chute_angle = 54", "chute_angle = 95")
    assert any("[seats.4].chute_angle: must be between -90.0 and 90.0" in p
               for p in problems(wide))
    with_servo = example.replace("chute_angle = 54", "chute_angle = 54\nservo = 18")
    assert any("[seats.4].servo: only used with [dispenser].layout = \"per_seat\"" in p
               for p in problems(with_servo))


def test_all_problems_are_reported_together() -> None:
    text = PER_SEAT.replace("pin = 18", "pin = 99").replace("undo = 3\n", "")
    found = problems(text)
    assert len(found) == 2
    assert str(PinMapError(found)).count("pinmap.toml:") == 2


def test_invalid_toml_is_named() -> None:
    assert problems("[seats.1\nled = 1")[0].startswith("pinmap.toml: not valid TOML:")


def test_servo_off_hardware_pwm_is_a_warning() -> None:
    pinmap = parse_pinmap(PER_SEAT.replace("servo = 13", "servo = 20"))
    assert pinmap.warnings == (
        "pinmap.toml: [seats.2].servo: servo on GPIO 20, not a hardware-PWM pin "
        "(12, 13, 18, 19): it works with software-timed pulses but may jitter more",)


def test_angle_off_the_lgpio_steps_is_a_warning() -> None:
    example = EXAMPLE_PINMAP.read_text(encoding="utf-8")
    pinmap = parse_pinmap(example.replace("chute_angle = 54", "chute_angle = 60"))
    assert len(pinmap.warnings) == 1
    assert pinmap.warnings[0].startswith(
        "pinmap.toml: [seats.4].chute_angle: 60° will be driven as 54° on a Pi")
    finer = example.replace("chute_angle = 54", "chute_angle = 60").replace(
        "frame_ms = 20.0", "frame_ms = 3.0")
    assert parse_pinmap(finer).warnings == ()  # 1 % of 3 ms is 0.03 ms: 5.4 degrees


def test_rest_and_push_on_one_step_is_a_warning() -> None:
    pinmap = parse_pinmap(PER_SEAT.replace('"per_seat"', '"per_seat"\nrest_angle = 54\n'
                                           'push_angle = 60'))
    assert any("drives both with the same pulse" in w for w in pinmap.warnings)


def test_servo_duty_follows_calibration() -> None:
    servo = ServoConfig(min_angle=0, max_angle=180, min_pulse_ms=0.5, max_pulse_ms=2.5)
    assert servo.duty_for(0) == pytest.approx(0.5 / 20)
    assert servo.duty_for(90) == pytest.approx(1.5 / 20)
    assert servo.duty_for(180) == pytest.approx(2.5 / 20)


def test_seat_lookup() -> None:
    pinmap = parse_pinmap(PER_SEAT)
    assert pinmap.seat(2).servo == 13
    with pytest.raises(ValueError, match=r"no seat 3: this tower has seats 1\.\.2"):
        pinmap.seat(3)


def test_id_eeprom_pins_are_a_warning() -> None:
    pinmap = parse_pinmap(PER_SEAT.replace("beam = 6", "beam = 0"))
    assert pinmap.seat(2).beam == 0
    assert len(pinmap.warnings) == 1
    assert pinmap.warnings[0].startswith("pinmap.toml: [seats.2].beam: GPIO 0 is kept for a HAT")


def test_every_timing_is_read_from_the_file() -> None:
    # A value inside each range, and unlike the default, for every timing.
    chosen = {name: low + (high - low) * (i + 1) / 20
              for i, (name, (low, high)) in enumerate(TIMING_BOUNDS.items())}
    assert all(getattr(Timing(), name) != value for name, value in chosen.items())
    text = PER_SEAT + "\n[timing]\n" + "\n".join(f"{k} = {v!r}" for k, v in chosen.items())
    timing = parse_pinmap(text).timing
    for name in Timing.__dataclass_fields__:
        assert getattr(timing, name) == pytest.approx(chosen[name])


def test_every_timing_has_bounds_and_each_is_enforced() -> None:
    assert set(TIMING_BOUNDS) == set(Timing.__dataclass_fields__)
    for name, (low, high) in TIMING_BOUNDS.items():
        assert low <= getattr(Timing(), name) <= high  # the defaults are in range
        for edge in (low, high):
            timing = parse_pinmap(f"{PER_SEAT}\n[timing]\n{name} = {edge!r}\n").timing
            assert getattr(timing, name) == edge
        for outside in (low - 0.001, high * 2 + 1):
            found = problems(f"{PER_SEAT}\n[timing]\n{name} = {outside!r}\n")
            assert found == [f"pinmap.toml: [timing].{name}: must be between {low:g} and "
                             f"{high:g} seconds, not {outside:g}"]


def test_the_beam_debounce_can_be_turned_off() -> None:
    assert parse_pinmap(PER_SEAT + "\n[timing]\nbeam_bounce = 0\n").timing.beam_bounce == 0


def test_a_refused_value_and_a_clash_elsewhere_are_told_together_in_file_order() -> None:
    text = (PER_SEAT.replace("beam = 6", 'beam = "6"').replace("servo = 13", "servo = 12")
            .replace("new_game = 4", "new_game = 4\nbell = 9"))
    assert problems(text) == [
        "pinmap.toml: [seats.2].beam: must be a BCM pin number (integer), not a string",
        "pinmap.toml: [seats.2].servo: pin 12 is already used by [seats.1].servo",
        "pinmap.toml: [buttons].bell: unknown button (expected one of: new_game, stop, undo)",
    ]
