"""BM25 term statistics are per tenant: nothing another tenant stores moves a tenant's
fulltext scores (a side channel when one index served every tenant). Inside a tenant, a
scope held in memory is scored with its own statistics: other users' text moves nothing."""

from __future__ import annotations

import asyncio

from graphmem.api.http.app import create_app
from graphmem.domain.models import tenant_fulltext
from graphmem.enrich import lexical
from graphmem.memory import Memory, RecallQuery
from graphmem.memory.search.fusion import Retriever
from graphmem.memory.writepath.analysis import analysed
from graphmem.stores.neo4j.fulltext import MIGRATION
from tests.conftest import Stack, new_tenant, run_cypher, running


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

    async def lucene() -> list[str]:  # the index itself: a scope in memory needs no label
        hits = await service.graph.search.text_hits(tenant, "content:lighthouses", 10)
        return hits.ids

    assert await lucene() == []
    await service.migrate()
    assert len(await lucene()) == 1
    rows = await run_cypher(stack, "MATCH (d:SchemaMigration {name: $n}) RETURN d", n=MIGRATION)
    assert len(rows) == 1


async def test_two_replicas_creating_a_tenants_index_at_once_both_succeed(stack: Stack) -> None:
    import asyncio

    from graphmem.stores.neo4j.graph import Neo4jGraphStore
    from graphmem.stores.neo4j.library import library

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


async def test_another_users_text_does_not_move_a_users_ranking_in_the_same_tenant(
    service: Memory,
) -> None:
    """A user's (and a session's) scope is scored with its own statistics: what other
    users of the tenant store changes neither the ranking nor the scores."""
    tenant = new_tenant()
    await store(
        service,
        tenant,
        [
            "The zephyr blew over the harbour at dawn",
            "We sailed out of the harbour with the ferry",
            "A zephyr of a day, warm and still",
            "A quiet evening with a cup of tea",
        ],
    )

    async def ranked(retriever: Retriever, **scope: str) -> list[tuple[str, float]]:
        query = RecallQuery(query="zephyr harbour ferry", limit=10, retriever=retriever, **scope)
        return [(h.item.content, h.score) for h in await service.recall.search(tenant, query)]

    scopes: list[dict[str, str]] = [{"user_id": "u"}, {"session_id": "s"}]
    before = {
        (r, i): await ranked(r, **s)
        for r in (Retriever.FULLTEXT, Retriever.HYBRID)
        for i, s in enumerate(scopes)
    }
    assert [c for c, _ in before[(Retriever.FULLTEXT, 0)]][:1] == [
        "We sailed out of the harbour with the ferry"
    ]
    # another user of the same tenant floods one of the words, in sessions of their own
    await service.ingest.add_many(
        tenant,
        [
            {"session_id": "s-other", "user_id": "other", "content": f"harbour {n}"}
            for n in range(60)
        ],
    )
    await service.spills.spill(tenant, "s-other", count=60)
    for (r, i), expected in before.items():
        assert await ranked(r, **scopes[i]) == expected, (r, scopes[i])


async def test_memories_analysed_by_no_version_are_found_and_a_backfill_analyses_them(
    service: Memory, stack: Stack
) -> None:
    tenant = new_tenant()
    await store(service, tenant, ["a lighthouse keeper's log", "tea at the lighthouse"])
    # as memories written before termBytes existed
    await run_cypher(
        stack, "MATCH (m:Memory {tenant: $t}) REMOVE m.termBytes, m.termVersion", t=tenant
    )
    service.ranker.cache.clear()
    found = await fulltext_scores(service, tenant, "lighthouse keeper")
    assert [c for c, _ in found] == ["a lighthouse keeper's log", "tea at the lighthouse"]
    # What it leaves is checked, not the count it returns: an API starting meanwhile on
    # the same database (CI's second lane) runs the same backfill and may get there first.
    await service.backfill_terms()
    rows = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t}) RETURN m.termBytes AS b, m.termVersion AS v",
        t=tenant,
    )
    assert all(r["b"] and r["v"] == lexical.VERSION for r in rows) and len(rows) == 2
    service.ranker.cache.clear()
    after = await fulltext_scores(service, tenant, "lighthouse keeper")
    assert [c for c, _ in after] == [c for c, _ in found]


async def test_the_backfill_pages_through_a_tenant_batch_after_batch(
    service: Memory, stack: Stack
) -> None:
    tenant = new_tenant()
    await store(service, tenant, [f"entry {n} of the harbour log" for n in range(7)])
    await run_cypher(
        stack, "MATCH (m:Memory {tenant: $t}) REMOVE m.termBytes, m.termVersion", t=tenant
    )
    # batches of two: the cursor has to carry each batch on from the last (the count is
    # not asserted: an API starting meanwhile may analyse some of them first)
    await service.graph.backfill_terms(analysed, lexical.VERSION, batch=2)
    rows = await run_cypher(
        stack, "MATCH (m:Memory {tenant: $t}) RETURN m.termVersion AS v", t=tenant
    )
    assert [r["v"] for r in rows] == [lexical.VERSION] * 7


async def test_the_api_analyses_older_memories_in_the_background_after_start(
    service: Memory, stack: Stack
) -> None:
    tenant = new_tenant()
    await store(service, tenant, ["the harbour master's ledger"])
    await run_cypher(
        stack, "MATCH (m:Memory {tenant: $t}) REMOVE m.termBytes, m.termVersion", t=tenant
    )
    async with running(create_app(stack.settings(maintenance_enabled=False))):
        # serving started (the lifespan did not wait); the analysis lands shortly after
        for _ in range(100):
            rows = await run_cypher(
                stack, "MATCH (m:Memory {tenant: $t}) RETURN m.termVersion AS v", t=tenant
            )
            if rows[0]["v"] == lexical.VERSION:
                break
            await asyncio.sleep(0.1)
        assert rows[0]["v"] == lexical.VERSION


async def test_the_indexes_of_configured_tenants_exist_before_their_first_request(
    stack: Stack,
) -> None:
    """The API makes its tenants' indexes when it starts: made on a tenant's first write,
    an index makes Neo4j drop every cached plan, and every tenant's next queries are
    planned again (searches of 0.4-0.8 s in bench/neighbours.py)."""
    from graphmem.domain.models import tenant_item_fulltext

    tenant = new_tenant()
    names = sorted([tenant_fulltext(tenant)[0], tenant_item_fulltext(tenant)[0]])
    show = "SHOW INDEXES YIELD name, state WHERE name IN $names RETURN name, state ORDER BY name"
    assert await run_cypher(stack, show, names=names) == []
    settings = stack.settings(api_keys={"key-provisioned": tenant}, maintenance_enabled=False)
    async with running(create_app(settings)):
        assert await run_cypher(stack, show, names=names) == [
            {"name": n, "state": "ONLINE"} for n in names
        ]
