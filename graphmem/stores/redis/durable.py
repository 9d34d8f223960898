"""Writes acknowledged only once Redis replicas hold them (``WAIT``), for deployments
where losing an acknowledged add in a failover is not acceptable.

Redis replicates asynchronously: a master that dies takes the writes its replicas had
not received yet with it, even with ``appendfsync always`` (docs/scaling.md has the
measurement). ``WAIT n timeout`` after a write blocks until ``n`` replicas acknowledge
everything the same connection wrote, so the write and its ``WAIT`` must share one
connection: a pipeline on a plain client of the master that owns the key's slot (the
cluster client cannot pipeline scripts, and sends a keyless ``WAIT`` to every master).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.client import Pipeline
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import MovedError, RedisError, TryAgainError
from redis.exceptions import TimeoutError as RedisTimeoutError

from graphmem.errors import Unavailable
from graphmem.stores.redis.keys import is_redis_failure

#: how often a write is tried while a failover moves its slot to another master
_ATTEMPTS = 8


class ReplicaWait:
    def __init__(self, redis: Redis, replicas: int, timeout_ms: int) -> None:
        self._redis = redis
        self.replicas = replicas
        self.timeout_ms = timeout_ms
        # A connection pool per master (by address); masters are few.
        self._masters: dict[str, Redis] = {}

    async def run(self, key: str, fill: Callable[[Pipeline], Awaitable[Any]]) -> list[Any]:
        """Run the commands ``fill`` queues on a pipeline, on the master of ``key``'s
        slot, then ``WAIT``; their results once enough replicas have them."""
        delay = 0.1
        if isinstance(self._redis, RedisCluster):
            await self._redis.initialize()  # the slot map, on a client's first command
        for attempt in range(_ATTEMPTS):
            client = self._master_of(key)
            try:
                async with client.pipeline(transaction=False) as pipe:
                    await fill(pipe)
                    pipe.execute_command("WAIT", self.replicas, self.timeout_ms)
                    *results, acked = await pipe.execute()
                break
            except Exception as exc:
                # a slot that moved, or a connection that dropped (an error Redis answered
                # otherwise would answer the same again)
                moved = isinstance(exc, MovedError | TryAgainError)
                dropped = isinstance(exc, RedisConnectionError | RedisTimeoutError) or (
                    is_redis_failure(exc) and not isinstance(exc, RedisError)
                )
                if not (moved or dropped) or attempt == _ATTEMPTS - 1:
                    raise
                if not isinstance(self._redis, RedisCluster):
                    raise
                # A failover: the cluster's map says which master serves the slot now.
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
                await self._redis.nodes_manager.initialize()
        if int(acked) < self.replicas:
            raise Unavailable(
                f"the write reached {int(acked)} of the {self.replicas} Redis replicas asked "
                f"for within {self.timeout_ms} ms (it may still be stored; see docs/scaling.md)"
            )
        return results

    def _master_of(self, key: str) -> Redis:
        if not isinstance(self._redis, RedisCluster):
            return self._redis
        node = self._redis.get_node_from_key(key)
        client = self._masters.get(node.name)
        if client is None:
            client = Redis(
                host=node.host,
                port=node.port,
                decode_responses=True,
                socket_timeout=5.0,
                socket_connect_timeout=2.0,
            )
            self._masters[node.name] = client
        return client

    async def close(self) -> None:
        for client in self._masters.values():
            await client.aclose()
        self._masters.clear()
