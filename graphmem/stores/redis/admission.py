"""Counters for admission control, shared by every API replica: requests per second and
expensive operations in flight per tenant, and each tenant's stored memories and bytes.

Keys carry the tenant's hash tag, like the hot tier's, so each tenant's counters live
in one Redis Cluster slot.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import cast

from redis.asyncio import Redis

# Fixed one-second window: the cost counted in this second, expiring shortly after it.
_HIT = """
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
if n == tonumber(ARGV[1]) then redis.call('EXPIRE', KEYS[1], 2) end
return n
"""

# A counting semaphore whose holders expire (a replica that died mid-operation frees
# its slots after ttl): members are tokens scored by their expiry time in ms; an
# operation holding n slots adds n members, token:0 .. token:n-1, all or none.
_ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local n = tonumber(ARGV[5])
if redis.call('ZCARD', KEYS[1]) + n > tonumber(ARGV[3]) then return 0 end
for i = 0, n - 1 do
  redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4] .. ':' .. i)
end
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

    async def hit(self, tenant: str, second: int, cost: int = 1) -> int:
        """Count ``cost`` in ``second`` (epoch seconds); the total so far."""
        return int(await self._hit(keys=[self._key(tenant, f"rate:{second}")], args=[cost]))

    async def acquire(
        self, tenant: str, token: str, limit: int, now_ms: int, ttl_ms: int, count: int = 1
    ) -> bool:
        args: list[str | int] = [now_ms, ttl_ms, limit, token, count]
        return bool(await self._acquire(keys=[self._key(tenant, "busy")], args=args))

    async def release(self, tenant: str, token: str, count: int = 1) -> None:
        await self._redis.zrem(self._key(tenant, "busy"), *(f"{token}:{i}" for i in range(count)))

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
