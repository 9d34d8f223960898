"""Neo4j 5.26 community: the vector index exists after migration and answers queryNodes."""

from __future__ import annotations

import uuid

from neo4j import AsyncGraphDatabase

from graphmem.memory import Memory
from tests.conftest import Stack


async def test_migration_is_idempotent_and_indexes_are_online(service: Memory) -> None:
    first = await service.migrate()
    second = await service.migrate()
    assert first == second
    assert "schema/003_memory_vector" in first
    state = await service.graph.index_state()  # type: ignore[attr-defined]
    assert state["memory_embedding"]["state"] == "ONLINE"
    assert state["memory_embedding"]["type"] == "VECTOR"
    config = state["memory_embedding"]["options"]["indexConfig"]
    assert config["vector.dimensions"] == service.embedder.dimension == 384
    assert config["vector.similarity_function"] == "COSINE"
    # BM25 runs on one fulltext index per tenant; the shared one is gone
    index, _ = await service.graph.fulltext.ensure("t-index-check")  # type: ignore[attr-defined]
    state = await service.graph.index_state([index, "memory_fulltext"])  # type: ignore[attr-defined]
    assert state[index]["type"] == "FULLTEXT" and state[index]["state"] == "ONLINE"
    assert "memory_fulltext" not in state


async def test_query_nodes_returns_the_nearest_neighbour(stack: Stack) -> None:
    label = f"Probe{uuid.uuid4().hex[:8]}"
    index = f"probe_{uuid.uuid4().hex[:8]}"
    driver = AsyncGraphDatabase.driver(
        stack.neo4j_uri, auth=(stack.neo4j_user, stack.neo4j_password)
    )
    async with driver:
        try:
            await driver.execute_query(
                f"CREATE VECTOR INDEX {index} FOR (n:{label}) ON n.v "
                "OPTIONS {indexConfig: {`vector.dimensions`: 3, "
                "`vector.similarity_function`: 'cosine'}}"
            )
            await driver.execute_query(
                f"UNWIND $rows AS r CREATE (n:{label} {{name: r.name}}) "
                "WITH n, r CALL db.create.setNodeVectorProperty(n, 'v', r.v)",
                {
                    "rows": [
                        {"name": "x", "v": [1.0, 0.0, 0.0]},
                        {"name": "y", "v": [0.0, 1.0, 0.0]},
                        {"name": "z", "v": [0.0, 0.0, 1.0]},
                    ]
                },
            )
            await driver.execute_query("CALL db.awaitIndexes(60)")
            records, _, _ = await driver.execute_query(
                "CALL db.index.vector.queryNodes($index, 2, $q) YIELD node, score "
                "RETURN node.name AS name, score",
                {"index": index, "q": [0.1, 0.9, 0.0]},
            )
            assert next(r["name"] for r in records) == "y"
            assert records[0]["score"] > records[1]["score"]
        finally:
            await driver.execute_query(f"MATCH (n:{label}) DETACH DELETE n")
            await driver.execute_query(f"DROP INDEX {index} IF EXISTS")


async def test_service_recall_uses_the_vector_index_beyond_the_exact_scan_limit(
    service: Memory, tenant: str
) -> None:
    from graphmem.memory import RecallQuery

    for text in ["The budget is $50K", "The venue is in Porto", "Dinner was at eight"]:
        await service.ingest.add(tenant, {"session_id": "s", "content": text})
    await service.spills.spill(tenant, "s", count=3)
    service.graph.search.exact_scan_limit = 0  # type: ignore[attr-defined]
    hits = await service.recall.search(tenant, RecallQuery(session_id="s", query="how much money"))
    assert hits[0].item.content == "The budget is $50K"
    assert {h.item.tenant for h in hits} == {tenant}


async def test_a_large_tenant_gets_a_vector_index_of_its_own(
    service: Memory, tenant: str, stack: Stack
) -> None:
    """Past ``own_index_above`` memories, a tenant's tenant-wide probes go through an
    index of its own once Neo4j has populated it: the same hits as through the shared
    index, without other tenants' neighbours to wade through. Below it, the shared one."""
    from graphmem.domain.models import Tier, tenant_vector_index
    from graphmem.memory import RecallQuery
    from graphmem.memory.search.fusion import Retriever

    texts = ["The budget is $50K", "The venue is in Porto", "Dinner was at eight"]
    for text in texts:
        await service.ingest.add(tenant, {"session_id": "s", "content": text})
    await service.spills.spill(tenant, "s", count=3)
    query = RecallQuery(query="how much money", retriever=Retriever.VECTOR, limit=3)
    indexes = service.graph.search.vector_indexes  # type: ignore[attr-defined]
    dimension = service.embedder.dimension
    shared = await indexes.choose(tenant, dimension)
    assert shared.name == "memory_embedding" and 0 < shared.share < 1
    before = await service.recall.search(tenant, query)
    name = tenant_vector_index(tenant)
    indexes.own_index_above = 2
    try:
        first = await indexes.choose(tenant, dimension)  # creates it; not online yet
        assert first.name == "memory_embedding"
        state = await service.graph.index_state([name])  # type: ignore[attr-defined]
        assert state[name]["type"] == "VECTOR"
        driver = AsyncGraphDatabase.driver(
            stack.neo4j_uri, auth=(stack.neo4j_user, stack.neo4j_password)
        )
        async with driver:
            await driver.execute_query("CALL db.awaitIndexes(120)")
            own = await indexes.choose(tenant, dimension)
            assert (own.name, own.share) == (name, 1.0)
            after = await service.recall.search(tenant, query)
            assert [(h.item.id, round(h.score, 5)) for h in after] == [
                (h.item.id, round(h.score, 5)) for h in before
            ]
            assert after[0].item.content == "The budget is $50K"
            # a probe of the whole tenant asks its own index for exactly what it keeps;
            # one that filters (here by tier) still gets only what the filter lets through
            # (searched in the graph, as a tenant too large to hold in memory is)
            service.ranker.cache.versions = None
            hybrid = await service.recall.search(tenant, RecallQuery(query="how much money"))
            assert hybrid[0].item.content == "The budget is $50K" and len(hybrid) == 3
            tiers = {h.item.tier for h in hybrid}
            other = [t for t in Tier if t not in tiers]
            assert (
                await service.recall.search(tenant, query.model_copy(update={"tiers": other})) == []
            )
            # the index holds the tenant's memories only
            records, _, _ = await driver.execute_query(
                "CALL db.index.vector.queryNodes($index, 50, $q) YIELD node "
                "RETURN collect(DISTINCT node.tenant) AS tenants",
                {"index": name, "q": [1.0] + [0.0] * (dimension - 1)},
            )
            assert records[0]["tenants"] == [tenant]
            await driver.execute_query(f"DROP INDEX {name} IF EXISTS")
    finally:
        indexes.own_index_above = type(indexes).own_index_above
