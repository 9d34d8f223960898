"""``GRAPHMEM_REDIS_WAIT_REPLICAS``: an add is acknowledged only once Redis replicas
hold it, and answers UNAVAILABLE when they do not within the timeout."""

from __future__ import annotations

import asyncio
import time

import pytest
from redis.asyncio import Redis

from graphmem.errors import Unavailable
from graphmem.memory.builder import MemoryBuilder
from graphmem.stores.redis.keys import session_keys, tenant_keys
from tests.conftest import Stack, new_tenant

PAUSE_MS = 1500


async def test_an_acknowledged_add_is_on_a_replica_or_the_add_fails(stack: Stack) -> None:
    settings = stack.settings(redis_wait_replicas=1, redis_wait_timeout_ms=500)
    service = MemoryBuilder.from_settings(settings).build()
    tenant = new_tenant()
    try:
        if not stack.redis_cluster:
            # a single Redis has no replica: the add says so instead of pretending
            with pytest.raises(Unavailable, match="0 of the 1 Redis replicas"):
                await service.ingest.add(tenant, {"session_id": "s", "content": "kept twice"})
            return
        items = [
            await service.ingest.add(tenant, {"session_id": f"s{n}", "content": f"fact {n}"})
            for n in range(6)
        ]
        async with stack.redis() as cluster:
            await cluster.initialize()  # type: ignore[attr-defined]
            for item in items:
                # read each key from the replica of the master that owns it, at once
                for key, field in (
                    (session_keys(tenant, item.session_id).items, item.id),
                    (tenant_keys(tenant).where, item.id),
                ):
                    node = cluster.get_node_from_key(key, replica=True)  # type: ignore[attr-defined]
                    replica = Redis(host=node.host, port=node.port, decode_responses=True)
                    async with replica:
                        await replica.execute_command("READONLY")
                        assert await replica.hexists(key, field), (key, node.name)
            # a replica that does not acknowledge (paused): the add is not acknowledged
            node = cluster.get_node_from_key(  # type: ignore[attr-defined]
                session_keys(tenant, "s-paused").items, replica=True
            )
            async with Redis(host=node.host, port=node.port) as replica:
                await replica.client_pause(PAUSE_MS, all=True)
            started = time.monotonic()
            with pytest.raises(Unavailable, match="0 of the 1 Redis replicas"):
                await service.ingest.add(tenant, {"session_id": "s-paused", "content": "late"})
            assert time.monotonic() - started < PAUSE_MS / 1000
            await asyncio.sleep(PAUSE_MS / 1000)
            await service.ingest.add(tenant, {"session_id": "s-paused", "content": "in time"})
    finally:
        await service.close()
