"""Labels of the scoreboard in French (the default: it is a French bar game) and English.

The same table serves the templates and the page's script, which renders live updates.
Game words with no good English equivalent (charge, décharge, nénette, fiche) stay French.
What the rules engine says (its prompt: what happens next) comes from the engine's own table
(`firmware_host.rules.texts`), added to the labels under ``prompt_<code>``.
"""

from __future__ import annotations

from flask import current_app, request

from firmware_host.catalogue import LANGUAGES, Catalogue
from firmware_host.rules.texts import PROMPTS

__all__ = ["DEFAULT_LANGUAGE", "LABELS", "LANGUAGES", "LANGUAGE_COOKIE", "labels",
           "pick_language", "request_language"]

DEFAULT_LANGUAGE = "fr"
LANGUAGE_COOKIE = "lang"  # the page's language, remembered by the browser

LABELS = Catalogue.by_language("scoreboard.labels", {
    "fr": {
        "title": "dicetower — tableau des scores",
        "admin_title": "dicetower — meneur de jeu",
        "live": "en direct",
        "offline": "reconnexion…",
        "paused": "pause",
        "ended": "partie terminée",
        "no_game": "Pas de partie en cours.",
        "players": "Joueurs",
        "seat": "place",
        "tokens": "jetons",
        "fiches": "fiches",
        "score": "points",
        "out": "sorti",
        "lost": "perdant",
        "won": "gagnant",
        "to_move": "à jouer",
        "pot": "pot",
        "manche": "manche",
        "throw": "lancer",
        "throws": "lancers",
        "hand": "main",
        "current_throw": "Lancer en cours",
        "kept": "gardé",
        "round": "Ce tour",
        "best": "meilleure",
        "worst": "pire",
        "last_round": "Tour précédent",
        "phase_opening": "ouverture",
        "phase_charge": "charge",
        "phase_decharge": "décharge",
        "phase_rampo": "rampo",
        "phase_manche_over": "fin de manche",
        "phase_over": "fin de partie",
        "phase_round": "tour unique",
        "turn": "tourne",
        "opening_tie": "égalité à l'ouverture, relancent :",
        "phase_start": "départ",
        "phase_play": "jeu",
        "phase_present": "présentation du carré",
        "present": "présente le carré",
        "present_near": "position face à l'adversaire",
        "send_present": "Présenter (4D)",
        "square": "Le carré",
        "near": "près",
        "far": "loin",
        "left": "gauche",
        "right": "droite",
        "fifth": "cinquième dé",
        "locked": "bloqué",
        "target": "objectif",
        "last_move": "Dernier coup",
        "showing": "le carré montre",
        "camera": "Caméra",
        "no_camera": "pas de caméra",
        "confidence": "confiance",
        "history": "Historique",
        "stats": "Statistiques",
        "stat_throws": "lancers",
        "stat_hands": "mains",
        "stat_421": "421",
        "stat_nenette": "nénettes",
        "stat_scored": "coups qui marquent",
        "join": "Rejoindre",
        "join_hint": "Scannez pour suivre la partie",
        "host": "machine",
        "pin": "Code PIN",
        "login": "Entrer",
        "logout": "Sortir",
        "new_game": "Nouvelle partie",
        "preset": "variante",
        "player_names": "joueurs, dans l'ordre des places (un par ligne)",
        "knobs": "réglages",
        "default": "par défaut",
        "start": "Commencer",
        "enter_throw": "Saisir un lancer",
        "dice_count": "dés lancés",
        "keep": "garder",
        "faces": "faces",
        "send_throw": "Lancer",
        "send_turn": "Tourner (4D)",
        "stop": "Stop",
        "correct": "Corriger le dernier lancer",
        "undo": "Annuler",
        "pause": "Pause",
        "resume": "Reprendre",
        "end": "Terminer la partie",
        "confirm_end": "Terminer la partie ?",
        "done": "fait",
        "gm": "meneur de jeu",
        "board": "tableau",
        "effects": "effets",
        "manches_won": "manches gagnées",
        "charge_winner": "gagne la charge",
        "decharge_winner": "gagne la décharge",
        "presents": "présente la position {near} (le {face}) à {player}",
        "rampo_between": "rampo entre",
        "stake_worst": "pour la pire main",
        "stake_best": "pour la meilleure main",
        "loses_with": "perd avec",
        "wins_with": "gagne avec",
        "manche_lost": "perd la manche",
        "rotate": "puis tourner le carré",
        "rotate_cw": "sens horaire (bloque sa droite)",
        "rotate_ccw": "sens antihoraire (bloque sa gauche)",
        "cw": "horaire",
        "ccw": "antihoraire",
        "position": "position",
        "tokens_moved": "jetons",
        "tower": "tour",
        "status_ready": "prête",
        "status_reading": "lecture…",
        "status_reroll": "relancez",
        "status_error": "erreur",
        "camera_down": "caméra en panne",
        "camera_waiting": "caméra prête, en attente d'un lancer",
        "token": "jeton",
        "tokens_card": "Jetons",
        "dispense_of": "{player} : {delivered} sur {requested} {tokens}",
        "dispense_intended": "à distribuer",
        "dispense_started": "en cours",
        "dispense_doubt": "interrompue, à compter",
        "gives": "{from} donne {count} {tokens} à {to}",
        "dispense_confirm": "Combien de jetons sont tombés ?",
        "dispense_due": "{player} devait recevoir {requested} {tokens}, {delivered} compté(s)",
        "confirm": "Confirmer",
        "resume_jam": "Reprendre (distributeur débloqué)",
        "fairness_biased": (
            "Les dés semblent déséquilibrés : le {face} sort {share} du temps au lieu de "
            "16,7 % ({dice} dés lus, {p}). Regardez s'ils sont ébréchés ou usés, ou "
            "changez-les ; « dicetower fairness » en dit plus."
        ),
        "calib_title": "Calibration de la caméra",
        "calib_intro": (
            "Règle la tour à la lumière et aux dés du bar ; la partie est en pause pendant ce "
            "temps."
        ),
        "calib_expect": "Dés par lancer",
        "calib_name": "Nom du profil",
        "calib_start": "Calibrer",
        "calib_next": "Suivant",
        "calib_cancel": "Annuler",
        "calib_step": "Étape {step}/{steps} : {title}",
        "calib_step_0": "démarrage",
        "calib_step_1": "le plateau vide",
        "calib_step_2": "la lumière",
        "calib_step_3": "les dés",
        "calib_step_4": "la vérification",
        "calib_msg_starting": "Démarrage…",
        "calib_msg_working": "Calcul en cours…",
        "calib_msg_clear": "Retirez tous les dés du plateau, puis « Suivant ».",
        "calib_msg_throw": (
            "Lancez les {n} dés dans la piste, laissez-les s'arrêter, puis « Suivant » (lancer "
            "{k} sur {of})."
        ),
        "calib_msg_finish": "Retirez les dés du plateau, puis « Suivant » : la partie reprend.",
        "calib_msg_over": "Terminé.",
        "calib_corners_hint": (
            "Le contour du plateau est trouvé seul ; pour le donner à la main, touchez ses quatre"
            " coins sur l'image (avant le premier lancer)."
        ),
        "calib_corners": "Coins : {count}/4",
        "calib_corners_clear": "Reprendre les coins",
        "calib_saved": (
            "Profil enregistré : {path}. La tour lit avec lui dès maintenant (sûre à {sure} sur "
            "la vérification). Pour le garder après un redémarrage : [tower] profile = \"{path}\""
            " dans tower.toml."
        ),
        "calib_backup": "Profil précédent conservé : {path}",
        "calib_refused": (
            "Non enregistré : avec ce profil la vérification lit {read} dés sur {expected}, sans "
            "profil {without}. À corriger : {advice}. Images : {previews}"
        ),
        "calib_refused_default": "plus de lumière, un plateau plus propre ou d'autres dés",
        "calib_failed": "Calibration arrêtée, rien n'est enregistré : {detail}",
        "calib_cancelled": "Annulée : rien n'a changé.",
    },
    "en": {
        "title": "dicetower — scoreboard",
        "admin_title": "dicetower — game master",
        "live": "live",
        "offline": "reconnecting…",
        "paused": "paused",
        "ended": "game over",
        "no_game": "No game yet.",
        "players": "Players",
        "seat": "seat",
        "tokens": "tokens",
        "fiches": "fiches",
        "score": "points",
        "out": "out",
        "lost": "loser",
        "won": "winner",
        "to_move": "to play",
        "pot": "pot",
        "manche": "manche",
        "throw": "throw",
        "throws": "throws",
        "hand": "hand",
        "current_throw": "Current throw",
        "kept": "kept",
        "round": "This round",
        "best": "best",
        "worst": "worst",
        "last_round": "Previous round",
        "phase_opening": "opening",
        "phase_charge": "charge",
        "phase_decharge": "décharge",
        "phase_rampo": "rampo",
        "phase_manche_over": "end of manche",
        "phase_over": "game over",
        "phase_round": "single round",
        "turn": "turns",
        "opening_tie": "opening tie, throwing again:",
        "phase_start": "start",
        "phase_play": "play",
        "phase_present": "presenting the square",
        "present": "presents the square",
        "present_near": "position facing the opponent",
        "send_present": "Present (4D)",
        "square": "The square",
        "near": "near",
        "far": "far",
        "left": "left",
        "right": "right",
        "fifth": "fifth die",
        "locked": "locked",
        "target": "target",
        "last_move": "Last move",
        "showing": "the square shows",
        "camera": "Camera",
        "no_camera": "no camera",
        "confidence": "confidence",
        "history": "History",
        "stats": "Statistics",
        "stat_throws": "throws",
        "stat_hands": "hands",
        "stat_421": "421",
        "stat_nenette": "nénettes",
        "stat_scored": "scoring moves",
        "join": "Join",
        "join_hint": "Scan to follow the game",
        "host": "host",
        "pin": "PIN",
        "login": "Log in",
        "logout": "Log out",
        "new_game": "New game",
        "preset": "variant",
        "player_names": "players, in seat order (one per line)",
        "knobs": "settings",
        "default": "default",
        "start": "Start",
        "enter_throw": "Enter a throw",
        "dice_count": "dice thrown",
        "keep": "keep",
        "faces": "faces",
        "send_throw": "Throw",
        "send_turn": "Turn (4D)",
        "stop": "Stop",
        "correct": "Correct the last throw",
        "undo": "Undo",
        "pause": "Pause",
        "resume": "Resume",
        "end": "End the game",
        "confirm_end": "End the game?",
        "done": "done",
        "gm": "game master",
        "board": "scoreboard",
        "effects": "effects",
        "manches_won": "manches won",
        "charge_winner": "wins the charge",
        "decharge_winner": "wins the décharge",
        "presents": "presents position {near} (the {face}) to {player}",
        "rampo_between": "rampo between",
        "stake_worst": "for the worst hand",
        "stake_best": "for the best hand",
        "loses_with": "loses with",
        "wins_with": "wins with",
        "manche_lost": "loses the manche",
        "rotate": "then turn the square",
        "rotate_cw": "clockwise (locks their right die)",
        "rotate_ccw": "anticlockwise (locks their left die)",
        "cw": "clockwise",
        "ccw": "anticlockwise",
        "position": "position",
        "tokens_moved": "tokens",
        "tower": "tower",
        "status_ready": "ready",
        "status_reading": "reading…",
        "status_reroll": "throw again",
        "status_error": "error",
        "camera_down": "camera down",
        "camera_waiting": "camera ready, waiting for a throw",
        "token": "token",
        "tokens_card": "Tokens",
        "dispense_of": "{player}: {delivered} of {requested} {tokens}",
        "dispense_intended": "to pay",
        "dispense_started": "paying",
        "dispense_doubt": "cut off, to be counted",
        "gives": "{from} gives {count} {tokens} to {to}",
        "dispense_confirm": "How many tokens fell?",
        "dispense_due": "{player} was due {requested} {tokens}, {delivered} counted",
        "confirm": "Confirm",
        "resume_jam": "Resume (dispenser cleared)",
        "fairness_biased": (
            "The dice look biased: the {face} comes up {share} of the time instead of 16.7% "
            "({dice} dice read, {p}). Look for chipped or worn dice, or change them; "
            "`dicetower fairness` tells more."
        ),
        "calib_title": "Camera calibration",
        "calib_intro": "Tunes the tower to the bar's light and dice; the game is paused meanwhile.",
        "calib_expect": "Dice per throw",
        "calib_name": "Profile name",
        "calib_start": "Calibrate",
        "calib_next": "Next",
        "calib_cancel": "Cancel",
        "calib_step": "Step {step}/{steps}: {title}",
        "calib_step_0": "starting",
        "calib_step_1": "the empty tray",
        "calib_step_2": "the light",
        "calib_step_3": "the dice",
        "calib_step_4": "the check",
        "calib_msg_starting": "Starting…",
        "calib_msg_working": "Working…",
        "calib_msg_clear": "Take every die out of the tray, then press Next.",
        "calib_msg_throw": (
            "Throw the {n} dice into the roll zone, let them rest, then press Next (throw {k} of "
            "{of})."
        ),
        "calib_msg_finish": "Take the dice out of the tray, then press Next: the game goes on.",
        "calib_msg_over": "Done.",
        "calib_corners_hint": (
            "The tray's outline is found by itself; to give it by hand, tap its four corners on "
            "the picture (before the first throw)."
        ),
        "calib_corners": "Corners: {count}/4",
        "calib_corners_clear": "Tap the corners again",
        "calib_saved": (
            "Profile saved: {path}. The tower reads with it from now on (sure {sure} on the "
            "check). To keep it after a restart: [tower] profile = \"{path}\" in tower.toml."
        ),
        "calib_backup": "Previous profile kept: {path}",
        "calib_refused": (
            "Not saved: with this profile the check reads {read} of {expected} dice, without any "
            "profile {without}. To fix: {advice}. Pictures: {previews}"
        ),
        "calib_refused_default": "more light, a cleaner tray or other dice",
        "calib_failed": "Calibration stopped, nothing saved: {detail}",
        "calib_cancelled": "Cancelled: nothing changed.",
    },
})


def pick_language(requested: str | None, cookie: str | None, default: str) -> str:
    """The query parameter wins, then the remembered choice, then the configured default."""
    for candidate in (requested, cookie, default):
        if candidate in LANGUAGES:
            return candidate
    return DEFAULT_LANGUAGE


def request_language() -> str:
    """The language of the page a request comes from: ``?lang=``, then the cookie, then the
    scoreboard's configured default (as the pages pick theirs)."""
    return pick_language(
        request.args.get("lang"),
        request.cookies.get(LANGUAGE_COOKIE),
        current_app.config.get("SCOREBOARD_LANG", DEFAULT_LANGUAGE),
    )


def labels(language: str) -> dict[str, str]:
    """The page's labels in ``language``, with the engine's prompts (``prompt_<code>``)."""
    if language not in LANGUAGES:
        language = DEFAULT_LANGUAGE
    prompts = {f"prompt_{code}": text for code, text in PROMPTS.in_language(language).items()}
    return {**LABELS.in_language(language), **prompts}
