"""Why the scoreboard refuses a request, in French and English: codes and values in, sentences out.

A refusal is raised as a code with its values (`firmware_host.hub.errors.Refusal`: the hub's
`HubError`, whose codes come first, and the scoreboard's `ApiError`); the error handler says it
in the language of the page that sent the request, the command line and the logs in English.
The rules engine's refusals have their own table (`firmware_host.rules.texts`); JSON field
names and values stay as the API spells them.
"""

from __future__ import annotations

from typing import Any

from firmware_host.catalogue import Catalogue
from firmware_host.hub.errors import HUB_REFUSALS

REFUSALS = HUB_REFUSALS | Catalogue("scoreboard.refusals", {
    # -- the scoreboard's own ------------------------------------------------------------
    "no_frame": {"fr": "Pas d'image de la caméra (pas de caméra, ou rien lu encore).",
                 "en": "no camera image (no camera, or nothing read yet)"},
    "no_tower": {"fr": "Aucune tour en marche : pas de distribution à confirmer.",
                 "en": "no tower is running: there is no dispense to confirm"},
    "no_dispense": {"fr": "Pas de distribution {dispense}.", "en": "no dispense {dispense}"},
    # -- calibration from the game master's page ---------------------------------------
    "calibration_no_tower": {
        "fr": "Aucune tour en marche : calibrez avec « dicetower calibrate ».",
        "en": "no tower is running: calibrate with `dicetower calibrate`"},
    "calibration_no_preview": {"fr": "Pas encore d'image de calibration.",
                               "en": "no calibration picture yet"},
    # -- the game master ----------------------------------------------------------------
    "login_first": {"fr": "Réservé au meneur de jeu : entrez d'abord le code.",
                    "en": "game master only: log in with the PIN first"},
    "wrong_pin": {"fr": "Code erroné.", "en": "wrong PIN"},
    "wrong_pin_wait": {"fr": "Code erroné : prochain essai possible dans {seconds} s.",
                       "en": "wrong PIN: the next try is possible in {seconds} s"},
    "too_many_pins": {"fr": "Trop de codes erronés : réessayez dans {seconds} s.",
                      "en": "too many wrong PINs: try again in {seconds} s"},
    "csrf": {"fr": "Jeton CSRF absent ou erroné : GET /api/session, puis envoyez {header}.",
             "en": "missing or wrong CSRF token: GET /api/session, then send {header}"},
    # -- live pages ---------------------------------------------------------------------
    "too_many_streams": {
        "fr": "Trop de pages en direct ouvertes depuis cette adresse ({most}) : fermez-en, "
              "ou réessayez plus tard.",
        "en": "too many live pages open from this address ({most}): close some, or retry "
              "later"},
    "too_many_clients": {"fr": "Trop de pages en direct ouvertes ({most}) : réessayez plus tard.",
                         "en": "too many live pages open ({most}): retry later"},
    # -- the body of a request ----------------------------------------------------------
    "body_not_json": {"fr": "Le corps doit être du JSON (Content-Type: application/json).",
                      "en": "the body must be JSON (Content-Type: application/json)"},
    "body_too_deep": {"fr": "Le corps est trop imbriqué.", "en": "the body is nested too deeply"},
    "body_invalid_json": {"fr": "Le corps n'est pas du JSON valide.",
                          "en": "the body is not valid JSON"},
    "body_not_object": {"fr": "Le corps doit être un objet JSON.",
                        "en": "the body must be a JSON object"},
    # -- one field of it: "{field}: <why>" ----------------------------------------------
    "name_not_text": {"fr": "{field} : chaque joueur est un nom (du texte)",
                      "en": "{field}: each player is a name (text)"},
    "name_empty": {"fr": "{field} : chaque joueur a besoin d'un nom",
                   "en": "{field}: every player needs a name"},
    "name_too_long": {"fr": "{field} : des noms de {most} caractères au plus",
                      "en": "{field}: names of at most {most} characters"},
    "name_hidden_char": {
        "fr": "{field} : {name} contient un caractère invisible ou de contrôle ({char}) : "
              "utilisez des lettres, des chiffres, des espaces et de la ponctuation",
        "en": "{field}: {name} contains an invisible or control character ({char}): use "
              "letters, digits, spaces and punctuation"},
    "names_twice": {"fr": "{field} : deux joueurs ont le même nom",
                    "en": "{field}: two players have the same name"},
    "player_count_exact": {
        "fr": "{field} : {preset} se joue à {count} joueurs exactement : une liste de noms, "
              "dans l'ordre des places",
        "en": "{field}: {preset} is played by exactly {count} players: a list of names, in "
              "seat order"},
    "player_count_range": {
        "fr": "{field} : {preset} se joue de {low} à {high} joueurs : une liste de noms, dans "
              "l'ordre des places",
        "en": "{field}: {preset} is played by {low} to {high} players: a list of names, in "
              "seat order"},
    "required_numbers": {"fr": "{field} : obligatoire (une liste de nombres entiers)",
                         "en": "{field}: required (a list of whole numbers)"},
    "too_many_numbers": {"fr": "{field} : une liste d'au plus {most} nombres entiers",
                         "en": "{field}: must be a list of at most {most} whole numbers"},
    "numbers_only": {"fr": "{field} : des nombres entiers seulement",
                     "en": "{field}: must contain whole numbers only"},
    "one_die_at_least": {"fr": "{field} : au moins un dé", "en": "{field}: at least one die"},
    "face_range": {"fr": "{field} : chaque face est entre 1 et 6",
                   "en": "{field}: each face is between 1 and 6"},
    "seat_number": {"fr": "{field} : un numéro de place (0 pour la première), ou absent",
                    "en": "{field}: a seat number (0 for the first seat), or absent"},
    "rotation_choice": {"fr": "{field} : {choices} (cw par défaut), ou absent",
                        "en": "{field}: one of {choices} (default cw), or absent"},
    "rotate_only_turn": {
        "fr": "{field} : seul un coup de 4D tourne le carré (POST /api/admin/turn)",
        "en": "{field}: only a 4D turn turns the square (POST /api/admin/turn)"},
    "required_text": {"fr": "{field} : obligatoire (du texte)",
                      "en": "{field}: required (text)"},
    "preset_choice": {"fr": "{field} : l'un de {choices}", "en": "{field}: one of {choices}"},
    "knobs_object": {"fr": "{field} : un objet nom de réglage → valeur",
                     "en": "{field}: an object of knob name to value"},
    "near_position": {"fr": "{field} : la position (0 à 3) tournée vers l'adversaire",
                      "en": "{field}: the position (0 to 3) now facing the opponent"},
    "true_or_false": {"fr": "{field} : true ou false", "en": "{field}: true or false"},
    "corners_shape": {"fr": "{field} : quatre coins [x, y], en pixels de l'image",
                      "en": "{field}: four corners [x, y], in the picture's pixels"},
    "expect_count": {"fr": "{field} : le nombre de dés lancés, de 1 à {most}",
                     "en": "{field}: the number of dice thrown, 1 to {most}"},
    "profile_name": {
        "fr": "{field} : des lettres, chiffres, - et _ (40 au plus), par exemple rouge",
        "en": "{field}: letters, digits, - and _ (at most 40), e.g. red"},
    "token_count": {"fr": "{field} : obligatoire (un nombre entier de jetons, 0 ou plus)",
                    "en": "{field}: required (a whole number of tokens, 0 or more)"},
})


def say(code: str, values: dict[str, Any] | None = None, language: str = "en") -> str:
    """The sentence for ``code`` in ``language`` ("fr" or "en"), ``values`` filled in; an
    unknown code comes back as it is, so a refusal is never lost for want of a sentence."""
    return REFUSALS.say(code, values, language)
