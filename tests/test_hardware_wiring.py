"""The wiring table: generated from the example pin map, and kept up to date in the guide."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory

from hardware.pinmap import EXAMPLE_PINMAP, load_pinmap
from hardware.wiring import (
    BEGIN,
    DOCS,
    END,
    HEADER_PIN,
    header_pins,
    main,
    wiring_rows,
    with_table,
)


def test_guide_table_matches_the_example_pinmap() -> None:
    assert main(["--check", str(DOCS)]) == 0, (
        "docs/hardware.md is out of date: run `python -m hardware.wiring --write "
        "docs/hardware.md`")


def test_header_pins_match_gpiozero_board_info() -> None:
    # gpiozero's own description of the 40-pin header, as the mock factory reports it.
    header = MockFactory().board_info.headers["J8"]
    expected = {int(info.name[4:]): number for number, info in header.pins.items()
                if info.name.startswith("GPIO")}
    assert expected == HEADER_PIN == header_pins()


def test_header_pins_cover_every_gpio_on_the_40_pin_header() -> None:
    assert sorted(HEADER_PIN) == list(range(28))
    assert len(set(HEADER_PIN.values())) == 28 and set(HEADER_PIN.values()) <= set(range(1, 41))
    # A few pins every builder can check against the board's silkscreen.
    assert (HEADER_PIN[2], HEADER_PIN[17], HEADER_PIN[21]) == (3, 11, 40)
    # The Pi 5 (d04170) and the Pi 3 B (a02082) share the Pi 4's header.
    assert header_pins(0xD04170) == header_pins(0xA02082) == HEADER_PIN


def test_rows_cover_every_pin_once_in_header_order() -> None:
    pinmap = load_pinmap(EXAMPLE_PINMAP)
    rows = wiring_rows(pinmap)
    assert len(rows) == len(pinmap.pin_uses()) == len({bcm for _, bcm, _, _ in rows})
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)
    assert (32, 12, "[dispenser].pusher", "pot pusher servo (signal), hardware PWM") in rows
    assert (11, 17, "[seats.1].red", "seat 1 LED red") in rows


def test_stale_guide_is_caught_and_rewritten(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    guide = tmp_path / "hardware.md"
    guide.write_text(f"# Guide\n\n{BEGIN}\n| old |\n{END}\n\nAfter.\n", encoding="utf-8")
    assert main(["--check", str(guide)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert main(["--write", str(guide)]) == 0
    text = guide.read_text(encoding="utf-8")
    assert "| old |" not in text
    assert text.startswith("# Guide\n\n") and text.endswith("\n\nAfter.\n")
    assert "`[buttons].stop`" in text
    assert main(["--check", str(guide)]) == 0


def test_guide_without_markers_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="markers are missing"):
        with_table("no table here", "| x |")
    guide = tmp_path / "hardware.md"
    guide.write_text("no table here", encoding="utf-8")
    assert main(["--check", str(guide)]) == 2


def test_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| header pin | GPIO (BCM) | pin map key | connects to |")
    assert out.count("\n") == 2 + len(load_pinmap(EXAMPLE_PINMAP).pin_uses())
