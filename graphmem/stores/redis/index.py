"""The session index: per-session setting overrides, and the per-tenant indexes the
maintenance loop walks (sessions by last write, sessions over budget).

Shares the Redis client and key layout (``keys.py``) with the hot tier, which records
a put here after the items and forgets removed items after removing them. A session's
items and its tenant's indexes may sit on different Redis Cluster nodes, so no script
spans both; the order, and the checks in ``drop_if_gone``, keep every session that has
items in the index.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from graphmem.stores.redis.durable import ReplicaWait
from graphmem.stores.redis.keys import (
    SESSIONS_PATTERN,
    call,
    session_keys,
    tenant_keys,
    tenant_of_sessions_key,
)

# KEYS: sessions, over   ARGV: session, its last-write time when its items were found
# gone ('' when it was not indexed). A put in between wrote a newer time (after its
# items), and then the session stays.
_DROP_UNLESS_WRITTEN = """
local now = redis.call('ZSCORE', KEYS[1], ARGV[1])
if now and (ARGV[2] == '' or tonumber(now) ~= tonumber(ARGV[2])) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('SREM', KEYS[2], ARGV[1])
return 1
"""


class RedisSessionIndex:
    def __init__(
        self, redis: Redis, ttl: Callable[[], int], wait: ReplicaWait | None = None
    ) -> None:
        self._redis = redis
        self._wait = wait
        # The tier owns the session lifetime (the service may change it after
        # construction); the settings hash expires with the session's other keys.
        self._ttl = ttl
        self._drop_unless_written = redis.register_script(_DROP_UNLESS_WRITTEN)

    # --- per-session settings -----------------------------------------------------------
    async def session_config(self, tenant: str, session_id: str) -> dict[str, Any]:
        key = session_keys(tenant, session_id).config
        raw = await call(lambda: cast(Awaitable[dict[str, str]], self._redis.hgetall(key)))
        return {k: json.loads(v) for k, v in raw.items()}

    async def set_session_config(
        self, tenant: str, session_id: str, overrides: dict[str, Any]
    ) -> None:
        key = session_keys(tenant, session_id).config

        async def op() -> None:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.delete(key)
                if overrides:
                    pipe.hset(key, mapping={k: json.dumps(v) for k, v in overrides.items()})
                    pipe.expire(key, self._ttl())
                await pipe.execute()

        await call(op)

    # --- sessions -------------------------------------------------------------------------
    async def tenants(self) -> list[str]:
        """Tenants with live hot sessions (found by their session index keys)."""
        found: list[str] = []

        async def op() -> None:
            # A cluster client scans every master.
            async for key in self._redis.scan_iter(match=SESSIONS_PATTERN, _type="zset"):
                found.append(tenant_of_sessions_key(key))

        await call(op)
        return found

    async def idle_sessions(self, tenant: str, idle_since: float) -> list[str]:
        key = tenant_keys(tenant).sessions
        return await call(
            lambda: cast(Awaitable[list[str]], self._redis.zrangebyscore(key, "-inf", idle_since))
        )

    async def mark_over_budget(self, tenant: str, session_id: str) -> None:
        """Remember a session that went over its token budget, so maintenance can check
        it (and only it) if the spill the add started does not bring it back."""
        key = tenant_keys(tenant).over
        await call(lambda: self._redis.sadd(key, session_id))

    async def over_budget(self, tenant: str) -> list[str]:
        key = tenant_keys(tenant).over
        members = await call(lambda: cast(Awaitable[set[str]], self._redis.smembers(key)))
        return sorted(members)

    async def clear_over_budget(self, tenant: str, session_id: str) -> None:
        key = tenant_keys(tenant).over
        await call(lambda: self._redis.srem(key, session_id))

    async def drop_if_gone(self, tenant: str, session_id: str) -> bool:
        """Forget a session in the indexes if its items are gone (emptied, or TTL
        expiry), unless a put recorded it again meanwhile."""
        t = tenant_keys(tenant)
        items = session_keys(tenant, session_id).items
        written = await call(
            lambda: cast(Awaitable[Any], self._redis.zscore(t.sessions, session_id))
        )
        if await call(lambda: self._redis.exists(items)):
            return False
        args = [session_id, "" if written is None else written]
        dropped = await call(
            lambda: self._drop_unless_written(keys=[t.sessions, t.over], args=args)
        )
        return bool(dropped)

    async def record(self, tenant: str, session_id: str, ids: Sequence[str], at: float) -> None:
        """Index a put (after its items are stored): where its items are, and when the
        session was last written."""
        t = tenant_keys(tenant)

        async def fill(pipe: Pipeline) -> None:
            if ids:
                pipe.hset(t.where, mapping=dict.fromkeys(ids, session_id))
            pipe.zadd(t.sessions, {session_id: at})

        async def op() -> None:
            # One slot, so one node even in a cluster: one round trip.
            async with self._redis.pipeline(transaction=False) as pipe:
                await fill(pipe)
                await pipe.execute()

        wait = self._wait
        # The index needs the replicas as much as the items: a session missing from it
        # would never be flushed before its keys expire.
        await call(op if wait is None else lambda: wait.run(t.sessions, fill))

    async def forget_items(self, tenant: str, ids: Sequence[str]) -> None:
        """Drop removed items from the lookup by id (after they left their session)."""
        if ids:
            key = tenant_keys(tenant).where
            await call(lambda: self._redis.hdel(key, *ids))

    async def sessions(self, tenant: str) -> list[str]:
        key = tenant_keys(tenant).sessions
        return await call(lambda: cast(Awaitable[list[str]], self._redis.zrange(key, 0, -1)))
