"""Moves keys written under an older key layout to the current one (``keys.py``).

Layout 1 (graphmem before the Redis Cluster work) tagged a session's keys with the tenant
alone (``gm:{<tenant>}:s:<session>:items``), a task's working memory likewise
(``gm:{<tenant>}:wm:<task>``), and named the enrichment stream ``gm:enrich``. Layout 2
tags them per session and per task, and the stream ``gm:{enrich}``. The move runs when a
service migrates (``graphmem migrate``, and ``serve`` at start), once:
``gm:layout`` records the layout the data is in. Layout 1 never ran on a cluster (its
first add failed there), so on a cluster there is nothing to move.

Upgrade with every replica and worker of the old version stopped: one that still writes
the old names after the move writes where the new version does not look.
"""

from __future__ import annotations

import logging
import re

from redis.asyncio import Redis, RedisCluster
from redis.exceptions import ResponseError

from graphmem.stores.redis.keys import call, session_keys

log = logging.getLogger("graphmem.stores")

LAYOUT_KEY = "gm:layout"
LAYOUT = 2

# Matched whole (fullmatch): '$' would also match before a key's trailing newline.
_SESSION = re.compile(r"gm:\{([^}]+)\}:s:(.+):(items|meta|config|emb|lock|messages)")
_WORKING = re.compile(r"gm:\{([^}]+)\}:wm:(.+)")
_QUEUE = re.compile(r"gm:enrich((?::[a-z:]+)?)")


def new_name(key: str) -> str | None:
    """The layout-2 name of a layout-1 key (None: the key did not move)."""
    if m := _SESSION.fullmatch(key):
        return str(getattr(session_keys(m[1], m[2]), m[3]))
    if m := _WORKING.fullmatch(key):
        return f"gm:{{{m[1]}:{m[2]}}}:wm"
    if m := _QUEUE.fullmatch(key):
        return f"gm:{{enrich}}{m[1]}"
    return None


async def upgrade(redis: Redis) -> int:
    """Move layout-1 keys; how many moved."""

    async def op() -> int:
        if int(await redis.get(LAYOUT_KEY) or 1) >= LAYOUT:
            return 0
        moved = 0
        if not isinstance(redis, RedisCluster):
            for pattern in ("gm:{*}:s:*", "gm:{*}:wm:*", "gm:enrich*"):
                async for raw in redis.scan_iter(match=pattern):
                    key = raw.decode() if isinstance(raw, bytes) else raw
                    target = new_name(key)
                    if target is not None and await _move(redis, key, target):
                        moved += 1
        await redis.set(LAYOUT_KEY, LAYOUT)
        return moved

    moved = await call(op)
    if moved:
        log.warning("moved %d Redis keys to key layout %d", moved, LAYOUT)
    return moved


async def _move(redis: Redis, key: str, target: str) -> bool:
    try:
        if await redis.renamenx(key, target):
            return True
    except ResponseError:
        return False  # another process starting at the same time moved it first
    # Written under the new name already (a new replica served it before this one
    # started): keep both rather than lose either, and say so.
    log.error("Redis key %s was not moved: %s exists already", key, target)
    return False


def _copied(key: bytes) -> bool:
    # Locks and leases belong to the processes of the old deployment: copied, they would
    # hold the new one up until they expire.
    return not (key.startswith(b"gm:lease:") or key.endswith(b":lock"))


async def copy(source: Redis, target: Redis) -> int:
    """Copy every graphmem key (layout 2) from ``source`` to ``target``, such as a single
    Redis to a Redis Cluster, with its time to live; how many keys were copied. Both
    clients must answer bytes (``connect(..., decode=False)``). Run it with the old
    deployment stopped: what it writes during the copy may be missed."""
    await upgrade(source)

    async def op() -> int:
        copied = 0
        async for key in source.scan_iter(match="gm:*", count=500):
            if not _copied(key):
                continue
            async with source.pipeline(transaction=False) as pipe:
                pipe.dump(key)
                pipe.pttl(key)
                dumped, ttl = await pipe.execute()
            if dumped is None:
                continue  # expired meanwhile
            await target.restore(key, max(int(ttl), 0), dumped, replace=True)
            copied += 1
        return copied

    return await call(op)
