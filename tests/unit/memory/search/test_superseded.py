"""A superseded memory (every relation it asserts closed by a later one) loses a share
of its score and never ranks above a memory that closed it."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

from graphmem.domain.moments import NOW, Moment
from graphmem.memory import RecallQuery
from graphmem.memory.search.ranking import Early, Ranker, demoted
from graphmem.memory.search.scopeview import Turn
from graphmem.memory.search.weights import Weights


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


async def test_what_was_read_early_is_not_read_again_and_the_rest_is() -> None:
    asked: list[list[str]] = []
    closed = {"paris": ["berlin"], "rome": ["berlin"]}

    async def superseded(tenant: str, ids: Sequence[str], moment: Moment) -> dict[str, list[str]]:
        asked.append(list(ids))
        return {i: closed[i] for i in ids if i in closed}

    ranker = SimpleNamespace(
        weights=Weights(), graph=SimpleNamespace(search=SimpleNamespace(superseded=superseded))
    )
    ranked = [(turn(i), 1.0 - n / 10, 0.5) for n, i in enumerate(["paris", "rome", "berlin"])]
    early = Early(["paris", "berlin", "elsewhere"], superseded("t", ["paris", "berlin"], NOW))
    q = RecallQuery(query="where", limit=3)
    out, found = await Ranker.demote_superseded(ranker, "t", q, ranked, early)  # type: ignore[arg-type]
    assert asked == [["paris", "berlin"], ["rome"]]  # only what the early read left out
    assert [t.id for t, _, _ in out] == ["berlin", "paris", "rome"]  # both below berlin
    assert found == closed
