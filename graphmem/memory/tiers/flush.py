"""Flush: a batch of hot items written to the graph, and only then removed from Redis.

The durability rule: an item leaves Redis only after Neo4j acknowledged it, batch by
batch, so a crash part-way leaves every item in at least one tier. Writes are retried
with backoff; after the graph fails, automatic spills pause for a moment (the breaker)
while adds stay fast and their items wait in Redis. Which items a spill takes, and when,
is ``spill.py``'s.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TypeVar

from graphmem.domain.models import EmbeddingSpace, EventKind, MemoryItem, SpillResult, Tier
from graphmem.errors import BadInput, Unavailable
from graphmem.memory.inputs import stored_problem
from graphmem.memory.writepath.analysis import graph_memory
from graphmem.memory.writepath.changes import ScopeChanges
from graphmem.memory.writepath.enrichment import Enrichment, discard
from graphmem.metrics import Metrics
from graphmem.settings import MemoryConfig
from graphmem.stores import ChangeFeed, GraphStore, HotTier
from graphmem.stores.models import GraphMemory

log = logging.getLogger("graphmem.memory")
#: the reason ``_upsert`` gives for an item the graph did not write because its subject
#: was erased (a tombstone): not a refusal to park, the item is dropped
ERASED = "erased"
T = TypeVar("T")


class GraphBreaker:
    """Open for a cooldown after the graph store failed."""

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


class Flusher:
    """Writes hot items to the graph; ``Spiller`` decides which and when."""

    retries = 4
    backoff_seconds = 0.25

    def __init__(
        self,
        hot: HotTier,
        graph: GraphStore,
        enrichment: Enrichment,
        metrics: Metrics,
        events: ChangeFeed,
        changes: ScopeChanges | None = None,
    ) -> None:
        self.hot = hot
        self.graph = graph
        self.enrichment = enrichment
        self.metrics = metrics
        self.events = events
        self.changes = changes or ScopeChanges(None)
        self.breaker = GraphBreaker()

    async def flush(
        self,
        tenant: str,
        session_id: str,
        items: Sequence[MemoryItem],
        config: MemoryConfig,
        retries: int | None = None,
        tier: Tier | None = None,
    ) -> SpillResult:
        """Embed, write to Neo4j (retrying), and only then remove from Redis. Call it
        under the session's lock. Items the graph cannot hold are parked in the hot tier
        (``MemoryItem.parked``) and passed by from then on; the rest are written."""
        items = [i for i in items if i.parked is None]
        warm: list[str] = []
        cold: list[str] = []
        spilled: list[str] = []
        size = config.spill_batch_size
        batches = [items[start : start + size] for start in range(0, len(items), size)]
        # A two-stage pipeline: while one batch is written to Neo4j, the next is already
        # being embedded and run through NER, so the CPU work overlaps the graph writes.
        start = self.enrichment.start
        ahead = start(tenant, session_id, batches[0]) if batches else None
        try:
            for n, batch in enumerate(batches):
                assert ahead is not None
                preparing = ahead
                ahead = start(tenant, session_id, batches[n + 1]) if n + 1 < len(batches) else None
                prepared = await preparing
                rows: dict[str, GraphMemory] = {}
                warm_ids: set[str] = set()
                for item in batch:
                    if tier is None:
                        warm_item = item.access_count > config.warm_access_threshold
                    else:
                        warm_item = tier is Tier.WARM
                    target = Tier.WARM if warm_item else Tier.COLD
                    rows[item.id] = graph_memory(
                        item.model_copy(update={"tier": target}),
                        prepared.vectors.get(item.id),
                        prepared.sentences.get(item.id),
                        prepared.terms.get(item.id),
                    )
                    if warm_item:
                        warm_ids.add(item.id)
                refused = {i.id: p for i in batch if (p := stored_problem(i)) is not None}
                try:
                    todo = [i for i in batch if i.id not in refused]
                    refused |= await self._upsert(tenant, todo, rows, retries)
                    kept = [i for i in batch if i.id not in refused]
                    await self.changes.items(tenant, kept)
                    entities = self.enrichment.entities
                    mentioned = [
                        (i, found)
                        for i, found in zip(prepared.unmentioned, prepared.extractions, strict=True)
                        if i.id not in refused
                    ]
                    if entities is not None and mentioned:
                        write = partial(
                            entities.write,
                            tenant,
                            [i for i, _ in mentioned],
                            [found for _, found in mentioned],
                        )
                        await self.with_retry(write, retries)
                except Unavailable:
                    # Keep the work: the retry (next add, maintenance) need not embed
                    # again.
                    await self.hot.cache_embeddings(
                        tenant,
                        session_id,
                        prepared.vectors,
                        model=self.enrichment.embedder.name,
                    )
                    raise
                self.breaker.reset()
                erased = [i.id for i in batch if refused.get(i.id) == ERASED]
                refused = {k: v for k, v in refused.items() if v != ERASED}
                await self._park(tenant, session_id, batch, refused)
                await self.hot.remove(tenant, session_id, [i.id for i in kept] + erased)
                for item in kept:
                    (warm if item.id in warm_ids else cold).append(item.id)
                    spilled.append(item.id)
        finally:
            discard(ahead)
        self.metrics.spilled(tenant, len(warm), len(cold))
        if spilled:
            await self.events.publish(
                tenant,
                EventKind.SPILLED,
                sessionId=session_id,
                itemIds=spilled,
                warm=warm,
                cold=cold,
            )
        remaining = await self.hot.tokens(tenant, session_id)
        self.metrics.hot(tenant, remaining, config.hot_token_limit)
        return SpillResult(
            spilled_count=len(warm) + len(cold),
            spilled_ids=spilled,
            target_tier=Tier.WARM if len(warm) > len(cold) else Tier.COLD,
            warm_ids=warm,
            cold_ids=cold,
        )

    async def _upsert(
        self,
        tenant: str,
        items: Sequence[MemoryItem],
        rows: dict[str, GraphMemory],
        retries: int | None,
    ) -> dict[str, str]:
        """Write the items' rows; the items the graph refuses a value of, with its
        reason. A refused batch is halved until the refused items are alone (each write
        is one transaction: a refused one wrote nothing), so one item held before the
        edge checks cannot keep the rest of its session from the graph."""
        if not items:
            return {}
        try:
            written = await self.with_retry(
                partial(
                    self.graph.upsert,
                    tenant,
                    [rows[i.id] for i in items],
                    EmbeddingSpace.of(self.enrichment.embedder),
                ),
                retries,
            )
            # An item the graph did not write is one of an erased subject (its
            # tombstone): it leaves the hot tier as a spilled one does, and is not counted.
            landed = set(written)
            return {i.id: ERASED for i in items if i.id not in landed}
        except BadInput as exc:
            if len(items) == 1:
                return {items[0].id: exc.message}
        half = len(items) // 2
        refused = await self._upsert(tenant, items[:half], rows, retries)
        return refused | await self._upsert(tenant, items[half:], rows, retries)

    async def _park(
        self, tenant: str, session_id: str, batch: Sequence[MemoryItem], refused: dict[str, str]
    ) -> None:
        """Mark refused items parked, with the reason: they stay readable and forgettable
        in the hot tier (until the session expires) and no spill tries them again."""
        parked = [i.model_copy(update={"parked": refused[i.id]}) for i in batch if i.id in refused]
        for item in parked:
            log.warning(
                "hot item %s of %s/%s parked: the graph cannot hold it (%s)",
                item.id,
                tenant,
                session_id,
                item.parked,
            )
        await self.hot.touch(tenant, session_id, parked)

    async def with_retry(self, op: Callable[[], Awaitable[T]], retries: int | None = None) -> T:
        attempts = retries or self.retries
        delay = self.backoff_seconds
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
