"""Enrichment of hot items on their way into the graph: embeddings (cached in Redis when
recall computed them first) and entity extraction, started together per batch.

With write-behind, an enrichment worker computes both for every added item and caches
them beside it. A spill then writes what the worker has cached, and while a worker is
alive it leaves the rest to it: those items go into the graph without vectors for a
moment (BM25 finds them), and the job still on the queue sets their vectors and entities
there (``writebehind.py``). So the API process embeds nothing while workers run; it
computes inline only when no worker is alive (none started, or all down).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphmem.cputime import in_thread
from graphmem.domain.models import MemoryItem
from graphmem.enrich import lexical
from graphmem.enrich.embed import Embedder
from graphmem.enrich.ner import Extraction
from graphmem.enrich.sentences import embed_memories, pack, split_sentences
from graphmem.memory.entities.memory import EntityMemory
from graphmem.stores import HotTier
from graphmem.stores.models import Enriched

Vectors = dict[str, list[float]]
GraphVectors = tuple[Vectors, dict[str, bytes | None]]


class Enrichment:
    #: items a worker has yet to finish that an explicit spill still waits for (about
    #: one enrichment batch, a fraction of a second)
    close_to_done = 256
    #: hot items a recall embeds itself while a worker is alive: the newest ones, which
    #: the agent may have added just before it recalls
    inline_at_most = 2

    def __init__(
        self,
        hot: HotTier,
        embedder: Embedder,
        entities: EntityMemory | None = None,
        workers_alive: Callable[[], Awaitable[bool]] | None = None,
    ) -> None:
        self.hot = hot
        self.embedder = embedder
        self.entities = entities
        #: whether an enrichment worker will take what a spill leaves (None: never)
        self.workers_alive = workers_alive

    async def vectors(self, tenant: str, session_id: str, items: Sequence[MemoryItem]) -> Vectors:
        """Embeddings for items: cached ones from Redis, the rest computed in a batch (and
        cached for the next caller). While a worker is alive, only the newest
        ``inline_at_most`` missing items are computed here and the rest are left out: the
        worker (at a lower CPU priority) is on its way to them, and embedding its backlog
        in the API process would take the cores from every request, the worker's
        included, at the moment it is furthest behind."""
        vectors = await self.hot.embeddings(
            tenant, session_id, [i.id for i in items], model=self.embedder.name
        )
        missing = [i for i in items if i.id not in vectors]
        if len(missing) > self.inline_at_most and await self._delegated():
            missing = sorted(missing, key=lambda i: i.created_at)[-self.inline_at_most :]
        if missing:
            computed = await in_thread(embed_memories, self.embedder, [i.content for i in missing])
            new = {i.id: e.vector for i, e in zip(missing, computed, strict=True)}
            await self.hot.cache_embeddings(tenant, session_id, new, model=self.embedder.name)
            vectors.update(new)
        return vectors

    async def for_graph(
        self,
        tenant: str,
        session_id: str,
        items: Sequence[MemoryItem],
        done: Mapping[str, Enriched] | None = None,
    ) -> GraphVectors:
        """Vectors and packed sentence vectors for the graph: what a worker cached
        (``done``), else computed. Recall caches only a vector, so a memory of several
        sentences with only that is embedded again for its sentences."""
        done = done or {}
        vectors = {k: e.vector for k, e in done.items()}
        sentences: dict[str, bytes | None] = {k: e.sentences for k, e in done.items()}
        rest = [i for i in items if i.id not in done]
        vectors |= await self.hot.embeddings(
            tenant, session_id, [i.id for i in rest], model=self.embedder.name
        )
        todo = [
            i
            for i in rest
            if i.id not in vectors
            or (self.embedder.sentence_vectors and len(split_sentences(i.content)) > 1)
        ]
        if todo:
            computed = await in_thread(embed_memories, self.embedder, [i.content for i in todo])
            for item, embedded in zip(todo, computed, strict=True):
                vectors[item.id] = embedded.vector
                sentences[item.id] = pack(embedded.sentences)
        return vectors, sentences

    async def caught_up(self, tenant: str, session_id: str, seconds: float) -> None:
        """Give a live worker up to ``seconds`` to finish the session's hot items, when it
        is close to done: an explicit spill right after the adds then writes them with
        their vectors and entities, as a spill did before write-behind, instead of leaving
        them to the jobs. A worker far behind (a backlog) is not waited for."""
        if seconds <= 0 or not await self._delegated():
            return
        deadline = time.monotonic() + seconds
        # the items of now: later adds are not waited for, and each poll asks only for
        # what the worker had still to finish
        # what a spill will write: a parked item is passed by (and no worker finishes it)
        missing = [i.id for i in await self.hot.items(tenant, session_id) if i.parked is None]
        while True:
            done = await self.hot.enrichment(tenant, session_id, missing, model=self.embedder.name)
            missing = [i for i in missing if i not in done]
            if not missing or len(missing) > self.close_to_done or time.monotonic() > deadline:
                return
            await asyncio.sleep(0.05)

    async def prepare(self, tenant: str, session_id: str, batch: Sequence[MemoryItem]) -> Prepared:
        """Everything a spill writes for a batch. Embedding and NER both release the GIL
        (onnxruntime, spaCy), so they run side by side on the machine's cores; what a
        worker already did for an item is taken from its cache instead."""
        done = await self.hot.enrichment(
            tenant, session_id, [i.id for i in batch], model=self.embedder.name
        )
        # about 15 us an item: a batch of 256 would hold the event loop for 4 ms
        terms = asyncio.ensure_future(
            in_thread(lambda: {i.id: lexical.term_bytes(i.content) for i in batch})
        )
        if await self._delegated():
            # every item found in this model's cache: no other model's can be there
            if len(done) < len(batch) and await self._cached_by_another(tenant, session_id):
                # vectors again; the entities that worker wrote stay (its NER is the same)
                vectors, sentences = await self.for_graph(tenant, session_id, batch, {})
                return Prepared(vectors, sentences, [], [], await terms)
            return Prepared(
                {k: e.vector for k, e in done.items()},
                {k: e.sentences for k, e in done.items()},
                [],
                [],
                await terms,
            )
        embedding = self.for_graph(tenant, session_id, batch, done)
        unmentioned = (
            [i for i in batch if not (i.id in done and done[i.id].entities)]
            if self.entities is not None
            else []
        )
        if self.entities is not None and unmentioned:
            (vectors, sentences), found = await asyncio.gather(
                embedding, self.entities.extract(unmentioned)
            )
        else:
            (vectors, sentences), found = await embedding, []
        return Prepared(vectors, sentences, unmentioned, found, await terms)

    async def _cached_by_another(self, tenant: str, session_id: str) -> bool:
        """Whether the session's items were enriched by a worker of another model (the
        servers changed model, docs/recall.md, "One model per tenant"): their jobs are
        done, and no worker would come back to them, so the spill embeds them itself."""
        cached = await self.hot.cached_model(tenant, session_id)
        return cached is not None and cached != self.embedder.name

    async def _delegated(self) -> bool:
        """Whether a live worker will enrich what this process leaves."""
        return self.workers_alive is not None and await self.workers_alive()

    def start(
        self, tenant: str, session_id: str, batch: Sequence[MemoryItem]
    ) -> asyncio.Future[Prepared]:
        return asyncio.ensure_future(self.prepare(tenant, session_id, batch))


@dataclass
class Prepared:
    #: the items' vectors; an item without one is left to the enrichment worker
    vectors: Vectors
    sentences: dict[str, bytes | None]
    #: the items whose entity mentions the spill still writes, and what NER found in them
    unmentioned: list[MemoryItem]
    extractions: list[Extraction]
    #: each item's stem hashes (``termBytes``), analysed off the event loop
    terms: dict[str, bytes]


def discard(task: asyncio.Future[Any] | None) -> None:
    """Cancel a side task whose result is no longer wanted, and consume its exception so
    that asyncio does not report it as never retrieved."""
    if task is None:
        return
    if not task.done():
        task.cancel()
    elif not task.cancelled():
        task.exception()
