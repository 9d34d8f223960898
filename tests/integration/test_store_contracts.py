"""The real stores meet the contracts the in-memory fakes of the unit tests meet
(``tests/unit/stores/test_fake_contracts.py`` runs the same against the fakes): what the
capabilities' unit tests assume of a store holds of Redis and Neo4j.

Every test works in tenants (and a queue stream, and lease names) of its own, so runs
never see each other's data on the shared services.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from graphmem.stores.neo4j.graph import Neo4jGraphStore
from graphmem.stores.neo4j.knowledge import Neo4jKnowledgeStore
from graphmem.stores.neo4j.library import library
from graphmem.stores.redis.hot import RedisHotTier
from graphmem.stores.redis.lease import RedisLeases
from graphmem.stores.redis.queue import RedisEnrichmentQueue
from graphmem.stores.redis.versions import RedisScopeVersions
from tests.conftest import Stack
from tests.support.contracts.common import unique
from tests.support.contracts.graph import GraphSetup, GraphStoreContract
from tests.support.contracts.hot import HotSetup, HotTierContract
from tests.support.contracts.knowledge import KnowledgeStoreContract
from tests.support.contracts.leases import LeasesContract, LeasesSetup
from tests.support.contracts.queue import EnrichmentQueueContract, QueueSetup
from tests.support.contracts.versions import ScopeVersionsContract, VersionsSetup
from tests.support.enrich import HashEmbedder

#: the dimension of the vector index the shared database was migrated with (MiniLM's)
DIMENSION = 384


@pytest.fixture(scope="module")
async def neo4j_store(stack: Stack) -> AsyncIterator[Neo4jGraphStore]:
    store = Neo4jGraphStore.connect(
        stack.neo4j_uri, stack.neo4j_user, stack.neo4j_password, library()
    )
    await store.migrate(DIMENSION)
    try:
        yield store
    finally:
        await store.close()


class TestRedisHotTier(HotTierContract):
    @pytest.fixture
    async def hot_setup(self, stack: Stack) -> AsyncIterator[HotSetup]:
        tier = RedisHotTier.connect(stack.redis_url, cluster=stack.redis_cluster)
        try:
            yield HotSetup(tier, asyncio.sleep, time.time)
        finally:
            await tier.close()


class TestNeo4jGraphStore(GraphStoreContract):
    @pytest.fixture
    def graph_setup(self, neo4j_store: Neo4jGraphStore) -> GraphSetup:
        return GraphSetup(neo4j_store, HashEmbedder(DIMENSION))


class TestNeo4jKnowledgeStore(KnowledgeStoreContract):
    @pytest.fixture
    def knowledge_store(self, neo4j_store: Neo4jGraphStore) -> Neo4jKnowledgeStore:
        return Neo4jKnowledgeStore(neo4j_store)


class TestRedisScopeVersions(ScopeVersionsContract):
    @pytest.fixture
    async def versions_setup(self, stack: Stack) -> AsyncIterator[VersionsSetup]:
        async with stack.redis() as client:
            yield VersionsSetup(RedisScopeVersions(client), RedisScopeVersions.log_length)


class TestRedisEnrichmentQueue(EnrichmentQueueContract):
    @pytest.fixture
    async def queue_setup(self, stack: Stack) -> AsyncIterator[QueueSetup]:
        # a stream of its own: the service's stream is shared with every running worker
        stream = f"gm:{{{unique('contract')}}}"
        async with stack.redis() as client:
            queue = RedisEnrichmentQueue(client, stream=stream)
            try:
                yield QueueSetup(queue, asyncio.sleep)
            finally:
                keys = [key async for key in client.scan_iter(match=f"{stream}*")]
                for key in keys:  # one by one: a cluster deletes keys of one slot at a time
                    await client.delete(key)


class TestRedisLeases(LeasesContract):
    @pytest.fixture
    async def leases_setup(self, stack: Stack) -> AsyncIterator[LeasesSetup]:
        async with stack.redis() as client:
            yield LeasesSetup(RedisLeases(client), asyncio.sleep)
