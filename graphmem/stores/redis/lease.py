"""Leases in Redis: which one of several processes does a job that must run once (the
maintenance loop), and who takes over when it dies.

A lease is a key ``gm:lease:<name>`` holding its holder's id, set with NX and an expiry.
The holder renews it while it works; a holder that dies stops renewing, the key expires,
and the next process to ask gets it. Renewal and release check the holder id, so a
process whose lease ran out (paused too long) cannot renew or drop another's.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import cast

from redis.asyncio import Redis

from graphmem.stores.redis.keys import call
from graphmem.stores.redis.locks import RELEASE_IF_HELD

# KEYS: the lease. ARGV: holder, lease ms. 1 when the holder has it (now or still).
_HOLD = """
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if held then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""


def lease_key(name: str) -> str:
    return f"gm:lease:{name}"


class RedisLeases:
    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._hold = redis.register_script(_HOLD)
        self._release = redis.register_script(RELEASE_IF_HELD)

    async def hold(self, name: str, holder: str, seconds: float) -> bool:
        """Take the lease, or renew it when ``holder`` has it; False when another has it."""
        ms = max(1, int(seconds * 1000))
        done = await call(
            lambda: cast(Awaitable[int], self._hold(keys=[lease_key(name)], args=[holder, ms]))
        )
        return bool(done)

    async def release(self, name: str, holder: str) -> None:
        await call(
            lambda: cast(Awaitable[int], self._release(keys=[lease_key(name)], args=[holder]))
        )

    async def holder(self, name: str) -> str | None:
        held = await call(lambda: cast(Awaitable[str | None], self._redis.get(lease_key(name))))
        return held
