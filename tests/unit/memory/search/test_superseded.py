"""A superseded memory (every relation it asserts closed by a later one) loses a share
of its score and never ranks above a memory that closed it."""

from __future__ import annotations

from graphmem.memory.search.ranking import demoted
from graphmem.memory.search.scopeview import Turn


def turn(item_id: str) -> Turn:
    return Turn(item_id, "s", "u", 0, "message")


def test_a_superseded_memory_goes_below_its_closer() -> None:
    ranked = [(turn("paris"), 0.9, 0.8), (turn("berlin"), 0.7, 0.6), (turn("other"), 0.5, 0.4)]
    out = demoted(ranked, {"paris": ["berlin"]}, 0.1)
    assert [t.id for t, _, _ in out] == ["berlin", "paris", "other"]
    assert out[1][1] < 0.7


def test_without_its_closer_in_the_ranking_it_only_loses_a_share() -> None:
    ranked = [(turn("paris"), 0.9, 0.8), (turn("other"), 0.85, 0.4)]
    out = demoted(ranked, {"paris": ["berlin"]}, 0.1)
    assert [(t.id, round(s, 3)) for t, s, _ in out] == [("other", 0.85), ("paris", 0.81)]


def test_nothing_superseded_keeps_the_order() -> None:
    ranked = [(turn("a"), 0.9, 0.8), (turn("b"), 0.7, 0.6)]
    assert demoted(ranked, {}, 0.1) == ranked
