"""The hub: the one owner of the game, between everything that makes inputs and shows them.

`GameHub` holds the game (through the rules engine), applies every input whoever makes it
(the camera loop, the buttons, the game master's page), writes it to the `Journal` before
anyone hears of it, and publishes each change to its subscribers. The scoreboard shows it and
submits the game master's inputs; the controller is the camera, vision and hardware loop, one
subscriber and one input source among others. `ports` names what each side may ask of the
other; `replay` rebuilds a game from a journal; `stats` counts each player's hands.
"""

from firmware_host.hub.errors import HUB_REFUSALS, HubError, Refusal
from firmware_host.hub.hub import GameHub, HubState, StreamsEnded
from firmware_host.hub.journal import Dispense, Journal, JournalError

__all__ = ["HUB_REFUSALS", "Dispense", "GameHub", "HubError", "HubState", "Journal",
           "JournalError", "Refusal", "StreamsEnded"]
