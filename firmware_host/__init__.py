"""The tower's controller: rules engine, game loop, scoreboard and command line."""

__version__ = "0.1.0"
