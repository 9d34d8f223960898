"""The memory service: one object per process, built by ``MemoryBuilder``.

It owns the tier policy of seed 004 — add to hot, spill the lowest-relevance and
oldest items into the graph when a session outgrows its token budget, recall from
the graph with access tracking, promote what recall finds relevant or recalls
often — seed 000's rules (cascading reads, write-through) and the durability rule
that matters: an item leaves Redis only after Neo4j acknowledged it.
Every public method takes the tenant first; nothing here crosses tenants.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .enrich.embed import Embedder
from .enrich.sentences import best_cosines, embed_memories, pack, split_sentences
from .enrich.tokens import TokenCounter
from .entities import EntityMemory
from .episodes import EpisodicMemory
from .errors import BadInput, NotFound, Unavailable
from .events import EventBus, EventKind, NullBus
from .metrics import Metrics
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
    scope_tokens,
    utcnow,
)
from .policy import DemotionPolicy, IdleWarmDemotion, MemoryRules
from .retention import PrunePolicy
from .retention import select as retention_select
from .retrieval import Retriever, Weights, add_context, fuse, lucene_query
from .settings import ID_PATTERN, SESSION_OVERRIDABLE, MemoryConfig
from .stores import GraphStore, HotTier
from .working import WorkingMemory

if TYPE_CHECKING:
    from .manager import MemoryManager

log = logging.getLogger("graphmem.service")
T = TypeVar("T")


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
    retriever: Retriever = Retriever.HYBRID


class MaintenanceReport(BaseModel):
    flushed: dict[str, list[str]] = Field(default_factory=dict)  # "tenant/session" → ids
    caught_up: dict[str, list[str]] = Field(default_factory=dict)
    demoted: dict[str, list[str]] = Field(default_factory=dict)  # tenant → ids
    errors: list[str] = Field(default_factory=list)


def _bad_input(exc: ValidationError) -> BadInput:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first.get("loc", ()))
    message = str(first.get("msg", "invalid input")).removeprefix("Value error, ")
    return BadInput(f"{field}: {message}" if field else message, field=field)


def _discard(task: asyncio.Future[Any] | None) -> None:
    """Cancel a side task whose result is no longer wanted, and consume its exception so
    that asyncio does not report it as never retrieved."""
    if task is None:
        return
    if not task.done():
        task.cancel()
    elif not task.cancelled():
        task.exception()


class GraphBreaker:
    """After the graph store fails, background spills pause briefly instead of
    hammering it; adds stay fast and their items wait safely in Redis."""

    def __init__(self, cooldown_seconds: float = 5.0) -> None:
        self.cooldown = cooldown_seconds
        self._open_until = 0.0

    @property
    def open(self) -> bool:
        return time.monotonic() < self._open_until

    def trip(self) -> None:
        self._open_until = time.monotonic() + self.cooldown

    def reset(self) -> None:
        self._open_until = 0.0


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
        rules: MemoryRules | None = None,
        demotion: DemotionPolicy | None = None,
        metrics: Metrics | None = None,
        weights: Weights | None = None,
        events: EventBus | NullBus | None = None,
        entities: EntityMemory | None = None,
        episodes: EpisodicMemory | None = None,
    ) -> None:
        self.hot_tier = hot
        self.graph = graph
        self.embedder = embedder
        self.tokens = tokens
        self.config = config or MemoryConfig()
        self.limits = limits or Limits()
        self.rules = rules or MemoryRules()
        self.demotion = demotion or IdleWarmDemotion(
            timedelta(seconds=self.config.demote_after_idle_seconds)
        )
        self.metrics = metrics or Metrics()
        self.weights = weights or Weights()
        self.events = events or NullBus()
        self.entities = entities
        self.episodes = episodes
        self.working = WorkingMemory()
        #: the seed 003 router over every memory type, attached by MemoryBuilder
        self.manager: MemoryManager | None = None
        self.breaker = GraphBreaker()
        if self.rules.hot_ttl is not None:
            self.config = self.config.merged(session_ttl_seconds=self.rules.hot_ttl)
        hot.ttl = self.config.session_ttl_seconds
        self._session_locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._spills: dict[tuple[str, str], asyncio.Task[SpillResult]] = {}

    async def close(self) -> None:
        for task in list(self._spills.values()):
            task.cancel()
        await asyncio.gather(*self._spills.values(), return_exceptions=True)
        await self.hot_tier.close()
        await self.graph.close()

    async def migrate(self) -> list[str]:
        applied = await self.graph.migrate(self.embedder.dimension)
        await self.graph.backfill_scope_tokens(scope_tokens)
        return applied

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

    # --- per-session settings -----------------------------------------------------------
    def _effective(self, overrides: dict[str, Any]) -> MemoryConfig:
        if not overrides:
            return self.config
        try:
            return self.config.merged(**overrides)
        except ValueError:  # stored overrides that no longer validate fall back to defaults
            log.warning("ignoring invalid session overrides %s", overrides)
            return self.config

    async def session_config(self, tenant: str, session_id: str) -> MemoryConfig:
        self._validate_scope(session_id, None)
        return self._effective(await self.hot_tier.session_config(tenant, session_id))

    async def configure_session(
        self, tenant: str, session_id: str, overrides: dict[str, Any]
    ) -> MemoryConfig:
        """Override seed 004's settings for one session; ``None`` values reset a setting."""
        self._validate_scope(session_id, None)
        current = await self.hot_tier.session_config(tenant, session_id)
        names = {f.alias: n for n, f in MemoryConfig.model_fields.items() if f.alias}
        for key, value in overrides.items():
            name = names.get(key, key)
            if name not in SESSION_OVERRIDABLE:
                raise BadInput(f"{key}: cannot be set per session", field=key)
            if value is None:
                current.pop(name, None)
            else:
                current[name] = value
        try:
            effective = self.config.merged(**current)
        except ValueError as exc:
            raise BadInput(f"invalid session settings: {exc}") from exc
        await self.hot_tier.set_session_config(tenant, session_id, current)
        return effective

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
        clock = time.time_ns()
        by_session: dict[str, list[MemoryItem]] = {}
        items: list[MemoryItem] = []
        for offset, (spec, n) in enumerate(zip(valid, counts, strict=True)):
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
                seq=clock + offset,
            )
            items.append(item)
            by_session.setdefault(item.session_id, []).append(item)
        for session_id, batch in by_session.items():
            total, overrides = await self.hot_tier.put(tenant, session_id, batch)
            config = self._effective(overrides)
            self.metrics.hot(tenant, total, config.hot_token_limit)
            await self.events.publish(
                tenant, EventKind.ADDED, sessionId=session_id, itemIds=[i.id for i in batch]
            )
            if self.rules.write_through:
                await self._write_through(tenant, session_id, batch)
            if config.auto_spill_enabled and total > config.hot_token_limit:
                await self.hot_tier.mark_over_budget(tenant, session_id)
                await self._spill_in_background(tenant, session_id, config)
        return items

    async def _write_through(
        self, tenant: str, session_id: str, items: Sequence[MemoryItem]
    ) -> None:
        vectors, sentences = await self._embed_for_graph(tenant, session_id, items)
        rows = [i.graph_row(vectors[i.id], sentences.get(i.id)) for i in items]  # stays 'hot'
        await self._with_retry(partial(self.graph.upsert, tenant, rows))

    # --- read the hot tier and cascade ------------------------------------------------------
    async def hot(self, tenant: str, session_id: str) -> list[MemoryItem]:
        self._validate_scope(session_id, None)
        items = await self.hot_tier.items(tenant, session_id)
        return sorted(items, key=lambda i: (i.created_at, i.id), reverse=True)

    async def get(self, tenant: str, item_id: str) -> MemoryItem | None:
        """Seed 000's cascading read: hot first, then (``read_fallback``) the graph,
        promoting what the graph returns when ``promote_on_read`` is on."""
        self._validate_item_id(item_id)
        session_id = await self.hot_tier.session_of(tenant, item_id)
        if session_id:
            found = await self.hot_tier.get(tenant, session_id, [item_id])
            if found:
                return found[0]
        if not self.rules.read_fallback:
            return None
        graph = await self.graph.get(tenant, [item_id])
        if not graph:
            return None
        if self.rules.promote_on_read:
            (promoted,) = await self._promote(tenant, graph)
            return promoted
        return graph[0]

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
        if count is not None and not 1 <= count <= 100_000:
            raise BadInput("count: must be between 1 and 100000", field="count")
        config = await self.session_config(tenant, session_id)
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
                chosen = ordered[: count or config.spill_count]
            return await self._flush(tenant, session_id, chosen, config)

    async def _spill_in_background(
        self, tenant: str, session_id: str, config: MemoryConfig
    ) -> None:
        """Spill back to budget off the add's critical path, but wait a little for it so
        that a healthy graph keeps the hot tier within budget when the add returns."""
        if self.breaker.open:
            return  # the graph failed moments ago; the items wait in Redis
        key = (tenant, session_id)
        task = self._spills.get(key)
        if task is None or task.done():
            task = asyncio.create_task(self._spill_to_budget(tenant, session_id, config))
            self._spills[key] = task
            task.add_done_callback(lambda t: self._spill_done(key, t))
        with contextlib.suppress(TimeoutError, Unavailable):
            await asyncio.wait_for(asyncio.shield(task), config.spill_wait_seconds)

    def _spill_done(self, key: tuple[str, str], task: asyncio.Task[SpillResult]) -> None:
        if self._spills.get(key) is task:
            del self._spills[key]
        if task.cancelled():
            return
        exc = task.exception()
        if isinstance(exc, Unavailable):
            self.breaker.trip()
            log.warning("auto-spill of %s/%s postponed: %s", *key, exc.message)
        elif exc is not None:
            log.error("auto-spill of %s/%s failed", *key, exc_info=exc)

    async def _spill_to_budget(
        self,
        tenant: str,
        session_id: str,
        config: MemoryConfig,
        keep: Sequence[str] = (),
        retries: int = 1,
    ) -> SpillResult:
        async with self._lock(tenant, session_id):
            items = await self.hot_tier.items(tenant, session_id)
            total = sum(i.token_count for i in items)
            chosen: list[MemoryItem] = []
            if total <= config.hot_token_limit:
                return await self._flush(tenant, session_id, chosen, config, retries=retries)
            target = config.hot_token_limit * config.spill_low_water
            # Items just promoted are spilled last: spilling them would undo the promotion.
            for item in sorted(self._spill_order(items), key=lambda i: i.id in keep):
                if total <= target:
                    break
                chosen.append(item)
                total -= item.token_count
            return await self._flush(tenant, session_id, chosen, config, retries=retries)

    async def _embed_items(
        self, tenant: str, session_id: str, items: Sequence[MemoryItem]
    ) -> dict[str, list[float]]:
        """Embeddings for items: cached ones from Redis, the rest computed in a batch."""
        vectors = await self.hot_tier.embeddings(tenant, session_id, [i.id for i in items])
        missing = [i for i in items if i.id not in vectors]
        if missing:
            computed = await asyncio.to_thread(
                embed_memories, self.embedder, [i.content for i in missing]
            )
            vectors.update({i.id: e.vector for i, e in zip(missing, computed, strict=True)})
        return vectors

    async def _embed_for_graph(
        self, tenant: str, session_id: str, items: Sequence[MemoryItem]
    ) -> tuple[dict[str, list[float]], dict[str, bytes | None]]:
        """Vectors and packed sentence vectors for the graph. Redis caches only the vector,
        so a memory of several sentences is embedded again for its sentences."""
        vectors = await self.hot_tier.embeddings(tenant, session_id, [i.id for i in items])
        todo = [i for i in items if i.id not in vectors or len(split_sentences(i.content)) > 1]
        sentences: dict[str, bytes | None] = {}
        if todo:
            computed = await asyncio.to_thread(
                embed_memories, self.embedder, [i.content for i in todo]
            )
            for item, embedded in zip(todo, computed, strict=True):
                vectors[item.id] = embedded.vector
                sentences[item.id] = pack(embedded.sentences)
        return vectors, sentences

    async def _flush(
        self,
        tenant: str,
        session_id: str,
        items: Sequence[MemoryItem],
        config: MemoryConfig,
        retries: int | None = None,
    ) -> SpillResult:
        """Embed, write to Neo4j (retrying), and only then remove from Redis — batch by
        batch, so a crash part-way leaves every item in at least one tier."""
        warm: list[str] = []
        cold: list[str] = []
        size = config.spill_batch_size
        batches = [items[start : start + size] for start in range(0, len(items), size)]
        # A two-stage pipeline: while one batch is written to Neo4j, the next is already
        # being embedded and run through NER, so the CPU work overlaps the graph writes.
        ahead = self._enrich(tenant, session_id, batches[0]) if batches else None
        try:
            for n, batch in enumerate(batches):
                assert ahead is not None
                embedding, extracting = ahead
                ahead = (
                    self._enrich(tenant, session_id, batches[n + 1])
                    if n + 1 < len(batches)
                    else None
                )
                try:
                    vectors, sentences = await embedding
                    rows: list[dict[str, Any]] = []
                    for item in batch:
                        warm_item = item.access_count > config.warm_access_threshold
                        tier = Tier.WARM if warm_item else Tier.COLD
                        row = item.model_copy(update={"tier": tier}).graph_row(
                            vectors[item.id], sentences.get(item.id)
                        )
                        rows.append(row)
                        (warm if warm_item else cold).append(item.id)
                    try:
                        await self._with_retry(partial(self.graph.upsert, tenant, rows), retries)
                        if self.entities is not None and extracting is not None:
                            found = await extracting
                            await self._with_retry(
                                partial(self.entities.write, tenant, batch, found), retries
                            )
                    except Unavailable:
                        # Keep the work: the retry (next add, maintenance) need not embed
                        # again.
                        await self.hot_tier.cache_embeddings(tenant, session_id, vectors)
                        raise
                finally:
                    _discard(extracting)
                self.breaker.reset()
                await self.hot_tier.remove(tenant, session_id, [i.id for i in batch])
        finally:
            if ahead is not None:
                _discard(ahead[0])
                _discard(ahead[1])
        self.metrics.spilled(tenant, len(warm), len(cold))
        if items:
            await self.events.publish(
                tenant,
                EventKind.SPILLED,
                sessionId=session_id,
                itemIds=[i.id for i in items],
                warm=warm,
                cold=cold,
            )
        remaining = await self.hot_tier.tokens(tenant, session_id)
        self.metrics.hot(tenant, remaining, config.hot_token_limit)
        return SpillResult(
            spilled_count=len(warm) + len(cold),
            spilled_ids=[i.id for i in items],
            target_tier=Tier.WARM if len(warm) > len(cold) else Tier.COLD,
            warm_ids=warm,
            cold_ids=cold,
        )

    def _enrich(
        self, tenant: str, session_id: str, batch: Sequence[MemoryItem]
    ) -> tuple[
        asyncio.Future[tuple[dict[str, list[float]], dict[str, bytes | None]]],
        asyncio.Future[Any] | None,
    ]:
        """Start embedding and NER of a batch. Both release the GIL (onnxruntime, spaCy),
        so they run side by side on the machine's cores."""
        embedding = asyncio.ensure_future(self._embed_for_graph(tenant, session_id, batch))
        extracting = (
            asyncio.ensure_future(self.entities.extract(batch))
            if self.entities is not None
            else None
        )
        return embedding, extracting

    async def _with_retry(self, op: Callable[[], Awaitable[T]], retries: int | None = None) -> T:
        attempts = retries or self.spill_retries
        delay = self.spill_backoff_seconds
        for attempt in range(attempts):
            try:
                return await op()
            except Unavailable:
                if attempt == attempts - 1:
                    raise
                log.warning("graph unavailable; retrying in %.2fs", delay)
                await asyncio.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")

    # --- recall and search ------------------------------------------------------------------
    async def _rank(
        self, tenant: str, q: RecallQuery
    ) -> tuple[list[tuple[MemoryItem, float, float]], list[float]]:
        """(memory, ranking score, cosine similarity) best first, and the query vector."""
        self._validate_query(q.query)
        self._validate_limit(q.limit)
        self._validate_scope(q.session_id, q.user_id)
        scope: dict[str, Any] = {"session_id": q.session_id, "user_id": q.user_id}
        w = self.weights
        lucene = (
            lucene_query(q.query, scope_tokens(tenant, q.session_id, q.user_id))
            if q.retriever is not Retriever.VECTOR
            else None
        )
        limit = q.limit if q.retriever is Retriever.FULLTEXT else w.candidates
        # Neither BM25 nor the size of the scope needs the query vector: both run while
        # the query is embedded.
        text_task = (
            asyncio.ensure_future(
                self.graph.fulltext_search(tenant, lucene, limit, types=q.types, **scope)
            )
            if lucene
            else None
        )
        size_task = (
            asyncio.ensure_future(self.graph.scope_size(tenant, q.session_id, q.user_id))
            if q.retriever is not Retriever.FULLTEXT and (q.session_id or q.user_id)
            else None
        )
        try:
            (vector,) = await asyncio.to_thread(self.embedder.embed, [q.query])
            query_vector: list[float] = vector.tolist()
            size = await size_task if size_task else None
            if q.retriever is Retriever.VECTOR:
                hits = await self.graph.vector_search(
                    tenant, query_vector, q.limit, types=q.types, scope_size=size, **scope
                )
                return [(i, s, s) for i, s in hits], query_vector
            text_only = await text_task if text_task else []
            if q.retriever is Retriever.FULLTEXT:
                ids = [i.id for i, _ in text_only]
                scores = await self.graph.candidate_scores(tenant, ids, query_vector, ids)
                return [
                    (i, s, scores.get(i.id, (None, None))[0] or 0.0) for i, s in text_only
                ], query_vector
            vector_hits, entity_hits = await asyncio.gather(
                self.graph.vector_search(
                    tenant, query_vector, w.candidates, types=q.types, scope_size=size, **scope
                ),
                self._entity_hits(tenant, q),
            )
        finally:
            _discard(text_task)
            _discard(size_task)
        vector_hits, text_hits = await self._candidate_cosines(
            tenant, query_vector, vector_hits, text_only
        )
        pool = fuse(vector_hits, text_hits, entity_hits, w)
        if w.context > 0 and pool:
            head = sorted(pool.values(), key=lambda c: c.base, reverse=True)[: w.context_pool]
            near = await self._neighbours(
                tenant, [c.item.id for c in head], query_vector, w.context_window
            )
            add_context(pool, near, w)
        ranked = sorted(pool.values(), key=lambda c: (c.score, c.cosine), reverse=True)
        if q.types:
            ranked = [c for c in ranked if c.item.type in q.types]
        return [(c.item, c.score, c.cosine) for c in ranked[: q.limit]], query_vector

    async def _candidate_cosines(
        self,
        tenant: str,
        query_vector: list[float],
        vector_hits: list[tuple[MemoryItem, float]],
        text_only: list[tuple[MemoryItem, float]],
    ) -> tuple[list[tuple[MemoryItem, float]], list[tuple[MemoryItem, float, float]]]:
        """Vector and BM25 hits with the cosine fusion uses. Text-only hits need theirs
        fetched, and every candidate brings its sentence vectors: a memory of several
        sentences is as close to the query as its best sentence."""
        found = {i.id for i, _ in vector_hits}
        scores = await self.graph.candidate_scores(
            tenant,
            list(dict.fromkeys([*found, *(i.id for i, _ in text_only)])),
            query_vector,
            [i.id for i, _ in text_only if i.id not in found],
        )
        cosine = {i.id: c for i, c in vector_hits} | {
            item_id: c for item_id, (c, _) in scores.items() if c is not None
        }
        best = self._best(query_vector, {k: v for k, (_, v) in scores.items()}, cosine)
        return (
            [(i, best[i.id]) for i, _ in vector_hits],
            [(i, s, best.get(i.id, 0.0)) for i, s in text_only],
        )

    async def _neighbours(
        self, tenant: str, ids: list[str], query_vector: list[float], window: int
    ) -> list[tuple[str, MemoryItem, float]]:
        """The turns around each memory, with their (best-sentence) cosine."""
        near = await self.graph.neighbours(tenant, ids, query_vector, window=window)
        best = self._best(
            query_vector, {i.id: v for _, i, _, v in near}, {i.id: c for _, i, c, _ in near}
        )
        return [(of, i, best[i.id]) for of, i, _, _ in near]

    def _best(
        self,
        query_vector: list[float],
        packed: dict[str, bytes | None],
        cosine: dict[str, float],
    ) -> dict[str, float]:
        """Each memory's cosine, or its best sentence's when that is closer."""
        present = {k: v for k, v in packed.items() if v is not None}
        sentences = best_cosines(query_vector, present, self.embedder.dimension)
        return {k: max(c, sentences[k]) if k in sentences else c for k, c in cosine.items()}

    async def _entity_hits(self, tenant: str, q: RecallQuery) -> dict[str, float]:
        """Share of the query's entities each in-scope memory mentions."""
        if self.entities is None or self.weights.entity <= 0:
            return {}
        (found,) = await self.entities.extract_texts([q.query])
        keys = await self.entities.keys_for(tenant, found)
        if not keys:
            return {}
        matched = await self.graph.memories_mentioning(
            tenant, keys, self.weights.candidates, session_id=q.session_id, user_id=q.user_id
        )
        return {item_id: n / len(keys) for item_id, n in matched.items()}

    async def search(self, tenant: str, q: RecallQuery) -> list[ScoredMemory]:
        """The recall ranking of warm and cold memories, without side effects."""
        ranked, _ = await self._rank(tenant, q)
        return [ScoredMemory(item=i, score=s, similarity=c) for i, s, c in ranked]

    async def _hot_hits(
        self, tenant: str, q: RecallQuery, query_vector: list[float], config: MemoryConfig
    ) -> list[tuple[MemoryItem, float]]:
        """Hot items of the recall's session that match the query (seed 004: report them)."""
        if q.session_id is None:
            return []
        items = [
            i
            for i in await self.hot_tier.items(tenant, q.session_id)
            if (q.user_id is None or i.user_id == q.user_id) and (not q.types or i.type in q.types)
        ]
        if not items:
            return []
        vectors = await self._embed_items(tenant, q.session_id, items)
        await self.hot_tier.cache_embeddings(tenant, q.session_id, vectors)
        matrix = np.asarray([vectors[i.id] for i in items], dtype=np.float32)
        scores = matrix @ np.asarray(query_vector, dtype=np.float32)
        hits = [
            (item, float(max(0.0, min(1.0, s))))
            for item, s in zip(items, scores, strict=True)
            if s >= config.min_relevance
        ]
        return sorted(hits, key=lambda h: h[1], reverse=True)[: q.limit]

    async def recall(self, tenant: str, q: RecallQuery) -> RecallResult:
        started = time.perf_counter()
        config = await self.session_config(tenant, q.session_id) if q.session_id else self.config
        ranked, query_vector = await self._rank(tenant, q)
        # Ranking uses the fused score; relevance, promotion and hits use the cosine
        # similarity, the scale seed 004's thresholds are written in.
        ranking = {item.id: score for item, score, _ in ranked}
        scores = {item.id: max(0.0, min(1.0, cosine)) for item, _, cosine in ranked}
        now = utcnow()
        updated = {
            i.id: i
            for i in await self.graph.record_access(
                tenant, list(scores.items()), now, config.warm_access_threshold
            )
        }
        items = [updated.get(item.id, item) for item, _, _ in ranked]
        hot_hits = await self._hot_hits(tenant, q, query_vector, config)
        if hot_hits and q.session_id:
            touched = [
                item.model_copy(
                    update={
                        "access_count": item.access_count + 1,
                        "last_accessed_at": now,
                        "relevance_score": (item.relevance_score + score) / 2,
                    }
                )
                for item, score in hot_hits
            ]
            await self.hot_tier.touch(tenant, q.session_id, touched)
            hot_hits = [(t, s) for t, (_, s) in zip(touched, hot_hits, strict=True)]
        promoted: list[str] = []
        if q.auto_promote and config.auto_promote_enabled:
            eligible = [
                i
                for i in items
                if scores[i.id] > config.promote_threshold
                or (
                    i.access_count >= config.promote_access_count
                    and scores[i.id] >= config.min_relevance
                )
            ]
            promoted = [i.id for i in await self._promote(tenant, eligible, config)]
        hit = any(s >= config.min_relevance for s in scores.values()) or bool(hot_hits)
        self.metrics.recalled(tenant, 1000 * (time.perf_counter() - started), hit)
        await self.events.publish(
            tenant,
            EventKind.RECALLED,
            sessionId=q.session_id,
            userId=q.user_id,
            itemIds=[i.id for i in items],
            promoted=promoted,
        )
        return RecallResult(
            items=items,
            promoted=promoted,
            scores=[
                ScoredMemory(item=i, score=ranking[i.id], similarity=scores[i.id]) for i in items
            ],
            hot_hits=[ScoredMemory(item=i, score=s, similarity=s) for i, s in hot_hits],
        )

    # --- promotion ------------------------------------------------------------------------
    async def _promote(
        self, tenant: str, items: Sequence[MemoryItem], config: MemoryConfig | None = None
    ) -> list[MemoryItem]:
        by_session: dict[str, list[MemoryItem]] = {}
        for item in items:
            hot = item.model_copy(update={"tier": Tier.HOT, "relevance_score": 1.0})
            by_session.setdefault(item.session_id, []).append(hot)
        promoted: list[MemoryItem] = []
        for session_id, batch in by_session.items():
            # Hot copy first, then mark the graph node: a crash in between leaves the item
            # in both tiers (visible twice), never in neither.
            total, overrides = await self.hot_tier.put(tenant, session_id, batch)
            await self.graph.mark_hot(tenant, [i.id for i in batch], utcnow())
            promoted += batch
            await self.events.publish(
                tenant, EventKind.PROMOTED, sessionId=session_id, itemIds=[i.id for i in batch]
            )
            session_config = config if config is not None else self._effective(overrides)
            if total > session_config.hot_token_limit:
                await self._spill_to_budget(
                    tenant, session_id, session_config, keep=[i.id for i in batch]
                )
        self.metrics.promoted(tenant, len(promoted))
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
        session_id = await self.hot_tier.session_of(tenant, item_id)
        removed_hot: list[str] = []
        if session_id is None:
            mentioned = await self.graph.delete(tenant, item_id)
        else:
            # Under the session lock, so a spill in flight cannot write the item back.
            async with self._lock(tenant, session_id):
                removed_hot = await self.hot_tier.remove(tenant, session_id, [item_id])
                mentioned = await self.graph.delete(tenant, item_id)
        if mentioned and self.entities is not None:
            await self.entities.store.refresh(tenant, mentioned)  # drops orphaned entities
        forgotten = bool(removed_hot) or mentioned is not None
        if forgotten:
            await self.events.publish(
                tenant, EventKind.FORGOTTEN, sessionId=session_id, itemIds=[item_id]
            )
        return forgotten

    async def forget_user(self, tenant: str, user_id: str) -> dict[str, int]:
        """Remove everything a user owns: memories in every tier, the entities only they
        mentioned, their MENTIONED edges, sessions left empty and the user node."""
        self._validate_scope(None, user_id)
        hot_removed = 0
        for session_id in await self.hot_tier.sessions(tenant):
            async with self._lock(tenant, session_id):
                ids = [
                    i.id
                    for i in await self.hot_tier.items(tenant, session_id)
                    if i.user_id == user_id
                ]
                hot_removed += len(await self.hot_tier.remove(tenant, session_id, ids))
        result = await self.graph.forget_user(tenant, user_id)
        entities = 0
        if self.entities is not None and result["keys"]:
            entities = await self.entities.store.refresh(tenant, result["keys"])
        return {
            "hotMemories": hot_removed,
            "graphMemories": int(result["removed"]),
            "sessions": int(result["sessions"]),
            "entities": entities,
        }

    # --- operations of the memory types that others may want to hear about ----------------
    async def merge_entities(self, tenant: str, source: str, target: str, reason: str) -> str:
        if self.entities is None:
            raise Unavailable("entity memory is switched off")
        merge_id = await self.entities.merge(tenant, source, target, reason)
        await self.events.publish(
            tenant, EventKind.ENTITY_MERGED, mergeId=merge_id, entityIds=[source, target]
        )
        return merge_id

    async def transfer_task(
        self,
        tenant: str,
        task_id: str,
        from_owner: str | None,
        generation: int,
        to_owner: str,
        reason: str = "",
    ) -> dict[str, Any]:
        if self.episodes is None:
            raise Unavailable("episodic memory is not configured")
        done = await self.episodes.transfer(
            tenant, task_id, from_owner, generation, to_owner, reason
        )
        await self.events.publish(
            tenant,
            EventKind.TASK_TRANSFERRED,
            taskId=task_id,
            fromOwner=from_owner,
            toOwner=done["owner"],
            generation=done["generation"],
        )
        return done

    # --- retention, stats and substring search (seed 001) -----------------------------------
    async def prune(
        self, tenant: str, policy: PrunePolicy | dict[str, Any], dry_run: bool = True
    ) -> dict[str, Any]:
        """Apply a retention policy to warm and cold memories; a dry run reports exactly
        the ids an apply of the same policy removes (given no writes in between)."""
        try:
            policy = policy if isinstance(policy, PrunePolicy) else PrunePolicy(**policy)
        except ValidationError as exc:
            raise _bad_input(exc) from exc
        self._validate_scope(policy.session_id, policy.user_id)
        candidates = await self.graph.prune_candidates(
            tenant,
            [t.value for t in policy.tiers],
            [t.value for t in policy.types] if policy.types else None,
            policy.session_id,
            policy.user_id,
        )
        ids = retention_select(candidates, policy, utcnow())
        by_id = {c["id"]: c for c in candidates}
        report: dict[str, Any] = {
            "dryRun": dry_run,
            "ids": ids,
            "count": len(ids),
            "bytes": sum(int(by_id[i]["bytes"] or 0) for i in ids),
            "removed": 0,
        }
        if dry_run or not ids:
            return report
        for start in range(0, len(ids), 500):
            done = await self.graph.delete_many(tenant, ids[start : start + 500])
            report["removed"] += int(done["removed"])
            if self.entities is not None and done["keys"]:
                await self.entities.store.refresh(tenant, done["keys"])
        return report

    async def stats(
        self, tenant: str, session_id: str | None = None, user_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Items, tokens and bytes per tier and type: the hot tier from Redis, the rest
        from the graph."""
        self._validate_scope(session_id, user_id)
        rows = [
            {
                "tier": r["tier"],
                "type": r["type"],
                "items": int(r["items"]),
                "tokens": int(r["tokens"]),
                "bytes": int(r["bytes"]),
            }
            for r in await self.graph.stats(tenant, session_id, user_id)
            if r["tier"] != Tier.HOT.value  # a promoted node's hot copy is counted below
        ]
        hot: dict[str, dict[str, int]] = {}
        sessions = [session_id] if session_id else await self.hot_tier.sessions(tenant)
        for sid in sessions:
            for item in await self.hot_tier.items(tenant, sid):
                if user_id is not None and item.user_id != user_id:
                    continue
                row = hot.setdefault(item.type.value, {"items": 0, "tokens": 0, "bytes": 0})
                row["items"] += 1
                row["tokens"] += item.token_count
                row["bytes"] += len(item.content)
        rows += [{"tier": "hot", "type": t, **v} for t, v in sorted(hot.items())]
        return sorted(rows, key=lambda r: (["hot", "warm", "cold"].index(r["tier"]), r["type"]))

    async def find(
        self,
        tenant: str,
        text: str,
        session_id: str | None = None,
        user_id: str | None = None,
        limit: int = 20,
    ) -> list[MemoryItem]:
        """Substring search (any case) over every tier, newest first."""
        self._validate_scope(session_id, user_id)
        self._validate_limit(limit)
        if not text.strip():
            raise BadInput("text: must not be empty", field="text")
        needle = text.lower()
        hot: list[MemoryItem] = []
        sessions = [session_id] if session_id else await self.hot_tier.sessions(tenant)
        for sid in sessions:
            hot += [
                i
                for i in await self.hot_tier.items(tenant, sid)
                if needle in i.content.lower() and (user_id is None or i.user_id == user_id)
            ]
        graph = await self.graph.substring(tenant, needle, session_id, user_id, limit)
        seen = {i.id for i in hot}
        found = hot + [i for i in graph if i.id not in seen]
        return sorted(found, key=lambda i: (i.created_at, i.seq), reverse=True)[:limit]

    # --- status ------------------------------------------------------------------------------
    async def status(self, tenant: str, session_id: str) -> MemoryStatus:
        self._validate_scope(session_id, None)
        hot_items, graph_counts, overrides = await asyncio.gather(
            self.hot_tier.items(tenant, session_id),
            self.graph.count_by_tier(tenant, session_id),
            self.hot_tier.session_config(tenant, session_id),
        )
        config = self._effective(overrides)
        limit = config.hot_token_limit
        hot_tokens = sum(i.token_count for i in hot_items)
        warm, cold = graph_counts[Tier.WARM], graph_counts[Tier.COLD]
        suggestions: list[Suggestion] = []
        if hot_tokens > 0.9 * limit:
            candidates = [i.id for i in self._spill_order(hot_items)[: config.spill_count]]
            suggestions.append(
                Suggestion(
                    type="spill",
                    reason=f"Hot memory at {100 * hot_tokens / limit:.0f}% of its "
                    f"{limit}-token budget (>90%)",
                    item_ids=candidates,
                )
            )
        if cold.items > config.max_cold_items:
            suggestions.append(
                Suggestion(
                    type="prune",
                    reason=f"Cold storage holds {cold.items} items, more than "
                    f"maxColdItems={config.max_cold_items}",
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

    # --- maintenance ---------------------------------------------------------------------------
    async def maintain(self) -> MaintenanceReport:
        """One maintenance pass: flush sessions whose hot tier is about to expire, spill
        sessions left over budget (after a graph outage), and run the demotion policy."""
        report = MaintenanceReport()
        idle_since = time.time() - (self.config.session_ttl_seconds - self.config.flush_margin)
        # Only two kinds of session need work: idle ones (from the activity index) and
        # ones an add saw over budget. Walking every live session each pass would cost
        # O(sessions) round trips and delay the flushes that are due.
        for tenant in await self.hot_tier.tenants():
            idle = await self.hot_tier.idle_sessions(tenant, idle_since)
            for session_id in idle:
                try:
                    config = await self.session_config(tenant, session_id)
                    async with self._lock(tenant, session_id):
                        items = await self.hot_tier.items(tenant, session_id)
                        result = await self._flush(tenant, session_id, items, config)
                    if result.spilled_ids:
                        report.flushed[f"{tenant}/{session_id}"] = result.spilled_ids
                    await self.hot_tier.drop_if_gone(tenant, session_id)
                except Unavailable as exc:
                    report.errors.append(f"{tenant}/{session_id}: {exc.message}")
            for session_id in await self.hot_tier.over_budget(tenant):
                if session_id in idle:
                    continue
                try:
                    config = await self.session_config(tenant, session_id)
                    if await self.hot_tier.tokens(tenant, session_id) > config.hot_token_limit:
                        result = await self._spill_to_budget(
                            tenant, session_id, config, retries=self.spill_retries
                        )
                        if result.spilled_ids:
                            report.caught_up[f"{tenant}/{session_id}"] = result.spilled_ids
                    else:
                        await self.hot_tier.clear_over_budget(tenant, session_id)
                except Unavailable as exc:
                    report.errors.append(f"{tenant}/{session_id}: {exc.message}")
        now = utcnow()
        try:
            for tenant in await self.graph.tenants():
                demoted = await self.demotion.demote(self.graph, tenant, now)
                if demoted:
                    report.demoted[tenant] = demoted
        except Unavailable as exc:
            report.errors.append(f"demotion: {exc.message}")
        return report

    async def run_maintenance(self, stop: asyncio.Event) -> None:
        """The background loop the API runs: ``maintain()`` every interval until ``stop``."""
        while not stop.is_set():
            try:
                report = await self.maintain()
                if report.flushed or report.caught_up or report.demoted:
                    log.info("maintenance: %s", report.model_dump_json())
            except Exception:  # the loop must outlive any one failed pass
                log.exception("maintenance pass failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.config.maintenance_interval)
