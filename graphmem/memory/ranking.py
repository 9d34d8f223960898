"""The hybrid ranking behind search and recall, public so that the fusion tuner
(bench/tune_fusion.py) runs exactly the steps search runs.

BM25 (scoped by hashed tenant, session and user tokens) and the size of the scope do not
need the query vector, so they run while the query is embedded. Then vector candidates,
entity overlap, the candidates' best-sentence cosines, fusion, and the adjacent turns.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..enrich.embed import Embedder
from ..enrich.sentences import best_cosines
from ..entities import EntityMemory
from ..models import MemoryItem, scope_tokens
from ..retrieval import Retriever, Weights, add_context, fuse, lucene_query
from ..stores import GraphStore
from .enrichment import discard
from .inputs import Inputs, RecallQuery

Ranked = list[tuple[MemoryItem, float, float]]  # memory, ranking score, cosine


class Ranker:
    def __init__(
        self,
        inputs: Inputs,
        graph: GraphStore,
        embedder: Embedder,
        weights: Weights,
        entities: EntityMemory | None = None,
    ) -> None:
        self.inputs = inputs
        self.graph = graph
        self.embedder = embedder
        self.weights = weights
        self.entities = entities

    async def rank(self, tenant: str, q: RecallQuery) -> tuple[Ranked, list[float]]:
        """(memory, ranking score, cosine similarity) best first, and the query vector."""
        self.inputs.query(q.query)
        self.inputs.limit(q.limit)
        self.inputs.scope(q.session_id, q.user_id)
        scope: dict[str, Any] = {"session_id": q.session_id, "user_id": q.user_id}
        w = self.weights
        lucene = (
            lucene_query(q.query, scope_tokens(tenant, q.session_id, q.user_id))
            if q.retriever is not Retriever.VECTOR
            else None
        )
        limit = q.limit if q.retriever is Retriever.FULLTEXT else w.candidates
        text_task = (
            asyncio.ensure_future(
                self.graph.search.fulltext_search(tenant, lucene, limit, types=q.types, **scope)
            )
            if lucene
            else None
        )
        size_task = (
            asyncio.ensure_future(self.graph.search.scope_size(tenant, q.session_id, q.user_id))
            if q.retriever is not Retriever.FULLTEXT and (q.session_id or q.user_id)
            else None
        )
        try:
            (vector,) = await asyncio.to_thread(self.embedder.embed, [q.query])
            query_vector: list[float] = vector.tolist()
            size = await size_task if size_task else None
            if q.retriever is Retriever.VECTOR:
                hits = await self.graph.search.vector_search(
                    tenant, query_vector, q.limit, types=q.types, scope_size=size, **scope
                )
                return [(i, s, s) for i, s in hits], query_vector
            text_only = await text_task if text_task else []
            if q.retriever is Retriever.FULLTEXT:
                ids = [i.id for i, _ in text_only]
                scores = await self.graph.search.candidate_scores(tenant, ids, query_vector, ids)
                return [
                    (i, s, scores.get(i.id, (None, None))[0] or 0.0) for i, s in text_only
                ], query_vector
            vector_hits, entity_hits = await asyncio.gather(
                self.graph.search.vector_search(
                    tenant, query_vector, w.candidates, types=q.types, scope_size=size, **scope
                ),
                self.entity_hits(tenant, q),
            )
        finally:
            discard(text_task)
            discard(size_task)
        vector_hits, text_hits = await self.candidate_cosines(
            tenant, query_vector, vector_hits, text_only
        )
        pool = fuse(vector_hits, text_hits, entity_hits, w)
        if w.context > 0 and pool:
            head = sorted(pool.values(), key=lambda c: c.base, reverse=True)[: w.context_pool]
            near = await self.neighbours(
                tenant, [c.item.id for c in head], query_vector, w.context_window
            )
            add_context(pool, near, w)
        ranked = sorted(pool.values(), key=lambda c: (c.score, c.cosine), reverse=True)
        if q.types:
            ranked = [c for c in ranked if c.item.type in q.types]
        return [(c.item, c.score, c.cosine) for c in ranked[: q.limit]], query_vector

    async def candidate_cosines(
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
        scores = await self.graph.search.candidate_scores(
            tenant,
            list(dict.fromkeys([*found, *(i.id for i, _ in text_only)])),
            query_vector,
            [i.id for i, _ in text_only if i.id not in found],
        )
        cosine = {i.id: c for i, c in vector_hits} | {
            item_id: c for item_id, (c, _) in scores.items() if c is not None
        }
        best = self.best(query_vector, {k: v for k, (_, v) in scores.items()}, cosine)
        return (
            [(i, best[i.id]) for i, _ in vector_hits],
            [(i, s, best.get(i.id, 0.0)) for i, s in text_only],
        )

    async def neighbours(
        self, tenant: str, ids: list[str], query_vector: list[float], window: int
    ) -> list[tuple[str, MemoryItem, float]]:
        """The turns around each memory, with their (best-sentence) cosine."""
        near = await self.graph.search.neighbours(tenant, ids, query_vector, window=window)
        best = self.best(
            query_vector, {i.id: v for _, i, _, v in near}, {i.id: c for _, i, c, _ in near}
        )
        return [(of, i, best[i.id]) for of, i, _, _ in near]

    def best(
        self,
        query_vector: list[float],
        packed: dict[str, bytes | None],
        cosine: dict[str, float],
    ) -> dict[str, float]:
        """Each memory's cosine, or its best sentence's when that is closer."""
        present = {k: v for k, v in packed.items() if v is not None}
        sentences = best_cosines(query_vector, present, self.embedder.dimension)
        return {k: max(c, sentences[k]) if k in sentences else c for k, c in cosine.items()}

    async def entity_hits(self, tenant: str, q: RecallQuery) -> dict[str, float]:
        """Share of the query's entities each in-scope memory mentions."""
        if self.entities is None or self.weights.entity <= 0:
            return {}
        (found,) = await self.entities.extract_texts([q.query])
        keys = await self.entities.keys_for(tenant, found)
        if not keys:
            return {}
        matched = await self.graph.search.memories_mentioning(
            tenant, keys, self.weights.candidates, session_id=q.session_id, user_id=q.user_id
        )
        return {item_id: n / len(keys) for item_id, n in matched.items()}
