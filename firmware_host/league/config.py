"""The league's own configuration file (`dicetower league serve --config league.toml`).

    [league]
    broker = "mqtt://league:secret@192.168.1.10"   # mqtts://... for TLS
    ca_file = "/etc/ssl/certs/league-ca.pem"        # TLS: the CA to trust (default: system's)
    file = "league.sqlite3"                          # relative to this file's folder
    prefix = "dicetower"

    [board]
    host = "0.0.0.0"
    port = 8100
    pin = "4821"
    lang = "fr"

    [scoring]
    win = 3
    place = 1
    loss = 0

Every key may be left out; the command line wins over the file. Unknown keys and wrong types
are refused in one line naming the file and the key.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _League(_Table):
    broker: str | None = None
    ca_file: str | None = None
    file: str | None = None
    prefix: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$")


class _Board(_Table):
    host: str | None = None
    port: int | None = Field(None, ge=1, le=65535)
    pin: str | None = Field(None, pattern=r"^[0-9]{4,12}$")
    lang: str | None = Field(None, pattern=r"^(fr|en)$")


class _Scoring(_Table):
    win: int | None = Field(None, ge=-100, le=100)
    place: int | None = Field(None, ge=-100, le=100)
    loss: int | None = Field(None, ge=-100, le=100)


class LeagueFile(_Table):
    league: _League = _League()
    board: _Board = _Board()
    scoring: _Scoring = _Scoring()


def load_league_config(path: str | Path) -> tuple[LeagueFile, Path]:
    """The checked file and its folder (relative paths start there); ValueError in one line."""
    file = Path(path)
    try:
        data: dict[str, Any] = tomllib.loads(file.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ValueError(f"{file}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{file}: cannot read it ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{file}: not valid TOML ({exc})") from None
    try:
        return LeagueFile.model_validate(data), file.parent
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        raise ValueError(f"{file}: {key}: {first['msg']}") from None
