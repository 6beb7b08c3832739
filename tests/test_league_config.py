"""The tower's ``[league]`` keys, the league's own file and the league's command lines."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from firmware_host.cli import main
from firmware_host.controller.config import ConfigError, config_from_dict
from firmware_host.league.broker import find_mosquitto
from firmware_host.league.config import load_league_config
from firmware_host.league.demo import LeagueDemo, LeagueDemoOptions

TOWER = Path("/bar/tower.toml")


def test_a_tower_in_a_league() -> None:
    config = config_from_dict({"league": {"broker": "mqtts://league.example:8883",
                                          "tower": "bar-1", "password": "pw",
                                          "ca_file": "ca.pem",
                                          "board": "http://league.local:8100/"}}, TOWER)
    assert config.league_board == "http://league.local:8100/"
    assert config.league_tower == "bar-1"
    broker = config.league_broker
    assert broker is not None and broker.tls and broker.port == 8883
    assert (broker.username, broker.password, broker.ca_file) == ("bar-1", "pw", "/bar/ca.pem")
    assert config_from_dict({}, TOWER).league_broker is None


@pytest.mark.parametrize("league, fix", [
    ({"broker": "mqtt://x"}, "tower is missing"),
    ({"broker": "http://x", "tower": "a"}, "mqtt://HOST"),
    ({"broker": "mqtt://x", "tower": "a/b"}, "not a tower name"),
    ({"brokr": "mqtt://x"}, "unknown key 'brokr' in [league]"),
    ({"broker": "mqtt://x", "tower": "a", "board": "league.local"}, "board must be"),
    ({"broker": "mqtt://x", "tower": "a", "prefix": "a/#"}, "prefix must be"),
])
def test_league_keys_refused_in_one_line(league, fix) -> None:
    with pytest.raises(ConfigError) as refused:
        config_from_dict({"league": league}, TOWER)
    assert fix in str(refused.value) and "\n" not in str(refused.value)


def test_the_league_file(tmp_path) -> None:
    good = tmp_path / "league.toml"
    good.write_text('[league]\nbroker = "mqtt://h"\n[board]\nport = 8200\n[scoring]\nwin = 2\n')
    checked, base = load_league_config(good)
    assert (checked.board.port, checked.scoring.win, base) == (8200, 2, tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text('[board]\npin = "12"\n')
    with pytest.raises(ValueError, match=r"board\.pin"):
        load_league_config(bad)


def test_league_serve_says_what_is_missing(capsys) -> None:
    assert main(["league", "serve"]) == 2
    assert capsys.readouterr().err.strip().endswith("give --broker mqtt://HOST (or [league] "
                                                     "broker in --config)")
    assert main(["league", "serve", "--broker", "ftp://x"]) == 2
    assert "--broker" in capsys.readouterr().err


def test_demo_with_a_league(capsys) -> None:
    if find_mosquitto() is None:
        pytest.skip("mosquitto is not installed: `make broker` runs the league demo test")
    code = main(["demo", "--league", "--tables", "2", "--fast", "--games", "2", "--port", "0",
                 "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["complete"] and summary["games"] >= 2
    assert summary["at_league"] == summary["actions"] > 0
    assert "Mosquitto" in summary["broker"]


def test_demo_with_the_embedded_broker(tmp_path) -> None:
    pytest.importorskip("amqtt", reason="the embedded broker is the league-broker extra")
    demo = LeagueDemo(LeagueDemoOptions(tables=2, pace=0, games=2, folder=tmp_path, port=0,
                                        embedded=True), lambda line: None)
    demo.start()
    try:
        summary = demo.run(threading.Event())
    finally:
        demo.close()
    assert summary["complete"] and summary["games"] >= 2
    assert summary["broker"].startswith("the embedded broker")
