"""`graphmem reembed`: move a tenant's vectors to the model this process embeds with,
while its servers keep answering (docs/recall.md, "One model per tenant").

1. **Next vectors.** Every memory whose vectors are not the new model's gets the new
   model's beside its own (``embeddingNext``, ``vectorBytesNext``,
   ``sentenceVectorsNext``). Search keeps using the old ones. The state is in the graph:
   a run that is killed starts again where it stopped.
2. **Flip.** The tenant's model becomes the new one. From then on, servers still
   embedding with the old model answer its searches UNAVAILABLE and write no vectors of
   theirs (``spaces.py``, memory/upsert_batch): switch them to the new model now.
3. **Swap.** The next vectors become the memories' own, in batches; memories added
   meanwhile without the new model's vectors are embedded too, until none is left.
4. **Tasks and episodes** are embedded again in place (a tenant has few), and every
   cached scope view of the tenant is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from graphmem.cputime import in_thread
from graphmem.domain.models import EmbeddingSpace
from graphmem.enrich.embed import Embedder
from graphmem.enrich.sentences import embed_memories
from graphmem.memory.writepath.analysis import memory_vectors
from graphmem.memory.writepath.changes import ScopeChanges
from graphmem.stores import GraphSpaces

#: (memories with the new model's vectors or next vectors, memories of the tenant)
Progress = Callable[[int, int], None]


@dataclass
class ReembedReport:
    tenant: str
    model: str
    memories: int
    embedded: int
    swapped: int
    tasks: int


class Reembed:
    #: memories embedded in one call (and written in one transaction)
    batch = 64
    #: memories swapped in one transaction
    swap_batch = 2000
    #: rounds of swapping and embedding what servers added meanwhile, at most
    max_rounds = 10

    def __init__(self, store: GraphSpaces, embedder: Embedder, changes: ScopeChanges) -> None:
        self.store = store
        self.embedder = embedder
        self.space = EmbeddingSpace.of(embedder)
        self.changes = changes

    async def tenant(self, tenant: str, progress: Progress | None = None) -> ReembedReport:
        total, done = await self.store.count(tenant, self.space)
        if progress:
            progress(done, total)
        embedded = await self._next_vectors(tenant, done, total, progress)
        await self.store.flip(tenant, self.space)
        swapped = 0
        for _ in range(self.max_rounds):
            while n := await self.store.swap(tenant, self.space, self.swap_batch):
                swapped += n
            # what the tenant's servers added since step 1 (after the flip they write
            # no vectors of the old model, so each round finds fewer)
            more = await self._next_vectors(tenant, done, total, None)
            embedded += more
            if not more:
                break
        tasks = await self._tasks(tenant)
        await self.changes.everything(tenant)
        total, done = await self.store.count(tenant, self.space)
        if progress:
            progress(done, total)
        return ReembedReport(tenant, self.space.model, total, embedded, swapped, tasks)

    async def _next_vectors(
        self, tenant: str, done: int, total: int, progress: Progress | None
    ) -> int:
        after, embedded = "", 0
        while page := await self.store.pending(tenant, self.space, after, self.batch):
            computed = await in_thread(embed_memories, self.embedder, [c for _, c in page])
            vectors = [
                memory_vectors(memory_id, e)
                for (memory_id, _), e in zip(page, computed, strict=True)
            ]
            await self.store.set_next(tenant, self.space, vectors)
            embedded += len(vectors)
            after = page[-1][0]
            if progress:
                progress(min(total, done + embedded), total)
        return embedded

    async def _tasks(self, tenant: str) -> int:
        count = 0
        while page := await self.store.tasks_pending(tenant, self.space, self.batch):
            vectors = await in_thread(self.embedder.embed, [text for _, text in page])
            rows = [
                {"id": node_id, "embedding": v.tolist()}
                for (node_id, _), v in zip(page, vectors, strict=True)
            ]
            await self.store.set_tasks(tenant, self.space, rows)
            count += len(rows)
        return count
