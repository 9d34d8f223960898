"""The Redis hot tier: the items a session keeps close, with their token total.

Keys (every one carries the tenant; the session's keys share a hash tag so a
session's writes stay in one Redis Cluster slot):

- ``gm:{<tenant>/<session>}:items`` hash: item id → item JSON
- ``gm:{<tenant>/<session>}:meta``  hash: ``tokens`` → token total of the items
- ``gm:<tenant>:where``             hash: item id → session id (lookups by id)

Writes and removals are Lua scripts so the token total always equals the sum of
the items, whatever runs concurrently.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..errors import GraphmemError, Unavailable
from ..models import MemoryItem

T = TypeVar("T")

_PUT = """
local total = 0
for i = 2, #ARGV, 3 do
  local id, doc, tokens = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local old = redis.call('HGET', KEYS[1], id)
  if old then total = total - cjson.decode(old)['token_count'] end
  redis.call('HSET', KEYS[1], id, doc)
  redis.call('HSET', KEYS[3], id, ARGV[1])
  total = total + tokens
end
local t = redis.call('HINCRBY', KEYS[2], 'tokens', total)
return t
"""

_REMOVE = """
local removed = {}
local total = 0
for i = 1, #ARGV do
  local old = redis.call('HGET', KEYS[1], ARGV[i])
  if old then
    total = total + cjson.decode(old)['token_count']
    redis.call('HDEL', KEYS[1], ARGV[i])
    redis.call('HDEL', KEYS[3], ARGV[i])
    removed[#removed + 1] = ARGV[i]
  end
end
if total ~= 0 then redis.call('HINCRBY', KEYS[2], 'tokens', -total) end
if redis.call('HLEN', KEYS[1]) == 0 then redis.call('DEL', KEYS[2]) end
return removed
"""

_TOUCH = """
for i = 1, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
return 1
"""


class RedisHotTier:
    def __init__(self, redis: Redis, session_ttl_seconds: int) -> None:
        self._redis = redis
        self._ttl = session_ttl_seconds
        self._put = redis.register_script(_PUT)
        self._remove = redis.register_script(_REMOVE)
        self._touch = redis.register_script(_TOUCH)

    @classmethod
    def connect(cls, url: str, session_ttl_seconds: int) -> RedisHotTier:
        client = Redis.from_url(
            url, decode_responses=True, socket_timeout=5.0, socket_connect_timeout=5.0
        )
        return cls(client, session_ttl_seconds)

    async def close(self) -> None:
        await self._redis.aclose()

    # --- keys -------------------------------------------------------------------------
    @staticmethod
    def _session_keys(tenant: str, session_id: str) -> list[str]:
        tag = f"gm:{{{tenant}/{session_id}}}"
        return [f"{tag}:items", f"{tag}:meta", f"gm:{tenant}:where"]

    # --- plumbing -------------------------------------------------------------------
    @staticmethod
    async def _call(op: Callable[[], Awaitable[T]]) -> T:
        try:
            return await op()
        except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
            raise Unavailable("the hot tier (Redis) is unreachable") from exc
        except RedisError as exc:
            raise GraphmemError("hot tier operation failed") from exc

    # --- operations -----------------------------------------------------------------
    async def ping(self) -> None:
        await self._call(lambda: cast(Awaitable[Any], self._redis.ping()))

    async def put(self, tenant: str, session_id: str, items: Sequence[MemoryItem]) -> int:
        """Store (or replace) items; returns the session's hot token total afterwards."""
        keys = self._session_keys(tenant, session_id)
        args: list[Any] = [session_id]
        for item in items:
            args += [item.id, item.to_json(), item.token_count]

        async def op() -> int:
            async with self._redis.pipeline(transaction=True) as pipe:
                await self._put(keys=keys, args=args, client=pipe)
                pipe.expire(keys[0], self._ttl)
                pipe.expire(keys[1], self._ttl)
                total, *_ = await pipe.execute()
            return int(total)

        return await self._call(op)

    async def items(self, tenant: str, session_id: str) -> list[MemoryItem]:
        key = self._session_keys(tenant, session_id)[0]
        raw = await self._call(lambda: cast(Awaitable[dict[str, str]], self._redis.hgetall(key)))
        return [MemoryItem.from_json(doc) for doc in raw.values()]

    async def get(self, tenant: str, session_id: str, ids: Sequence[str]) -> list[MemoryItem]:
        if not ids:
            return []
        key = self._session_keys(tenant, session_id)[0]
        docs = await self._call(
            lambda: cast(Awaitable[list[str | None]], self._redis.hmget(key, list(ids)))
        )
        return [MemoryItem.from_json(d) for d in docs if d is not None]

    async def session_of(self, tenant: str, item_id: str) -> str | None:
        key = self._session_keys(tenant, "-")[2]
        return await self._call(lambda: cast(Awaitable[str | None], self._redis.hget(key, item_id)))

    async def tokens(self, tenant: str, session_id: str) -> int:
        key = self._session_keys(tenant, session_id)[1]
        raw = await self._call(lambda: cast(Awaitable[str | None], self._redis.hget(key, "tokens")))
        return int(raw or 0)

    async def remove(self, tenant: str, session_id: str, ids: Sequence[str]) -> list[str]:
        """Drop items (only after the graph holds them); returns the ids actually removed."""
        if not ids:
            return []
        keys = self._session_keys(tenant, session_id)
        removed = await self._call(lambda: self._remove(keys=keys, args=list(ids)))
        return [str(i) for i in removed]

    async def touch(self, tenant: str, session_id: str, items: Sequence[MemoryItem]) -> None:
        """Rewrite access data of items still present (a no-op for ones spilled meanwhile)."""
        if not items:
            return
        keys = self._session_keys(tenant, session_id)[:1]
        args: list[str] = []
        for item in items:
            args += [item.id, item.to_json()]
        await self._call(lambda: self._touch(keys=keys, args=args))
