"""Neo4j bookmarks shared by every API replica through Redis: read-your-writes across
replicas on a Neo4j cluster.

On a cluster, a read transaction may reach a secondary a few milliseconds behind the
leader. The driver chains the bookmarks of one process's transactions, so a process
reads its own writes; a search through replica B after a spill acknowledged by replica A
needs A's bookmark. Every write's bookmark goes into ``gm:bookmarks`` (a sorted set:
bookmark → when it was stored, the newest ``keep`` kept), and every transaction starts
with the bookmarks held there, so the cluster member serving it waits until it has
applied those writes. A bookmark names a point in one database's transaction order,
so the newest few stand for every older one.

Costs a Redis round trip per transaction, which a single server does not need (a
committed write is visible to every later transaction there): the builder uses it for
routing URIs (``neo4j://``, ``neo4j+s://``) unless settings say otherwise. When Redis
cannot be reached, transactions go on with the process's own bookmarks (reads may then
lag another replica's writes by the cluster's replication delay, never fail).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable
from typing import cast

from neo4j import AsyncGraphDatabase, Bookmarks
from neo4j.api import AsyncBookmarkManager
from redis.asyncio import Redis

from graphmem.stores.redis.keys import is_redis_failure

log = logging.getLogger("graphmem.stores")

KEY = "gm:bookmarks"

# KEYS: the set. ARGV: now, keep, bookmarks... Adds them and drops all but the newest.
_ADD = """
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[i])
end
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -tonumber(ARGV[2]) - 1)
return redis.call('ZCARD', KEYS[1])
"""


class SharedBookmarks:
    def __init__(self, redis: Redis, keep: int = 16) -> None:
        self._redis = redis
        self._add = redis.register_script(_ADD)
        self.keep = keep
        self._warned = 0.0
        self._last: list[str] = []

    def manager(self) -> AsyncBookmarkManager:
        """A driver bookmark manager that reads and feeds the shared set."""
        return AsyncGraphDatabase.bookmark_manager(
            bookmarks_supplier=self.held, bookmarks_consumer=self.store
        )

    async def held(self) -> Bookmarks:
        try:
            raw = await cast(Awaitable[list[str]], self._redis.zrange(KEY, -self.keep, -1))
        except Exception as exc:
            if not is_redis_failure(exc):
                raise
            self._warn(exc)
            return Bookmarks.from_raw_values(())
        return Bookmarks.from_raw_values(raw)

    async def store(self, bookmarks: Bookmarks) -> None:
        values = sorted(bookmarks.raw_values)
        if not values or values == self._last:  # a read that moved nothing
            return
        try:
            await self._add(keys=[KEY], args=[time.time(), self.keep, *values])
            self._last = values
        except Exception as exc:
            if not is_redis_failure(exc):
                raise
            self._warn(exc)

    def _warn(self, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._warned > 10:  # once per 10 s, not once per transaction
            self._warned = now
            log.warning("shared Neo4j bookmarks unavailable in Redis: %s", exc)
