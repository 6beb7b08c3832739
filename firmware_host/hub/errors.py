"""What the hub refuses, as a code and its values, and the sentences that say why.

A refusal is raised as a code of a text table with its values (`Refusal`); whoever shows it
(the scoreboard in the page's language, the command line and the logs in English) puts it
into words. `HubError` is the hub's own kind: the request conflicts with the game's state
(no game, paused, over), with the token ledger, or with a calibration under way; nothing
changed. Other layers add their own codes to `HUB_REFUSALS` in a catalogue of theirs.
"""

from __future__ import annotations

from typing import Any, ClassVar

from firmware_host.catalogue import Catalogue

HUB_REFUSALS = Catalogue("hub.refusals", {
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
    # -- tokens -------------------------------------------------------------------------
    "count_cut_off_first": {"fr": "Comptez d'abord les jetons de la distribution interrompue.",
                            "en": "count the tokens of the dispense cut off first"},
    "dispense_not_waiting": {"fr": "La distribution {dispense} n'attend pas de comptage.",
                             "en": "dispense {dispense} is not waiting for a count"},
    "count_out_of_range": {"fr": "Entre 0 et {most} jetons ont pu tomber.",
                           "en": "between 0 and {most} tokens can have fallen"},
    # -- a calibration under way ----------------------------------------------------------
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
})


class Refusal(Exception):
    """A refused request as a code of `texts` and its values; ``str()`` is English."""

    texts: ClassVar[Catalogue] = HUB_REFUSALS

    def __init__(self, code: str, **values: Any) -> None:
        self.code = code
        self.values = values
        super().__init__(self.text("en"))

    def text(self, language: str) -> str:
        """The sentence in ``language`` ("fr" or "en")."""
        return self.texts.say(self.code, self.values, language)


class HubError(Refusal):
    """The request conflicts with the hub's state (no game, paused, over, a dispense not
    waiting, a calibration under way); nothing changed."""
