"""Working memory in Redis: a task's scratch pad, one hash per task, shared by every API
replica (``graphmem/memory/kinds/working.py`` is the capability over it).

Key ``gm:{<tenant>:<task>}:wm`` (a slot per task in a Redis Cluster): field → the value
as JSON. One Lua script sets a field
and checks the task's total size in the same step, so two replicas writing the same task
cannot pass the cap between them; every write renews the key's time to live (a task that
is never completed does not keep its scratch pad for ever).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any, cast

from redis.asyncio import Redis

from graphmem.errors import NotFound
from graphmem.stores.redis.keys import call


class Sealed(NotFound):
    """A write to the working memory of a forgotten task."""

    def __init__(self, task_id: str) -> None:
        super().__init__(
            f"task {task_id} was forgotten: its working memory takes no write", taskId=task_id
        )


# KEYS[1] the task's hash, KEYS[2] its seal. ARGV: field, value (JSON), max bytes, ttl
# seconds. Returns the hash after the write as a flat list, {-1} when the write would take
# the task past the cap (the field is then left as it was), {-2} when the task was
# forgotten (its seal: a write that was in flight during forgetTask writes nothing).
_SET = """
if redis.call('EXISTS', KEYS[2]) == 1 then return {-2} end
local old = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local all = redis.call('HGETALL', KEYS[1])
local total = 0
for i = 1, #all do total = total + #all[i] end
if total > tonumber(ARGV[3]) then
  if old then
    redis.call('HSET', KEYS[1], ARGV[1], old)
  else
    redis.call('HDEL', KEYS[1], ARGV[1])
  end
  return {-1}
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
return all
"""


# KEYS[1] the task's hash, KEYS[2] its seal. ARGV: the seal's ttl seconds. The seal
# first, then the hash: no write lands between. Returns the fields removed.
_SEAL = """
redis.call('SET', KEYS[2], '1', 'EX', ARGV[1])
local n = redis.call('HLEN', KEYS[1])
redis.call('DEL', KEYS[1])
return n
"""


def task_key(tenant: str, task_id: str) -> str:
    return f"gm:{{{tenant}:{task_id}}}:wm"


def seal_key(tenant: str, task_id: str) -> str:
    """Set by forgetTask, for as long as its tombstone lives: the pad takes no write."""
    return f"gm:{{{tenant}:{task_id}}}:wm:gone"


def _decode(flat: list[Any]) -> dict[str, Any]:
    return {str(flat[i]): json.loads(flat[i + 1]) for i in range(0, len(flat), 2)}


class RedisWorkingStore:
    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._set = redis.register_script(_SET)
        self._seal = redis.register_script(_SEAL)

    async def set(
        self, tenant: str, task_id: str, key: str, value: str, max_bytes: int, ttl: int
    ) -> dict[str, Any] | None:
        """The task's working memory after the write, or None when it would exceed
        ``max_bytes`` (nothing written). ``Sealed`` when the task was forgotten."""
        flat = await call(
            lambda: cast(
                Awaitable[list[Any]],
                self._set(
                    keys=[task_key(tenant, task_id), seal_key(tenant, task_id)],
                    args=[key, value, max_bytes, ttl],
                ),
            )
        )
        if flat == [-2]:
            raise Sealed(task_id)
        if flat == [-1]:
            return None
        return _decode(flat)

    async def seal(self, tenant: str, task_id: str, ttl: int) -> int:
        """Remove the task's pad and refuse writes to it for ``ttl`` seconds; the fields
        removed."""
        n = await call(
            lambda: cast(
                Awaitable[int],
                self._seal(keys=[task_key(tenant, task_id), seal_key(tenant, task_id)], args=[ttl]),
            )
        )
        return int(n)

    async def get(self, tenant: str, task_id: str) -> dict[str, Any]:
        raw = await call(
            lambda: cast(Awaitable[dict[Any, Any]], self._redis.hgetall(task_key(tenant, task_id)))
        )
        return {str(k): json.loads(v) for k, v in raw.items()}

    async def clear(self, tenant: str, task_id: str) -> None:
        await call(lambda: self._redis.delete(task_key(tenant, task_id)))
