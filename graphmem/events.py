"""The change feed (shared memory with change notifications, docs/concepts.md#primitive).

Every replica publishes what happened to Redis channel ``gm:{<tenant>}:events``, and every
subscription listens there: an event produced through one API process reaches the
subscribers of all of them. Channels are per tenant, so a subscriber can only ever hear
its own tenant. Publishing is best effort: a Redis hiccup never fails the operation that
produced the event.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from enum import StrEnum
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from .models import utcnow

log = logging.getLogger("graphmem.events")


class EventKind(StrEnum):
    ADDED = "added"
    SPILLED = "spilled"
    PROMOTED = "promoted"
    RECALLED = "recalled"
    FORGOTTEN = "forgotten"
    ENTITY_MERGED = "entity_merged"
    TASK_TRANSFERRED = "task_transferred"


def channel(tenant: str) -> str:
    return f"gm:{{{tenant}}}:events"


class EventBus:
    def __init__(self, redis: Redis) -> None:
        self._redis = redis

    async def publish(self, tenant: str, kind: EventKind, **data: Any) -> None:
        event = {"kind": kind.value, "at": utcnow().isoformat(), **data}
        try:
            await self._redis.publish(channel(tenant), json.dumps(event, default=str))
        except (RedisError, OSError):
            log.warning("could not publish %s event for %s", kind.value, tenant)

    async def subscribe(self, tenant: str) -> AsyncIterator[dict[str, Any]]:
        """Events of one tenant as they happen, until the consumer stops iterating."""
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        await pubsub.subscribe(channel(tenant))
        try:
            async for message in pubsub.listen():
                if message.get("type") == "message":
                    yield json.loads(message["data"])
        finally:
            await pubsub.unsubscribe(channel(tenant))
            await pubsub.aclose()  # type: ignore[no-untyped-call]


class NullBus:
    """For services built without Redis events (notebooks, tests of pure logic)."""

    async def publish(self, tenant: str, kind: EventKind, **data: Any) -> None:
        return None
