"""`dicetower bench league` on a few towers: it runs to its end through a broker restart and
reports nothing lost and nothing doubled (its delays are measured, never asserted)."""

from __future__ import annotations

import json

import pytest

from firmware_host.cli import main
from firmware_host.league.broker import find_mosquitto


def test_a_small_bench_loses_and_doubles_nothing(capsys) -> None:
    if find_mosquitto() is None:
        pytest.skip("mosquitto is not installed: `make broker` runs the league bench test")
    code = main(["bench", "league", "--towers", "3", "--seconds", "3", "--pace", "0.2",
                 "--down", "0.5", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert result["lost"] == 0 and result["doubled"] == 0 and result["standings_match"]
    assert result["throws"] > 0 and result["delay_p95_ms"] is not None


def test_bench_league_refuses_bad_numbers(capsys) -> None:
    assert main(["bench", "league", "--towers", "0"]) == 2
    assert "must be positive" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["bench", "league", "--reconnect", "0.5,0.1"])
    assert refused.value.code == 2
