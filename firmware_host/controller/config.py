"""The tower's configuration file (`dicetower run --config tower.toml`), checked at start-up.

Tables, keys, types and ranges are declared once as pydantic models (`_File`): pydantic
refuses unknown keys and wrong types without converting anything, and its first error is put
into one line naming the file, the key and the fix (`ConfigError`); what it cannot say alone
(a camera spec, a PIN, the game the rules engine accepts) is checked after it. Relative paths
are taken from the file's folder, so a tower folder can be moved whole. The commented example,
`tower.example.toml`, ships beside this module; `load_config` reads it as it is.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from firmware_host.camera import SPEC_HELP, CameraError, check_spec
from firmware_host.catalogue import LANGUAGES
from firmware_host.hub.journal import default_journal
from firmware_host.league.broker import BrokerAddress
from firmware_host.league.messages import check_name
from firmware_host.rules import RuleError, new_game

EXAMPLE_CONFIG = Path(__file__).with_name("tower.example.toml")
# Who sees the odds advice (firmware_host.scoreboard.odds.ODDS_MODES, named here so that the
# configuration is read without loading the scoreboard).
ODDS_MODES = ("public", "admin-only")

class _Table(BaseModel):
    """One table of the file: unknown keys refused, no value converted to another type
    (a whole number may stand for a number, as TOML writes 30 for 30.0)."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class _Camera(_Table):
    source: str | None = None
    fps: float | None = Field(None, ge=1, le=120)
    size: list[Any] | None = None
    lock: bool | None = None
    exposure_us: float | None = Field(None, ge=10, le=1_000_000)
    gain: float | None = Field(None, ge=1, le=64)
    colour_gains: list[Any] | None = None
    lens_position: float | None = Field(None, ge=0, le=32)  # 0: focused at infinity


class _Tower(_Table):
    pinmap: str | None = None
    profile: str | None = None


class _Game(_Table):
    preset: str | None = None
    players: list[Any] | None = None
    knobs: dict[str, Any] | None = None


class _Scoreboard(_Table):
    host: str | None = None
    port: int | None = Field(None, ge=1, le=65535)
    pin: str | None = None
    lang: str | None = None
    odds: str | None = None


class _Journal(_Table):
    path: str | None = None
    max_images_mb: float | None = Field(None, ge=0, le=100_000)  # 0: keep no images


class _Reading(_Table):
    hold: float | None = Field(None, ge=0.05, le=5.0)
    agree: int | None = Field(None, ge=1, le=10)


class _League(_Table):
    broker: str | None = None  # mqtt://HOST[:PORT] or mqtts://... (TLS)
    tower: str | None = None  # this tower's name in the league (its topic, its broker user)
    username: str | None = None  # default: the tower's name
    password: str | None = None
    ca_file: str | None = None  # TLS: the CA to trust (default: the system's)
    # The topics' first levels (default dicetower).
    prefix: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$",
                               description="topic levels of letters, digits, - and _",
                               examples=["dicetower"])
    board: str | None = None  # the league board's address, for the players' QR code


class _File(_Table):
    """The whole file: every table it may hold."""

    camera: _Camera = _Camera()
    tower: _Tower = _Tower()
    game: _Game = _Game()
    scoreboard: _Scoreboard = _Scoreboard()
    journal: _Journal = _Journal()
    reading: _Reading = _Reading()
    league: _League = _League()


# How a value of the wrong type is asked for, by pydantic's error type.
WANTED = {"float_type": "whole number or number", "int_type": "whole number",
          "string_type": "text", "bool_type": "true or false", "list_type": "list",
          "dict_type": "table", "model_type": "table", "tuple_type": "list",
          "bytes_type": "text"}
# A number outside a field's range (or not a finite number).
RANGE_ERRORS = ("greater_than_equal", "greater_than", "less_than_equal", "less_than",
                "finite_number")


class ConfigError(ValueError):
    """The configuration cannot be used; the message names the file, the key and the fix."""


@dataclass
class TowerConfig:
    """A checked configuration. ``pinmap`` None means mock pins (a simulated tower)."""

    camera: str = "simulated"
    fps: float = 15.0
    camera_size: tuple[int, int] | None = None  # None: the source's own default
    # Locked picture settings in picamera2's names and units (ExposureTime in µs...).
    camera_controls: dict[str, Any] = field(default_factory=dict)
    camera_lock: bool = True  # measure what is not given at start, then fix it
    pinmap: Path | None = None
    profile: Path | None = None
    preset: str = "tim-11"
    players: list[str] = field(default_factory=lambda: ["Ana", "Ben", "Cleo"])
    knobs: dict[str, Any] = field(default_factory=dict)
    host: str = "0.0.0.0"
    port: int = 8000
    pin: str | None = None
    lang: str = "fr"
    odds: str = "public"  # who sees the odds advice: public, or admin-only (SCOREBOARD_ODDS)
    journal: Path = field(default_factory=default_journal)
    max_images_mb: float = 200.0
    hold: float = 0.4
    agree: int = 2
    source: Path | None = None  # the file it was read from
    # [league]: the broker this tower publishes its games to (None: no league), its name.
    league_broker: BrokerAddress | None = None
    league_tower: str | None = None
    league_prefix: str = "dicetower"
    league_board: str | None = None  # the league board's address: a QR code on the page


def load_config(path: str | Path) -> TowerConfig:
    """Read and check ``path``; `ConfigError` (one line: file, key, fix) when it is wrong."""
    file = Path(path)
    try:
        # utf-8-sig: a file saved by an editor that writes a byte-order mark reads the same.
        text = file.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{file}: no such file (copy {EXAMPLE_CONFIG.name} from "
                          f"{EXAMPLE_CONFIG.parent} and edit it)") from None
    except IsADirectoryError:
        raise ConfigError(f"{file}: is a folder, not a configuration file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read it ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML ({exc}); fix the line it names") from None
    return config_from_dict(data, file)


def config_from_dict(data: dict[str, Any], file: Path) -> TowerConfig:
    """A `TowerConfig` from parsed TOML; relative paths are taken from ``file``'s folder."""
    where = str(file)
    try:
        checked = _File.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_first_error(where, exc, data)) from None
    base = file.parent
    config = TowerConfig(source=file)
    camera = checked.camera
    if camera.source is not None:
        config.camera = _camera_spec(base, camera.source)
        try:
            check_spec(config.camera)  # opens nothing
        except ValueError:
            raise ConfigError(f"{where}: [camera] source = {camera.source!r} is not a "
                              f"camera; use {SPEC_HELP}") from None
        except CameraError as exc:
            raise ConfigError(f"{where}: [camera] source: {exc}") from None
    if camera.fps is not None:
        config.fps = float(camera.fps)
    _camera_settings(where, camera, config)
    tower = checked.tower
    if tower.pinmap is not None:
        config.pinmap = None if tower.pinmap == "simulated" else _path(base, tower.pinmap)
    if tower.profile is not None:
        config.profile = _path(base, tower.profile)
    game = checked.game
    if game.preset is not None:
        config.preset = game.preset
    if game.players is not None:
        if not all(isinstance(n, str) for n in game.players):
            raise ConfigError(f"{where}: [game] players must be a list of names in quotes, "
                              f'e.g. players = ["Ana", "Ben"]')
        config.players = list(game.players)
    if game.knobs is not None:
        config.knobs = dict(game.knobs)
    _check_game(where, config)
    board = checked.scoreboard
    config.host = board.host if board.host is not None else config.host
    if board.port is not None:
        config.port = board.port
    if board.pin is not None:
        pin = board.pin
        if not (pin.isdigit() and pin.isascii() and len(pin) >= 4):
            raise ConfigError(f"{where}: [scoreboard] pin must be at least 4 digits in quotes, "
                              f'e.g. pin = "4821" (or leave it out for a random one)')
        config.pin = pin
    if board.lang is not None:
        if board.lang not in LANGUAGES:
            raise ConfigError(f"{where}: [scoreboard] lang must be one of "
                              f"{', '.join(LANGUAGES)}, not {board.lang!r}")
        config.lang = board.lang
    if board.odds is not None:
        if board.odds not in ODDS_MODES:
            raise ConfigError(f"{where}: [scoreboard] odds must be one of "
                              f"{', '.join(ODDS_MODES)}, not {board.odds!r}")
        config.odds = board.odds
    journal = checked.journal
    if journal.path is not None:
        config.journal = _path(base, journal.path)
    if journal.max_images_mb is not None:
        config.max_images_mb = float(journal.max_images_mb)
    _league(where, base, checked.league, config)
    reading = checked.reading
    if reading.hold is not None:
        config.hold = float(reading.hold)
    if reading.agree is not None:
        config.agree = reading.agree
    return config


def _league(where: str, base: Path, league: _League, config: TowerConfig) -> None:
    if league.broker is None:
        return
    if league.tower is None:
        raise ConfigError(f"{where}: [league] tower is missing: the name of this tower in the "
                          'league, e.g. tower = "bar-du-port-1"')
    try:
        config.league_tower = check_name(league.tower)
        config.league_broker = BrokerAddress.parse(
            league.broker, ca_file=str(_path(base, league.ca_file)) if league.ca_file else None)
    except ValueError as err:
        raise ConfigError(f"{where}: [league] {err}") from None
    if league.username is not None or league.password is not None:
        config.league_broker = replace(config.league_broker,
                                       username=league.username or league.tower,
                                       password=league.password)
    if league.prefix is not None:
        config.league_prefix = league.prefix
    if league.board is not None and not re.fullmatch(r"https?://\S+", league.board):
        raise ConfigError(f"{where}: [league] board must be the league board's address, e.g. "
                          f'board = "http://192.168.1.10:8100/", not {league.board!r}')
    config.league_board = league.board


def _first_error(where: str, exc: ValidationError, data: dict[str, Any],
                 model: type[BaseModel] | None = None) -> str:
    """The first of pydantic's errors as one line: the file, the table and key, the fix.

    Every kind of error gives a line: the usual ones (an unknown table or key, a wrong type,
    a value out of range, not one of the choices, not of the expected form, too short or too
    long, missing) in the file's own words, any other in pydantic's, with the key's example
    when its field declares one (``Field(examples=[...])``). ``model``: the file's model
    (`_File` unless told)."""
    model = model or _File
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"]]
    kind = error["type"]
    if not loc:
        return f"{where}: {_said(error)}"
    table = loc[0]
    tables = model.model_fields
    if len(loc) == 1:
        if kind == "extra_forbidden":
            return (f"{where}: unknown table [{table}]; the tables are "
                    f"{', '.join(f'[{t}]' for t in tables)}")
        if kind == "missing":
            return f"{where}: the table [{table}] is missing"
        return f"{where}: '{table}' must be a table ([{table}]), not a value"
    key = loc[1]
    fields = _fields_of(tables[table].annotation) if table in tables else {}
    if kind == "extra_forbidden" and len(loc) == 2:
        return f"{where}: unknown key '{key}' in [{table}]; known keys: {', '.join(fields)}"
    name = f"[{table}] {key}" + "".join(f"[{part}]" for part in loc[2:])
    field = fields.get(key)
    example = _example(key, field)
    if kind == "missing":
        return f"{where}: {name} is missing{example}"
    # As written in the file, not as pydantic holds it.
    value = _written(data, error["loc"], error.get("input"))
    return f"{where}: {name} must be {_wanted(error, field)}{example}, not {value!r}"


def _wanted(error: Any, field: Any) -> str:
    """What the key must be, for one pydantic error (any kind)."""
    kind, context = error["type"], error.get("ctx") or {}
    if kind in WANTED:
        return WANTED[kind]
    if kind in RANGE_ERRORS:
        low, high = _bounds(field.metadata if field is not None else [], context)
        if low is not None and high is not None:
            return f"from {low:g} to {high:g}"
        if low is not None:
            return f"at least {low:g}"
        if high is not None:
            return f"at most {high:g}"
        return _said(error).removeprefix("input should be ")
    if kind == "literal_error":
        choices = _choices(field) or [str(context.get("expected", ""))]
        return f"one of {', '.join(choices)}"
    if kind == "string_pattern_mismatch":
        if field is not None and field.description:
            return str(field.description)
        return f"text of the form {context.get('pattern', '')!r}"
    if kind in ("too_short", "string_too_short", "too_long", "string_too_long"):
        count = context.get("min_length" if "short" in kind else "max_length")
        unit = "character" if kind.startswith("string") else "item"
        plural = "" if count == 1 else "s"
        return f"{'at least' if 'short' in kind else 'at most'} {count} {unit}{plural}"
    if field is not None and field.description:
        return str(field.description)
    return f"valid ({_said(error)})"


def _said(error: Any) -> str:
    """pydantic's own words for an error, on one line, starting in lower case."""
    message = " ".join(str(error.get("msg", "not valid")).split())
    return message[:1].lower() + message[1:]


def _fields_of(annotation: Any) -> dict[str, Any]:
    """The fields of a table's model (nothing for a value that is not a table)."""
    fields = getattr(annotation, "model_fields", None)
    return dict(fields) if isinstance(fields, dict) else {}


def _example(key: str, field: Any) -> str:
    """``, e.g. key = EXAMPLE`` when the field declares an example, else nothing."""
    examples = getattr(field, "examples", None) if field is not None else None
    if not examples:
        return ""
    return f", e.g. {key} = {json.dumps(examples[0], ensure_ascii=False)}"


def _choices(field: Any) -> list[str]:
    """The values a ``Literal`` field accepts, as written in the file."""
    if field is None:
        return []
    found: list[str] = []
    pending = [field.annotation]
    while pending:
        annotation = pending.pop(0)
        if get_origin(annotation) is Literal:
            found += [str(choice) for choice in get_args(annotation)]
        else:
            pending += list(get_args(annotation))
    return found


def _written(data: Any, loc: tuple[Any, ...], default: Any) -> Any:
    """The value at ``loc`` in the parsed file, or ``default`` when it is not there."""
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return default
    return data


def _bounds(metadata: list[Any], context: dict[str, Any]) -> tuple[float | None, float | None]:
    """A field's inclusive range (``ge``, ``le``) as its `Field` declares it, else as the
    error says; None for a side it does not have."""
    def first(name: str) -> float | None:
        for source in (*metadata, context):
            found = source.get(name) if isinstance(source, dict) else getattr(source, name, None)
            if isinstance(found, (int, float)) and not isinstance(found, bool):
                return float(found)
        return None

    return first("ge"), first("le")


def _camera_settings(where: str, camera: _Camera, config: TowerConfig) -> None:
    """[camera] size, lock and the picture settings it locks."""
    if camera.size is not None:
        size = camera.size
        if not (len(size) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                       and 64 <= v <= 8192 and v % 2 == 0 for v in size)):
            raise ConfigError(f"{where}: [camera] size must be [width, height] in even whole "
                              f"pixels from 64 to 8192, e.g. size = [2304, 1296], not {size!r}")
        config.camera_size = (size[0], size[1])
    if camera.lock is not None:
        config.camera_lock = camera.lock
    controls: dict[str, Any] = {}
    if camera.exposure_us is not None:
        controls["ExposureTime"] = int(camera.exposure_us)
    if camera.gain is not None:
        controls["AnalogueGain"] = float(camera.gain)
    if camera.colour_gains is not None:
        gains = camera.colour_gains
        if not (len(gains) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                        and 0 < v <= 32 for v in gains)):
            raise ConfigError(f"{where}: [camera] colour_gains must be [red, blue] gains from "
                              f"0 to 32, e.g. colour_gains = [1.9, 1.6], not {gains!r}")
        controls["ColourGains"] = (float(gains[0]), float(gains[1]))
    if camera.lens_position is not None:
        controls["LensPosition"] = float(camera.lens_position)
    config.camera_controls = controls


def _check_game(where: str, config: TowerConfig) -> None:
    try:
        new_game(config.preset, list(config.players), dict(config.knobs) or None)
    except RuleError as exc:
        raise ConfigError(f"{where}: [game] {exc}") from None


def _camera_spec(base: Path, spec: str) -> str:
    """``spec`` with the path of a ``folder:`` or ``file:`` camera taken from ``base``."""
    kind, colon, rest = spec.strip().partition(":")
    if colon and kind in ("folder", "file") and rest.strip():
        return f"{kind}:{_path(base, rest)}"
    return spec


def _path(base: Path, text: str) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else base / path
