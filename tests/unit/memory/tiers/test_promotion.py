"""Promotion over the in-memory stores: a graph memory comes back into its session's hot
tier (the graph keeps its durable copy, marked hot), spilling others if that takes the
session over budget; the cascading get reads hot first, then the graph."""

from __future__ import annotations

import pytest

from graphmem.domain.models import MemoryItem, Tier
from graphmem.errors import NotFound
from tests.support.memory import OTHER_TENANT, TENANT, Fakes, fake_memory


async def spilled(f: Fakes, *contents: str, session_id: str = "s1") -> list[MemoryItem]:
    items = [await f.add(c, session_id=session_id) for c in contents]
    await f.memory.spills.spill(TENANT, session_id, item_ids=[i.id for i in items])
    return items


async def test_promote_brings_a_graph_memory_back_hot() -> None:
    f = fake_memory()
    (memory,) = await spilled(f, "worth keeping close")
    assert await f.hot_ids() == set()
    promoted = await f.memory.promotion.promote(TENANT, memory.id)
    assert promoted.id == memory.id and promoted.tier is Tier.HOT
    assert promoted.relevance_score == 1.0
    (hot,) = await f.hot.items(TENANT, "s1")
    assert hot.id == memory.id and hot.content == "worth keeping close"
    assert f.graph_tiers() == {memory.id: "hot"}  # the durable copy stays
    assert f.versions is not None and f.versions.bumps[-1][1]["s:s1"] == {memory.id}
    # promoting it again finds it hot and changes nothing
    assert (await f.memory.promotion.promote(TENANT, memory.id)).id == memory.id
    assert len(await f.hot.items(TENANT, "s1")) == 1


async def test_a_promotion_past_the_budget_spills_others_not_what_it_promoted() -> None:
    f = fake_memory(hotTokenLimit=16, spillLowWater=0.5)
    (old,) = await spilled(f, "an old memory of six words")
    for n in range(3):
        await f.add(f"hot memory number {n}")
    await f.memory.promotion.promote(TENANT, old.id)
    hot = await f.hot_ids()
    assert old.id in hot
    assert await f.hot.tokens(TENANT, "s1") <= 8
    assert set(f.graph_tiers()) == {old.id} | ({i.id for i in f.added} - hot)


async def test_the_cascading_get_reads_the_graph_without_promoting_by_default() -> None:
    f = fake_memory()
    (memory,) = await spilled(f, "in the graph only")
    found = await f.memory.promotion.get(TENANT, memory.id)
    assert found is not None and found.tier is Tier.COLD
    assert await f.hot_ids() == set()
    hot = await f.add("in the hot tier")
    found = await f.memory.promotion.get(TENANT, hot.id)
    assert found is not None and found.tier is Tier.HOT


async def test_promote_on_read_brings_what_the_get_found_back_hot() -> None:
    f = fake_memory(rules={"promote_on_read": True})
    (memory,) = await spilled(f, "read me back")
    found = await f.memory.promotion.get(TENANT, memory.id)
    assert found is not None and found.tier is Tier.HOT
    assert await f.hot_ids() == {memory.id}


async def test_without_read_fallback_the_get_looks_in_the_hot_tier_only() -> None:
    f = fake_memory(rules={"read_fallback": False})
    (memory,) = await spilled(f, "graph only")
    assert await f.memory.promotion.get(TENANT, memory.id) is None


async def test_promotion_finds_nothing_of_another_tenant() -> None:
    f = fake_memory()
    (memory,) = await spilled(f, "tenant a's memory")
    with pytest.raises(NotFound):
        await f.memory.promotion.promote(OTHER_TENANT, memory.id)
    with pytest.raises(NotFound):
        await f.memory.promotion.promote(TENANT, "mem_unknown")
    assert await f.hot.items(OTHER_TENANT, "s1") == []
    assert f.graph_tiers() == {memory.id: "cold"}
