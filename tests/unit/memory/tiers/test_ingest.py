"""Ingest over the in-memory stores: an add lands in the session's hot tier and queues its
write-behind job; past the budget it starts a spill; a failed add stores nothing."""

from __future__ import annotations

import pytest

from graphmem.domain.models import MemoryType, Tier, content_hash
from graphmem.errors import BadInput, Unavailable
from graphmem.memory.inputs import AddMemory
from tests.support.memory import OTHER_TENANT, TENANT, fake_memory


async def test_an_add_lands_in_the_hot_tier_and_queues_its_job() -> None:
    f = fake_memory(queue=True)
    assert f.queue is not None
    items = await f.memory.ingest.add_many(
        TENANT,
        [
            AddMemory(session_id="s1", content="first words here", user_id="u"),
            AddMemory(session_id="s2", content="elsewhere", type=MemoryType.FACT),
            AddMemory(session_id="s1", content="second", metadata={"k": 1}),
        ],
    )
    first, other, second = items
    assert [i.id for i in await f.hot.items(TENANT, "s1")] == [first.id, second.id]
    assert [i.id for i in await f.hot.items(TENANT, "s2")] == [other.id]
    assert await f.hot.tokens(TENANT, "s1") == 4  # words: the test's token counter
    # one job per session, naming its items in order; the graph waits for the worker
    assert [(j.tenant, j.session_id, j.ids) for j in f.queue.jobs()] == [
        (TENANT, "s1", [first.id, second.id]),
        (TENANT, "s2", [other.id]),
    ]
    assert f.graph.nodes(TENANT) == []
    assert await f.hot.session_of(TENANT, other.id) == "s2"


async def test_new_items_start_hot_fully_relevant_in_conversation_order() -> None:
    f = fake_memory()
    items = await f.memory.ingest.add_many(
        TENANT, [{"session_id": "s1", "content": f"turn {n} of three"} for n in range(3)]
    )
    assert [i.seq for i in items] == sorted(i.seq for i in items)
    assert len({i.seq for i in items}) == 3
    for i in items:
        assert i.tier is Tier.HOT and i.relevance_score == 1.0 and i.access_count == 0
        assert i.token_count == 4 and i.content_hash == content_hash(i.content)
        assert i.tenant == TENANT
    stored = {i.id: i for i in await f.hot.items(TENANT, "s1")}
    assert all(stored[i.id] == i for i in items)


async def test_an_add_past_the_budget_spills_down_to_the_low_water_mark() -> None:
    f = fake_memory(hotTokenLimit=20, spillLowWater=0.5)
    for n in range(4):
        await f.add(f"five words in turn {n}")
    assert f.graph.nodes(TENANT) == []  # 20 tokens: at the budget, not past it
    await f.add("one more past the budget")
    await f.memory.spills.settle()
    assert await f.hot.tokens(TENANT, "s1") <= 10
    hot, graph = await f.hot_ids(), set(f.graph_tiers())
    assert hot | graph == {i.id for i in f.added} and not hot & graph
    # the oldest went first (all equally relevant)
    order = [i.id for i in f.added]
    assert graph == set(order[: len(graph)])
    assert await f.hot.index.over_budget(TENANT) == ["s1"]  # maintenance checks it


async def test_auto_spill_switched_off_leaves_the_session_over_its_budget() -> None:
    f = fake_memory(hotTokenLimit=16, autoSpillEnabled=False)
    for n in range(5):
        await f.add(f"five words in turn {n}")
    await f.memory.spills.settle()
    assert await f.hot.tokens(TENANT, "s1") == 25
    assert f.graph.nodes(TENANT) == []


async def test_a_failed_add_stores_nothing_in_any_session() -> None:
    f = fake_memory(queue=True)
    f.hot.faults.plan("put", Unavailable("redis went away"), after=1)
    with pytest.raises(Unavailable):
        await f.memory.ingest.add_many(
            TENANT,
            [
                {"session_id": "s1", "content": "stored first"},
                {"session_id": "s2", "content": "then the store failed"},
            ],
        )
    assert await f.hot.items(TENANT, "s1") == [] and await f.hot.items(TENANT, "s2") == []
    assert f.graph.nodes(TENANT) == []
    # a retry of the same add stores each item once
    await f.memory.ingest.add_many(
        TENANT,
        [
            {"session_id": "s1", "content": "stored first"},
            {"session_id": "s2", "content": "then the store failed"},
        ],
    )
    assert len(await f.hot.items(TENANT, "s1")) == 1 and len(await f.hot.items(TENANT, "s2")) == 1


async def test_write_through_holds_the_item_in_both_tiers() -> None:
    f = fake_memory(rules={"write_through": True})
    item = await f.add("kept in both tiers")
    assert await f.hot_ids() == {item.id}
    node = f.graph.node(TENANT, item.id)
    assert node is not None and node["tier"] == "hot" and node["vectorBytes"] is not None
    assert f.versions is not None and f.versions.bumps[-1][1]["s:s1"] == {item.id}


async def test_bad_input_is_refused_before_anything_is_stored() -> None:
    f = fake_memory()
    with pytest.raises(BadInput):
        await f.memory.ingest.add_many(TENANT, [])
    with pytest.raises(BadInput):
        await f.memory.ingest.add_many(
            TENANT, [{"session_id": "s1", "content": "x"}] * 501
        )  # over max_batch_items
    with pytest.raises(BadInput):
        await f.add("x", session_id="no spaces allowed")
    assert await f.hot.index.tenants() == []


async def test_tenants_with_the_same_session_ids_stay_apart() -> None:
    f = fake_memory()
    mine = await f.add("mine", tenant=TENANT)
    theirs = await f.add("theirs", tenant=OTHER_TENANT)
    assert await f.hot_ids(tenant=TENANT) == {mine.id}
    assert await f.hot_ids(tenant=OTHER_TENANT) == {theirs.id}
    assert await f.memory.promotion.get(OTHER_TENANT, mine.id) is None
