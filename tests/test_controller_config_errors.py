"""Every kind of mistake pydantic can find in a configuration file gives one line naming the
file, the key and what it must be: the tower's own keys, and a model of every constraint
pydantic has, so that a key declared later with a new constraint cannot make the tower crash
on a typo."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from firmware_host.controller.config import ConfigError, _first_error, load_config

WHERE = "/bar/tower.toml"


def test_a_pattern_error_in_the_towers_file(tmp_path: Path) -> None:
    path = tmp_path / "tower.toml"
    path.write_text('[league]\nbroker = "mqtt://h"\ntower = "bar-1"\nprefix = "bars/#"\n')
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert str(refused.value) == (
        f'{path}: [league] prefix must be topic levels of letters, digits, - and _, '
        f"e.g. prefix = \"dicetower\", not 'bars/#'")
    path.write_text('[league]\nbroker = "mqtt://h"\ntower = "bar-1"\nprefix = "bars/one"\n')
    assert load_config(path).league_prefix == "bars/one"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class _Every(_Strict):
    mode: Literal["fast", "slow"] | None = None
    code: str | None = Field(None, pattern=r"^[A-Z]{3}$")
    named: str | None = Field(None, pattern=r"^[a-z]+$", description="lower-case letters",
                              examples=["bar"])
    short: str | None = Field(None, max_length=3)
    long: str | None = Field(None, min_length=2)
    items: list[int] | None = Field(None, min_length=1, max_length=2)
    above: float | None = Field(None, gt=0)
    floor: float | None = Field(None, ge=2)
    ceiling: int | None = Field(None, le=9)
    step: int | None = Field(None, multiple_of=5)
    even: int | None = None

    @field_validator("even")
    @classmethod
    def _even(cls, value: int | None) -> int | None:
        if value is not None and value % 2:
            raise ValueError("an odd number")
        return value


class _Needed(_Strict):
    needed: int


class _FileOfEvery(_Strict):
    every: _Every = _Every()
    need: _Needed | None = None


@pytest.mark.parametrize("data, words", [
    ({"every": {"mode": "quick"}}, ["[every] mode must be one of fast, slow, not 'quick'"]),
    ({"every": {"code": "ab1"}}, ["[every] code must be text of the form", "[A-Z]{3}",
                                  "not 'ab1'"]),
    ({"every": {"named": "Bar!"}}, ['[every] named must be lower-case letters, e.g. named = '
                                    '"bar", not \'Bar!\'']),
    ({"every": {"short": "abcd"}}, ["[every] short must be at most 3 characters"]),
    ({"every": {"long": "a"}}, ["[every] long must be at least 2 characters"]),
    ({"every": {"items": []}}, ["[every] items must be at least 1 item, not []"]),
    ({"every": {"items": [1, 2, 3]}}, ["[every] items must be at most 2 items"]),
    ({"every": {"items": [1, "2"]}}, ["[every] items[1] must be whole number, not '2'"]),
    ({"every": {"above": 0}}, ["[every] above must be greater than 0, not 0"]),
    ({"every": {"floor": 1}}, ["[every] floor must be at least 2, not 1"]),
    ({"every": {"ceiling": 10}}, ["[every] ceiling must be at most 9, not 10"]),
    ({"every": {"floor": float("inf")}}, ["[every] floor must be at least 2, not inf"]),
    ({"every": {"step": 7}}, ["[every] step must be valid (", "multiple of 5", "not 7"]),
    ({"every": {"even": 3}}, ["[every] even must be valid (", "an odd number", "not 3"]),
    ({"every": {"mode": 3}}, ["[every] mode must be one of fast, slow, not 3"]),
    ({"need": {}}, ["[need] needed is missing"]),
    ({"every": {"wat": 1}}, ["unknown key 'wat' in [every]; known keys: mode, code"]),
    ({"evry": {}}, ["unknown table [evry]; the tables are [every], [need]"]),
    ({"every": 3}, ["'every' must be a table ([every]), not a value"]),
])
def test_every_kind_of_error_is_one_line_naming_the_key(data: dict, words: list[str]) -> None:
    with pytest.raises(ValidationError) as caught:
        _FileOfEvery.model_validate(data)
    message = _first_error(WHERE, caught.value, data, _FileOfEvery)
    assert message.startswith(f"{WHERE}: ") and "\n" not in message
    for word in words:
        assert word in message, message
