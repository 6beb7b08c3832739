"""What the tower says to the table, in French and English: codes and values in, sentences out.

The controller decides in codes (``"cocked"``, ``{"count": 1}``); the scoreboard shows the
sentence in the page's language and the terminal in English. One table, so both always agree.
A ``reason`` from the rules engine (a refused input, an illegal 4D move) is a code and values
of `firmware_host.rules.texts` too, put into words in the same language.
"""

from __future__ import annotations

from typing import Any

from firmware_host.catalogue import Catalogue
from firmware_host.rules import RuleError
from firmware_host.rules.texts import RuleText, is_rule_text, render_text

MESSAGES = Catalogue("tower.notices", {
    "cocked": {
        "fr": "Dé cassé (penché sur un autre) : relancez.",
        "en": "A die is cocked (leaning on another): throw again.",
    },
    "unreadable": {
        "fr": "Un dé est illisible ({reason}) : relancez.",
        "en": "A die cannot be read ({reason}): throw again.",
    },
    "dice_count": {
        "fr": "{seen} dé(s) lancé(s) dans la piste, {expected} attendu(s) : relancez "
              "(un dé sorti du plateau ?).",
        "en": "{seen} dice thrown in the roll zone, {expected} expected: throw again "
              "(a die out of the tray?).",
    },
    "keep_on_first_throw": {
        "fr": "Premier lancer : videz la zone des dés gardés ({kept}) et lancez les trois dés.",
        "en": "First throw: clear the keep zone ({kept}) and throw all three dice.",
    },
    "keep_tampered": {
        "fr": "Dés gardés modifiés : {foreign} n'est pas dans la main {hand}. Remettez les dés "
              "gardés comme ils étaient.",
        "en": "Kept dice changed: {foreign} is not in the hand {hand}. Put the kept dice back "
              "as they were.",
    },
    "nothing_thrown": {
        "fr": "Aucun dé lancé : arrêtez avec le bouton, ou lancez au moins un dé.",
        "en": "No die thrown: stop with the button, or throw at least one die.",
    },
    "game_over": {
        "fr": "La partie est finie : lancez-en une nouvelle.",
        "en": "The game is over: start a new one.",
    },
    "square_lost": {
        "fr": "Le carré n'est plus reconnu : remettez les dés en carré comme avant.",
        "en": "The square is lost: put the dice back in their square as before.",
    },
    "illegal_move": {
        "fr": "Coup refusé : {reason}. Remettez les dés.",
        "en": "Move refused: {reason}. Put the dice back.",
    },
    "refused": {
        "fr": "Lancer refusé : {reason}",
        "en": "Throw refused: {reason}",
    },
    "hand": {
        "fr": "Une main (ou un objet) est dans le plateau : le lancer sera lu quand il sera "
              "dégagé.",
        "en": "A hand (or an object) is in the tray: the throw is read once it is clear.",
    },
    "obstructed": {
        "fr": "Quelque chose d'autre que les dés reste dans le plateau : retirez-le et "
              "relancez.",
        "en": "Something other than dice stays in the tray: take it out and throw again.",
    },
    "unsteady": {
        "fr": "Les dés ne se lisent pas deux fois pareil : relancez.",
        "en": "The dice do not read the same twice: throw again.",
    },
    "camera_error": {
        "fr": "Caméra en panne : {detail}. Reconnexion automatique… (le meneur peut saisir "
              "les lancers).",
        "en": "Camera down: {detail}. Reconnecting… (the game master can enter throws).",
    },
    "jam": {
        "fr": "Distributeur bloqué ({detail}) : {missing} jeton(s) à donner à {player}. "
              "Débloquez ou rechargez, puis reprenez.",
        "en": "Dispenser jammed ({detail}): {missing} token(s) still due to {player}. Clear "
              "or refill it, then resume.",
    },
    "dispense_doubt": {
        "fr": "Distribution interrompue : {player} devait recevoir {requested} jeton(s), "
              "{delivered} compté(s). Le meneur confirme combien sont tombés.",
        "en": "Dispense cut off: {player} was due {requested} token(s), {delivered} counted. "
              "The game master confirms how many fell.",
    },
    "return_tokens": {
        "fr": "{player} remet {count} jeton(s) au pot (coup annulé ou corrigé).",
        "en": "{player} returns {count} token(s) to the pot (input undone or corrected).",
    },
    "paused": {
        "fr": "Partie en pause.",
        "en": "Game paused.",
    },
})


def render(code: str, values: dict[str, Any] | None = None, lang: str = "en") -> str:
    """The sentence for ``code`` in ``lang`` ("fr" or "en"), with ``values`` filled in."""
    shown = {key: _shown(value, lang) for key, value in (values or {}).items()}
    return MESSAGES.say(code, shown, lang)


def notice(code: str, values: dict[str, Any] | None = None, level: str = "warn"
           ) -> dict[str, Any]:
    """A notice for the scoreboard: the code, its values and the sentence in each language."""
    values = dict(values or {})
    return {"code": code, "values": values, "level": level,
            "fr": render(code, values, "fr"), "en": render(code, values, "en")}


def reason_of(exc: Exception) -> RuleText | str:
    """The ``reason`` value of a refusal: the engine's code and values for a `RuleError` (so
    each language gets its own sentence), else the exception's text."""
    if isinstance(exc, RuleError):
        return exc.as_text()
    return str(exc)


def _shown(value: Any, lang: str) -> Any:
    if is_rule_text(value):
        return render_text(value, lang)
    if isinstance(value, list | tuple):
        return "-".join(str(v) for v in value)
    return value
