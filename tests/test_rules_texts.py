"""What the rules engine says: one table of codes in French and English, every refusal and
every prompt of the engine among them, each filled in by exactly the values it names."""

from __future__ import annotations

import ast
import json
import pickle
import random
import string
from pathlib import Path

import pytest

import firmware_host
from firmware_host.rules import RuleError, new_game
from firmware_host.rules.simulation import play
from firmware_host.rules.texts import (
    LANGUAGES,
    PROMPTS,
    REFUSALS,
    TEXTS,
    render,
    render_text,
)

PACKAGE = Path(firmware_host.__file__).parent


def placeholders(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


def calls(name: str) -> list[tuple[str, ast.Call]]:
    """Every call of ``name`` in the package's source, with the file it is in."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and (
                (isinstance(node.func, ast.Name) and node.func.id == name)
                or (isinstance(node.func, ast.Attribute) and node.func.attr == name)
            ):
                found.append((f"{path.relative_to(PACKAGE)}:{node.lineno}", node))
    return found


def is_forwarded(node: ast.Call) -> bool:
    """``RuleError(reason["code"], **reason["values"])``: a reason passed on as it is."""
    code = node.args[0] if node.args else None
    return (
        isinstance(code, ast.Subscript)
        and isinstance(code.slice, ast.Constant)
        and code.slice.value == "code"
        and len(node.keywords) == 1
        and node.keywords[0].arg is None
    )


def test_prompts_and_refusals_are_one_table_of_distinct_codes() -> None:
    assert not PROMPTS.keys() & REFUSALS.keys()
    assert dict(TEXTS) == {**PROMPTS, **REFUSALS}


@pytest.mark.parametrize("code", sorted(TEXTS))
def test_every_code_is_said_in_both_languages_with_the_same_placeholders(code: str) -> None:
    table = TEXTS[code]
    assert set(table) == set(LANGUAGES), code
    assert all(table[lang].strip() for lang in LANGUAGES)
    assert placeholders(table["fr"]) == placeholders(table["en"]), code


def test_every_refusal_names_a_code_of_the_table_with_exactly_its_values() -> None:
    sites = calls("RuleError")
    checked = 0
    for where, node in sites:
        if where.startswith("rules/errors.py"):
            continue  # the class itself, rebuilding an error from its code and values
        if is_forwarded(node):
            continue
        assert len(node.args) == 1 and isinstance(node.args[0], ast.Constant), (
            f"{where}: the code of a RuleError is a literal string")
        code = node.args[0].value
        assert code in REFUSALS, f"{where}: {code!r} is not in the table"
        given = {keyword.arg for keyword in node.keywords}
        assert None not in given, f"{where}: values are named one by one"
        assert given == placeholders(REFUSALS[code]["en"]), f"{where}: {code}"
        checked += 1
    # About forty places refuse input; far fewer found means the scan missed them.
    assert checked >= 40, checked


def test_every_prompt_and_reason_names_a_code_of_the_table_with_exactly_its_values() -> None:
    checked = 0
    for where, node in calls("rule_text"):
        if where.startswith("rules/texts.py"):
            continue
        assert len(node.args) == 1 and isinstance(node.args[0], ast.Constant), where
        code = node.args[0].value
        assert code in TEXTS, f"{where}: {code!r} is not in the table"
        given = {keyword.arg for keyword in node.keywords}
        assert given == placeholders(TEXTS[code]["en"]), f"{where}: {code}"
        checked += 1
    assert checked >= len(PROMPTS), checked


def test_every_code_of_the_table_is_used() -> None:
    used = {
        node.args[0].value
        for name in ("RuleError", "rule_text")
        for _, node in calls(name)
        if node.args and isinstance(node.args[0], ast.Constant)
    }
    assert set(TEXTS) - used == set()


def test_a_rule_error_says_english_by_default_and_french_on_request() -> None:
    g = new_game("tim-11", ["Ana", "Ben"])
    with pytest.raises(RuleError, match="it is not Ben's turn: Ana is to move") as refused:
        g.apply({"type": "throw", "faces": [3], "player": 1})
    err = refused.value
    assert isinstance(err, ValueError)
    assert (err.code, err.values) == ("not_your_turn", {"player": "Ben", "mover": "Ana"})
    assert err.text("en") == str(err)
    assert err.text("fr") == "ce n'est pas à Ben de jouer : c'est à Ana"
    assert json.loads(json.dumps(err.as_text())) == {"code": err.code, "values": err.values}
    again = pickle.loads(pickle.dumps(err))
    assert (again.code, again.values, str(again)) == (err.code, err.values, str(err))


def test_a_refused_saved_event_says_why_in_the_same_language() -> None:
    from firmware_host.rules import game_from_json

    data = new_game("4d", ["Ana", "Ben"]).to_json()
    data["events"] = [{"type": "throw", "faces": [1, 2, 3, 4]}, {"type": "turn",
                                                                 "faces": [1, 2, 2, 4]}]
    del data["view"]
    with pytest.raises(RuleError) as refused:
        game_from_json(data)
    assert refused.value.code == "saved_event_refused"
    assert str(refused.value) == (
        "saved game event 2 is refused: the far die (position 2) is locked and cannot be turned")
    assert refused.value.text("fr") == (
        "l'événement 2 de la partie enregistrée est refusé : le dé du fond (position 2) est "
        "bloqué et ne peut pas être tourné")


def test_render_keeps_unknown_codes_and_missing_values_visible() -> None:
    assert render("no_such_code", {}, "fr") == "no_such_code"
    # A value left out leaves its placeholder rather than losing the sentence.
    assert render("die_face", {}, "en") == "a die shows 1 to 6, not {face}"
    assert PROMPTS.in_language("en")["fourd_move"] == PROMPTS["fourd_move"]["en"]


@pytest.mark.parametrize("preset", ["regles-21", "tim-11", "classique-10", "kyt-11", "4d"])
def test_every_prompt_of_real_games_is_in_the_table_and_fully_filled(preset: str) -> None:
    seen: set[str] = set()

    def watch(game: object, event: dict, effects: list) -> None:
        prompt = game.view()["prompt"]  # type: ignore[attr-defined]
        assert prompt["code"] in PROMPTS, prompt
        assert set(prompt["values"]) == placeholders(PROMPTS[prompt["code"]]["en"]), prompt
        for lang in LANGUAGES:
            said = render_text(prompt, lang)
            assert "{" not in said and "None" not in said, said
        seen.add(prompt["code"])

    players = ["Ana", "Ben"] if preset == "4d" else ["Ana", "Ben", "Cleo"]
    for seed in range(3):
        play(preset, players, random.Random(seed), observer=watch)
    assert len(seen) >= (3 if preset == "4d" else 5), seen
