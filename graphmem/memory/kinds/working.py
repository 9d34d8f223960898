"""Working memory: a task's scratch pad, cleared on completion
(docs/concepts.md#memory-types).

Kept in Redis (``stores/redis/working.py``), so every API replica reads what any other
wrote; a write renews the pad's time to live (``ttl_seconds``), so the pad of a task
that is never completed goes away by itself.
"""

from __future__ import annotations

import json
from typing import Any

from graphmem.errors import BadInput, Unavailable
from graphmem.memory.tiers.quota import UNLIMITED, Pad, Quota, charged, text_bytes
from graphmem.stores import WorkingStore


class WorkingMemory:
    max_bytes = 64 * 1024  # per task: scratch data, not a document store
    ttl_seconds = 7 * 24 * 3600

    def __init__(self, store: WorkingStore | None, quota: Quota = UNLIMITED) -> None:
        self.store = store
        #: each key written is an item of the tenant's quota
        self.quota = quota

    def _store(self) -> WorkingStore:
        if self.store is None:
            raise Unavailable("working memory is not configured (it needs Redis)")
        return self.store

    async def set(self, tenant: str, task_id: str, key: str, value: Any) -> dict[str, Any]:
        if not key:
            raise BadInput("key: must not be empty", field="key")
        try:
            encoded = json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise BadInput("value: must be JSON", field="value") from exc
        # An overwrite is charged as a new key until the quota's next exact count.
        async with charged(self.quota, tenant, 1, text_bytes(key, encoded)):
            data = await self._store().set(
                tenant, task_id, key, encoded, self.max_bytes, self.ttl_seconds
            )
            if data is None:
                raise BadInput(f"working memory of a task holds at most {self.max_bytes} bytes")
        await self.quota.holding(tenant, Pad.WORKING, task_id, self.ttl_seconds)
        return data

    async def get(self, tenant: str, task_id: str) -> dict[str, Any]:
        return await self._store().get(tenant, task_id)

    async def clear(self, tenant: str, task_id: str) -> None:
        await self._store().clear(tenant, task_id)
