"""The rule that turns four readers' opinions of one straightened die into a value or a reason
(`vision.combined`), and how a candidate's reading becomes a die (`vision.scene_reading`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import vision
import vision.pipeline as pipeline
from vision import combined, every_way, scene_reading, straightening
from vision.detect import Candidate
from vision.face import FaceReading
from vision.layout import fit_layout
from vision.pips import PipReading
from vision.readers import shipped


def _mine(value: int | None, confidence: float = 0.9) -> PipReading:
    pips = tuple((36.0 + 8 * k, 36.0 + 8 * k, 4.0) for k in range(value or 0))
    return PipReading(value, confidence, None if value else "not a pip face", pips, "dark", 90.0,
                      fit_layout(np.array([(p[0], p[1]) for p in pips])) if value else None)


def _face(value: int | None, confidence: float = 0.9) -> FaceReading:
    pips = tuple((36.0 + 8 * k, 36.0 + 8 * k, 4.0) for k in range(value or 0))
    return FaceReading(value, confidence, None if value else "not a pip face", pips, "dark")


_FOUR = ((28.0, 28.0), (44.0, 28.0), (28.0, 44.0), (44.0, 44.0))


def _unread(centres: tuple[tuple[float, float], ...]) -> PipReading:
    """A built-in reading that found pips at ``centres`` but gave no value."""
    pips = tuple((x, y, 4.0) for x, y in centres)
    return PipReading(None, 0.3, "not a pip face", pips, "dark", 90.0, None)


def _net(value: int, sure: float) -> np.ndarray:
    """Face-network probabilities with ``sure`` on ``value`` (0 = no readable face)."""
    probs = np.full(7, (1.0 - sure) / 6.0, np.float32)
    probs[value] = sure
    return probs


class _Unasked:
    """A face network the rule must not ask: the patch's probabilities are given."""

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        raise AssertionError("the face network was asked again")


def _doubt(value: int, likeliest: int) -> np.ndarray:
    """Face-network probabilities that prefer ``likeliest`` (0.45) but still give ``value``
    0.3: a value doubted, not contradicted."""
    probs = np.full(7, 0.05, np.float32)
    probs[likeliest], probs[value] = 0.45, 0.3
    return probs


@pytest.mark.parametrize(("mine", "net", "face", "expected"), [
    (_mine(5), _net(5, 0.99), _face(None), 5),      # both readers give the value
    (_mine(5), _net(5, 0.5), _face(None), 5),       # ... however unsure the network is
    (_mine(2), _net(2, 0.5), _face(None), None),    # ... but a two it doubts, one pip reader:
    (_mine(2, 1.0), _net(2, 0.43), _face(None), None),  # a leaning die's top and side pips
    (_mine(2), _net(2, 0.5), _face(2), 2),          # ... both pip readers settle it
    (_mine(1, 1.0), _net(1, 0.6), _face(None), None),  # a lone blob the network doubts
    (_mine(2), _net(3, 0.6), _face(2), None),       # readers disagree: unsure
    (_mine(2), _net(5, 0.95), _face(5), 5),         # the built-in reader outvoted by two
    (_mine(2), _net(5, 0.4), _face(5), None),       # ... not by a network less than half sure
    (_mine(2), _net(5, 0.95), _face(None), None),   # ... nor by the network alone
    (_mine(6), _net(0, 0.95), _face(6), None),      # the network sees no flat face
    (_mine(None), _net(4, 0.95), _face(4), 4),      # a sure network, confirmed by the pips
    (_mine(None), _net(4, 0.95), _face(None), None),  # ... not confirmed: unsure
    (_mine(None), _net(4, 0.95), _face(3), None),   # ... contradicted: unsure
    (_mine(None), _net(1, 0.85), _face(1), 1),      # the face reader agrees: two readers
    (_mine(None), _net(1, 0.4), _face(1), None),    # ... but the network is not half sure
    (_mine(None), _net(1, 0.6), _face(1), None),    # ... a one read only 0.6 sure: unsure
    (_mine(None), _net(3, 0.6), _face(3), 3),       # ... where a three of 0.6 stands
    (_mine(2), _doubt(2, 3), _face(2), 2),          # a two doubted, found by both pip readers
    (_mine(None), _net(2, 0.6), _face(2), None),    # ... by one, the network 0.6 sure: unsure
    (_unread(_FOUR), _net(4, 0.95), _face(None), 4),  # pips on a four's grid confirm a sure net
    (_unread(_FOUR), _net(4, 0.6), _face(None), None),  # ... not a network 0.6 sure
    (_mine(None), _net(0, 0.99), _face(2), None),   # no face at all
])
def test_values_need_the_support_the_rule_asks_for(
    monkeypatch, mine: PipReading, net: np.ndarray, face: FaceReading, expected: int | None
) -> None:
    monkeypatch.setattr(combined, "read_pips", lambda *a, **k: mine)
    monkeypatch.setattr(combined, "read_face", lambda *a, **k: face)
    monkeypatch.setattr(combined, "pips_alike", lambda *a, **k: True)
    patch = np.full((72, 72, 3), 230, np.uint8)
    reading = combined.combined_reading(patch, None, net, net=_Unasked())
    assert reading.value == expected
    if expected is None:
        assert reading.reason in vision.REASONS


@pytest.mark.parametrize(("net", "coloured", "expected"), [
    (_net(4, 0.6), _mine(4), 4),        # pips of one colour confirm a network half sure
    (_net(4, 0.4), _mine(4), None),     # ... not one less than half sure
    (_net(4, 0.95), _mine(3), None),    # ... nor a value they do not form
    (_net(0, 0.9), _mine(4), None),     # ... nor a patch the network sees no face on
])
def test_pips_of_one_colour_are_a_third_reader(
    monkeypatch, net: np.ndarray, coloured: PipReading, expected: int | None
) -> None:
    monkeypatch.setattr(combined, "read_pips", lambda *a, **k: _mine(None))
    monkeypatch.setattr(combined, "read_face", lambda *a, **k: _face(None))
    monkeypatch.setattr(combined, "read_pip_colour", lambda *a, **k: coloured)
    monkeypatch.setattr(combined, "pips_alike", lambda *a, **k: True)
    reading = combined.combined_reading(np.full((72, 72, 3), 230, np.uint8), None, net,
                                        net=_Unasked())
    assert reading.value == expected


@pytest.mark.parametrize(("net", "face", "expected"), [
    (_net(3, 0.95), _face(3), 3),       # every reader sees a three, the network 0.95 sure
    (_net(3, 0.8), _face(3), None),     # ... the network not sure enough: cocked
    (_net(3, 0.95), _face(None), None),  # ... the face reader does not see it: cocked
])
def test_unlike_pips_make_a_die_cocked_unless_every_reader_agrees(
    monkeypatch, net: np.ndarray, face: FaceReading, expected: int | None
) -> None:
    monkeypatch.setattr(combined, "read_pips", lambda *a, **k: _mine(3))
    monkeypatch.setattr(combined, "read_face", lambda *a, **k: face)
    monkeypatch.setattr(combined, "pips_alike", lambda *a, **k: False)
    reading = combined.combined_reading(np.full((72, 72, 3), 230, np.uint8), None, net,
                                        net=_Unasked())
    assert reading.value == expected
    assert reading.reason == (None if expected else "cocked")


def test_a_reading_gives_only_values_the_network_makes_possible(monkeypatch) -> None:
    # The pipeline skips pip clusters and re-read sizes by `possible_values` alone, without
    # reading them: that is only sound if no reading of the other readers could give another.
    rng = np.random.default_rng(5)
    patch = np.full((72, 72, 3), 230, np.uint8)
    outside = 0
    for _ in range(600):
        # Peaked and flat beliefs alike (a likeliest value below NET_DOUBT too).
        probs = rng.dirichlet(np.full(7, rng.choice([0.5, 6.0]))).astype(np.float32)
        values = rng.integers(0, 7, 4)
        mine, face, one, colour = (_mine(int(values[0]) or None), _face(int(values[1]) or None),
                                   _mine(int(values[2]) or None), _mine(int(values[3]) or None))
        monkeypatch.setattr(combined, "read_pips", lambda *a, m=mine, **k: m)
        monkeypatch.setattr(combined, "read_face", lambda *a, f=face, **k: f)
        monkeypatch.setattr(combined, "read_one", lambda *a, o=one, **k: o)
        monkeypatch.setattr(combined, "read_pip_colour", lambda *a, c=colour, **k: c)
        possible = combined.possible_values(probs)
        outside += any(v not in possible for v in values if v)
        value = combined.combined_reading(patch, None, probs, net=shipped().face).value
        assert value is None or value in possible
    assert outside > 200  # readers often proposed values the network rules out


class _TurnedNet:
    """A face network that gives ``turned`` for every view it is shown (the patch turned
    and mirrored), and counts the views."""

    def __init__(self, turned: np.ndarray) -> None:
        self.turned, self.views = turned, 0

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        self.views += len(patches)
        return np.stack([self.turned] * len(patches))


@pytest.mark.parametrize("net", [_net(4, 0.999), _net(1, 0.999)])
def test_the_network_alone_reads_no_die_in_the_reading_rule(monkeypatch, net: np.ndarray) -> None:
    # However sure the network is, no pip reader reading the die leaves it unsure here: its
    # word alone is judged over every view of the patch (`vision.every_way.read_every_way`).
    fake = _TurnedNet(net)
    monkeypatch.setattr(combined, "read_pips", lambda *a, **k: _mine(None))
    monkeypatch.setattr(combined, "read_face", lambda *a, **k: _face(None))
    monkeypatch.setattr(combined, "read_pip_colour", lambda *a, **k: _mine(None))
    monkeypatch.setattr(combined, "read_one", lambda *a, **k: _mine(None))
    reading = combined.combined_reading(np.full((72, 72, 3), 230, np.uint8), None, net,
                                        net=fake)
    assert reading.value is None and reading.reason in vision.REASONS
    assert fake.views == 0


@pytest.mark.parametrize("turn", range(1, 8))
def test_the_belief_of_no_face_is_the_same_however_the_patch_is_turned(turn: int) -> None:
    # A patch of a rendered die, half hidden under the tray's edge (so no clear belief either
    # way), turned and mirrored as a photo's copies would show it.
    from vision.lab.render import DieSpec, TraySpec, render_tray

    shot = render_tray(TraySpec(dice=(DieSpec(5, (60, 60), 40, 20.0, (200, 40, 40),
                                              (250, 250, 250)),)), seed=3)
    patch = straightening.straighten(shot.image, (52.0, 52.0), 0.0, 40.0)[0]
    turned = patch[:, ::-1] if turn >= 4 else patch
    turned = np.ascontiguousarray(np.rot90(turned, turn % 4))
    net = shipped().face
    own, seen = net.probabilities([patch, turned])[:, 0]
    beliefs = combined.no_face_every_way([patch, turned], [float(own), float(seen)], net)
    assert beliefs[1] == pytest.approx(beliefs[0], abs=1e-5)


@pytest.mark.parametrize(("own", "others", "blank"), [
    (0.95, 0.80, False),  # sure of no face as cut, not turned: a die's face half seen
    (0.85, 0.95, True),   # not quite sure as cut, sure every other way: a blank
    (0.95, 0.95, True),
])
def test_an_unsure_die_is_a_blank_only_when_no_face_is_sure_every_way(
    monkeypatch, own: float, others: float, blank: bool
) -> None:
    net = _TurnedNet(_net(0, others))
    cand = Candidate((36.0, 36.0), (48.0, 48.0), 0.0, False, "body")
    die = vision.Die(None, cand.center, tuple(map(tuple, cand.corners())), 0.2, "not a pip face")
    patch = np.full((72, 72, 3), 230, np.uint8)
    found = scene_reading.Found(die, (1, 0.0), cand.center, cand, own, patch)
    assert (every_way.without_blanks([found], net) == []) is blank
    # A die with a value is never a blank.
    read = scene_reading.Found(replace(die, value=3, reason=None), (0, -1.0), cand.center, cand,
                               own, patch)
    assert every_way.without_blanks([read], net) == [read]


@pytest.mark.parametrize("mine", [_unread(_FOUR), _mine(3)], ids=["no value", "a three"])
@pytest.mark.parametrize(("net", "expected"), [
    (_net(1, 0.85), 1),     # a sure network's one, found alone by the built-in reader
    (_net(1, 0.6), None),   # ... a one read only 0.6 sure is left unsure
    (_net(1, 0.4), None),   # ... as it is with a network less than half sure
    (_net(2, 0.99), None),  # the lone-pip check is for a one only
])
def test_a_one_beside_side_face_pips_needs_the_network_and_the_lone_pip(
    monkeypatch, mine: PipReading, net: np.ndarray, expected: int | None
) -> None:
    monkeypatch.setattr(combined, "read_pips", lambda *a, **k: mine)
    monkeypatch.setattr(combined, "read_face", lambda *a, **k: _face(None))
    lone = PipReading(1, 0.9, None, ((36.0, 36.0, 6.0),), "dark", 90.0,
                      fit_layout(np.array([(36.0, 36.0)])))
    monkeypatch.setattr(combined, "read_one", lambda *a, **k: lone)
    patch = np.full((72, 72, 3), 230, np.uint8)
    assert combined.combined_reading(patch, None, net, net=shipped().face).value == expected


@pytest.mark.parametrize(("net", "kept"), [
    (_net(1, 0.95), True),   # the network, seeing the whole die, is sure of a one
    (_net(1, 0.7), False),   # ... not sure enough: a lone pip by an edge is a two's or three's
    (_net(2, 0.95), False),  # ... sure of another value
])
def test_a_lone_pip_near_a_body_edge_is_a_one_only_if_the_network_is_sure(
    monkeypatch, net: np.ndarray, kept: bool
) -> None:
    one = PipReading(1, 0.9, None, ((36.0, 36.0, 6.0),), "dark", 90.0,
                     fit_layout(np.array([(36.0, 36.0)])))  # the patch centre
    monkeypatch.setattr(scene_reading, "combined_reading", lambda *a, **k: one)
    work = np.full((200, 200, 3), 128, np.uint8)
    mask = np.zeros((200, 200), np.uint8)
    mask[50:150, 50:150] = 255  # a die body; the pip lies 8 px inside its edge
    cand = Candidate((58.0, 100.0), (40.0, 40.0), 0.0, False, "pips")
    view = straightening.View(40.0, *pipeline.straighten(work, cand.center, 0.0, 40.0), net)
    found = scene_reading.read_candidate(mask, cand, 40.0, None, view, net=_Unasked())
    assert (found is not None and found.die.value == 1) == kept


@pytest.mark.parametrize(("value", "source", "score", "kept"), [
    (1, "pips", 1.0, False),   # a lone dot on a plain floor: a speck, however sure the network
    (1, "found", 0.9, True),   # ... unless the die finder is sure of a die there
    (1, "found", 0.3, False),  # ... not when it is unsure of it
    (2, "pips", 1.0, True),    # two pips a face apart: the network's word still stands
])
def test_a_lone_pip_without_a_body_needs_the_finder(
    monkeypatch, value: int, source: str, score: float, kept: bool
) -> None:
    centres = [(36.0, 36.0)] if value == 1 else [(24.0, 24.0), (48.0, 48.0)]
    reading = PipReading(value, 0.9, None, tuple((x, y, 6.0) for x, y in centres), "dark",
                         90.0, fit_layout(np.array(centres)))
    monkeypatch.setattr(scene_reading, "combined_reading", lambda *a, **k: reading)
    work = np.full((200, 200, 3), 128, np.uint8)
    mask = np.zeros((200, 200), np.uint8)  # nothing stands out from the floor
    cand = Candidate((100.0, 100.0), (40.0, 40.0), 0.0, False, source, score=score)
    view = straightening.View(40.0, *pipeline.straighten(work, cand.center, 0.0, 40.0),
                              _net(value, 0.99))
    found = scene_reading.read_candidate(mask, cand, 40.0, None, view, net=_Unasked())
    assert (found is not None and found.die.value == value) == kept


def test_an_unsure_die_offers_the_likely_values_first() -> None:
    probs = np.array([0.45, 0.02, 0.3, 0.0, 0.1, 0.06, 0.07], np.float32)
    assert combined.likely_values(probs) == (2, 4, 6, 5)
    assert combined.likely_values(_net(0, 0.99)) == ()


def test_the_network_vouches_only_for_a_sure_face() -> None:
    assert combined.net_vouches(_net(3, 0.95))
    assert not combined.net_vouches(_net(3, 0.6))
    assert not combined.net_vouches(_net(0, 0.99))

