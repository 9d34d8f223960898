"""Reads at a moment served by a scope's view in memory (``memory/search/scopeclocks.py``)
answer exactly as the graph's statements do: the scripted Paris/Berlin/Rome history of
test_clocks.py, searched at each moment through another replica's view and through the
graph, and a retract or unretract through one replica shown at once by the other's view."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from graphmem.domain.moments import Moment
from graphmem.memory import Memory, RecallQuery
from graphmem.memory.search.fusion import Retriever
from tests.conftest import Api
from tests.integration.test_clocks import (
    BERLIN,
    PARIS,
    RETRACT,
    ROME,
    UNRETRACT,
    remember,
    tick,
)

QUERIES = ["Where does Ada live?", "Maison Verte Berlin", "Ada"]


class GraphProbes:
    """Counts the vector probes of the graph: a search served by a view makes none."""

    def __init__(self, service: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        search = service.ranker.graph.search
        probe = search.vector_hits

        async def counted(*args: Any, **kw: Any) -> Any:
            self.calls += 1
            return await probe(*args, **kw)

        monkeypatch.setattr(search, "vector_hits", counted)


async def search(
    service: Memory, tenant: str, query: str, moment: Moment, retriever: Retriever
) -> list[tuple[str, float]]:
    q = RecallQuery(query=query, user_id="ada", limit=20, moment=moment, retriever=retriever)
    return [(h.item.content, h.score) for h in await service.recall.search(tenant, q)]


async def both(
    service: Memory, tenant: str, query: str, moment: Moment, retriever: Retriever
) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """The search through the service's view, and through the graph."""
    viewed = await search(service, tenant, query, moment, retriever)
    versions = service.ranker.cache.versions
    service.ranker.cache.versions = None  # no view: the graph answers
    try:
        graphed = await search(service, tenant, query, moment, retriever)
    finally:
        service.ranker.cache.versions = versions
    return viewed, graphed


def at(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text.replace("Z", "+00:00"))


async def test_a_view_answers_every_moment_as_the_graph_does(
    api: Api, replica: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = next(iter(api.keys))
    t0 = await tick()
    await remember(api, PARIS, "2020-03-01T09:00:00+00:00")
    await remember(api, "Ada's cat is called Nimbus.", "2019-07-01T09:00:00+00:00", "t")
    t1 = await tick()
    berlin = await remember(api, BERLIN, "2023-05-01T09:00:00+00:00")
    t2 = await tick()
    rome = await remember(api, ROME, "2024-02-01T09:00:00+00:00")
    t3 = await tick()
    # the replica holds ada's view from here on; each change below reaches it
    assert ROME in [c for c, _ in await search(replica, tenant, "Ada", Moment(), Retriever.HYBRID)]
    await api.data(RETRACT, {"ids": [rome], "r": "never lived in Rome"})
    t4 = await tick()
    current = await search(replica, tenant, "Ada", Moment(), Retriever.HYBRID)
    assert ROME not in [c for c, _ in current] and BERLIN in [c for c, _ in current]
    await api.data(UNRETRACT, {"ids": [rome]})
    t5 = await tick()
    assert ROME in [c for c, _ in await search(replica, tenant, "Ada", Moment(), Retriever.HYBRID)]
    await api.data(RETRACT, {"ids": [berlin], "r": "a second thought"})
    t6 = await tick()

    valid = [None, "2019-01-01T00:00:00Z", "2021-01-01T00:00:00Z", "2023-06-01T00:00:00Z"]
    moments = [Moment(), Moment(history=True)]
    for a in (t0, t1, t2, t3, t4, t5, t6):
        for v in valid:
            moments += [Moment.of(at(a), at(v)), Moment.of(at(a), at(v), True)]
    moments += [Moment.of(None, at(v)) for v in valid[1:]]
    moments += [Moment.of(None, at(v), True) for v in valid[1:]]

    probes = GraphProbes(replica, monkeypatch)
    checked = 0
    for moment in moments:
        for query in QUERIES:
            for retriever in Retriever:
                viewed, graphed = await both(replica, tenant, query, moment, retriever)
                assert [c for c, _ in viewed] == [c for c, _ in graphed], (moment, query)
                for (_, mine), (_, theirs) in zip(viewed, graphed, strict=True):
                    assert mine == pytest.approx(theirs, abs=1e-5), (moment, query, retriever)
                checked += bool(viewed)
    # every view search was served by the view (only the graph searches probed)
    graph_probes = sum(r is not Retriever.FULLTEXT for r in Retriever) * len(QUERIES)
    assert probes.calls == graph_probes * len(moments)
    assert checked > len(moments)  # most moments see something

    # what the history says, through the view
    def seen(hits: list[tuple[str, float]]) -> set[str]:
        return {c for c, _ in hits} & {PARIS, BERLIN, ROME}

    async def through_view(moment: Moment) -> set[str]:
        return seen(await search(replica, tenant, "Ada", moment, Retriever.HYBRID))

    assert await through_view(Moment.of(at(t0))) == set()
    assert await through_view(Moment.of(at(t1))) == {PARIS}
    assert await through_view(Moment.of(at(t3))) == {PARIS, BERLIN, ROME}
    assert await through_view(Moment.of(at(t4))) == {PARIS, BERLIN}  # Rome retracted
    assert await through_view(Moment.of(at(t4), None, True)) == {PARIS, BERLIN, ROME}
    assert await through_view(Moment.of(at(t5))) == {PARIS, BERLIN, ROME}
    assert await through_view(Moment()) == {PARIS, ROME}  # Berlin retracted now
    assert await through_view(Moment.of(None, at(valid[2]))) == {PARIS}
