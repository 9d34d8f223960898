"""What the memory service needs from its stores: the tiers and what coordinates them.

``HotTier`` is what the service needs from the session cache (Redis in ``redis/hot.py``),
with ``SessionIndex`` (its ``index``) for per-session settings and the indexes that
maintenance walks. ``GraphStore`` is what it needs from long-term storage (Neo4j in
``neo4j/graph.py``), with ``GraphSearch`` (its ``search``) for recall's queries,
``GraphScans`` (its ``scans``) for scope-wide scans behind reports and maintenance and
``GraphSpaces`` (its ``spaces``) for the model each tenant's vectors come from.
``EnrichmentQueue`` carries write-behind jobs to the workers; ``ScopeVersions`` versions
each search scope (Redis, ``redis/versions.py``) so that replicas may keep what a scope
holds in memory; ``Leases`` and ``AdmissionStore`` are what processes share on Redis to
take turns and to count each tenant's use.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from graphmem.domain.models import (
    EmbeddingSpace,
    EventKind,
    MemoryItem,
    MemoryType,
    Tier,
    TierCount,
)
from graphmem.domain.moments import Moment
from graphmem.stores.models import (
    Enriched,
    EnrichmentJob,
    GraphMemory,
    Located,
    MemoryRows,
    MemoryVectors,
    QueueStats,
    Removed,
    ScopeRead,
    TextAnalysis,
    UserRemoved,
)
from graphmem.stores.protocols_kinds import GraphErasure


@runtime_checkable
class SessionIndex(Protocol):
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


@runtime_checkable
class SessionLocks(Protocol):
    def hold(self, tenant: str, session_id: str) -> AbstractAsyncContextManager[None]: ...


@runtime_checkable
class HotTier(Protocol):
    #: idle lifetime of a session's keys, in seconds; the service sets it from its config
    ttl: int
    #: per-session settings and the indexes maintenance walks, on the same Redis
    index: SessionIndex
    #: the per-session lock, shared by every process on the same Redis
    locks: SessionLocks

    async def ping(self) -> None: ...
    async def migrate(self) -> int: ...
    async def put(
        self, tenant: str, session_id: str, items: Sequence[MemoryItem]
    ) -> tuple[int, dict[str, Any]]: ...
    async def items(self, tenant: str, session_id: str) -> list[MemoryItem]: ...
    async def get(self, tenant: str, session_id: str, ids: Sequence[str]) -> list[MemoryItem]: ...
    async def session_of(self, tenant: str, item_id: str) -> str | None: ...
    async def tokens(self, tenant: str, session_id: str) -> int: ...
    async def remove(self, tenant: str, session_id: str, ids: Sequence[str]) -> list[str]: ...
    async def touch(self, tenant: str, session_id: str, items: Sequence[MemoryItem]) -> None: ...
    # the cache of vectors beside the hot items holds one model's at a time
    async def embeddings(
        self, tenant: str, session_id: str, ids: Sequence[str], *, model: str
    ) -> dict[str, list[float]]: ...
    async def cache_embeddings(
        self,
        tenant: str,
        session_id: str,
        vectors: Mapping[str, Sequence[float]],
        *,
        model: str,
    ) -> None: ...
    async def cached_model(self, tenant: str, session_id: str) -> str | None: ...
    async def enrichment(
        self, tenant: str, session_id: str, ids: Sequence[str], *, model: str
    ) -> dict[str, Enriched]: ...
    async def cache_enrichment(
        self, tenant: str, session_id: str, entries: Mapping[str, Enriched], *, model: str
    ) -> None: ...
    async def close(self) -> None: ...


@runtime_checkable
class EnrichmentQueue(Protocol):
    async def ensure(self) -> None: ...
    async def add(self, tenant: str, session_id: str, ids: Sequence[str]) -> None: ...
    async def read(self, consumer: str, count: int, block_ms: int) -> list[EnrichmentJob]: ...
    async def reclaim(self, consumer: str, idle_ms: int, count: int) -> list[EnrichmentJob]: ...
    async def touch(self, consumer: str, jobs: Sequence[EnrichmentJob]) -> int: ...
    async def ack(self, jobs: Sequence[EnrichmentJob]) -> None: ...
    async def retry(self, job: EnrichmentJob) -> None: ...
    async def park(self, job: EnrichmentJob, error: str) -> None: ...
    async def parked(self, count: int = 100) -> list[dict[str, str]]: ...
    async def stats(self) -> QueueStats: ...
    async def beat(self, consumer: str, alive: bool = True) -> None: ...
    async def workers(self, within_seconds: float) -> int: ...
    async def tenant_backlog(self, tenant: str) -> tuple[int, int]: ...


class ScopeVersions(Protocol):
    """Versions of search scopes (``t`` the tenant, ``s:<session>``, ``u:<user>``),
    shared by every replica. Whoever changes a memory in the graph bumps its scopes
    after the write (``memory/writepath/changes.py`` does it for the service's write paths)."""

    async def read(self, tenant: str, scope: str, held: tuple[str, str] | None) -> ScopeRead: ...
    async def bump(
        self,
        tenant: str,
        scopes: Mapping[str, Sequence[str] | None],
        everything: bool = False,
    ) -> None: ...


@runtime_checkable
class GraphSearch(Protocol):
    """Recall's reads, each returning columns (``MemoryRows``)."""

    async def scope_size(
        self,
        tenant: str,
        session_id: str | None,
        user_id: str | None,
        tiers: Sequence[str] = ...,
    ) -> int: ...
    async def vector_hits(
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
        moment: Moment = ...,
    ) -> MemoryRows: ...
    async def text_hits(
        self,
        tenant: str,
        lucene: str,
        limit: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        types: Sequence[MemoryType] | None = None,
        tiers: Sequence[str] = ...,
        vectors: bool = False,
        moment: Moment = ...,
    ) -> MemoryRows: ...
    async def neighbours(
        self,
        tenant: str,
        ids: Sequence[str],
        window: int = 1,
        *,
        user_id: str | None = None,
        tiers: Sequence[str] = ...,
        also: Sequence[str] = ...,
        moment: Moment = ...,
    ) -> tuple[MemoryRows, Mapping[str, MemoryItem]]: ...
    async def linked(
        self,
        tenant: str,
        ids: Sequence[str],
        max_mentions: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        tiers: Sequence[str] = ...,
        vectors: bool = True,
        moment: Moment = ...,
    ) -> MemoryRows: ...
    def scope_pages(
        self, tenant: str, session_id: str | None, user_id: str | None, cap: int
    ) -> AsyncIterator[MemoryRows]: ...
    async def rows_by_ids(self, tenant: str, ids: Sequence[str]) -> MemoryRows: ...
    async def memories_mentioning(
        self,
        tenant: str,
        keys: Sequence[str],
        limit: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        tiers: Sequence[str] = ...,
        moment: Moment = ...,
    ) -> dict[str, int]: ...
    async def superseded(
        self, tenant: str, ids: Sequence[str], moment: Moment = ...
    ) -> dict[str, list[str]]: ...


@runtime_checkable
class GraphScans(Protocol):
    async def count_by_tier(self, tenant: str, session_id: str) -> dict[Tier, TierCount]: ...
    async def demote_idle_warm(self, tenant: str, before: datetime, now: datetime) -> list[str]: ...
    async def prune_candidates(
        self,
        tenant: str,
        tiers: Sequence[str],
        types: Sequence[str] | None,
        session_id: str | None,
        user_id: str | None,
    ) -> list[dict[str, Any]]: ...
    async def stats(
        self, tenant: str, session_id: str | None, user_id: str | None
    ) -> list[dict[str, Any]]: ...
    async def substring(
        self, tenant: str, needle: str, session_id: str | None, user_id: str | None, limit: int
    ) -> list[MemoryItem]: ...
    async def page(
        self,
        tenant: str,
        session_id: str | None,
        user_id: str | None,
        after: tuple[int, str],
        first: int,
        needles: Sequence[str] | None = None,
        moment: Moment = ...,
    ) -> list[MemoryItem]: ...
    async def sessions(
        self, tenant: str, prefix: str, user_id: str | None, after: str, first: int
    ) -> list[str]: ...
    async def kinds_usage(self, tenant: str) -> tuple[int, int]: ...


@runtime_checkable
class GraphSpaces(Protocol):
    """Which model's vectors each tenant holds (memory/writepath/spaces.py), and the steps of
    `graphmem reembed`, which moves a tenant to another model (memory/writepath/reembed.py)."""

    async def of(self, tenant: str) -> str | None: ...
    async def all(self) -> dict[str, str]: ...
    async def tag_legacy(self, space: EmbeddingSpace) -> int: ...
    async def count(self, tenant: str, space: EmbeddingSpace) -> tuple[int, int]: ...
    async def pending(
        self, tenant: str, space: EmbeddingSpace, after: str, batch: int
    ) -> list[tuple[str, str]]: ...
    async def set_next(
        self, tenant: str, space: EmbeddingSpace, vectors: Sequence[MemoryVectors]
    ) -> int: ...
    async def flip(self, tenant: str, space: EmbeddingSpace) -> None: ...
    async def swap(self, tenant: str, space: EmbeddingSpace, batch: int) -> int: ...
    async def tasks_pending(
        self, tenant: str, space: EmbeddingSpace, batch: int
    ) -> list[tuple[str, str]]: ...
    async def set_tasks(
        self, tenant: str, space: EmbeddingSpace, rows: Sequence[dict[str, Any]]
    ) -> int: ...


@runtime_checkable
class GraphStore(Protocol):
    #: recall's queries, on the same driver
    search: GraphSearch
    #: scope-wide scans for reports and maintenance, on the same driver
    scans: GraphScans
    #: which model's vectors each tenant holds, and `graphmem reembed`'s steps
    spaces: GraphSpaces
    #: tombstones, a subject's counts, the erasure receipts' log
    erasure: GraphErasure

    async def ping(self) -> None: ...
    async def migrate(self, dimension: int) -> list[str]: ...
    async def provision(self, tenants: Sequence[str]) -> list[str]: ...
    async def backfill_scope_tokens(
        self, tokens: Callable[[str, str | None, str | None], str], batch: int = 5000
    ) -> int: ...
    async def backfill_terms(
        self, analyse: Callable[[str], TextAnalysis], version: int, batch: int = 2000
    ) -> int: ...
    async def upsert(
        self, tenant: str, memories: Sequence[GraphMemory], space: EmbeddingSpace
    ) -> list[str]: ...
    async def upsert_hot(self, tenant: str, memories: Sequence[GraphMemory]) -> list[str]: ...
    async def set_vectors(
        self, tenant: str, vectors: Sequence[MemoryVectors], space: EmbeddingSpace
    ) -> list[str]: ...
    async def record_access(
        self,
        tenant: str,
        hits: Sequence[tuple[str, float]],
        now: datetime,
        warm_access_threshold: int,
    ) -> list[tuple[MemoryItem, str]]: ...
    async def get(self, tenant: str, ids: Sequence[str]) -> list[MemoryItem]: ...
    async def unenriched(self, tenant: str, ids: Sequence[str]) -> list[MemoryItem]: ...
    async def mark_hot(self, tenant: str, ids: Sequence[str], now: datetime) -> list[str]: ...
    async def retract(
        self, tenant: str, ids: Sequence[str], reason: str, now: datetime
    ) -> list[tuple[Located, bool]]: ...
    async def unretract(
        self, tenant: str, ids: Sequence[str], now: datetime
    ) -> list[tuple[Located, bool]]: ...
    async def tenants(self) -> list[str]: ...
    async def delete(self, tenant: str, item_id: str) -> list[str] | None: ...
    async def forget_user(self, tenant: str, user_id: str) -> UserRemoved: ...
    async def delete_many(self, tenant: str, ids: Sequence[str]) -> Removed: ...
    async def close(self) -> None: ...


@runtime_checkable
class Leases(Protocol):
    async def hold(self, name: str, holder: str, seconds: float) -> bool: ...
    async def release(self, name: str, holder: str) -> None: ...
    async def holder(self, name: str) -> str | None: ...


@runtime_checkable
class AdmissionStore(Protocol):
    """Counters behind admission control, shared by every API replica."""

    async def hit(self, tenant: str, second: int, cost: int = 1) -> int: ...
    async def acquire(
        self, tenant: str, token: str, limit: int, now_ms: int, ttl_ms: int, count: int = 1
    ) -> bool: ...
    async def release(self, tenant: str, token: str, count: int = 1) -> None: ...
    async def claim_recount(self, tenant: str, ttl_ms: int) -> bool: ...
    async def end_recount(self, tenant: str) -> None: ...
    async def usage(self, tenant: str) -> tuple[int, int]: ...
    async def add_usage(self, tenant: str, memories: int, size: int) -> None: ...
    async def set_usage(self, tenant: str, memories: int, size: int) -> None: ...
    async def hold_pad(self, tenant: str, pad: str, owner: str, now_ms: int, ttl: int) -> None: ...
    async def pads_usage(self, tenant: str, now_ms: int) -> tuple[int, int]: ...


class ChangeFeed(Protocol):
    """Where capabilities announce what changed, per tenant, to every replica's
    subscribers (Redis pub/sub in ``redis/events.py``; ``null.NullBus`` without one)."""

    async def publish(self, tenant: str, kind: EventKind, **data: Any) -> None: ...
    def subscribe(self, tenant: str) -> AsyncIterator[dict[str, Any]]: ...
