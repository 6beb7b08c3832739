"""The command line's shape: every subcommand is registered and has help."""

from __future__ import annotations

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
