"""State that several API replicas share through Redis: a task's working memory, and the
lease that lets one replica at a time run maintenance (and another take over when it
dies). Two services built in this process stand for two replicas: they share nothing
but Redis and Neo4j."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import datetime

import pytest

from graphmem.errors import BadInput
from graphmem.memory import Memory
from graphmem.memory.builder import MemoryBuilder
from graphmem.memory.kinds.working import WorkingMemory
from graphmem.stores import GraphStore
from tests.conftest import Stack, empty_redis_db, new_tenant

pytestmark = pytest.mark.asyncio


class NoDemotion:
    """Passes quick enough to count: the real policy visits every tenant of the test
    database's graph, which many tests have filled."""

    async def demote(self, graph: GraphStore, tenant: str, now: datetime) -> list[str]:
        return []


@pytest.fixture
async def replicas(stack: Stack) -> AsyncIterator[tuple[Memory, Memory]]:
    url = await empty_redis_db(stack, 9)
    config = {"maintenanceIntervalSeconds": 0.2}
    a, b = (
        MemoryBuilder.from_settings(stack.settings(redis_url=url, memory=config))
        .with_demotion(NoDemotion())
        .build()
        for _ in range(2)
    )
    await a.migrate()
    try:
        yield a, b
    finally:
        await a.close()
        await b.close()


async def test_working_memory_set_through_one_replica_is_read_through_another(
    replicas: tuple[Memory, Memory],
) -> None:
    a, b = replicas
    tenant, other = new_tenant(), new_tenant()
    await a.working.set(tenant, "task-1", "plan", {"steps": ["book", "pay"]})
    assert await b.working.set(tenant, "task-1", "budget", 120) == {
        "plan": {"steps": ["book", "pay"]},
        "budget": 120,
    }
    assert await a.working.get(tenant, "task-1") == {
        "plan": {"steps": ["book", "pay"]},
        "budget": 120,
    }
    assert await b.working.get(other, "task-1") == {}  # another tenant's pad is its own
    # the cap holds across replicas, and a refused write leaves the pad as it was
    with pytest.raises(BadInput):
        await b.working.set(tenant, "task-1", "blob", "x" * WorkingMemory.max_bytes)
    assert set(await a.working.get(tenant, "task-1")) == {"plan", "budget"}
    # completing the task through one replica clears the pad for both
    assert a.episodes is not None
    task = await a.episodes.create_task(tenant, "trip")
    await b.working.set(tenant, task.id, "k", "v")
    await a.episodes.complete_task(tenant, task.id, "completed")
    assert await b.working.get(tenant, task.id) == {}


async def test_maintenance_runs_in_one_replica_and_another_takes_over(
    replicas: tuple[Memory, Memory],
) -> None:
    a, b = replicas
    lease = a.maintenance.lease_seconds
    stop_a, stop_b = asyncio.Event(), asyncio.Event()
    loop_a = asyncio.create_task(a.maintenance.run(stop_a))
    await asyncio.sleep(0.5)  # a takes the lease first
    loop_b = asyncio.create_task(b.maintenance.run(stop_b))
    try:
        await asyncio.sleep(2.0)
        assert a.maintenance.passes >= 3 and b.maintenance.passes == 0
        assert a.maintenance.leases is not None
        assert await a.maintenance.leases.holder("maintenance") == a.maintenance.holder
        # a dies without releasing its lease: b takes over once it expires
        loop_a.cancel()
        died = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            await loop_a
        await a.maintenance.leases.hold("maintenance", a.maintenance.holder, lease)
        while b.maintenance.passes == 0:
            assert time.monotonic() - died < lease + 3, "b never took over"
            await asyncio.sleep(0.1)
        assert time.monotonic() - died >= lease - 1  # not before the lease ran out
        passes = a.maintenance.passes
        await asyncio.sleep(1.0)
        assert a.maintenance.passes == passes and b.maintenance.passes >= 3
    finally:
        stop_a.set()
        stop_b.set()
        loop_a.cancel()
        await asyncio.gather(loop_a, loop_b, return_exceptions=True)


async def test_replicas_through_the_routing_scheme_read_each_others_writes(
    stack: Stack,
) -> None:
    """``neo4j://`` (the routing driver a cluster needs) against the community server:
    reads go through read transactions, writes through write ones, and a spill through
    one replica is found by a search through the other at once."""
    from urllib.parse import urlsplit, urlunsplit

    from graphmem.memory import RecallQuery
    from graphmem.memory.search.fusion import Retriever

    url = await empty_redis_db(stack, 9)
    routed = urlunsplit(urlsplit(stack.neo4j_uri)._replace(scheme="neo4j"))
    a, b = (
        MemoryBuilder.from_settings(stack.settings(redis_url=url, neo4j_uri=routed)).build()
        for _ in range(2)
    )
    try:
        tenant = new_tenant()
        item = await a.ingest.add(
            tenant, {"session_id": "s", "user_id": "ada", "content": "The venue is in Porto"}
        )
        await a.spills.spill(tenant, "s", item_ids=[item.id])
        # the spill's bookmark is shared: B's next transaction waits for it on a cluster
        written = await a.graph.bookmarks.get_bookmarks()
        assert written and written <= await b.graph.bookmarks.get_bookmarks()
        for retriever in (Retriever.FULLTEXT, Retriever.VECTOR, Retriever.HYBRID):
            hits = await b.recall.search(
                tenant, RecallQuery(query="venue Porto", user_id="ada", retriever=retriever)
            )
            assert [h.item.id for h in hits] == [item.id], retriever
            assert hits[0].item.tier.value in ("warm", "cold")  # spilled, read from the graph
        await b.erasure.forget(tenant, item.id)
        assert await a.recall.search(tenant, RecallQuery(query="venue", user_id="ada")) == []
    finally:
        await a.close()
        await b.close()


async def test_shared_bookmarks_only_for_routing_uris_and_never_a_failure(stack: Stack) -> None:
    """Over ``bolt://`` a single server shows every committed write to every later
    transaction: no bookmark goes through Redis. With Redis unreachable, transactions
    go on with the process's own bookmarks."""
    import redis.asyncio as aioredis
    from neo4j import Bookmarks

    from graphmem.stores.neo4j.library import library
    from graphmem.stores.neo4j.session import Neo4jSession
    from graphmem.stores.redis.bookmarks import KEY, SharedBookmarks
    from tests.conftest import free_port

    url = await empty_redis_db(stack, 9)
    direct = MemoryBuilder.from_settings(stack.settings(redis_url=url)).build()
    try:
        tenant = new_tenant()
        item = await direct.ingest.add(tenant, {"session_id": "s", "content": "Lisbon trip"})
        await direct.spills.spill(tenant, "s", item_ids=[item.id])
        async with stack.redis(url) as client:
            assert await client.exists(KEY) == 0
    finally:
        await direct.close()
    async with aioredis.Redis(port=free_port(), socket_connect_timeout=0.5) as dead:
        shared = SharedBookmarks(dead)
        assert (await shared.held()).raw_values == frozenset()
        await shared.store(Bookmarks.from_raw_values(["FB:unstored"]))  # logged, not raised
        session = Neo4jSession.connect(
            stack.neo4j_uri,
            stack.neo4j_user,
            stack.neo4j_password,
            library(),
            bookmarks=shared.manager(),
        )
        try:
            assert [r["ok"] for r in await session.run("admin/ping", {})] == [1]
        finally:
            await session.close()
