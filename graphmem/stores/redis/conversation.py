"""Short-term memory: a session's recent messages in a Redis list with a TTL.

The session's ``messages`` key (``keys.py``), in the session's slot like its hot items.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import cast

from redis.asyncio import Redis

from graphmem.stores.models import Message
from graphmem.stores.redis.hot import RedisHotTier
from graphmem.stores.redis.keys import session_keys


class RedisConversationStore:
    def __init__(self, redis: Redis, max_messages: int = 200) -> None:
        self._redis = redis
        self.max_messages = max_messages

    @staticmethod
    def _key(tenant: str, session_id: str) -> str:
        return session_keys(tenant, session_id).messages

    async def append(self, tenant: str, session_id: str, message: Message, ttl: int) -> int:
        key = self._key(tenant, session_id)

        async def op() -> int:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.rpush(key, json.dumps(message.model_dump()))
                pipe.ltrim(key, -self.max_messages, -1)
                pipe.expire(key, ttl)
                pipe.llen(key)
                *_, length = await pipe.execute()
            return int(length)

        return await RedisHotTier._call(op)

    async def last(self, tenant: str, session_id: str, n: int) -> list[Message]:
        key = self._key(tenant, session_id)
        raw = await RedisHotTier._call(
            lambda: cast(Awaitable[list[str]], self._redis.lrange(key, -n, -1))
        )
        return [Message.model_validate_json(m) for m in raw]

    async def clear(self, tenant: str, session_id: str) -> int:
        """Drop the session's messages; how many there were."""
        key = self._key(tenant, session_id)

        async def op() -> int:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.llen(key)
                pipe.delete(key)
                n, _ = await pipe.execute()
            return int(n)

        return await RedisHotTier._call(op)

    async def count(self, tenant: str, session_id: str) -> int:
        key = self._key(tenant, session_id)
        return int(await RedisHotTier._call(lambda: self._redis.llen(key)))
