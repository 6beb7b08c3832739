"""Why the scoreboard refuses a request, in French and English: codes and values in, sentences out.

A refusal is raised as a code with its values (`Refusal`, and its kinds `StoreError` and
`ApiError`); the error handler says it in the language of the page that sent the request, the
command line and the logs in English. The rules engine's refusals have their own table
(`firmware_host.rules.texts`); JSON field names and values stay as the API spells them.
"""

from __future__ import annotations

from typing import Any

from firmware_host.rules.texts import fill

REFUSALS: dict[str, dict[str, str]] = {
    # -- the game's state ---------------------------------------------------------------
    "no_game": {"fr": "Pas encore de partie : lancez-en une.",
                "en": "no game yet: start one first"},
    "game_over": {"fr": "La partie est finie : lancez-en une nouvelle.",
                  "en": "the game is over: start a new one"},
    "game_paused": {"fr": "La partie est en pause : reprenez-la d'abord.",
                    "en": "the game is paused: resume it first"},
    "nothing_to_correct": {"fr": "Rien à corriger : aucun lancer encore.",
                           "en": "nothing to correct: no input yet"},
    "last_not_a_throw": {"fr": "La dernière entrée est un « {kind} », pas un lancer.",
                         "en": "the last input is a {kind!r}, not a throw"},
    "rotation_only_4d": {"fr": "Seul un coup de 4D a un sens de rotation à corriger.",
                         "en": "only a 4D turn has a rotation to correct"},
    "no_frame": {"fr": "Pas d'image de la caméra (pas de caméra, ou rien lu encore).",
                 "en": "no camera image (no camera, or nothing read yet)"},
    # -- tokens -------------------------------------------------------------------------
    "count_cut_off_first": {"fr": "Comptez d'abord les jetons de la distribution interrompue.",
                            "en": "count the tokens of the dispense cut off first"},
    "dispense_not_waiting": {"fr": "La distribution {dispense} n'attend pas de comptage.",
                             "en": "dispense {dispense} is not waiting for a count"},
    "count_out_of_range": {"fr": "Entre 0 et {most} jetons ont pu tomber.",
                           "en": "between 0 and {most} tokens can have fallen"},
    "no_tower": {"fr": "Aucune tour en marche : pas de distribution à confirmer.",
                 "en": "no tower is running: there is no dispense to confirm"},
    "no_dispense": {"fr": "Pas de distribution {dispense}.", "en": "no dispense {dispense}"},
    # -- calibration from the game master's page ---------------------------------------
    "calibration_no_tower": {
        "fr": "Aucune tour en marche : calibrez avec « dicetower calibrate ».",
        "en": "no tower is running: calibrate with `dicetower calibrate`"},
    "calibration_running": {"fr": "Une calibration est déjà en cours : finissez-la ou annulez-la.",
                            "en": "a calibration is under way: finish or cancel it first"},
    "calibration_none": {"fr": "Aucune calibration en cours : lancez-en une.",
                         "en": "no calibration under way: start one first"},
    "calibration_not_waiting": {
        "fr": "La calibration travaille : attendez qu'elle vous demande quelque chose.",
        "en": "the calibration is working: wait until it asks for you"},
    "calibration_corners_late": {
        "fr": "Les coins du plateau se donnent avant le premier lancer : annulez et "
              "recommencez pour les changer.",
        "en": "the tray's corners are given before the first throw: cancel and start again "
              "to change them"},
    "calibration_corners_outside": {
        "fr": "Un coin est hors de l'image de la caméra ({width}x{height}).",
        "en": "a corner lies outside the camera's {width}x{height} picture"},
    "calibration_corners_area": {"fr": "Les quatre coins n'entourent aucune surface.",
                                 "en": "the four corners enclose no area"},
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
}


def say(code: str, values: dict[str, Any] | None = None, language: str = "en") -> str:
    """The sentence for ``code`` in ``language`` ("fr" or "en"), ``values`` filled in; an
    unknown code comes back as it is, so a refusal is never lost for want of a sentence."""
    return fill(REFUSALS, code, values or {}, language)


class Refusal(Exception):
    """A refused request as a code of `REFUSALS` and its values; ``str()`` is English."""

    def __init__(self, code: str, **values: Any) -> None:
        self.code = code
        self.values = values
        super().__init__(say(code, values, "en"))

    def text(self, language: str) -> str:
        """The sentence in ``language`` ("fr" or "en")."""
        return say(self.code, self.values, language)
