"""Checks shared by the tower's end-to-end and crash tests, independent of the tower's own code.

`replay_journal` reads the journal file with plain SQLite and replays its inputs into fresh
rules engines, so the game the tower shows can be compared with what the rules say of the
inputs it wrote down. `audit_tokens` accounts for every token: the tokens on the table (the
`TokenTray` file, read line by line), the journal's token ledger and the engine's
``tokens_from_pot`` effects must all agree. `Scoreboard` reads the served scoreboard over HTTP
and acts on it as the game master, with the PIN, the session cookie and the CSRF token.
"""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

from firmware_host.rules import Game, new_game

PIN = "246810"  # the game master's PIN of the scoreboards the tests serve


@dataclass
class Replayed:
    """The journal's games as a fresh engine plays them."""

    games: list[Game] = field(default_factory=list)
    # (action id, seat) -> tokens the engine says that input takes from the pot.
    owed: dict[tuple[int, int], int] = field(default_factory=dict)
    # Action ids whose input still stands in its game's history (not undone, not corrected).
    live: set[int] = field(default_factory=set)
    # The last game's actions after its new_game: ("event" | "correct" | "pause" | "end", id).
    kinds: list[tuple[str, int]] = field(default_factory=list)

    @property
    def game(self) -> Game | None:
        return self.games[-1] if self.games else None


def journal_actions(db_path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Every action of the journal file, in order, read without the tower's Journal class."""
    db = sqlite3.connect(db_path)
    try:
        rows = db.execute("SELECT id, body FROM actions ORDER BY id").fetchall()
    finally:
        db.close()
    return [(int(i), json.loads(body)) for i, body in rows]


def ledger_rows(db_path: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(db_path)
    try:
        rows = db.execute("SELECT id, action, seat, requested, delivered, state, note "
                          "FROM dispenses ORDER BY id").fetchall()
    finally:
        db.close()
    keys = ("id", "action", "seat", "requested", "delivered", "state", "note")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def replay_journal(db_path: Path) -> Replayed:
    """Replay every journaled input into fresh engines (one per new game)."""
    out = Replayed()
    stack: list[int] = []  # action id behind each entry of the current game's history
    for action_id, action in journal_actions(db_path):
        kind = action["action"]
        if kind == "new_game":
            out.live.update(stack)
            stack = []
            out.kinds = []
            out.games.append(new_game(action["preset"], list(action["players"]),
                                      action.get("knobs") or None))
            continue
        game = out.game
        assert game is not None, f"action {action_id} ({kind}) comes before any new game"
        out.kinds.append((kind, action_id))
        if kind == "event":
            event = action["event"]
            effects = game.apply(event)
            if event.get("type") == "undo":
                stack.pop()
                continue
            stack.append(action_id)
        elif kind == "correct":
            last = dict(game.history[-1]["event"])
            last["faces"] = list(action["faces"])
            if action.get("keep") is not None:
                last["keep"] = list(action["keep"])
            if action.get("rotate") is not None:
                last["rotate"] = action["rotate"]
            game.undo()
            effects = game.apply(last)
            stack[-1] = action_id
        else:
            continue  # pause, end: no game input
        for effect in effects:
            if effect["kind"] == "tokens_from_pot" and effect["count"] > 0:
                key = (action_id, int(effect["player"]))
                out.owed[key] = out.owed.get(key, 0) + int(effect["count"])
    out.live.update(stack)
    return out


def tray_counts(tokens_path: Path) -> Counter[int]:
    """Tokens on the table by dispense id, straight from the file (one line per token)."""
    counts: Counter[int] = Counter()
    if tokens_path.exists():
        for line in tokens_path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                counts[int(line)] += 1
    return counts


def audit_tokens(db_path: Path, tokens_path: Path, *, cut_off: bool = False,
                 settled: bool = False) -> list[str]:
    """Every disagreement between the table, the ledger and the engine ([] when none).

    ``cut_off``: the tower was just killed, so a dispense under way may hold one token more
    on the table than its ledger counted. ``settled``: nothing may still be due (game over).
    """
    problems: list[str] = []
    replayed = replay_journal(db_path)
    rows = ledger_rows(db_path)
    on_table = tray_counts(tokens_path)
    booked = {(r["action"], r["seat"]): r["requested"] for r in rows}
    if booked != replayed.owed:
        problems.append(f"ledger {sorted(booked.items())} != engine "
                        f"{sorted(replayed.owed.items())}")
    ids = {r["id"] for r in rows}
    stray = {k: v for k, v in on_table.items() if k not in ids}
    if stray:
        problems.append(f"tokens on the table for no dispense: {stray}")
    for row in rows:
        fell = on_table.get(row["id"], 0)
        extra_ok = cut_off and row["state"] in ("started", "doubt")
        if fell != row["delivered"] and not (extra_ok and fell == row["delivered"] + 1):
            problems.append(f"dispense {row}: {fell} token(s) on the table")
        if row["delivered"] > row["requested"]:
            problems.append(f"dispense {row}: paid more than due")
        if row["state"] == "done" and row["delivered"] != row["requested"]:
            problems.append(f"dispense {row}: done but not paid in full")
        if settled and row["action"] in replayed.live and row["state"] != "done":
            problems.append(f"dispense {row}: still due at the end")
    return problems


class Scoreboard:
    """An HTTP client of the served scoreboard, with a session (cookies) and its CSRF token."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        self.csrf = ""

    def get(self, path: str) -> dict[str, Any]:
        with self.opener.open(self.url + path, timeout=10) as response:
            return json.loads(response.read())

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        request = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "X-CSRF-Token": self.csrf})
        try:
            with self.opener.open(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read() or b"{}")

    def login(self, pin: str = PIN) -> None:
        self.csrf = self.get("api/session")["csrf"]
        status, body = self.post("api/admin/login", {"pin": pin})
        assert status == 200, body
        self.csrf = body["csrf"]

    def tower(self) -> dict[str, Any]:
        return self.get("api/state")["tower"] or {}
