"""Spill over the in-memory stores: hot items move into the graph lowest relevance and
oldest first, each in exactly one tier at the end; an item leaves Redis only once the
graph holds it; an item the graph refuses is parked and the rest go on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from graphmem.domain.models import EmbeddingSpace, MemoryItem, Tier
from graphmem.errors import BadInput, NotFound, Unavailable
from graphmem.stores.models import GraphMemory
from tests.support.contracts.common import days_ago, item
from tests.support.enrich import HashEmbedder
from tests.support.fakes.graph import FakeGraphStore
from tests.support.memory import TENANT, Fakes, fake_memory


def relevant(content: str, relevance: float, age_days: float, **fields: Any) -> MemoryItem:
    made = item(TENANT, "s1", content, created_at=days_ago(age_days), **fields)
    return made.model_copy(update={"relevance_score": relevance})


async def stored(f: Fakes, *items: MemoryItem) -> list[MemoryItem]:
    await f.hot.put(TENANT, "s1", items)
    return list(items)


async def test_spill_moves_the_lowest_relevance_then_the_oldest_first() -> None:
    f = fake_memory()
    low_old, low_new, high_old, high_new = await stored(
        f,
        relevant("low and old", 0.2, 3),
        relevant("low and new", 0.2, 1),
        relevant("high and old", 0.9, 5),
        relevant("high and new", 0.9, 0),
    )
    result = await f.memory.spills.spill(TENANT, "s1", count=3)
    assert result.spilled_ids == [low_old.id, low_new.id, high_old.id]
    assert await f.hot_ids() == {high_new.id}
    assert f.graph_tiers() == dict.fromkeys(result.spilled_ids, "cold")
    for item_id in result.spilled_ids:  # embedded on the way
        node = f.graph.node(TENANT, item_id)
        assert node is not None and node["vectorBytes"] is not None
    assert await f.hot.tokens(TENANT, "s1") == high_new.token_count


async def test_an_explicit_spill_without_count_moves_spill_count_items() -> None:
    f = fake_memory(spillCount=2)
    await stored(f, *(relevant(f"item {n}", 1.0, 5 - n) for n in range(5)))
    result = await f.memory.spills.spill(TENANT, "s1")
    assert result.spilled_count == 2 and len(await f.hot_ids()) == 3


async def test_often_accessed_items_go_warm_the_others_cold() -> None:
    f = fake_memory(warmAccessThreshold=2)
    busy, quiet = await stored(
        f, relevant("busy", 0.5, 1, access_count=3), relevant("quiet", 0.5, 2, access_count=2)
    )
    result = await f.memory.spills.spill(TENANT, "s1", count=2)
    assert result.warm_ids == [busy.id] and result.cold_ids == [quiet.id]
    assert f.graph_tiers() == {busy.id: "warm", quiet.id: "cold"}
    # an import restores the tier it recorded, whatever the access count
    (again,) = await stored(f, relevant("restored", 0.5, 1))
    await f.memory.spills.spill(TENANT, "s1", item_ids=[again.id], tier=Tier.WARM)
    assert f.graph_tiers()[again.id] == "warm"


async def test_spilling_named_items_that_are_not_hot_moves_nothing() -> None:
    f = fake_memory()
    (kept,) = await stored(f, relevant("kept", 0.5, 1))
    with pytest.raises(NotFound) as err:
        await f.memory.spills.spill(TENANT, "s1", item_ids=[kept.id, "mem_missing"])
    assert err.value.details == {"itemIds": ["mem_missing"]}
    assert await f.hot_ids() == {kept.id} and f.graph.nodes(TENANT) == []
    with pytest.raises(BadInput):
        await f.memory.spills.spill(TENANT, "s1", item_ids=[kept.id], tier=Tier.HOT)


async def test_spills_to_budget_lose_and_duplicate_nothing() -> None:
    f = fake_memory(hotTokenLimit=30, spillLowWater=0.6, spillBatchSize=3)
    for n in range(40):
        await f.add(f"memory number {n} of many", session_id="s1")
    await f.memory.spills.settle()
    hot, graph = await f.hot_ids(), set(f.graph_tiers())
    assert hot | graph == {i.id for i in f.added}
    assert not hot & graph
    assert await f.hot.tokens(TENANT, "s1") <= 30
    assert len(f.graph.nodes(TENANT)) == len(graph)  # one node per item


async def test_a_graph_outage_keeps_every_item_hot_and_its_vectors_for_the_retry() -> None:
    f = fake_memory()
    f.memory.spills.backoff_seconds = 0
    items = await stored(f, *(relevant(f"item {n}", 1.0, 3 - n) for n in range(3)))
    embedder = f.embedder
    assert isinstance(embedder, HashEmbedder)
    f.graph.faults.plan("upsert", Unavailable("neo4j went away"), times=f.memory.spills.retries)
    with pytest.raises(Unavailable):
        await f.memory.spills.spill(TENANT, "s1", count=3)
    assert await f.hot_ids() == {i.id for i in items}
    assert f.graph.nodes(TENANT) == []
    assert f.graph.faults.calls["upsert"] == f.memory.spills.retries
    cached = await f.hot.embeddings(TENANT, "s1", [i.id for i in items], model=embedder.name)
    assert set(cached) == {i.id for i in items}
    # the retry writes them with the vectors computed the first time
    embedded = len(embedder.embedded)
    await f.memory.spills.spill(TENANT, "s1", count=3)
    assert await f.hot_ids() == set() and set(f.graph_tiers()) == {i.id for i in items}
    assert len(embedder.embedded) == embedded


class RefusingGraph(FakeGraphStore):
    """A graph that refuses any batch holding one of ``refused``, as Neo4j refuses a value
    it cannot hold: the whole transaction fails."""

    def __init__(self, refused: set[str]) -> None:
        super().__init__()
        self.refused = refused

    async def upsert(
        self, tenant: str, memories: Sequence[GraphMemory], space: EmbeddingSpace
    ) -> list[str]:
        if any(m.item.id in self.refused for m in memories):
            raise BadInput("a value the graph cannot hold")
        return await super().upsert(tenant, memories, space)


async def test_an_item_the_graph_refuses_is_parked_and_the_others_are_spilled() -> None:
    f = fake_memory()
    items = [relevant(f"item {n}", 1.0, 9 - n) for n in range(6)]
    bad = items[2]
    graph = RefusingGraph({bad.id})
    f.memory.spills.graph = graph
    await stored(f, *items)
    result = await f.memory.spills.spill(TENANT, "s1", count=6)
    assert set(result.spilled_ids) == {i.id for i in items} - {bad.id}
    (parked,) = await f.hot.items(TENANT, "s1")
    assert parked.id == bad.id and parked.parked == "a value the graph cannot hold"
    assert {m["id"] for m in graph.nodes(TENANT)} == set(result.spilled_ids)
    # no later spill tries it again
    again = await f.memory.spills.spill(TENANT, "s1", count=6)
    assert again.spilled_ids == [] and await f.hot_ids() == {bad.id}


async def test_a_spill_bumps_the_scopes_of_what_it_wrote() -> None:
    f = fake_memory()
    a = relevant("a user's", 0.1, 2, user_id="u1")
    b = relevant("no user's", 0.1, 1)
    await stored(f, a, b)
    await f.memory.spills.spill(TENANT, "s1", count=2)
    assert f.versions is not None
    ((tenant, scopes, everything),) = f.versions.bumps
    assert tenant == TENANT and not everything
    assert scopes == {"t": {a.id, b.id}, "s:s1": {a.id, b.id}, "u:u1": {a.id}}


async def test_an_automatic_spill_never_moves_the_items_just_promoted() -> None:
    f = fake_memory(hotTokenLimit=20, spillLowWater=0.5)
    older = await stored(f, *(relevant(f"old hot item {n}", 0.1, 5) for n in range(4)))
    # the least relevant and oldest: the first to go, were it not just promoted
    promoted = relevant("promoted just now with eight words in it", 0.0, 10)
    await f.hot.put(TENANT, "s1", [promoted])
    config = await f.memory.sessions.config(TENANT, "s1")
    await f.memory.spills.to_budget(TENANT, "s1", config, keep=[promoted.id])
    assert promoted.id in await f.hot_ids()
    assert set(f.graph_tiers()) == {i.id for i in older}
    assert await f.hot.tokens(TENANT, "s1") == 8
