"""Talking to the installer: the steps, a progress bar per step (on a terminal only), the
questions of the live form, and the annotated preview of each step."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from tqdm import tqdm

STEPS = 4


class Reporter:
    """Prints the calibration's steps to ``out``; progress bars go to ``err`` when it is a
    terminal (``bars`` None) or when asked (True); ``interactive``: questions wait for Enter."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None, *,
                 interactive: bool = False, bars: bool | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.interactive = interactive
        self.bars = self.err.isatty() if bars is None else bars
        self.lines: list[str] = []  # everything said, for the summary and for tests
        self.current = ""  # the step under way, for a message when something stops it

    def say(self, text: str) -> None:
        self.lines.append(text)
        print(text, file=self.out, flush=True)

    def step(self, number: int, title: str) -> None:
        self.current = f"step {number} ({title})"
        self.say(f"Step {number}/{STEPS}: {title}")

    def ask(self, prompt: str) -> None:
        """Ask the installer to do something; wait for Enter unless non-interactive."""
        if not self.interactive:
            self.say(f"  {prompt} (non-interactive: going on)")
            return
        self.lines.append(prompt)
        print(f"  {prompt} ", end="", file=self.out, flush=True)
        try:
            input()
        except EOFError:
            raise KeyboardInterrupt from None  # stdin closed: nobody will answer

    def answer(self, prompt: str) -> str:
        """The installer's answer to ``prompt`` (a line typed at the terminal)."""
        self.lines.append(prompt)
        print(prompt, end="", file=self.out, flush=True)
        try:
            return input()
        except EOFError:
            raise KeyboardInterrupt from None  # stdin closed: nobody will answer

    def preview(self, name: str, image: Any) -> None:
        """A step's annotated picture, as soon as it is made: the terminal saves them all at
        the end (`store`), a page shows each at once (`calibration.web`)."""

    @contextmanager
    def progress(self, total: int, what: str) -> Iterator[Any]:
        """A bar of ``total`` units (a no-op off a terminal); yields a `tick(n)` callable."""
        if not self.bars:
            yield lambda n=1: None
            return
        bar = tqdm(total=total, desc=f"  {what}", file=self.err, leave=False,
                   bar_format="{desc}: {bar} {n_fmt}/{total_fmt}")
        try:
            yield lambda n=1: bar.update(n)
        finally:
            bar.close()
