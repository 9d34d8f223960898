"""Ingest: new memories land in the session's hot tier after one Redis round trip, and a
job on the enrichment queue asks a worker to write them behind into the graph (so that
search finds them at once); past the session's token budget an automatic spill moves the
least relevant into the graph."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from functools import partial
from typing import Any

from graphmem.domain.models import EmbeddingSpace, EventKind, MemoryItem, Tier, content_hash, utcnow
from graphmem.enrich.tokens import TokenCounter
from graphmem.errors import BadInput, GraphmemError
from graphmem.memory.inputs import AddMemory, Inputs
from graphmem.memory.policy import MemoryRules
from graphmem.memory.tiers.admission import Admission
from graphmem.memory.tiers.sessions import Sessions
from graphmem.memory.tiers.spill import Spiller
from graphmem.memory.writepath.analysis import graph_memory
from graphmem.memory.writepath.changes import ScopeChanges
from graphmem.memory.writepath.enrichment import Enrichment
from graphmem.metrics import Metrics
from graphmem.settings import MemoryConfig
from graphmem.stores import ChangeFeed, EnrichmentQueue, GraphStore, HotTier

log = logging.getLogger("graphmem.memory")


class Ingest:
    def __init__(
        self,
        inputs: Inputs,
        sessions: Sessions,
        hot: HotTier,
        graph: GraphStore,
        tokens: TokenCounter,
        spiller: Spiller,
        enrichment: Enrichment,
        changes: ScopeChanges,
        space: EmbeddingSpace,
        rules: MemoryRules,
        metrics: Metrics,
        events: ChangeFeed,
        admission: Admission,
        queue: EnrichmentQueue | None = None,
    ) -> None:
        self.inputs = inputs
        self.sessions = sessions
        self.hot = hot
        self.graph = graph
        self.tokens = tokens
        self.spiller = spiller
        #: a write-through's vectors, the scopes it changes, and the model that made them
        self.enrichment = enrichment
        self.changes = changes
        self.space = space
        self.rules = rules
        self.metrics = metrics
        self.events = events
        self.admission = admission
        self.queue = queue

    async def add(self, tenant: str, spec: AddMemory | dict[str, Any]) -> MemoryItem:
        (item,) = await self.add_many(tenant, [spec])
        return item

    async def add_many(
        self, tenant: str, specs: Sequence[AddMemory | dict[str, Any]]
    ) -> list[MemoryItem]:
        limits = self.inputs.limits
        if not specs:
            raise BadInput("inputs: at least one memory is required", field="inputs")
        if len(specs) > limits.max_batch_items:
            raise BadInput(
                f"inputs: at most {limits.max_batch_items} memories per call", field="inputs"
            )
        valid = [self.inputs.add(s) for s in specs]
        size = sum(len(s.content.encode("utf-8")) for s in valid)
        await self.admission.reserve(tenant, len(valid), size)
        counts = await self.tokens.count_on_loop([s.content for s in valid])
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
                recorded_at=now,
                relevance_score=1.0,  # new items start fully relevant
                token_count=n,
                content_hash=content_hash(spec.content),
                metadata=spec.metadata,
                seq=clock + offset,
            )
            items.append(item)
            by_session.setdefault(item.session_id, []).append(item)
        over: list[tuple[str, MemoryConfig, int]] = []
        put: list[tuple[str, list[MemoryItem]]] = []
        try:
            for session_id, batch in by_session.items():
                put.append((session_id, batch))  # before the put: it may land, then fail
                total, overrides = await self.hot.put(tenant, session_id, batch)
                config = self.sessions.effective(overrides)
                self.metrics.hot(tenant, total, config.hot_token_limit)
                if self.rules.write_through:
                    await self._write_through(tenant, session_id, batch)
                if self.queue is not None:
                    # Write-behind: a worker makes the items findable in the graph.
                    await self.queue.add(tenant, session_id, [i.id for i in batch])
                if config.auto_spill_enabled and total > config.hot_token_limit:
                    over.append((session_id, config, total))
        except BaseException:
            # An add that answers an error has stored nothing: a client retries it.
            await self._undo(tenant, put)
            raise
        # Stored and acknowledged from here on: nothing below may turn the answer into
        # an error (a spill's failure was once the add's answer, and retries duplicated).
        self.admission.charge_later(size)
        for session_id, batch in put:
            try:
                await self.admission.added(
                    tenant, len(batch), sum(len(i.content.encode("utf-8")) for i in batch)
                )
            except GraphmemError as exc:  # the quota recounts near its limit
                log.warning("quota usage of %s not counted: %s", tenant, exc.message)
            await self.events.publish(
                tenant, EventKind.ADDED, sessionId=session_id, itemIds=[i.id for i in batch]
            )
        for session_id, config, total in over:
            try:
                await self.hot.index.mark_over_budget(tenant, session_id)
                await self.spiller.in_background(tenant, session_id, config, total)
            except GraphmemError as exc:  # maintenance catches the session up
                log.warning("auto-spill of %s/%s not started: %s", tenant, session_id, exc.message)
        return items

    async def undo(self, tenant: str, items: Sequence[MemoryItem]) -> None:
        """Remove items an add stored when what it was part of failed after (an add that
        must reach the graph at once, and its spill did not): see ``_undo``."""
        by_session: dict[str, list[MemoryItem]] = {}
        for item in items:
            by_session.setdefault(item.session_id, []).append(item)
        await self._undo(tenant, list(by_session.items()))

    async def _undo(self, tenant: str, put: Sequence[tuple[str, list[MemoryItem]]]) -> None:
        """Remove what a failed add stored, from the hot tier and from the graph (a
        write-through, or a spill in between), under each session's lock as forget does.
        Best effort: what cannot be undone is logged."""
        for session_id, batch in put:
            ids = [i.id for i in batch]
            try:
                async with self.sessions.lock(tenant, session_id):
                    await self.hot.remove(tenant, session_id, ids)
                    done = await self.graph.delete_many(tenant, ids)
                await self.changes.written(tenant, done.located)
            except Exception as exc:
                log.error("a failed add of %s/%s left items behind: %s", tenant, session_id, exc)

    async def _write_through(
        self, tenant: str, session_id: str, items: Sequence[MemoryItem]
    ) -> None:
        vectors, sentences = await self.enrichment.for_graph(tenant, session_id, items)
        # the nodes stay 'hot', as the items are
        memories = [graph_memory(i, vectors[i.id], sentences.get(i.id)) for i in items]
        await self.spiller.with_retry(partial(self.graph.upsert, tenant, memories, self.space))
        await self.changes.items(tenant, items)
