"""The session index: per-session setting overrides, and the per-tenant indexes the
maintenance loop walks (sessions by last write, sessions over budget).

Shares the Redis client and key layout (``keys.py``) with the hot tier. The hot tier's
put and remove scripts keep the session index current in the same script call as the
items, so that the index and the items cannot disagree; what lives here reads the
indexes, keeps the settings and drops sessions whose keys expired.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, cast

from redis.asyncio import Redis

from .keys import call, over_key, session_keys

# KEYS: items, sessions, over   ARGV: session
# A session whose keys expired (or were emptied) leaves the indexes maintenance walks.
_DROP_IF_GONE = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('SREM', KEYS[3], ARGV[1])
  return 1
end
return 0
"""


class RedisSessionIndex:
    def __init__(self, redis: Redis, ttl: Callable[[], int]) -> None:
        self._redis = redis
        # The tier owns the session lifetime (the service may change it after
        # construction); the settings hash expires with the session's other keys.
        self._ttl = ttl
        self._drop_if_gone = redis.register_script(_DROP_IF_GONE)

    # --- per-session settings -----------------------------------------------------------
    async def session_config(self, tenant: str, session_id: str) -> dict[str, Any]:
        key = session_keys(tenant, session_id)[4]
        raw = await call(lambda: cast(Awaitable[dict[str, str]], self._redis.hgetall(key)))
        return {k: json.loads(v) for k, v in raw.items()}

    async def set_session_config(
        self, tenant: str, session_id: str, overrides: dict[str, Any]
    ) -> None:
        key = session_keys(tenant, session_id)[4]

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
            async for key in self._redis.scan_iter(match="gm:{*}:sessions", _type="zset"):
                found.append(key[len("gm:{") : -len("}:sessions")])

        await call(op)
        return found

    async def idle_sessions(self, tenant: str, idle_since: float) -> list[str]:
        key = session_keys(tenant, "-")[3]
        return await call(
            lambda: cast(Awaitable[list[str]], self._redis.zrangebyscore(key, "-inf", idle_since))
        )

    async def mark_over_budget(self, tenant: str, session_id: str) -> None:
        """Remember a session that went over its token budget, so maintenance can check
        it (and only it) if the spill the add started does not bring it back."""
        key = over_key(tenant)
        await call(lambda: self._redis.sadd(key, session_id))

    async def over_budget(self, tenant: str) -> list[str]:
        key = over_key(tenant)
        members = await call(lambda: cast(Awaitable[set[str]], self._redis.smembers(key)))
        return sorted(members)

    async def clear_over_budget(self, tenant: str, session_id: str) -> None:
        key = over_key(tenant)
        await call(lambda: self._redis.srem(key, session_id))

    async def drop_if_gone(self, tenant: str, session_id: str) -> bool:
        """Forget a session in the indexes if its items are gone (TTL expiry)."""
        keys = session_keys(tenant, session_id)
        dropped = await call(
            lambda: self._drop_if_gone(keys=[keys[0], keys[3], over_key(tenant)], args=[session_id])
        )
        return bool(dropped)

    async def sessions(self, tenant: str) -> list[str]:
        key = session_keys(tenant, "-")[3]
        return await call(lambda: cast(Awaitable[list[str]], self._redis.zrange(key, 0, -1)))
