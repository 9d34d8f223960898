"""Storage tiers behind the memory service, each behind a protocol so it can be swapped.

``HotTier`` is what the service needs from the session cache (Redis in
``hot.py``); ``GraphStore`` is what it needs from long-term storage (Neo4j in
``graph.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..models import MemoryItem, MemoryType, Tier, TierCount


@runtime_checkable
class HotTier(Protocol):
    #: idle lifetime of a session's keys, in seconds; the service sets it from its config
    ttl: int

    async def ping(self) -> None: ...
    async def put(
        self, tenant: str, session_id: str, items: Sequence[MemoryItem]
    ) -> tuple[int, dict[str, Any]]: ...
    async def items(self, tenant: str, session_id: str) -> list[MemoryItem]: ...
    async def get(self, tenant: str, session_id: str, ids: Sequence[str]) -> list[MemoryItem]: ...
    async def session_of(self, tenant: str, item_id: str) -> str | None: ...
    async def tokens(self, tenant: str, session_id: str) -> int: ...
    async def remove(self, tenant: str, session_id: str, ids: Sequence[str]) -> list[str]: ...
    async def touch(self, tenant: str, session_id: str, items: Sequence[MemoryItem]) -> None: ...
    async def embeddings(
        self, tenant: str, session_id: str, ids: Sequence[str]
    ) -> dict[str, list[float]]: ...
    async def cache_embeddings(
        self, tenant: str, session_id: str, vectors: Mapping[str, Sequence[float]]
    ) -> None: ...
    async def session_config(self, tenant: str, session_id: str) -> dict[str, Any]: ...
    async def set_session_config(
        self, tenant: str, session_id: str, overrides: dict[str, Any]
    ) -> None: ...
    async def tenants(self) -> list[str]: ...
    async def idle_sessions(self, tenant: str, idle_since: float) -> list[str]: ...
    async def sessions(self, tenant: str) -> list[str]: ...
    async def mark_over_budget(self, tenant: str, session_id: str) -> None: ...
    async def over_budget(self, tenant: str) -> list[str]: ...
    async def clear_over_budget(self, tenant: str, session_id: str) -> None: ...
    async def drop_if_gone(self, tenant: str, session_id: str) -> bool: ...
    async def close(self) -> None: ...


@runtime_checkable
class GraphStore(Protocol):
    async def ping(self) -> None: ...
    async def migrate(self, dimension: int) -> list[str]: ...
    async def backfill_scope_tokens(
        self, tokens: Callable[[str, str | None, str | None], str], batch: int = 5000
    ) -> int: ...
    async def upsert(self, tenant: str, rows: Sequence[dict[str, Any]]) -> list[str]: ...
    async def scope_size(
        self,
        tenant: str,
        session_id: str | None,
        user_id: str | None,
        tiers: Sequence[str] = ...,
    ) -> int: ...
    async def candidate_scores(
        self,
        tenant: str,
        ids: Sequence[str],
        embedding: Sequence[float],
        cosine_ids: Sequence[str] = (),
    ) -> dict[str, tuple[float | None, bytes | None]]: ...
    async def vector_search(
        self,
        tenant: str,
        embedding: Sequence[float],
        limit: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        types: Sequence[MemoryType] | None = None,
        tiers: Sequence[str] = ...,
        scope_size: int | None = None,
    ) -> list[tuple[MemoryItem, float]]: ...
    async def fulltext_search(
        self,
        tenant: str,
        lucene: str,
        limit: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        types: Sequence[MemoryType] | None = None,
        tiers: Sequence[str] = ...,
    ) -> list[tuple[MemoryItem, float]]: ...
    async def neighbours(
        self,
        tenant: str,
        ids: Sequence[str],
        embedding: Sequence[float],
        window: int = 1,
        tiers: Sequence[str] = ...,
    ) -> list[tuple[str, MemoryItem, float, bytes | None]]: ...
    async def memories_mentioning(
        self,
        tenant: str,
        keys: Sequence[str],
        limit: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        tiers: Sequence[str] = ...,
    ) -> dict[str, int]: ...
    async def record_access(
        self,
        tenant: str,
        hits: Sequence[tuple[str, float]],
        now: datetime,
        warm_access_threshold: int,
    ) -> list[MemoryItem]: ...
    async def get(self, tenant: str, ids: Sequence[str]) -> list[MemoryItem]: ...
    async def mark_hot(self, tenant: str, ids: Sequence[str], now: datetime) -> list[str]: ...
    async def count_by_tier(self, tenant: str, session_id: str) -> dict[Tier, TierCount]: ...
    async def tenants(self) -> list[str]: ...
    async def demote_idle_warm(self, tenant: str, before: datetime, now: datetime) -> list[str]: ...
    async def delete(self, tenant: str, item_id: str) -> list[str] | None: ...
    async def forget_user(self, tenant: str, user_id: str) -> dict[str, Any]: ...
    async def prune_candidates(
        self,
        tenant: str,
        tiers: Sequence[str],
        types: Sequence[str] | None,
        session_id: str | None,
        user_id: str | None,
    ) -> list[dict[str, Any]]: ...
    async def delete_many(self, tenant: str, ids: Sequence[str]) -> dict[str, Any]: ...
    async def stats(
        self, tenant: str, session_id: str | None, user_id: str | None
    ) -> list[dict[str, Any]]: ...
    async def substring(
        self, tenant: str, needle: str, session_id: str | None, user_id: str | None, limit: int
    ) -> list[MemoryItem]: ...
    async def close(self) -> None: ...
