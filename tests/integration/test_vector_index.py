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
