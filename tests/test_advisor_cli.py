"""`dicetower odds`, `dicetower bench odds` and `dicetower simulate --strategy`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from firmware_host.advisor import advise, advise_4d
from firmware_host.advisor.strategies import STRATEGIES
from firmware_host.cli import main
from firmware_host.commands.simulate import STRATEGY_NAMES


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse refusals
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_table_has_one_row_per_keep_and_marks_the_best(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "odds", "4", "2", "6", "--preset", "tim-11",
                         "--throws-left", "2", "--to-beat", "5,5,3", "--avoid", "3,2,1")
    assert code == 0 and err == ""
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("keep"))
    rows = lines[header + 1: header + 9]
    assert [row.split()[0] for row in rows] == ["stop", "4", "4", "2", "4", "2", "6", "nothing"]
    # One mark per goal column: beat, tie, worst, 421, nénette, tokens, balance.
    assert sum(row.count("*") for row in rows) == 7
    assert "to beat: 553" in out and "to avoid: 321" in out


def test_json_is_the_advisors_result(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "odds", "4,2,6", "--preset", "regles-21", "--throws-left", "1",
                       "--to-beat", "5,5,3@2", "--json")
    assert code == 0
    data = json.loads(out)
    assert data == advise([4, 2, 6], preset="regles-21", throws_left=1,
                          to_beat=([5, 5, 3], 2))
    assert set(data["best"]) >= {"beat", "tie", "421", "tokens", "avoid_worst"}
    first = data["keeps"][1]
    assert first["keep"] == [4, 2]
    for field in ("p_beat", "p_tie", "p_421", "p_nenette", "expected_tokens"):
        assert isinstance(first[field], float)
    assert first["p_worst"] is None and data["best"]["avoid_worst"] is None
    assert first["balance"] is None and data["best"]["balance"] is None


def test_opener_sees_stop_against_throwing_again(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "odds", "5", "3", "2", "--preset", "classique-10", "--opener")
    assert code == 0
    assert "opener: stop now on 532" in out and "better" in out and "worse" in out


def test_help_says_what_beat_and_goals_mean(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "odds", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "strictly better than the hand to beat under the preset's ranking" in text
    assert "every later keep serves that same goal" in text


@pytest.mark.parametrize(("args", "words"), [
    (("4", "2", "7"), "a die shows 1 to 6, not 7"),
    (("4", "2"), "3 dice, not 2"),
    (("4", "2", "6", "1"), "3 dice, not 4"),
    ((), "give the three dice"),
    (("4", "2", "6", "--preset", "poker"), "unknown preset 'poker'"),
    (("4", "2", "6", "--throws-left", "3"), "throws left must be 0 to 2"),
    (("4", "2", "6", "--preset", "tim-11", "--charge", "--throws-left", "1"),
     "throws left must be 0 under tim-11"),
    (("4", "2", "6", "--throws-made", "2", "--throws-left", "2"), "0 to 1"),
    (("4", "2", "6", "--throws-left", "two"), "invalid int value"),
    (("4", "2", "6", "--rule", "sometimes"), "exact, at-most, free"),
    (("4", "2", "6", "--to-beat", "5,5"), "the hand to beat is 3 dice"),
    (("4", "2", "6", "--to-beat", "5,5,3@x"), "after @"),
    (("4", "2", "6", "--knob", "pot=500"), "an integer from 1 to 99"),
    (("4", "2", "6", "--faces", "1,2,3,4"), "--faces is for 4D"),
    (("--preset", "4d"), "4D needs the square"),
    (("1", "2", "3", "--preset", "4d"), "not dice"),
    (("--preset", "4d", "--faces", "1,2,3"), "this game has 4 dice"),
    (("--preset", "4d", "--faces", "1,2,3,4", "--near", "5"), "position 0 to 3"),
    (("--preset", "4d", "--faces", "1,2,3,4", "--scores", "100,0"), "game is over"),
    (("4", "2", "6", "--bogus"), "unrecognized arguments"),
    (("--preset", "4d", "--faces", "1,2,3,4", "--scores=-5,3"), "from 0"),
    # The other game's options are refused rather than silently ignored.
    (("--preset", "4d", "--faces", "1,2,3,4", "--to-beat", "5,5,3"), "--to-beat is for 421"),
    (("--preset", "4d", "--faces", "1,2,3,4", "--opener"), "--opener is for 421"),
    (("4", "2", "6", "--near", "1"), "--near is for 4D"),
    (("4", "2", "6", "--top", "3"), "--top is for 4D"),
])
def test_bad_usage_is_one_line_and_exit_2(
        args: tuple[str, ...], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "odds", *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("dicetower odds: ")
    assert words in err and "Traceback" not in err


def test_4d_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("odds", "--preset", "4d", "--faces", "3,5,2,6", "--near", "1", "--scores", "40,55")
    code, out, _ = run(capsys, *args, "--top", "3")
    assert code == 0
    assert out.startswith("4D · faces 3,5,2,6 · near 1 · scores 40-55 · target 100")
    assert "best first (3 of 88)" in out
    code, out, _ = run(capsys, *args, "--json")
    assert json.loads(out) == advise_4d([3, 5, 2, 6], near=1, scores=[40, 55])
    code, out, _ = run(capsys, "odds", "--preset", "4d", "--faces", "3,5,2,6,1", "--json")
    assert code == 0 and json.loads(out)["fifth_die"] is True


def test_bench_odds_reports_median_and_p95(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "bench", "odds", "--queries", "1000", "--moves", "2", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["queries"] == 1000
    assert 0 < data["p50_ms"] <= data["p95_ms"] <= data["max_ms"]
    code, _, err = run(capsys, "bench", "odds", "--queries", "10")
    assert code == 2 and "at least 1000" in err


def test_strategy_names_agree() -> None:
    assert STRATEGY_NAMES == STRATEGIES


def test_simple_is_the_default_and_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("simulate", "--preset", "tim-11", "--seed", "7")
    default = run(capsys, *args)
    assert default == run(capsys, *args, "--strategy", "simple")
    assert "strategy" not in default[1]


def _stats(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = run(capsys, "simulate", "--quiet", *args)
    assert code == 0, err
    return out


@pytest.mark.parametrize("preset", ["regles-21", "tim-11", "classique-10", "kyt-11", "4d"])
@pytest.mark.parametrize("strategy", ["random", "advisor"])
def test_strategies_play_whole_games(preset: str, strategy: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    games = "2" if preset == "4d" else "6"
    out = _stats(capsys, "--preset", preset, "--games", games, "--strategy", strategy)
    unit = "moves" if preset == "4d" else "rounds"
    assert f"strategy {strategy}: a game lasts" in out and f"{unit} (median" in out
    assert "lost" in out
    # Same seed, same games.
    assert _strip_time(out) == _strip_time(
        _stats(capsys, "--preset", preset, "--games", games, "--strategy", strategy))


def _strip_time(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if "ms per game" not in line)


def test_strategies_play_differently(capsys: pytest.CaptureFixture[str]) -> None:
    outs: dict[str, Any] = {
        s: _strip_time(_stats(capsys, "--preset", "kyt-11", "--games", "20", "--strategy", s))
        for s in STRATEGIES
    }
    assert len({out.split("strategy")[0] for out in outs.values()}) == 3


def test_unknown_strategy_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "simulate", "--strategy", "clever")
    assert code == 2 and "invalid choice: 'clever'" in err


def test_strategies_per_seat_may_be_spaced(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--games", "2", "--rotate", "--strategy")
    spaced = _strip_time(_stats(capsys, *args, " advisor, simple ,simple"))
    assert spaced == _strip_time(_stats(capsys, *args, "advisor,simple,simple"))
