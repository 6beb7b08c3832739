"""The league as one running thing: its file, its listener on the broker and its board.

`LeagueRunner` is what `dicetower league serve`, `dicetower demo --league` and `dicetower
bench league` start: the `LeagueStore`, a `LeagueListener` feeding it from the broker, the
tournament desk, and the board served by waitress.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from firmware_host.league.board import create_app
from firmware_host.league.bracket import TournamentDesk
from firmware_host.league.broker import RECONNECT, BrokerAddress
from firmware_host.league.ingest import LeagueListener
from firmware_host.league.messages import DEFAULT_PREFIX
from firmware_host.league.server import BoardServer
from firmware_host.league.standings import Scoring
from firmware_host.league.store import LeagueStore


@dataclass
class LeagueOptions:
    """Everything the league is started with (see `dicetower league serve --help`)."""

    broker: BrokerAddress
    file: Path
    prefix: str = DEFAULT_PREFIX
    host: str = "127.0.0.1"
    port: int = 8100
    pin: str | None = None
    lang: str = "fr"
    scoring: Scoring = field(default_factory=Scoring)
    reconnect: tuple[float, float] = RECONNECT
    client_id: str = "dicetower-league"


class LeagueRunner:
    """Starts and stops the league's parts together."""

    def __init__(self, options: LeagueOptions) -> None:
        self.options = options
        self.store = LeagueStore(options.file, options.scoring)
        self.desk = TournamentDesk(self.store, options.broker, prefix=options.prefix,
                                   reconnect=options.reconnect)
        self.listener = LeagueListener(self.store, options.broker, prefix=options.prefix,
                                       client_id=options.client_id,
                                       reconnect=options.reconnect)
        config: dict[str, Any] = {"LEAGUE_LANG": options.lang}
        if options.pin is not None:
            config["LEAGUE_PIN"] = options.pin
        self.app = create_app(self.store, config, tournament=self.desk)
        self.server: BoardServer | None = None

    @property
    def pin(self) -> str:
        return str(self.app.config["LEAGUE_PIN"])

    def start(self, *, serve: bool = True) -> None:
        """Listen to the broker (in the background: tried again until it answers), and
        serve the board (OSError when its port cannot be had)."""
        self.listener.start()
        self.desk.start()
        if serve:
            self.server = BoardServer(self.app, self.options.host, self.options.port).start()

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()
        self.desk.close()
        self.listener.close()
        self.store.close()
