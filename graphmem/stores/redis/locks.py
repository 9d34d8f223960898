"""Per-session locks in Redis, so that a spill, a flush, a forget and an enrichment
worker's write of one session never interleave, whichever process or machine runs them.

A lock is the session's ``lock`` key (``keys.py``) holding a random token, set with NX
and a lease. The holder renews the lease while it works, so a long spill keeps its lock,
and a holder that dies (``kill -9``, a lost machine) frees it when the lease runs out.
Release deletes the key only if it still holds the holder's token. Waiters in the same
process queue on an in-process lock first, so only one of them polls Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator, Awaitable
from typing import Any, cast

from redis.asyncio import Redis

from graphmem.errors import Unavailable
from graphmem.stores.redis.keys import call, session_keys

# KEYS: lock (or lease)   ARGV: its holder's token. Deletes it only while the caller holds
# it (leases in lease.py release the same way).
RELEASE_IF_HELD = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS: lock   ARGV: token, lease ms
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""


def lock_key(tenant: str, session_id: str) -> str:
    return session_keys(tenant, session_id).lock


class RedisSessionLocks:
    #: how long a lock outlives a holder that stopped renewing it
    lease_seconds = 15.0
    #: how long a waiter waits before it reports the session as busy
    wait_seconds = 120.0

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._release = redis.register_script(RELEASE_IF_HELD)
        self._renew = redis.register_script(_RENEW)
        self._local: dict[tuple[str, str], asyncio.Lock] = {}

    @contextlib.asynccontextmanager
    async def hold(self, tenant: str, session_id: str) -> AsyncIterator[None]:
        key = (tenant, session_id)
        local = self._local.setdefault(key, asyncio.Lock())
        try:
            async with local:
                token = await self._acquire(lock_key(tenant, session_id))
                renewing = asyncio.create_task(self._keep(lock_key(tenant, session_id), token))
                try:
                    yield
                finally:
                    renewing.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await renewing
                    await self._give_back(lock_key(tenant, session_id), token)
        finally:
            # Forget an idle session's lock; one with waiters stays (Redis alone would
            # still be correct, but the waiters would poll).
            idle = not local.locked() and not getattr(local, "_waiters", None)
            if idle and self._local.get(key) is local:
                del self._local[key]

    async def _acquire(self, key: str) -> str:
        token = secrets.token_hex(16)
        lease = int(self.lease_seconds * 1000)
        deadline = time.monotonic() + self.wait_seconds
        delay = 0.002
        while True:
            taken = await call(
                lambda: cast(Awaitable[Any], self._redis.set(key, token, nx=True, px=lease))
            )
            if taken:
                return token
            if time.monotonic() > deadline:
                raise Unavailable("the session is busy (its lock was not released); try again")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.05)

    async def _keep(self, key: str, token: str) -> None:
        lease = int(self.lease_seconds * 1000)
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            with contextlib.suppress(Unavailable):
                await call(lambda: self._renew(keys=[key], args=[token, lease]))

    async def _give_back(self, key: str, token: str) -> None:
        # A release that cannot reach Redis leaves the lease to run out: never raise
        # from here, or the caller's own outcome would be replaced by this one.
        with contextlib.suppress(Exception):
            await call(lambda: self._release(keys=[key], args=[token]))
