"""The command line's shape: every subcommand is registered and has help."""

from __future__ import annotations

import subprocess
import sys

import pytest

from firmware_host.cli import COMMAND_MODULES, build_parser, main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert "dicetower" in capsys.readouterr().out


@pytest.mark.parametrize("name", [m.replace("_", "-") for m in COMMAND_MODULES])
def test_every_subcommand_has_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args([name, "--help"])
    assert exc.value.code == 0
    assert name in capsys.readouterr().out


def test_no_subcommand_is_an_error() -> None:
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


@pytest.mark.parametrize(("args", "prefix", "words"), [
    ([], "dicetower", "required: COMMAND"),
    (["nosuch"], "dicetower", "invalid choice: 'nosuch'"),
    (["simulate", "--games", "nan"], "dicetower simulate", "--games"),
    (["calibrate", "--expect", "0"], "dicetower calibrate", "at least 1"),
    (["demo", "--strategy", "clever"], "dicetower demo", "invalid choice: 'clever'"),
    (["bench", "odds", "--queries", "x"], "dicetower bench odds", "--queries"),
    (["serve", "--port", "nan"], "dicetower serve", "--port"),
    (["read"], "dicetower read", "required"),
])
def test_a_refused_argument_is_one_line_naming_the_command(
    args: list[str], prefix: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err
    assert err.startswith(f"{prefix}: ") and f"(see {prefix} --help)" in err


def test_the_command_line_starts_without_the_towers_heavy_parts() -> None:
    # What the commands load when they run, each saying so beside its import: Flask and
    # waitress (the scoreboard), gpiozero (the pins), pydantic (the configuration, the pin map).
    script = ("import sys; from firmware_host.cli import build_parser; build_parser(); "
              "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True).stdout.split()
    assert "firmware_host" in loaded
    assert not {"flask", "waitress", "gpiozero", "pydantic"} & set(loaded)
