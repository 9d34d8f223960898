"""Tier behaviour beyond spill, recall and promote end to end (test_tier_api.py), against
the real Redis and Neo4j."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from graphmem.memory import Memory, RecallQuery
from graphmem.stores.redis.keys import session_keys
from tests.conftest import METRICS_TOKEN, Api, LiveApi, Stack, empty_redis_db, run_cypher
from tests.support.apis import build
from tests.support.documents import ADD, HOT, RECALL, SPILL, STATUS


async def graph_nodes(stack: Stack, tenant: str) -> list[dict[str, Any]]:
    return await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t}) RETURN m.id AS id, m.tier AS tier, "
        "m.accessCount AS accessCount, size(m.embedding) AS dims, m.content AS content",
        t=tenant,
    )


@pytest.fixture
async def builder_service(stack: Stack) -> AsyncIterator[Any]:
    made: list[Memory] = []

    async def make(**rules: Any) -> Memory:
        service = await build(stack, **rules)
        made.append(service)
        return service

    yield make
    for service in made:
        await service.close()


# --- per-session configuration ------------------------------------------------------------
CONFIGURE = """
mutation($s: ID!, $c: SessionConfigInput!) {
  configureSession(sessionId: $s, config: $c) { hotTokenLimit promoteThreshold autoSpillEnabled }
}"""
SESSION_CONFIG = "query($s: ID!) { sessionConfig(sessionId: $s) { hotTokenLimit spillCount } }"


async def test_session_overrides_apply_to_that_session_only(api: Api) -> None:
    data = await api.data(
        CONFIGURE, {"s": "small", "c": {"hotTokenLimit": 30, "promoteThreshold": 0.99}}
    )
    assert data["configureSession"] == {
        "hotTokenLimit": 30,
        "promoteThreshold": 0.99,
        "autoSpillEnabled": True,
    }
    assert (await api.data(SESSION_CONFIG, {"s": "small"}))["sessionConfig"]["hotTokenLimit"] == 30
    assert (await api.data(SESSION_CONFIG, {"s": "other"}))["sessionConfig"][
        "hotTokenLimit"
    ] == 4000
    for i in range(8):
        await api.data(
            ADD, {"input": {"sessionId": "small", "content": f"note {i} about the plan"}}
        )
        await api.data(
            ADD, {"input": {"sessionId": "other", "content": f"note {i} about the plan"}}
        )
    await api.settle()
    small = (await api.data(STATUS, {"s": "small"}))["memoryStatus"]
    other = (await api.data(STATUS, {"s": "other"}))["memoryStatus"]
    assert (
        small["hot"]["limit"] == 30 and small["hot"]["tokens"] <= 30 and small["cold"]["items"] > 0
    )
    assert other["hot"]["items"] == 8 and other["cold"]["items"] == 0
    # null resets to the default
    reset = await api.data(CONFIGURE, {"s": "small", "c": {"hotTokenLimit": None}})
    assert reset["configureSession"]["hotTokenLimit"] == 4000


async def test_session_overrides_are_validated(api: Api) -> None:
    body = await api.gql(CONFIGURE, {"s": "s", "c": {"promoteThreshold": 1.5}})
    assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    body = await api.gql(CONFIGURE, {"s": "s", "c": {"hotTokenLimit": 0}})
    assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT"


async def test_auto_spill_can_be_switched_off_per_session(api: Api) -> None:
    await api.data(CONFIGURE, {"s": "s", "c": {"hotTokenLimit": 20, "autoSpillEnabled": False}})
    for i in range(6):
        await api.data(ADD, {"input": {"sessionId": "s", "content": f"message number {i} here"}})
    status = (await api.data(STATUS, {"s": "s"}))["memoryStatus"]
    assert status["hot"]["items"] == 6 and status["cold"]["items"] == 0
    assert status["hot"]["tokens"] > 20
    assert [s["type"] for s in status["suggestions"]] == ["spill"]
    assert len(status["suggestions"][0]["itemIds"]) == 4


# --- recall ---------------------------------------------------------------------------------
async def test_recall_reports_hot_hits_and_tracks_their_access(api: Api) -> None:
    hot = await api.data(ADD, {"input": {"sessionId": "s", "content": "The deadline is Friday"}})
    await api.data(ADD, {"input": {"sessionId": "s", "content": "Bananas are yellow"}})
    query = """mutation($q: String!) { recall(input: {sessionId: "s", query: $q}) {
        items { id } hotHits { score item { id content accessCount relevanceScore } } } }"""
    data = (await api.data(query, {"q": "when is the deadline?"}))["recall"]
    assert data["items"] == []
    assert [h["item"]["id"] for h in data["hotHits"]] == [hot["addMemory"]["id"]]
    hit = data["hotHits"][0]
    assert hit["item"]["accessCount"] == 1
    assert abs(hit["item"]["relevanceScore"] - (1.0 + hit["score"]) / 2) < 1e-6
    # the cached embedding is reused by the spill, which still writes a full vector
    await api.data(SPILL, {"s": "s", "count": 2})


async def test_frequent_recall_warms_then_promotes_below_the_threshold(
    api: Api, stack: Stack
) -> None:
    tenant = next(iter(api.keys))
    item = (
        await api.data(
            ADD, {"input": {"sessionId": "s", "content": "The venue is the old harbour warehouse"}}
        )
    )["addMemory"]
    await api.data(SPILL, {"s": "s"})
    query = "where is the venue"
    promoted_at = None
    for n in range(1, 6):
        data = (await api.data(RECALL, {"input": {"sessionId": "s", "query": query}}))["recall"]
        score = data["scores"][0]["similarity"]
        assert 0.3 <= score <= 0.85, score  # relevant, but never above promoteThreshold
        if data["promoted"]:
            promoted_at = n
            break
        tier = {n["id"]: n["tier"] for n in await graph_nodes(stack, tenant)}[item["id"]]
        # accessCount > warmAccessThreshold (3) makes an item warm
        assert tier == ("warm" if n > 3 else "cold"), (n, tier)
    # promoteAccessCount (5): the fifth recall finds accessCount 5 and promotes
    assert promoted_at == 5
    assert [h["id"] for h in (await api.data(HOT, {"s": "s"}))["hot"]] == [item["id"]]


async def test_spill_sends_frequently_accessed_items_to_warm(api: Api) -> None:
    item = (await api.data(ADD, {"input": {"sessionId": "s", "content": "Alpha launch on May 3"}}))[
        "addMemory"
    ]
    await api.data(SPILL, {"s": "s"})
    for _ in range(4):  # accessCount 4 > warmAccessThreshold 3
        await api.data(
            RECALL,
            {"input": {"sessionId": "s", "query": "Alpha launch on May 3", "autoPromote": False}},
        )
    promote = "mutation($id: ID!) { promote(itemId: $id) { id tier accessCount } }"
    promoted = (await api.data(promote, {"id": item["id"]}))["promote"]
    assert promoted["tier"] == "HOT" and promoted["accessCount"] == 4
    spilled = (await api.data(SPILL, {"s": "s"}))["spill"]
    assert spilled["warmIds"] == [item["id"]] and spilled["targetTier"] == "WARM"
    status = (await api.data(STATUS, {"s": "s"}))["memoryStatus"]
    assert (status["warm"]["items"], status["cold"]["items"]) == (1, 0)


# --- builder rules (docs/concepts.md#builder) ----------------------------------------
async def test_cascading_get_with_and_without_promote_on_read(
    builder_service: Any, tenant: str
) -> None:
    plain = await builder_service()
    item = await plain.ingest.add(tenant, {"session_id": "s", "content": "cascade me"})
    assert (await plain.promotion.get(tenant, item.id)).tier.value == "hot"  # type: ignore[union-attr]
    await plain.spills.spill(tenant, "s")
    found = await plain.promotion.get(tenant, item.id)
    assert found is not None and found.tier.value == "cold"  # read_fallback, no promotion
    assert await plain.reports.hot_items(tenant, "s") == []

    no_fallback = await builder_service(read_fallback=False)
    assert await no_fallback.promotion.get(tenant, item.id) is None

    promoting = await builder_service(promote_on_read=True)
    found = await promoting.promotion.get(tenant, item.id)
    assert found is not None and found.tier.value == "hot"
    assert [i.id for i in await promoting.reports.hot_items(tenant, "s")] == [item.id]
    assert await promoting.promotion.get(tenant, "mem_unknown") is None


async def test_write_through_holds_the_item_in_both_tiers(
    builder_service: Any, tenant: str, stack: Stack
) -> None:
    service = await builder_service(write_through=True)
    item = await service.ingest.add(tenant, {"session_id": "s", "content": "written through"})
    nodes = await graph_nodes(stack, tenant)
    assert [(n["id"], n["tier"], n["dims"]) for n in nodes] == [(item.id, "hot", 384)]
    assert [i.id for i in await service.reports.hot_items(tenant, "s")] == [item.id]
    status = await service.reports.status(tenant, "s")
    assert (status.hot.items, status.warm.items, status.cold.items) == (1, 0, 0)
    await service.spills.spill(tenant, "s")
    assert [(n["id"], n["tier"]) for n in await graph_nodes(stack, tenant)] == [(item.id, "cold")]


async def test_hot_ttl_rule_sets_the_redis_expiry(
    builder_service: Any, tenant: str, stack: Stack
) -> None:
    service = await builder_service(hot_ttl=120)
    await service.ingest.add(tenant, {"session_id": "s", "content": "short lived"})
    async with stack.redis() as client:
        ttl = await client.ttl(session_keys(tenant, "s").items)
    assert 100 < ttl <= 120


# --- durability: TTL flush, demotion --------------------------------------------------------
async def test_idle_sessions_are_flushed_before_their_ttl_runs_out(
    stack: Stack, tenant: str
) -> None:
    # A Redis database of its own: maintenance visits every tenant's idle sessions, and
    # with this short TTL it would first flush what every earlier test left behind.
    own_db = await empty_redis_db(stack, 9)
    service = await build(
        stack,
        redis_url=own_db,
        config={
            "sessionTtlSeconds": 10,
            "flushBeforeExpirySeconds": 8,
            "maintenanceIntervalSeconds": 0.5,
        },
    )
    stop = asyncio.Event()
    loop = asyncio.create_task(service.maintenance.run(stop))
    try:
        items = [
            await service.ingest.add(tenant, {"session_id": "s", "content": f"fact {i}"})
            for i in range(3)
        ]
        await asyncio.sleep(12)  # past the TTL: Redis has dropped the session's keys
    finally:
        stop.set()
        await loop
    try:
        assert await service.reports.hot_items(tenant, "s") == []
        nodes = {n["id"]: n for n in await graph_nodes(stack, tenant)}
        assert set(nodes) == {i.id for i in items}
        assert all(n["tier"] == "cold" and n["dims"] == 384 for n in nodes.values())
    finally:
        await service.close()


async def test_demotion_policy_turns_idle_warm_memories_cold(stack: Stack, tenant: str) -> None:
    service = await build(stack, config={"demoteAfterIdleSeconds": 0.5})
    try:
        item = await service.ingest.add(tenant, {"session_id": "s", "content": "rarely used"})
        await service.spills.spill(tenant, "s")
        for _ in range(4):
            await service.recall.recall(
                tenant, RecallQuery(session_id="s", query="rarely used", auto_promote=False)
            )
        assert {n["id"]: n["tier"] for n in await graph_nodes(stack, tenant)}[item.id] == "warm"
        await asyncio.sleep(1)
        report = await service.maintenance.run_once()
        assert report.demoted[tenant] == [item.id]
        assert {n["id"]: n["tier"] for n in await graph_nodes(stack, tenant)}[item.id] == "cold"
    finally:
        await service.close()


# --- metrics ---------------------------------------------------------------------------------
def metric(text: str, name: str, tenant: str | None = None) -> float:
    label = f'{{tenant="{tenant}"}}' if tenant else ""
    match = re.search(rf"^{re.escape(name + label)} (\S+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


async def test_metrics_move_as_operations_run(live_api: LiveApi) -> None:
    tenant = next(iter(live_api.keys))

    async def scrape() -> str:
        async with httpx.AsyncClient() as client:
            headers = {"Authorization": f"Bearer {METRICS_TOKEN}"}
            return (await client.get(f"{live_api.url}/metrics", headers=headers)).text

    before = await scrape()
    assert "# TYPE memory_recall_latency_ms histogram" in before
    await live_api.gql(
        'mutation { configureSession(sessionId: "m", config: {hotTokenLimit: 40}) '
        "{ hotTokenLimit } }"
    )
    for i in range(3):
        await live_api.gql(
            ADD, {"input": {"sessionId": "m", "content": f"metric note {i} about cats"}}
        )
    mid = await scrape()
    assert 0 < metric(mid, "memory_hot_utilization", tenant) <= 100
    await live_api.gql(SPILL, {"s": "m", "count": 3})
    await live_api.gql(RECALL, {"input": {"sessionId": "m", "query": "metric note 1 about cats"}})
    await live_api.gql(
        RECALL,
        {
            "input": {
                "sessionId": "m",
                "query": "quantum chromodynamics lattice",
                "autoPromote": False,
            }
        },
    )
    after = await scrape()
    assert metric(after, "memory_spill_count_total", tenant) >= 1
    assert metric(after, "memory_recall_count_total", tenant) == 2
    assert metric(after, "memory_promotion_count_total", tenant) >= 1
    assert (
        metric(after, "memory_recall_latency_ms_count")
        >= metric(before, "memory_recall_latency_ms_count") + 2
    )
    assert metric(after, "memory_hit_rate", tenant) == 0.5
    assert metric(after, "memory_hot_utilization", tenant) != metric(
        mid, "memory_hot_utilization", tenant
    )


async def test_an_automatic_spill_goes_down_to_the_low_water_mark(
    builder_service: Any, tenant: str
) -> None:
    service = await builder_service()
    config = {"hotTokenLimit": 100}
    await service.sessions.configure(tenant, "lw", config)
    added = 0
    while (await service.reports.status(tenant, "lw")).cold.items == 0:
        await service.ingest.add(
            tenant, {"session_id": "lw", "content": f"note number {added} here"}
        )
        added += 1
        assert added < 100, "no automatic spill happened"
    status = await service.reports.status(tenant, "lw")
    # spilled to 80% of the budget, not just under it: the next adds fit without a spill
    assert status.hot.tokens <= 80
    spilled = status.cold.items
    await service.ingest.add(tenant, {"session_id": "lw", "content": "one more short note"})
    assert (await service.reports.status(tenant, "lw")).cold.items == spilled
