"""Counters for admission control, shared by every API replica: cost units per second and
expensive operations in flight per tenant, and each tenant's stored items and bytes
(with the pads it keeps in Redis, for the exact count).

Keys carry the tenant's hash tag, like the hot tier's, so each tenant's counters live
in one Redis Cluster slot.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from functools import partial
from typing import cast

from redis.asyncio import Redis

from graphmem.stores.redis.keys import call, session_keys
from graphmem.stores.redis.working import task_key

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


# The pads a tenant keeps in Redis with a time to live (a session's messages, a task's
# working memory), for the quota's exact count: members "<pad>:<owner>" scored by when
# they expire, the expired dropped on every write. KEYS[1] the tenant's pads; ARGV: now
# ms, member, ttl ms. The set lives as long as its longest-lived pad.
_HOLD_PAD = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[3]), ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 1
"""

# Items and bytes of one pad as stored: a list's elements, a hash's fields and values.
_PAD_SIZE = """
local kind = redis.call('TYPE', KEYS[1])['ok']
local n, b = 0, 0
if kind == 'list' then
  for _, v in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do n = n + 1; b = b + #v end
elseif kind == 'hash' then
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do n = n + 1; b = b + #all[i] + #all[i + 1] end
end
return {n, b}
"""

#: pads sized at once by the exact count
_PAD_BATCH = 64


def pad_key(tenant: str, pad: str, owner: str) -> str:
    """The Redis key of a tenant's pad: "m" a session's messages, "w" a task's working
    memory (``graphmem.memory.tiers.quota.Pad``)."""
    if pad == "m":
        return session_keys(tenant, owner).messages
    return task_key(tenant, owner)


class RedisAdmission:
    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._hit = redis.register_script(_HIT)
        self._acquire = redis.register_script(_ACQUIRE)
        self._hold_pad = redis.register_script(_HOLD_PAD)
        self._pad_size = redis.register_script(_PAD_SIZE)

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

    async def claim_recount(self, tenant: str, ttl_ms: int) -> bool:
        """Whether this caller may count the tenant's usage exactly now: one count at a
        time per tenant, over every replica (until ``end_recount``, or ``ttl_ms``)."""
        return bool(await self._redis.set(self._key(tenant, "recount"), 1, nx=True, px=ttl_ms))

    async def end_recount(self, tenant: str) -> None:
        await self._redis.delete(self._key(tenant, "recount"))

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

    async def hold_pad(self, tenant: str, pad: str, owner: str, now_ms: int, ttl: int) -> None:
        member = f"{pad}:{owner}"
        args: list[str | int] = [now_ms, member, ttl * 1000]
        await call(lambda: self._hold_pad(keys=[self._key(tenant, "pads")], args=args))

    async def pads_usage(self, tenant: str, now_ms: int) -> tuple[int, int]:
        """(items, bytes) in the tenant's pads that have not expired; pads found empty
        (a completed task's working memory) are forgotten."""
        key = self._key(tenant, "pads")

        async def live() -> list[str]:
            await self._redis.zremrangebyscore(key, "-inf", now_ms)
            return [str(member) for member in await self._redis.zrange(key, 0, -1)]

        async def sizes(batch: list[str]) -> list[list[int]]:
            # each pad is in a slot of its own: a script apiece, a batch at a time
            keys = [pad_key(tenant, *member.split(":", 1)) for member in batch]
            return list(await asyncio.gather(*(self._pad_size(keys=[k]) for k in keys)))

        members = await call(live)
        items = size = 0
        gone: list[str] = []
        for start in range(0, len(members), _PAD_BATCH):
            batch = members[start : start + _PAD_BATCH]
            for member, (n, b) in zip(batch, await call(partial(sizes, batch)), strict=True):
                items, size = items + int(n), size + int(b)
                if not int(n):
                    gone.append(member)
        if gone:
            await call(lambda: self._redis.zrem(key, *gone))
        return items, size
