"""Write-behind: every added memory goes into the graph as a 'hot' node shortly after the
add, so that search and recall find it in every scope that may see it while it still
lives in Redis (docs/recall.md#visibility). An enrichment worker (``worker.py``) runs the
steps of each job:

1. **admit**: under the session's lock, the job's items that are still in the hot tier
   become 'hot' nodes without vectors. BM25 and substring search find them from then on.
2. **embed** (``embed``): embed them (with their sentence vectors) and set the vectors
   on the nodes that still exist; they are found by meaning from then on;
3. **extract** (``extract``): extract their entities and write the mentions, then cache
   vectors and entities beside the hot item, so that its spill writes them instead of
   computing them again. NER gives each item a time budget (the worker's
   ``item_seconds``): an item past it keeps the entities of the part read, and counts
   as enriched.

Nothing here changes a tier: spill, promotion and forget still decide where an item
lives; a node written behind only makes a hot item findable.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from graphmem.cputime import in_thread
from graphmem.domain.models import EmbeddingSpace, MemoryItem
from graphmem.enrich.embed import Embedder
from graphmem.enrich.sentences import Embedded, embed_memories, pack
from graphmem.memory.entities.memory import EntityMemory
from graphmem.memory.tiers.sessions import Sessions
from graphmem.memory.writepath.analysis import graph_memory, memory_vectors
from graphmem.memory.writepath.changes import ScopeChanges
from graphmem.stores import GraphStore, HotTier
from graphmem.stores.models import Enriched, EnrichmentJob

log = logging.getLogger("graphmem.worker")


class WriteBehind:
    def __init__(
        self,
        hot: HotTier,
        graph: GraphStore,
        sessions: Sessions,
        embedder: Embedder,
        changes: ScopeChanges,
        entities: EntityMemory | None = None,
    ) -> None:
        self.hot = hot
        self.graph = graph
        self.sessions = sessions
        self.embedder = embedder
        self.changes = changes
        self.entities = entities

    async def admit(self, job: EnrichmentJob) -> list[MemoryItem]:
        """Step 1. Under the lock, so that a forget or a spill of the same items is either
        before (the item is gone from Redis) or after (and sees the node). An item a
        spill took first is enriched where it went, if the spill left that to this job
        (``enrichment.py``); one that was forgotten is gone from both and skipped."""
        async with self.sessions.lock(job.tenant, job.session_id):
            held = await self.hot.get(job.tenant, job.session_id, job.ids)
            written = set(await self.graph.upsert_hot(job.tenant, [graph_memory(i) for i in held]))
            # The graph refuses an item of an erased subject (its tombstone): one added
            # while the erasure ran leaves the hot tier too, and is not enriched.
            items = [i for i in held if i.id in written]
            erased = [i.id for i in held if i.id not in written]
            if erased:
                await self.hot.remove(job.tenant, job.session_id, erased)
            gone = set(job.ids) - {i.id for i in held}
            spilled = await self.graph.unenriched(job.tenant, list(gone)) if gone else []
        await self.changes.items(job.tenant, items)
        return items + spilled

    async def embed(self, items: Sequence[MemoryItem]) -> list[Embedded | None]:
        """Step 2, first half: embed ``items`` (with their sentence vectors) in one call
        and set the vectors on the nodes that still exist. From then on they are found by
        meaning. Returns each item's vectors, None for one forgotten meanwhile."""
        if not items:
            return []
        computed = await in_thread(embed_memories, self.embedder, [i.content for i in items])
        out: list[Embedded | None] = [None] * len(items)
        for tenant, positions in _by_tenant(items).items():
            vectors = [memory_vectors(items[n].id, computed[n]) for n in positions]
            space = EmbeddingSpace.of(self.embedder)
            present = set(await self.graph.set_vectors(tenant, vectors, space))
            kept = [n for n in positions if items[n].id in present]
            await self.changes.items(tenant, [items[n] for n in kept])
            for n in kept:
                out[n] = computed[n]
        return out

    async def extract(
        self,
        items: Sequence[MemoryItem],
        embedded: Sequence[Embedded],
        budget: float | None = None,
    ) -> int:
        """Step 2, second half: extract the entities of embedded ``items`` in one NER
        call and write their mentions, then cache vectors and entities beside the hot
        items. ``budget``: seconds of NER each item may take; an item past it keeps the
        entities of the part read in time, and the others go on. Returns how many items
        it settled."""
        if not items:
            return 0
        found = await self.entities.extract(items, budget) if self.entities is not None else []
        for item, extraction in zip(items, found, strict=False):  # none without NER
            if extraction.partial:
                log.warning(
                    "memory %s of tenant %s (%d characters): entity extraction stopped at "
                    "its %gs budget; it keeps its vector and the %d entity mentions found "
                    "in time (the rest of its text, or its relations, were not read)",
                    item.id,
                    item.tenant,
                    len(item.content),
                    budget,
                    len(extraction.mentions),
                )
        entries: dict[tuple[str, str], dict[str, Enriched]] = {}
        for tenant, positions in _by_tenant(items).items():
            if self.entities is not None:
                await self.entities.write(
                    tenant, [items[n] for n in positions], [found[n] for n in positions]
                )
            for n in positions:
                entries.setdefault((tenant, items[n].session_id), {})[items[n].id] = Enriched(
                    vector=embedded[n].vector,
                    sentences=pack(embedded[n].sentences),
                    entities=self.entities is not None,
                )
        for (tenant, session_id), cached in entries.items():
            await self.hot.cache_enrichment(tenant, session_id, cached, model=self.embedder.name)
        return len(items)


def _by_tenant(items: Sequence[MemoryItem]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for n, item in enumerate(items):
        out.setdefault(item.tenant, []).append(n)
    return out
