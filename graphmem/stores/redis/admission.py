"""Counters for admission control, shared by every API replica: requests per second and
expensive operations in flight per tenant, and each tenant's stored memories and bytes.

Keys carry the tenant's hash tag, like the hot tier's, so each tenant's counters live
in one Redis Cluster slot.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import cast

from redis.asyncio import Redis

# Fixed one-second window: the count of this second, expiring shortly after it.
_HIT = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], 2) end
return n
"""

# A counting semaphore whose holders expire (a replica that died mid-operation frees
# its slot after ttl): members are tokens scored by their expiry time in ms.
_ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""


class RedisAdmission:
    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._hit = redis.register_script(_HIT)
        self._acquire = redis.register_script(_ACQUIRE)

    @staticmethod
    def _key(tenant: str, name: str) -> str:
        return f"gm:{{{tenant}}}:admit:{name}"

    async def hit(self, tenant: str, second: int) -> int:
        """Count a request in ``second`` (epoch seconds); the count so far."""
        return int(await self._hit(keys=[self._key(tenant, f"rate:{second}")]))

    async def acquire(self, tenant: str, token: str, limit: int, now_ms: int, ttl_ms: int) -> bool:
        args: list[str | int] = [now_ms, ttl_ms, limit, token]
        return bool(await self._acquire(keys=[self._key(tenant, "busy")], args=args))

    async def release(self, tenant: str, token: str) -> None:
        await self._redis.zrem(self._key(tenant, "busy"), token)

    async def usage(self, tenant: str) -> tuple[int, int]:
        """(memories, bytes) as counted since the last exact count."""
        raw = await cast(
            Awaitable[list[str | None]],
            self._redis.hmget(self._key(tenant, "usage"), ["memories", "bytes"]),
        )
        return int(raw[0] or 0), int(raw[1] or 0)

    async def add_usage(self, tenant: str, memories: int, size: int) -> None:
        key = self._key(tenant, "usage")
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hincrby(key, "memories", memories)
            pipe.hincrby(key, "bytes", size)
            await pipe.execute()

    async def set_usage(self, tenant: str, memories: int, size: int) -> None:
        mapping: dict[str | bytes, str | int] = {"memories": memories, "bytes": size}
        await self._redis.hset(self._key(tenant, "usage"), mapping=mapping)  # type: ignore[arg-type]
