"""A memory forgotten while the worker embeds it: the delete commits between the vector
write's read of the node and its write lock (the race test saw
``db.create.setNodeVectorProperty`` fail with "Unable to load NODE", and the job was
retried). Made deterministic here: the delete holds the node's lock, uncommitted, while
the vectors are written, and commits once the write waits for that lock."""

from __future__ import annotations

import asyncio

import pytest
from neo4j import AsyncGraphDatabase

from graphmem.domain.models import EmbeddingSpace
from graphmem.memory import Memory
from graphmem.memory.writepath.analysis import graph_memory
from graphmem.stores.models import MemoryVectors
from tests.conftest import Stack, new_tenant, run_cypher
from tests.support.contracts.common import item

pytestmark = pytest.mark.asyncio

DELETE = "MATCH (m:Memory {tenant: $tenant, id: $id}) DETACH DELETE m RETURN count(*) AS n"


async def test_vectors_of_a_memory_deleted_meanwhile_are_skipped_without_an_error(
    stack: Stack, service: Memory
) -> None:
    tenant = new_tenant()
    gone = item(tenant, "s1", "forgotten while embedded", user_id="ada")
    kept = item(tenant, "s1", "still here", user_id="bob")
    written = await service.graph.upsert_hot(tenant, [graph_memory(gone), graph_memory(kept)])
    assert set(written) == {gone.id, kept.id}
    space = EmbeddingSpace("test-model", 4)
    vectors = [MemoryVectors(i.id, [0.1, 0.2, 0.3, 0.4], None) for i in (gone, kept)]
    driver = AsyncGraphDatabase.driver(
        stack.neo4j_uri, auth=(stack.neo4j_user, stack.neo4j_password)
    )
    async with driver, driver.session() as session:
        tx = await session.begin_transaction()
        result = await tx.run(DELETE, tenant=tenant, id=gone.id)
        assert (await result.single())["n"] == 1  # deleted, locked, not committed
        writing = asyncio.create_task(service.graph.set_vectors(tenant, vectors, space))
        await asyncio.sleep(1.5)  # the write has read the node and waits for its lock
        assert not writing.done()
        await tx.commit()
        present = await asyncio.wait_for(writing, 30)
    assert present == [kept.id]
    rows = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $tenant}) RETURN m.id AS id, m.embeddingModel AS model",
        tenant=tenant,
    )
    assert rows == [{"id": kept.id, "model": "test-model"}]
