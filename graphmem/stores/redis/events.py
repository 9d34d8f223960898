"""The change feed (shared memory with change notifications, docs/concepts.md#primitive).

Every replica publishes what happened to Redis channel ``gm:{<tenant>}:events``, and every
subscription listens there: an event produced through one API process reaches the
subscribers of all of them. Channels are per tenant, so a subscriber can only ever hear
its own tenant. Publishing is best effort: a Redis hiccup never fails the operation that
produced the event.

The channels are sharded (``SPUBLISH``/``SSUBSCRIBE``, Redis 7): in a Redis Cluster an
event travels only within the shard that owns its channel's slot, instead of to every
node as classic pub/sub does; a single Redis treats them like any channel.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterPubSub

# Re-exported: whoever publishes names the event's kind beside the bus.
from graphmem.domain.models import EventKind as EventKind
from graphmem.domain.models import utcnow
from graphmem.stores.redis.keys import is_redis_failure

log = logging.getLogger("graphmem.stores.redis.events")

#: seconds one wait for a message may last before the loop waits again (a message ends
#: the wait at once)
_WAIT = 30.0


def channel(tenant: str) -> str:
    return f"gm:{{{tenant}}}:events"


class EventBus:
    def __init__(self, redis: Redis) -> None:
        self._redis = redis

    async def publish(self, tenant: str, kind: EventKind, **data: Any) -> None:
        event = {"kind": kind.value, "at": utcnow().isoformat(), **data}
        try:
            await self._redis.spublish(channel(tenant), json.dumps(event, default=str))
        except Exception as exc:
            if not is_redis_failure(exc):
                raise
            log.warning("could not publish %s event for %s", kind.value, tenant)

    async def subscribe(self, tenant: str) -> AsyncIterator[dict[str, Any]]:
        """Events of one tenant as they happen, until the consumer stops iterating."""
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        task = asyncio.current_task()
        # A cluster's pub/sub keeps a connection per shard and hands sharded messages out
        # through its own call; a single Redis's through the plain one.
        try:
            await pubsub.ssubscribe(channel(tenant))
            while True:
                # redis-py can swallow a cancellation that arrives while it connects (and
                # go on as if none came): the subscription, and its Redis connection,
                # would outlive its consumer.
                if task is not None and task.cancelling():
                    raise asyncio.CancelledError
                if isinstance(pubsub, ClusterPubSub):
                    message = await pubsub.get_sharded_message(True, _WAIT)
                else:
                    message = await pubsub.get_message(True, _WAIT)
                if message is not None and message.get("type") == "smessage":
                    yield json.loads(message["data"])
        finally:
            await pubsub.sunsubscribe(channel(tenant))
            await pubsub.aclose()  # type: ignore[no-untyped-call]
