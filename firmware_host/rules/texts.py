"""Everything the rules engine says, in French and English: codes and values in, sentences out.

The engine decides in codes (``"not_your_turn"``, ``{"player": "Ben", "mover": "Ana"}``):
``view()["prompt"]`` says what happens next, a `RuleError` why an input is refused and
`check_move` why a 4D move is illegal. Whoever shows them picks the language: the scoreboard
the page's, the command line English. One table, so every place says the same thing.

Game words with no good English equivalent stay French in both languages: charge, décharge,
nénette, rampo, manche, and the opener's announcements (sec, en 2, à fond). Player names and
hands are values, never part of a template.
"""

from __future__ import annotations

from typing import Any, TypedDict

from firmware_host.catalogue import LANGUAGES, Catalogue

__all__ = ["LANGUAGES", "PROMPTS", "REFUSALS", "TEXTS", "RuleText", "is_rule_text", "render",
           "render_text", "rule_text"]


class RuleText(TypedDict):
    """A sentence of the engine before it is put into words: its code and its values."""

    code: str
    values: dict[str, Any]


#: What happens next: ``view()["prompt"]["code"]`` is one of these.
PROMPTS = Catalogue("rules.prompts", {
    # -- 421 ------------------------------------------------------------------------------
    "game_lost": {
        "fr": "{player} a perdu la partie",
        "en": "{player} lost the game",
    },
    "game_won": {
        "fr": "{player} a gagné la partie",
        "en": "{player} won the game",
    },
    "game_ended": {
        "fr": "Partie terminée",
        "en": "Game over",
    },
    "opening_die": {
        "fr": "{player} lance un dé pour désigner qui commence",
        "en": "{player} throws one die to decide who starts",
    },
    "opening_dice": {
        "fr": "{player} lance les dés pour désigner qui commence",
        "en": "{player} throws the dice to decide who starts",
    },
    "rampo_throw": {
        "fr": "Rampo ! {player} relance (coup sec)",
        "en": "Rampo! {player} throws again (one throw)",
    },
    "keep_or_stop": {
        "fr": "{player} a {hand} : garde et relance, ou s'arrête ({throw}/{allowed})",
        "en": "{player} has {hand}: keep and throw again, or stop ({throw}/{allowed})",
    },
    "open_charge_sec": {
        "fr": "{player} ouvre la charge (coup sec)",
        "en": "{player} opens the charge (one throw)",
    },
    "open_charge": {
        "fr": "{player} ouvre la charge (jusqu'à {throws} lancers)",
        "en": "{player} opens the charge (up to {throws} throws)",
    },
    "open_decharge_sec": {
        "fr": "{player} ouvre la décharge (coup sec)",
        "en": "{player} opens the décharge (one throw)",
    },
    "open_decharge": {
        "fr": "{player} ouvre la décharge (jusqu'à {throws} lancers)",
        "en": "{player} opens the décharge (up to {throws} throws)",
    },
    "open_round_sec": {
        "fr": "{player} ouvre la manche unique (coup sec)",
        "en": "{player} opens the single round (one throw)",
    },
    "open_round": {
        "fr": "{player} ouvre la manche unique (jusqu'à {throws} lancers)",
        "en": "{player} opens the single round (up to {throws} throws)",
    },
    # After the opener, what the opener announced binds the others.
    "follow_sec": {
        "fr": "{player} lance (sec)",
        "en": "{player} throws (sec: one throw)",
    },
    "follow_en": {
        "fr": "{player} lance (en {throws})",
        "en": "{player} throws (en {throws}: {throws} throws)",
    },
    "follow_fond": {
        "fr": "{player} lance (à fond)",
        "en": "{player} throws (à fond: 3 throws)",
    },
    # -- 4D -------------------------------------------------------------------------------
    "fourd_won": {
        "fr": "{player} gagne avec {points} points",
        "en": "{player} wins with {points} points",
    },
    "fourd_throw": {
        "fr": "{player} lance les {dice} dés une seule fois",
        "en": "{player} throws the {dice} dice, once only",
    },
    "fourd_present": {
        "fr": "{thrower} tourne le carré pour présenter trois dés à {player}",
        "en": "{thrower} turns the square to present three dice to {player}",
    },
    "fourd_move": {
        "fr": "{player} tourne un ou deux dés (le dé du fond est bloqué)",
        "en": "{player} turns one or two dice (the far die is locked)",
    },
})

#: Why an input is refused: the code of every `RuleError` and of every `check_move` reason.
REFUSALS = Catalogue("rules.refusals", {
    # -- any game (base.py) ---------------------------------------------------------------
    "event_not_dict": {
        "fr": "un événement est un dict avec un 'type', pas un {kind}",
        "en": "an event is a dict with a 'type', not {kind}",
    },
    "unknown_event": {
        "fr": "type d'événement inconnu {kind} ; types valides : {valid}",
        "en": "unknown event type {kind}; valid types: {valid}",
    },
    "game_is_over": {
        "fr": "la partie est finie ; commencez-en une nouvelle (ou annulez)",
        "en": "the game is over; start a new one (or undo)",
    },
    "nothing_to_undo": {
        "fr": "rien à annuler",
        "en": "nothing to undo",
    },
    "fields_unknown": {
        "fr": "un événement {kind} ne prend pas {unused} (il prend {takes})",
        "en": "a {kind} event takes no {unused} (it takes {takes})",
    },
    "fields_none": {
        "fr": "un événement {kind} ne prend pas {unused} (il ne prend aucun autre champ)",
        "en": "a {kind} event takes no {unused} (it takes no other field)",
    },
    "bad_seat": {
        "fr": "player doit être une place de 0 à {last}, pas {value}",
        "en": "player must be a seat from 0 to {last}, not {value}",
    },
    "not_your_turn": {
        "fr": "ce n'est pas à {player} de jouer : c'est à {mover}",
        "en": "it is not {player}'s turn: {mover} is to move",
    },
    "not_your_turn_nobody": {
        "fr": "ce n'est pas à {player} de jouer : personne n'est à jouer",
        "en": "it is not {player}'s turn: nobody is to move",
    },
    "not_a_list": {
        "fr": "'{field}' doit être une liste de nombres entiers, pas {value}",
        "en": "'{field}' must be a list of whole numbers, not {value}",
    },
    "not_whole_numbers": {
        "fr": "'{field}' ne contient que des nombres entiers, pas {value}",
        "en": "'{field}' must hold whole numbers, not {value}",
    },
    # -- starting and rebuilding a game (factory.py, knobs.py) ----------------------------
    "knobs_not_mapping": {
        "fr": "les réglages sont un dictionnaire nom -> valeur, pas {value}",
        "en": "knobs must be a mapping of knob names to values, not {value}",
    },
    "players_not_list": {
        "fr": "les joueurs sont une liste de noms",
        "en": "players must be a list of names",
    },
    "player_count_exact": {
        "fr": "le {game} se joue à exactement {count} joueurs, pas {given}",
        "en": "{game} is played by exactly {count} players, not {given}",
    },
    "player_count_range": {
        "fr": "le {game} se joue de {low} à {high} joueurs, pas {given}",
        "en": "{game} is played by {low} to {high} players, not {given}",
    },
    "player_unnamed": {
        "fr": "chaque joueur a besoin d'un nom",
        "en": "every player needs a name",
    },
    "players_not_distinct": {
        "fr": "les noms des joueurs doivent être différents : {players}",
        "en": "player names must differ: {players}",
    },
    "not_saved_game": {
        "fr": "ce n'est pas une partie enregistrée (format {format} attendu)",
        "en": "not a saved game (expected format {format})",
    },
    "saved_game_lacks": {
        "fr": "il manque {field} à la partie enregistrée",
        "en": "saved game lacks {field}",
    },
    "saved_events_not_list": {
        "fr": "les événements d'une partie enregistrée sont une liste",
        "en": "saved game events must be a list",
    },
    "saved_event_refused": {
        "fr": "l'événement {seq} de la partie enregistrée est refusé : {reason}",
        "en": "saved game event {seq} is refused: {reason}",
    },
    "saved_view_differs": {
        "fr": "la partie enregistrée ne se rejoue pas jusqu'à l'affichage enregistré",
        "en": "saved game does not replay to its stored view",
    },
    "unknown_preset": {
        "fr": "variante inconnue {preset} ; variantes valides : {valid}",
        "en": "unknown preset {preset}; valid presets: {valid}",
    },
    "unknown_knob": {
        "fr": "réglage inconnu {knob} pour une partie de {game} ; réglages valides : {valid}",
        "en": "unknown knob {knob} for a {game} game; valid knobs: {valid}",
    },
    "knob_value": {
        "fr": "le réglage {knob} ne peut pas valoir {value} ; valeurs valides : {valid}",
        "en": "knob {knob} cannot be {value}; valid values: {valid}",
    },
    "knob_range": {
        "fr": "le réglage {knob} ne peut pas valoir {value} ; valeurs valides : un entier de "
              "{low} à {high}",
        "en": "knob {knob} cannot be {value}; valid values: an integer from {low} to {high}",
    },
    # -- 421 (game421.py) -----------------------------------------------------------------
    "die_face": {
        "fr": "un dé montre 1 à 6, pas {face}",
        "en": "a die shows 1 to 6, not {face}",
    },
    "nothing_to_keep": {
        "fr": "{player} n'a pas encore lancé à ce tour : il n'y a rien à garder",
        "en": "{player} has not thrown yet this turn: there is nothing to keep",
    },
    "throw_count_one": {
        "fr": "{count} dé(s) tombé(s) ; {player} lance 1 dé maintenant",
        "en": "{count} dice landed; {player} throws 1 die now",
    },
    "throw_count": {
        "fr": "{count} dé(s) tombé(s) ; {player} lance {expected} dés maintenant",
        "en": "{count} dice landed; {player} throws {expected} dice now",
    },
    "bad_keep": {
        "fr": "keep liste des dés distincts de la main (0 à 2), pas {keep}",
        "en": "keep must list distinct dice of the hand (0 to 2), not {keep}",
    },
    "no_die_landed": {
        "fr": "aucun dé tombé ; {player} lance au moins un dé ou s'arrête",
        "en": "no die landed; {player} throws at least one die or stops",
    },
    "hand_size": {
        "fr": "{count} dé(s) tombé(s) et {kept} gardé(s) ; une main fait {size} dés",
        "en": "{count} dice landed and {kept} kept; a hand is {size} dice",
    },
    "stop_before_throw": {
        "fr": "{player} n'a pas encore lancé : lancez avant de vous arrêter",
        "en": "{player} has not thrown yet: throw before stopping",
    },
    "throws_exact": {
        "fr": "{player} doit lancer exactement {required} fois, comme l'ouvreur ({done} pour "
              "l'instant)",
        "en": "{player} must throw exactly {required} times, like the opener ({done} so far)",
    },
    # -- 4D (fourd.py) --------------------------------------------------------------------
    "bad_rotate": {
        "fr": "'rotate' tourne le carré d'un quart dans un sens ou dans l'autre : {valid}, "
              "pas {value}",
        "en": "'rotate' turns the square a quarter one way or the other: {valid}, not {value}",
    },
    "bad_near": {
        "fr": "un 'present' nomme la position face à l'adversaire : 'near' de 0 à {last}, "
              "pas {value}",
        "en": "a 'present' names the position that faces the opponent: 'near' from 0 to "
              "{last}, not {value}",
    },
    "throw_first": {
        "fr": "les dés sont d'abord lancés une fois : un 'throw' de tous les dés",
        "en": "the dice are thrown once first: a 'throw' of all the dice",
    },
    "start_dice": {
        "fr": "{count} dé(s) tombé(s) ; le 4D commence avec {size} dés",
        "en": "{count} dice landed; 4D starts with {size} dice",
    },
    "thrown_once": {
        "fr": "au 4D les dés ne sont lancés qu'une fois ; maintenant on les tourne",
        "en": "in 4D the dice are thrown only once; now they are turned",
    },
    "present_not_used": {
        "fr": "avec first_move 'thrower', {thrower} joue le premier : le carré n'est pas "
              "présenté",
        "en": "with first_move 'thrower' {thrower} moves first: the square is not presented",
    },
    "already_presented": {
        "fr": "le carré est déjà présenté à {player} ; annulez pour le présenter autrement",
        "en": "the square is already presented to {player}; undo to present it otherwise",
    },
    "present_once": {
        "fr": "le carré est présenté une fois, juste après le lancer",
        "en": "the square is presented once, right after the throw",
    },
    "presenter_only": {
        "fr": "{thrower} présente le carré, pas {player}",
        "en": "{thrower} presents the square, not {player}",
    },
    # The reasons of check_move: why a 4D move is illegal.
    "move_face_count": {
        "fr": "{count} face(s) données ; cette partie a {size} dés",
        "en": "{count} faces given; this game has {size} dice",
    },
    "far_locked": {
        "fr": "le dé du fond (position {position}) est bloqué et ne peut pas être tourné",
        "en": "the far die (position {position}) is locked and cannot be turned",
    },
    "opposite_face": {
        "fr": "{die} est passé de {old} à {new}, sa face opposée : un quart de tour ne peut pas "
              "faire ça",
        "en": "{die} went from {old} to {new}, its opposite face: a quarter turn cannot do that",
    },
    "fifth_not_turned": {
        "fr": "le cinquième dé doit être tourné à chaque coup",
        "en": "the fifth die must be turned every turn",
    },
    "nothing_changed": {
        "fr": "rien n'a changé : un coup tourne le dé près, de gauche ou de droite",
        "en": "nothing changed: a move turns the near, left or right die",
    },
    "two_moves_sides": {
        "fr": "les dés de gauche et de droite ont changé tous les deux : c'est plus d'un coup "
              "(près, gauche, droite, gauche+près ou droite+près)",
        "en": "the left and right dice both changed: more than one move allows (near, left, "
              "right, left+near or right+near)",
    },
    "two_moves_all": {
        "fr": "les dés près, de gauche et de droite ont changé tous les trois : c'est plus d'un "
              "coup (près, gauche, droite, gauche+près ou droite+près)",
        "en": "the near, left and right dice all changed: more than one move allows (near, "
              "left, right, left+near or right+near)",
    },
    # The dice a 4D reason names (values of "opposite_face").
    "die_near": {"fr": "le dé près", "en": "the near die"},
    "die_left": {"fr": "le dé de gauche", "en": "the left die"},
    "die_right": {"fr": "le dé de droite", "en": "the right die"},
    "die_fifth": {"fr": "le cinquième dé", "en": "the fifth die"},
})

TEXTS = PROMPTS | REFUSALS


def rule_text(code: str, **values: Any) -> RuleText:
    """The code and values of one sentence, to be put into words later (`render_text`)."""
    return {"code": code, "values": values}


def render(code: str, values: dict[str, Any] | None = None, language: str = "en") -> str:
    """The sentence for ``code`` in ``language`` ("fr" or "en"), with ``values`` filled in.

    A value that is itself a `RuleText` is put into words in the same language. An unknown
    code comes back as it is, so that a sentence is never lost for want of a translation.
    """
    shown = {key: _shown(value, language) for key, value in (values or {}).items()}
    return TEXTS.say(code, shown, language)


def render_text(text: RuleText | dict[str, Any], language: str = "en") -> str:
    """`render` for a `RuleText` (``{"code": ..., "values": {...}}``)."""
    return render(str(text.get("code", "")), text.get("values"), language)


def is_rule_text(value: Any) -> bool:
    """Whether ``value`` is a `RuleText` of this table (so it can be put into words)."""
    return isinstance(value, dict) and value.get("code") in TEXTS


def _shown(value: Any, language: str) -> Any:
    if is_rule_text(value):
        return render_text(value, language)
    return value
