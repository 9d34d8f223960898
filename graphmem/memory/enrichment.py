"""Enrichment of hot items on their way into the graph: embeddings (cached in Redis when
recall computed them first) and entity extraction, started together per batch."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from ..enrich.embed import Embedder
from ..enrich.sentences import embed_memories, pack, split_sentences
from ..entities import EntityMemory
from ..models import MemoryItem
from ..stores import HotTier

Vectors = dict[str, list[float]]
GraphVectors = tuple[Vectors, dict[str, bytes | None]]


class Enrichment:
    def __init__(
        self, hot: HotTier, embedder: Embedder, entities: EntityMemory | None = None
    ) -> None:
        self.hot = hot
        self.embedder = embedder
        self.entities = entities

    async def vectors(self, tenant: str, session_id: str, items: Sequence[MemoryItem]) -> Vectors:
        """Embeddings for items: cached ones from Redis, the rest computed in a batch."""
        vectors = await self.hot.embeddings(tenant, session_id, [i.id for i in items])
        missing = [i for i in items if i.id not in vectors]
        if missing:
            computed = await asyncio.to_thread(
                embed_memories, self.embedder, [i.content for i in missing]
            )
            vectors.update({i.id: e.vector for i, e in zip(missing, computed, strict=True)})
        return vectors

    async def for_graph(
        self, tenant: str, session_id: str, items: Sequence[MemoryItem]
    ) -> GraphVectors:
        """Vectors and packed sentence vectors for the graph. Redis caches only the vector,
        so a memory of several sentences is embedded again for its sentences."""
        vectors = await self.hot.embeddings(tenant, session_id, [i.id for i in items])
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

    def start(
        self, tenant: str, session_id: str, batch: Sequence[MemoryItem]
    ) -> tuple[asyncio.Future[GraphVectors], asyncio.Future[Any] | None]:
        """Start embedding and NER of a batch. Both release the GIL (onnxruntime, spaCy),
        so they run side by side on the machine's cores."""
        embedding = asyncio.ensure_future(self.for_graph(tenant, session_id, batch))
        extracting = (
            asyncio.ensure_future(self.entities.extract(batch))
            if self.entities is not None
            else None
        )
        return embedding, extracting


def discard(task: asyncio.Future[Any] | None) -> None:
    """Cancel a side task whose result is no longer wanted, and consume its exception so
    that asyncio does not report it as never retrieved."""
    if task is None:
        return
    if not task.done():
        task.cancel()
    elif not task.cancelled():
        task.exception()
