"""The tower's configuration file: the shipped example loads, and every mistake is one line
naming the file and the key."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from typing import Any

import pytest

from firmware_host.controller.config import (
    EXAMPLE_CONFIG,
    ConfigError,
    TowerConfig,
    default_journal,
    load_config,
)


def write(tmp_path: Path, text: str, name: str = "tower.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error(path: Path) -> str:
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    message = str(exc.value)
    assert "\n" not in message, "a configuration error is one line"
    assert str(path) in message, "the message names the file"
    return message


def test_the_shipped_example_loads_as_it_is() -> None:
    config = load_config(EXAMPLE_CONFIG)
    assert config.source == EXAMPLE_CONFIG
    assert config.camera == "simulated"
    assert config.fps == 15.0
    assert config.pinmap is None  # "simulated": mock pins
    assert config.profile is None
    assert (config.preset, config.players) == ("tim-11", ["Ana", "Ben", "Cleo"])
    assert (config.host, config.port, config.pin, config.lang) == ("0.0.0.0", 8000, None, "fr")
    assert config.max_images_mb == 200.0
    assert (config.hold, config.agree) == (0.4, 2)
    assert config.journal == default_journal()


def test_an_empty_file_is_every_default(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, ""))
    defaults = TowerConfig(source=tmp_path / "tower.toml")
    assert config == defaults


def test_every_key_is_read(tmp_path: Path) -> None:
    path = write(tmp_path, """
[camera]
source = "usb:1"
fps = 30
[tower]
pinmap = "pins/pinmap.toml"
profile = "/etc/dicetower/profile.json"
[game]
preset = "4d"
players = ["Zoe", "Yann"]
knobs = { target = 50, fifth_die = true }
[scoreboard]
host = "127.0.0.1"
port = 8080
pin = "4821"
lang = "en"
[journal]
path = "data/journal.sqlite3"
max_images_mb = 12.5
[reading]
hold = 0.25
agree = 3
""")
    config = load_config(path)
    assert config.camera == "usb:1" and config.fps == 30.0
    assert config.pinmap == tmp_path / "pins" / "pinmap.toml"
    assert config.profile == Path("/etc/dicetower/profile.json")
    assert config.preset == "4d" and config.players == ["Zoe", "Yann"]
    assert config.knobs == {"target": 50, "fifth_die": True}
    assert (config.host, config.port, config.pin, config.lang) == ("127.0.0.1", 8080, "4821",
                                                                    "en")
    assert config.journal == tmp_path / "data" / "journal.sqlite3"
    assert config.max_images_mb == 12.5
    assert (config.hold, config.agree) == (0.25, 3)


def test_relative_paths_are_taken_from_the_files_folder(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    tower = tmp_path / "tower"
    tower.mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    write(tower, """
[camera]
source = "folder:frames"
[tower]
pinmap = "pinmap.toml"
profile = "profile.json"
[journal]
path = "journal.sqlite3"
""")
    config = load_config(Path("..") / "tower" / "tower.toml")

    def where(path: Path | str) -> Path:
        return (Path.cwd() / path).resolve()

    assert where(config.pinmap) == tower / "pinmap.toml"
    assert where(config.profile) == tower / "profile.json"
    assert where(config.journal) == tower / "journal.sqlite3"
    kind, _, folder = config.camera.partition(":")
    assert kind == "folder" and where(folder) == tower / "frames"
    video = load_config(write(tower, '[camera]\nsource = "file:session.avi"\n', "v.toml"))
    assert video.camera == f"file:{tower / 'session.avi'}"
    absolute = load_config(write(tower, '[camera]\nsource = "folder:/srv/frames"\n', "a.toml"))
    assert absolute.camera == "folder:/srv/frames"
    home = load_config(write(tower, '[journal]\npath = "~/j.sqlite3"\n', "h.toml"))
    assert home.journal == Path("~/j.sqlite3").expanduser()


def test_a_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "tower.toml"
    path.write_bytes("\ufeff[scoreboard]\nport = 8001\n".encode())
    assert load_config(path).port == 8001


def test_missing_file_and_folder(tmp_path: Path) -> None:
    message = error(tmp_path / "nope.toml")
    assert "no such file" in message and EXAMPLE_CONFIG.name in message
    assert "is a folder" in error(tmp_path)


def test_a_file_that_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "tower.toml"
    path.write_bytes(b"\xff\xfe\x00garbage\x80")
    assert "cannot read it" in error(path)


def test_bad_toml_names_the_line(tmp_path: Path) -> None:
    message = error(write(tmp_path, "[camera]\nsource = usb:0\n"))
    assert "not valid TOML" in message and "line 2" in message


@pytest.mark.parametrize("text, words", [
    ("[kamera]\nsource = 'usb:0'\n", ["unknown table [kamera]", "[camera]", "[reading]"]),
    ("camera = 'usb:0'\n", ["'camera' must be a table"]),
    ("[camera]\nsorce = 'usb:0'\n", ["unknown key 'sorce' in [camera]", "source, fps"]),
    ("[reading]\nhold = '0.4'\n", ["[reading] hold must be whole number or number", "'0.4'"]),
    ("[reading]\nagree = 2.5\n", ["[reading] agree must be whole number", "2.5"]),
    ("[scoreboard]\nport = true\n", ["[scoreboard] port must be whole number", "True"]),
    ("[camera]\nfps = true\n", ["[camera] fps must be", "True"]),
    ("[game]\nplayers = 'Ana, Ben'\n", ["[game] players must be list", "'Ana, Ben'"]),
    ("[game]\nknobs = 3\n", ["[game] knobs must be table", "3"]),
    ("[game]\nplayers = ['Ana', 2]\n", ["[game] players must be a list of names in quotes"]),
    ("[scoreboard]\npin = 4821\n", ["[scoreboard] pin must be text", "4821"]),
])
def test_wrong_tables_keys_and_types(tmp_path: Path, text: str, words: list[str]) -> None:
    message = error(write(tmp_path, text))
    for word in words:
        assert word in message


@pytest.mark.parametrize("table, key, value, bounds", [
    ("camera", "fps", "0", "from 1 to 120"),
    ("camera", "fps", "500", "from 1 to 120"),
    ("camera", "fps", "nan", "from 1 to 120"),
    ("scoreboard", "port", "0", "from 1 to 65535"),
    ("scoreboard", "port", "70000", "from 1 to 65535"),
    ("journal", "max_images_mb", "-1", "from 0 to 100000"),
    ("reading", "hold", "0.01", "from 0.05 to 5"),
    ("reading", "hold", "inf", "from 0.05 to 5"),
    ("reading", "agree", "0", "from 1 to 10"),
    ("reading", "agree", "11", "from 1 to 10"),
])
def test_values_out_of_range(tmp_path: Path, table: str, key: str, value: str,
                             bounds: str) -> None:
    message = error(write(tmp_path, f"[{table}]\n{key} = {value}\n"))
    assert f"[{table}] {key} must be {bounds}" in message


def test_range_edges_are_accepted(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "[camera]\nfps = 120\n[reading]\nhold = 0.05\n"
                                         "agree = 1\n[journal]\nmax_images_mb = 0\n"))
    assert (config.fps, config.hold, config.agree, config.max_images_mb) == (120, 0.05, 1, 0)


@pytest.mark.parametrize("source", ["webcam", "usb:zero", "folder:", "ftp://x/y"])
def test_bad_camera_spec(tmp_path: Path, source: str) -> None:
    message = error(write(tmp_path, f'[camera]\nsource = "{source}"\n'))
    assert f"[camera] source = {source!r} is not a camera" in message
    assert "usb:N" in message  # says what it accepts


def test_camera_that_cannot_be_used_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    real = importlib.import_module

    def no_picamera(name: str, *args: Any) -> Any:
        if name == "firmware_host.camera.picamera":
            raise ModuleNotFoundError("No module named 'picamera2'")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", no_picamera)
    message = error(write(tmp_path, '[camera]\nsource = "picamera2"\n'))
    assert "[camera] source" in message and "not available" in message


@pytest.mark.parametrize("game, words", [
    ('preset = "tim-12"', ["[game]", "unknown preset 'tim-12'", "tim-11"]),
    ('players = ["Ana"]', ["[game]", "2 to 10 players, not 1"]),
    ('players = ["Ana", "Ana"]', ["[game]", "names must differ"]),
    ('preset = "4d"', ["[game]", "exactly 2 players, not 3"]),
    ('knobs = { pot = 0 }', ["[game]", "knob 'pot' cannot be 0"]),
    ('knobs = { target = 50 }', ["[game]", "unknown knob 'target' for a 421 game"]),
])
def test_bad_game_through_the_rules_engine(tmp_path: Path, game: str, words: list[str]) -> None:
    message = error(write(tmp_path, f"[game]\n{game}\n"))
    for word in words:
        assert word in message


@pytest.mark.parametrize("pin", ["482", "48a1", "", "\u0664\u0668\u0662\u0661"])
def test_bad_pin(tmp_path: Path, pin: str) -> None:
    message = error(write(tmp_path, f'[scoreboard]\npin = "{pin}"\n'))
    assert "[scoreboard] pin must be at least 4 digits" in message


def test_bad_lang(tmp_path: Path) -> None:
    message = error(write(tmp_path, '[scoreboard]\nlang = "de"\n'))
    assert "[scoreboard] lang must be one of fr, en, not 'de'" in message


def test_simulated_pinmap_and_a_real_one(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, '[tower]\npinmap = "simulated"\n')).pinmap is None
    real = load_config(write(tmp_path, '[tower]\npinmap = "/boot/pinmap.toml"\n'))
    assert real.pinmap == Path("/boot/pinmap.toml")


@pytest.mark.parametrize("odds", ["public", "admin-only"])
def test_the_scoreboard_of_a_started_tower_shows_the_odds_as_configured(
    tmp_path: Path, odds: str
) -> None:
    from firmware_host.commands.camera_sources import offer_simulated_camera
    from firmware_host.controller.assembly import open_tower_parts

    offer_simulated_camera()  # as `dicetower run` does: the default camera is the simulated one
    config = load_config(write(tmp_path, f'[scoreboard]\nodds = "{odds}"\n'
                                        '[journal]\npath = "tower.sqlite3"\n'))
    parts = open_tower_parts(dataclasses.replace(config, port=0))  # any free port
    try:
        assert parts.app.config["SCOREBOARD_ODDS"] == odds
    finally:
        parts.close()


def test_a_started_tower_plays_in_the_light_its_profile_was_calibrated_in(
    tmp_path: Path,
) -> None:
    import json

    from firmware_host.commands.camera_sources import offer_simulated_camera
    from firmware_host.controller.assembly import open_tower_parts
    from vision import Profile

    offer_simulated_camera()  # as `dicetower run` does: the default camera is the simulated one
    Profile(die_side=40.0).save(tmp_path / "red.json")
    light = {"ring": 0.55, "ExposureTime": 12000.0, "AnalogueGain": 2.0}
    (tmp_path / "red.calibration.json").write_text(json.dumps({"light": light}), "utf-8")
    config = load_config(write(tmp_path, '[tower]\nprofile = "red.json"\n'
                                         '[journal]\npath = "tower.sqlite3"\n'))
    parts = open_tower_parts(dataclasses.replace(config, port=0))
    try:
        assert parts.tower.ring.level == pytest.approx(0.55)
        controls = parts.camera.controls()
        assert (controls["ExposureTime"], controls["AnalogueGain"]) == (12000, 2.0)
    finally:
        parts.close()
