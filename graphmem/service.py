"""The memory service: one object per process, built by ``MemoryBuilder``.

It owns the tier policy of seed 004 — add to hot, spill the lowest-relevance and
oldest items into the graph when a session outgrows its token budget, recall from
the graph with access tracking, promote what recall finds relevant — and the one
durability rule that matters: an item leaves Redis only after Neo4j acknowledged it.
Every public method takes the tenant first; nothing here crosses tenants.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .enrich.embed import Embedder
from .enrich.tokens import TokenCounter
from .errors import BadInput, NotFound, Unavailable
from .models import (
    HotStatus,
    MemoryItem,
    MemoryStatus,
    MemoryType,
    RecallResult,
    ScoredMemory,
    SpillResult,
    Suggestion,
    Tier,
    content_hash,
    utcnow,
)
from .settings import ID_PATTERN, MemoryConfig
from .tiers import GraphStore, HotTier

log = logging.getLogger("graphmem.service")


class Limits(BaseModel):
    """Input bounds; requests outside them get BAD_INPUT instead of doing the work."""

    model_config = ConfigDict(frozen=True)

    max_content_chars: int = 20_000
    max_batch_items: int = 500
    max_limit: int = 100
    max_metadata_bytes: int = 16_384
    max_query_chars: int = 2_000


def _check_id(value: str | None, field: str) -> str | None:
    if value is not None and not ID_PATTERN.match(value):
        raise ValueError(f"{field} must be 1-128 characters of A-Z a-z 0-9 _ . @ -")
    return value


class AddMemory(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str
    user_id: str | None = None
    content: str
    type: MemoryType = MemoryType.MESSAGE
    metadata: dict[str, Any] = Field(default_factory=dict)
    occurred_at: Any = None  # a datetime; kept loose so pydantic parses ISO strings too

    @field_validator("session_id")
    @classmethod
    def _session(cls, v: str) -> str:
        _check_id(v, "sessionId")
        return v

    @field_validator("user_id")
    @classmethod
    def _user(cls, v: str | None) -> str | None:
        return _check_id(v, "userId")


class RecallQuery(BaseModel):
    session_id: str | None = None
    user_id: str | None = None
    query: str
    limit: int = 3
    auto_promote: bool = True
    types: list[MemoryType] | None = None


def _bad_input(exc: ValidationError) -> BadInput:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first.get("loc", ()))
    message = str(first.get("msg", "invalid input")).removeprefix("Value error, ")
    return BadInput(f"{field}: {message}" if field else message, field=field)


class MemoryService:
    spill_retries = 4
    spill_backoff_seconds = 0.25

    def __init__(
        self,
        hot: HotTier,
        graph: GraphStore,
        embedder: Embedder,
        tokens: TokenCounter,
        config: MemoryConfig | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.hot_tier = hot
        self.graph = graph
        self.embedder = embedder
        self.tokens = tokens
        self.config = config or MemoryConfig()
        self.limits = limits or Limits()
        self._session_locks: dict[tuple[str, str], asyncio.Lock] = {}

    async def close(self) -> None:
        await self.hot_tier.close()
        await self.graph.close()

    async def migrate(self) -> list[str]:
        return await self.graph.migrate(self.embedder.dimension)

    async def readiness(self) -> dict[str, str]:
        """'ok' or the reason per dependency; never raises."""
        report: dict[str, str] = {}
        for name, probe in (("neo4j", self.graph.ping), ("redis", self.hot_tier.ping)):
            try:
                await asyncio.wait_for(probe(), timeout=3.0)
                report[name] = "ok"
            except (Unavailable, TimeoutError):
                report[name] = "unreachable"
            except Exception:  # readiness must answer, whatever the driver raised
                log.exception("readiness probe %s failed", name)
                report[name] = "error"
        return report

    # --- validation -------------------------------------------------------------------
    def _validate_add(self, raw: AddMemory | dict[str, Any]) -> AddMemory:
        try:
            spec = raw if isinstance(raw, AddMemory) else AddMemory.model_validate(raw)
        except ValidationError as exc:
            raise _bad_input(exc) from exc
        if not spec.content.strip():
            raise BadInput("content: must not be empty", field="content")
        if len(spec.content) > self.limits.max_content_chars:
            raise BadInput(
                f"content: at most {self.limits.max_content_chars} characters "
                f"(got {len(spec.content)})",
                field="content",
            )
        size = len(json.dumps(spec.metadata, separators=(",", ":"), default=str))
        if size > self.limits.max_metadata_bytes:
            raise BadInput(
                f"metadata: at most {self.limits.max_metadata_bytes} bytes of JSON",
                field="metadata",
            )
        return spec

    def _validate_limit(self, limit: int) -> int:
        if not 1 <= limit <= self.limits.max_limit:
            raise BadInput(f"limit: must be between 1 and {self.limits.max_limit}", field="limit")
        return limit

    def _validate_query(self, query: str) -> str:
        if not query.strip():
            raise BadInput("query: must not be empty", field="query")
        if len(query) > self.limits.max_query_chars:
            raise BadInput(
                f"query: at most {self.limits.max_query_chars} characters", field="query"
            )
        return query

    def _validate_scope(self, session_id: str | None, user_id: str | None) -> None:
        try:
            _check_id(session_id, "sessionId")
            _check_id(user_id, "userId")
        except ValueError as exc:
            raise BadInput(str(exc)) from exc

    @staticmethod
    def _validate_item_id(item_id: str) -> None:
        if not ID_PATTERN.match(item_id):
            raise BadInput("itemId: not a valid memory id", field="itemId")

    # --- add ----------------------------------------------------------------------------
    async def add(self, tenant: str, spec: AddMemory | dict[str, Any]) -> MemoryItem:
        (item,) = await self.add_many(tenant, [spec])
        return item

    async def add_many(
        self, tenant: str, specs: Sequence[AddMemory | dict[str, Any]]
    ) -> list[MemoryItem]:
        if not specs:
            raise BadInput("inputs: at least one memory is required", field="inputs")
        if len(specs) > self.limits.max_batch_items:
            raise BadInput(
                f"inputs: at most {self.limits.max_batch_items} memories per call",
                field="inputs",
            )
        valid = [self._validate_add(s) for s in specs]
        counts = self.tokens.count_many([s.content for s in valid])
        now = utcnow()
        by_session: dict[str, list[MemoryItem]] = {}
        items: list[MemoryItem] = []
        for spec, n in zip(valid, counts, strict=True):
            item = MemoryItem(
                id=f"mem_{uuid.uuid4().hex}",
                tenant=tenant,
                session_id=spec.session_id,
                user_id=spec.user_id,
                content=spec.content,
                type=spec.type,
                tier=Tier.HOT,
                access_count=0,
                last_accessed_at=now,
                created_at=spec.occurred_at or now,
                relevance_score=1.0,  # seed 004: new items start fully relevant
                token_count=n,
                content_hash=content_hash(spec.content),
                metadata=spec.metadata,
            )
            items.append(item)
            by_session.setdefault(item.session_id, []).append(item)
        for session_id, batch in by_session.items():
            total = await self.hot_tier.put(tenant, session_id, batch)
            if self.config.auto_spill_enabled and total > self.config.hot_token_limit:
                await self._spill_to_budget(tenant, session_id)
        return items

    # --- read the hot tier ------------------------------------------------------------
    async def hot(self, tenant: str, session_id: str) -> list[MemoryItem]:
        self._validate_scope(session_id, None)
        items = await self.hot_tier.items(tenant, session_id)
        return sorted(items, key=lambda i: (i.created_at, i.id), reverse=True)

    # --- spill ----------------------------------------------------------------------------
    def _lock(self, tenant: str, session_id: str) -> asyncio.Lock:
        return self._session_locks.setdefault((tenant, session_id), asyncio.Lock())

    @staticmethod
    def _spill_order(items: list[MemoryItem]) -> list[MemoryItem]:
        """Lowest relevance first, then oldest (seed 004's selectItemsForSpill)."""
        return sorted(items, key=lambda i: (i.relevance_score, i.created_at, i.id))

    async def spill(
        self,
        tenant: str,
        session_id: str,
        count: int | None = None,
        item_ids: Sequence[str] | None = None,
    ) -> SpillResult:
        self._validate_scope(session_id, None)
        if count is not None and item_ids:
            raise BadInput("give either count or itemIds, not both")
        if count is not None and not 1 <= count <= self.limits.max_batch_items:
            raise BadInput(
                f"count: must be between 1 and {self.limits.max_batch_items}", field="count"
            )
        async with self._lock(tenant, session_id):
            if item_ids:
                chosen = await self.hot_tier.get(tenant, session_id, list(dict.fromkeys(item_ids)))
                missing = set(item_ids) - {i.id for i in chosen}
                if missing:
                    raise NotFound(
                        f"not in the hot tier of session {session_id}: "
                        + ", ".join(sorted(missing)),
                        itemIds=sorted(missing),
                    )
            else:
                ordered = self._spill_order(await self.hot_tier.items(tenant, session_id))
                chosen = ordered[: count or self.config.spill_count]
            return await self._flush(tenant, session_id, chosen)

    async def _spill_to_budget(
        self, tenant: str, session_id: str, keep: Sequence[str] = ()
    ) -> SpillResult:
        async with self._lock(tenant, session_id):
            items = await self.hot_tier.items(tenant, session_id)
            total = sum(i.token_count for i in items)
            chosen: list[MemoryItem] = []
            # Items just promoted are spilled last: spilling them would undo the promotion.
            for item in sorted(self._spill_order(items), key=lambda i: i.id in keep):
                if total <= self.config.hot_token_limit:
                    break
                chosen.append(item)
                total -= item.token_count
            return await self._flush(tenant, session_id, chosen)

    async def _flush(
        self, tenant: str, session_id: str, items: Sequence[MemoryItem]
    ) -> SpillResult:
        """Embed, write to Neo4j (retrying), and only then remove from Redis."""
        if not items:
            return SpillResult(spilled_count=0, spilled_ids=[], target_tier=Tier.COLD)
        vectors = await asyncio.to_thread(self.embedder.embed, [i.content for i in items])
        rows = []
        spilled: list[MemoryItem] = []
        for item, vector in zip(items, vectors, strict=True):
            tier = Tier.WARM if item.access_count > self.config.warm_access_threshold else Tier.COLD
            moved = item.model_copy(update={"tier": tier})
            spilled.append(moved)
            rows.append(moved.graph_row(vector.tolist()))
        await self._with_retry(lambda: self.graph.upsert(tenant, rows))
        await self.hot_tier.remove(tenant, session_id, [i.id for i in spilled])
        warm = [i.id for i in spilled if i.tier is Tier.WARM]
        cold = [i.id for i in spilled if i.tier is Tier.COLD]
        return SpillResult(
            spilled_count=len(spilled),
            spilled_ids=[i.id for i in spilled],
            target_tier=Tier.WARM if len(warm) > len(cold) else Tier.COLD,
            warm_ids=warm,
            cold_ids=cold,
        )

    async def _with_retry(self, op: Any) -> Any:
        delay = self.spill_backoff_seconds
        for attempt in range(self.spill_retries):
            try:
                return await op()
            except Unavailable:
                if attempt == self.spill_retries - 1:
                    raise
                log.warning("graph unavailable during spill; retrying in %.2fs", delay)
                await asyncio.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")

    # --- recall and search ------------------------------------------------------------------
    async def _rank(self, tenant: str, q: RecallQuery) -> list[tuple[MemoryItem, float]]:
        self._validate_query(q.query)
        self._validate_limit(q.limit)
        self._validate_scope(q.session_id, q.user_id)
        (vector,) = await asyncio.to_thread(self.embedder.embed, [q.query])
        return await self.graph.vector_search(
            tenant,
            vector.tolist(),
            q.limit,
            session_id=q.session_id,
            user_id=q.user_id,
            types=q.types,
        )

    async def search(self, tenant: str, q: RecallQuery) -> list[ScoredMemory]:
        """The recall ranking without side effects."""
        return [ScoredMemory(item=i, score=s) for i, s in await self._rank(tenant, q)]

    async def recall(self, tenant: str, q: RecallQuery) -> RecallResult:
        ranked = await self._rank(tenant, q)
        scores = {item.id: score for item, score in ranked}
        updated = {
            i.id: i
            for i in await self.graph.record_access(
                tenant, list(scores.items()), utcnow(), self.config.warm_access_threshold
            )
        }
        items = [updated.get(item.id, item) for item, _ in ranked]
        promoted: list[str] = []
        if q.auto_promote and self.config.auto_promote_enabled:
            eligible = [i for i in items if scores[i.id] > self.config.promote_threshold]
            promoted = [i.id for i in await self._promote(tenant, eligible)]
        return RecallResult(
            items=items,
            promoted=promoted,
            scores=[ScoredMemory(item=i, score=scores[i.id]) for i in items],
        )

    # --- promotion ------------------------------------------------------------------------
    async def _promote(self, tenant: str, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        by_session: dict[str, list[MemoryItem]] = {}
        for item in items:
            hot = item.model_copy(update={"tier": Tier.HOT, "relevance_score": 1.0})
            by_session.setdefault(item.session_id, []).append(hot)
        promoted: list[MemoryItem] = []
        for session_id, batch in by_session.items():
            # Hot copy first, then mark the graph node: a crash in between leaves the item
            # in both tiers (visible twice), never in neither.
            total = await self.hot_tier.put(tenant, session_id, batch)
            await self.graph.mark_hot(tenant, [i.id for i in batch], utcnow())
            promoted += batch
            if total > self.config.hot_token_limit:
                await self._spill_to_budget(tenant, session_id, keep=[i.id for i in batch])
        return promoted

    async def promote(self, tenant: str, item_id: str) -> MemoryItem:
        self._validate_item_id(item_id)
        found = await self.graph.get(tenant, [item_id])
        if found and found[0].tier is not Tier.HOT:
            (item,) = await self._promote(tenant, found)
            return item
        session_id = (
            found[0].session_id if found else await self.hot_tier.session_of(tenant, item_id)
        )
        if session_id:
            hot = await self.hot_tier.get(tenant, session_id, [item_id])
            if hot:
                return hot[0]
            if found:  # marked hot in the graph but its hot copy is gone: promote again
                (item,) = await self._promote(tenant, found)
                return item
        raise NotFound(f"no memory {item_id}", itemId=item_id)

    # --- forget ------------------------------------------------------------------------------
    async def forget(self, tenant: str, item_id: str) -> bool:
        """Remove a memory from every tier; False when the tenant has no such memory."""
        self._validate_item_id(item_id)
        removed_hot: list[str] = []
        session_id = await self.hot_tier.session_of(tenant, item_id)
        if session_id:
            removed_hot = await self.hot_tier.remove(tenant, session_id, [item_id])
        removed_graph = await self.graph.delete(tenant, item_id)
        return bool(removed_hot) or removed_graph

    # --- status ------------------------------------------------------------------------------
    async def status(self, tenant: str, session_id: str) -> MemoryStatus:
        self._validate_scope(session_id, None)
        hot_items, graph_counts = await asyncio.gather(
            self.hot_tier.items(tenant, session_id),
            self.graph.count_by_tier(tenant, session_id),
        )
        limit = self.config.hot_token_limit
        hot_tokens = sum(i.token_count for i in hot_items)
        warm, cold = graph_counts[Tier.WARM], graph_counts[Tier.COLD]
        suggestions: list[Suggestion] = []
        if hot_tokens > 0.9 * limit:
            candidates = [i.id for i in self._spill_order(hot_items)[: self.config.spill_count]]
            suggestions.append(
                Suggestion(
                    type="spill",
                    reason=f"Hot memory at {100 * hot_tokens / limit:.0f}% of its "
                    f"{limit}-token budget (>90%)",
                    item_ids=candidates,
                )
            )
        if cold.items > self.config.max_cold_items:
            suggestions.append(
                Suggestion(
                    type="prune",
                    reason=f"Cold storage holds {cold.items} items, more than "
                    f"maxColdItems={self.config.max_cold_items}",
                )
            )
        if hot_tokens < 0.1 * limit and (warm.items + cold.items) > 0:
            suggestions.append(
                Suggestion(
                    type="recall",
                    reason="Hot memory is nearly empty while warm/cold storage holds "
                    f"{warm.items + cold.items} items; recall what the next turn needs",
                )
            )
        return MemoryStatus(
            session_id=session_id,
            hot=HotStatus(
                items=len(hot_items),
                tokens=hot_tokens,
                limit=limit,
                utilization_percent=round(100.0 * hot_tokens / limit, 2),
            ),
            warm=warm,
            cold=cold,
            suggestions=suggestions,
        )
