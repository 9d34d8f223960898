"""BM25 term statistics are per tenant: nothing another tenant stores moves a tenant's
fulltext scores (a side channel when one index served every tenant)."""

from __future__ import annotations

from graphmem.memory import Memory, RecallQuery
from graphmem.models import tenant_fulltext
from graphmem.retrieval import Retriever
from graphmem.stores.neo4j.fulltext import MIGRATION
from tests.conftest import Stack, new_tenant, run_cypher


async def fulltext_scores(service: Memory, tenant: str, query: str) -> list[tuple[str, float]]:
    hits = await service.recall.search(
        tenant, RecallQuery(query=query, user_id="u", limit=10, retriever=Retriever.FULLTEXT)
    )
    return [(h.item.content, h.score) for h in hits]


async def store(service: Memory, tenant: str, texts: list[str]) -> None:
    await service.ingest.add_many(
        tenant, [{"session_id": "s", "user_id": "u", "content": t} for t in texts]
    )
    await service.spills.spill(tenant, "s", count=len(texts))


async def test_another_tenants_text_does_not_move_bm25_scores(service: Memory) -> None:
    a, b = new_tenant(), new_tenant()
    await store(
        service,
        b,
        [
            "The zephyr blew over the harbour at dawn",
            "A quiet evening with a cup of tea",
            "Zephyr and the harbour again, a zephyr of a day",
        ],
    )
    before = await fulltext_scores(service, b, "zephyr harbour")
    control = await fulltext_scores(service, b, "tea evening")
    assert len(before) == 2 and len(control) == 1
    # Tenant A floods the same words (and a tenant of its own in the same database).
    await store(service, a, [f"zephyr zephyr harbour note {i}" for i in range(40)])
    assert await fulltext_scores(service, b, "zephyr harbour") == before
    assert await fulltext_scores(service, b, "tea evening") == control
    # A's own scores reflect A's statistics only
    assert len(await fulltext_scores(service, a, "zephyr")) == 10


async def test_migration_indexes_memories_written_before_per_tenant_indexes(
    service: Memory, stack: Stack
) -> None:
    tenant = new_tenant()
    await store(service, tenant, ["an old memory about lighthouses"])
    _, label = tenant_fulltext(tenant)
    # as a memory written by an earlier version: no tenant label, migration not yet run
    await run_cypher(stack, "MATCH (m:Memory {tenant: $t}) REMOVE m:$($l)", t=tenant, l=label)
    await run_cypher(stack, "MATCH (d:SchemaMigration {name: $n}) DELETE d", n=MIGRATION)
    assert await fulltext_scores(service, tenant, "lighthouses") == []
    await service.migrate()
    assert [c for c, _ in await fulltext_scores(service, tenant, "lighthouses")] == [
        "an old memory about lighthouses"
    ]
    rows = await run_cypher(stack, "MATCH (d:SchemaMigration {name: $n}) RETURN d", n=MIGRATION)
    assert len(rows) == 1


async def test_two_replicas_creating_a_tenants_index_at_once_both_succeed(stack: Stack) -> None:
    import asyncio

    from graphmem.cypher import library
    from graphmem.stores.neo4j.graph import Neo4jGraphStore

    stores = [
        Neo4jGraphStore.connect(stack.neo4j_uri, stack.neo4j_user, stack.neo4j_password, library())
        for _ in range(2)
    ]
    try:
        for _ in range(3):
            tenant = new_tenant()
            made = await asyncio.gather(*(s.fulltext.ensure(tenant) for s in stores))
            assert made[0] == made[1] == tenant_fulltext(tenant)
    finally:
        for store in stores:
            await store.close()
