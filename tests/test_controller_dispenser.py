"""The token dispenser: the journal's ledger paid on a simulated tower (mock pins, hoppers
that drop tokens through a mock break-beam), token by token, jams held until resumed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import pinmap_text

from firmware_host.controller.dispenser import TokenDispenser
from firmware_host.hub.journal import Dispense, Journal
from hardware.pinmap import parse_pinmap
from hardware.simulation import SimulatedTower, simulation_timing

# Three seats, each with its own hopper, pusher servo and break-beam: the ledger of each seat
# can be compared with what really fell from its own hopper.
PER_SEAT = pinmap_text([(17, 12, 5), (27, 13, 6), (22, 18, 16)])


@pytest.fixture
def tower() -> Iterator[SimulatedTower]:
    pinmap = replace(parse_pinmap(PER_SEAT), timing=simulation_timing())
    with SimulatedTower(pinmap, tokens=20) as made:
        yield made


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal(tmp_path / "journal.sqlite3") as opened:
        yield opened


class Watch:
    """Collects what the dispenser tells; ``live`` says which actions still stand."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.jams: list[tuple[Dispense, str]] = []
        self.voids: list[Dispense] = []
        self.tokens: list[tuple[int, int]] = []
        self.before: list[tuple[int, int, str]] = []
        self.undone: set[int] = set()

    def live(self, action: int) -> bool:
        return action not in self.undone

    def on_jam(self, row: Dispense, detail: str) -> None:
        self.jams.append((row, detail))

    def on_void(self, row: Dispense) -> None:
        self.voids.append(row)

    def on_token(self, row: Dispense, delivered: int) -> None:
        self.tokens.append((row.id, delivered))

    def before_token(self, row: Dispense) -> None:
        # What the ledger holds as each stroke begins: every earlier token already counted.
        now = self.journal.dispense(row.id)
        self.before.append((row.id, now.delivered, now.state))


def dispenser(tower: SimulatedTower, journal: Journal, watch: Watch) -> TokenDispenser:
    return TokenDispenser(tower, journal, live=watch.live, on_jam=watch.on_jam,
                          on_void=watch.on_void, on_token=watch.on_token,
                          before_token=watch.before_token).start()


def throw(at: float) -> dict[str, object]:
    return {"action": "event", "at": at, "event": {"type": "throw", "faces": [4, 2, 1]}}


def dropped(tower: SimulatedTower) -> dict[int, int]:
    return {seat: hopper.dropped for seat, hopper in tower.hoppers.items()}


def test_intended_dispenses_are_paid_token_by_token(tower: SimulatedTower,
                                                    journal: Journal) -> None:
    watch = Watch(journal)
    first = journal.record(throw(1.0), [(0, 3), (2, 1)])
    second = journal.record(throw(2.0), [(1, 2)])
    payer = dispenser(tower, journal, watch)
    try:
        payer.wake()
        assert payer.idle()
    finally:
        payer.stop()
    rows = journal.dispenses()
    assert [(r.action, r.seat, r.delivered, r.state) for r in rows] == [
        (first, 0, 3, "done"), (first, 2, 1, "done"), (second, 1, 2, "done")]
    assert dropped(tower) == {1: 3, 2: 2, 3: 1}
    a, b, c = (r.id for r in rows)
    # Oldest first, each token counted before the next stroke.
    assert watch.before == [(a, 0, "started"), (a, 1, "started"), (a, 2, "started"),
                            (b, 0, "started"), (c, 0, "started"), (c, 1, "started")]
    assert watch.tokens == [(a, 1), (a, 2), (a, 3), (b, 1), (c, 1), (c, 2)]
    assert watch.jams == [] and watch.voids == []
    assert journal.delivered_by_seat() == {0: 3, 1: 2, 2: 1}


def test_nothing_is_paid_until_woken_and_nothing_twice(tower: SimulatedTower,
                                                       journal: Journal) -> None:
    watch = Watch(journal)
    payer = dispenser(tower, journal, watch)
    try:
        journal.record(throw(1.0), [(0, 2)])
        assert payer.idle()  # not woken: the new row waits
        assert dropped(tower)[1] == 0
        payer.wake()
        assert payer.idle()
        payer.wake()  # woken again with nothing new: nothing more falls
        assert payer.idle()
    finally:
        payer.stop()
    assert dropped(tower)[1] == 2
    assert journal.dispenses()[0].state == "done"


def test_an_empty_hopper_jams_holds_and_resumes_without_paying_twice(
        tower: SimulatedTower, journal: Journal) -> None:
    watch = Watch(journal)
    tower.hoppers[1].tokens = 2  # seat 1 (0 for the engine) holds only two tokens
    journal.record(throw(1.0), [(0, 5)])
    journal.record(throw(2.0), [(1, 1)])
    payer = dispenser(tower, journal, watch)
    try:
        payer.wake()
        assert payer.idle()
        assert payer.held
        assert len(watch.jams) == 1
        jammed, detail = watch.jams[0]
        assert (jammed.seat, jammed.delivered, jammed.state) == (0, 2, "intended")
        assert "empty or jammed" in detail and jammed.note == detail
        assert jammed.remaining == 3
        # Held: a wake (a new input) pays nothing, not even another seat's tokens.
        payer.wake()
        assert payer.idle()
        assert dropped(tower) == {1: 2, 2: 0, 3: 0}
        assert journal.dispense(jammed.id).delivered == 2
        # Refilled and resumed: the rest, and the dispense waiting behind it.
        tower.hoppers[1].tokens = 10
        payer.resume()
        assert payer.idle()
        assert not payer.held
    finally:
        payer.stop()
    rows = journal.dispenses()
    assert [(r.seat, r.delivered, r.state) for r in rows] == [(0, 5, "done"), (1, 1, "done")]
    assert dropped(tower) == {1: 5, 2: 1, 3: 0}
    assert tower.hoppers[1].tokens == 7
    assert [d for i, d in watch.tokens if i == jammed.id] == [1, 2, 3, 4, 5]


def test_idle_waits_for_the_jam_to_be_told(tower: SimulatedTower, journal: Journal) -> None:
    watch = Watch(journal)
    told, release = threading.Event(), threading.Event()

    def on_jam(row: Dispense, detail: str) -> None:
        told.set()
        assert release.wait(10)
        watch.on_jam(row, detail)

    tower.hoppers[2].tokens = 0
    journal.record(throw(1.0), [(1, 1)])
    payer = TokenDispenser(tower, journal, live=watch.live, on_jam=on_jam,
                           on_void=watch.on_void).start()
    try:
        payer.wake()
        assert told.wait(10)
        # Held already, but its callback has not returned: not idle yet.
        assert not payer.idle(timeout=0.05)
        release.set()
        assert payer.idle()
        assert len(watch.jams) == 1
    finally:
        release.set()
        payer.stop()


def test_a_dispense_whose_input_was_undone_is_voided(tower: SimulatedTower,
                                                     journal: Journal) -> None:
    watch = Watch(journal)
    undone = journal.record(throw(1.0), [(0, 2)])
    kept = journal.record(throw(2.0), [(1, 1)])
    watch.undone.add(undone)
    payer = dispenser(tower, journal, watch)
    try:
        payer.wake()
        assert payer.idle()
    finally:
        payer.stop()
    states = {r.action: (r.state, r.delivered) for r in journal.dispenses()}
    assert states == {undone: ("void", 0), kept: ("done", 1)}
    assert [(v.action, v.state) for v in watch.voids] == [(undone, "void")]
    assert dropped(tower) == {1: 0, 2: 1, 3: 0}


def test_undone_while_being_paid_is_voided_with_what_fell(tower: SimulatedTower,
                                                          journal: Journal) -> None:
    watch = Watch(journal)
    action = journal.record(throw(1.0), [(2, 3)])

    def undo_after_first_token(row: Dispense, delivered: int) -> None:
        watch.on_token(row, delivered)
        if delivered == 1:
            watch.undone.add(row.action)  # the game master undoes the throw mid-way

    payer = TokenDispenser(tower, journal, live=watch.live, on_jam=watch.on_jam,
                           on_void=watch.on_void, on_token=undo_after_first_token).start()
    try:
        payer.wake()
        assert payer.idle()
    finally:
        payer.stop()
    (row,) = journal.dispenses()
    # Paid to the end (a dispense is never cut short by an undo), then marked to hand back.
    assert (row.action, row.state, row.delivered) == (action, "void", 3)
    assert [(v.id, v.delivered) for v in watch.voids] == [(row.id, 3)]
    assert dropped(tower)[3] == 3


def test_stopping_between_tokens_leaves_it_intended(tower: SimulatedTower,
                                                    journal: Journal) -> None:
    watch = Watch(journal)
    journal.record(throw(1.0), [(0, 4)])
    payer: TokenDispenser

    def stop_after_second(row: Dispense, delivered: int) -> None:
        watch.on_token(row, delivered)
        if delivered == 2:
            # The tower shuts down now, from another thread (stop joins the worker).
            threading.Thread(target=payer.stop).start()
            # Test-only peek: the token loop goes on once the stop is asked for.
            with payer._wake:
                assert payer._wake.wait_for(lambda: payer._stopping, 10)

    payer = TokenDispenser(tower, journal, live=watch.live, on_jam=watch.on_jam,
                           on_void=watch.on_void, on_token=stop_after_second).start()
    payer.wake()
    payer._thread.join(10)
    assert not payer._thread.is_alive()
    (row,) = journal.dispenses()
    assert (row.state, row.delivered) == ("intended", 2)  # not "started": nothing in doubt
    assert journal.mark_cut_off() == []
    assert dropped(tower)[1] == 2
    # The next start pays the two still due, and only those.
    again = dispenser(tower, journal, watch)
    try:
        again.wake()
        assert again.idle()
    finally:
        again.stop()
    (row,) = journal.dispenses()
    assert (row.state, row.delivered) == ("done", 4)
    assert dropped(tower)[1] == 4


def test_started_and_doubtful_dispenses_are_never_paid_again(tower: SimulatedTower,
                                                             journal: Journal) -> None:
    watch = Watch(journal)
    journal.record(throw(1.0), [(0, 3), (1, 2)])
    a, b = journal.dispenses()
    journal.mark(a.id, "started")  # a crash cut this one off mid-way
    journal.count_token(a.id, 1)
    journal.mark(b.id, "doubt", delivered=1)
    payer = dispenser(tower, journal, watch)
    try:
        payer.wake()
        assert payer.idle()
    finally:
        payer.stop()
    assert dropped(tower) == {1: 0, 2: 0, 3: 0}
    assert [(r.state, r.delivered) for r in journal.dispenses()] == [("started", 1),
                                                                     ("doubt", 1)]


def test_a_stop_without_a_start_returns_and_pays_nothing(journal: Journal,
                                                         tower: SimulatedTower) -> None:
    watch = Watch(journal)
    payer = TokenDispenser(tower, journal, live=watch.live, on_jam=watch.on_jam,
                           on_void=watch.on_void)
    journal.record(throw(1.0), [(0, 2)])
    payer.stop()  # returns at once, raises nothing
    payer.start()  # started after its stop: its worker ends before paying anything
    payer.wake()
    payer.stop()
    assert dropped(tower) == {1: 0, 2: 0, 3: 0}
    assert [(r.state, r.delivered) for r in journal.dispenses()] == [("intended", 0)]
