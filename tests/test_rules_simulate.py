"""`dicetower simulate`: the readable log, the statistics and the refusals."""

from __future__ import annotations

import pytest

from firmware_host.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(["simulate", *args])
    except SystemExit as exc:  # argparse refusals
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_demo_log_is_complete_and_reproducible(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--preset", "tim-11", "--players", "Ana,Ben,Cleo", "--seed", "7")
    code, out, _ = run(capsys, *args)
    assert code == 0
    assert out.startswith("421 · preset tim-11 · Ana, Ben, Cleo · seed 7")
    for marker in (
        "Opening (lowest die opens)",
        "Manche 1 · charge",
        "from the pot",
        "Manche 1 · décharge",
        "gives",
        "loses manche",
        "Game over",
    ):
        assert marker in out, marker
    assert run(capsys, *args)[1] == out


@pytest.mark.parametrize("preset", ["regles-21", "classique-10", "kyt-11", "4d"])
def test_every_preset_plays_to_the_end(preset: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--preset", preset, "--seed", "3")
    assert code == 0 and "Game over" in out


def test_one_round_mode_and_knobs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--preset", "classique-10", "--knob", "one_round=true")
    assert code == 0 and "wins the single round" in out


def test_quiet_statistics(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--preset", "kyt-11", "--games", "200", "--quiet")
    assert code == 0
    assert "200 games" in out and "mean per game:" in out and "rounds" in out
    assert "421" in out and "221" in out and "lost the game:" in out
    code, out, _ = run(capsys, "--preset", "4d", "--games", "20", "--quiet")
    assert code == 0 and "moves" in out and "won the game:" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--preset", "poker"), "choose from 'regles-21', 'tim-11'"),
        (("--players", "Ana"), "2 to 10 players"),
        (("--preset", "4d", "--players", "Ana,Ben,Cleo"), "exactly 2 players"),
        (("--knob", "pot=500"), "an integer from 1 to 99"),
        (("--knob", "colour=red"), "valid knobs:"),
        (("--knob", "pot"), "NAME=VALUE"),
        (("--games", "0"), "at least 1"),
    ],
)
def test_bad_arguments_exit_2_with_the_valid_values(
    args: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, *args)
    assert code == 2
    assert message in err


@pytest.mark.parametrize("players, words", [
    (",,", "at least one name"),
    ("", "at least one name"),
    ("Ana,,Ben", "empty name"),
    ("Ana,ANA", "twice"),
    ("Ana," + "B" * 30, "longer than"),
])
def test_simulate_refuses_player_lists_it_cannot_seat(players: str, words: str,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    assert main(["simulate", "--players", players]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("dicetower simulate: ") and words in err


def test_the_4d_log_says_how_the_square_is_presented(capsys: pytest.CaptureFixture[str]) -> None:
    import re

    presented = 0
    for seed in range(6):
        code, out, _ = run(capsys, "--preset", "4d", "--seed", str(seed))
        assert code == 0
        lines = out.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("Start: "))
        faces = [int(f) for f in lines[start].split("land ")[1].split()]
        shown = re.fullmatch(r"  Ana\s+presents position (\d) \(face (\d)\) to Ben",
                             lines[start + 1])
        if shown:
            presented += 1
            assert faces[int(shown[1])] == int(shown[2])
        else:  # the square as it lay: the opponent's move comes at once
            assert lines[start + 1].startswith("  Ben ")
    assert presented >= 1
