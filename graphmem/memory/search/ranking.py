"""The hybrid ranking behind search and recall, public so that the fusion tuner
(bench/tune_fusion.py) runs exactly the steps search runs.

The scope's view (``scopecache.py``: the scope's vectors and stems in memory, at the
version Redis holds) does not need the query vector, so it is read while the query is
embedded. With the view, BM25 (with the scope's own statistics), vector candidates,
best-sentence cosines and adjacent turns are numpy over the scope; without it (a scope
too large to hold, a tenant-wide search of a large tenant, no version store) they come
from Cypher, BM25 through the tenant's Lucene index beside the embedding. Then fusion
(with the periods and the speaker the query names, ``retrieval.base_scores``), the
context and link steps, and one read of the results' items, fresh.
"""

from __future__ import annotations

import asyncio
import heapq
from collections import OrderedDict
from collections.abc import Awaitable, Mapping, Sequence
from typing import cast

import numpy as np

from graphmem.cputime import in_thread
from graphmem.domain.models import MemoryItem, query_scope_tokens
from graphmem.enrich import lexical
from graphmem.enrich.embed import Embedder, embed_queries
from graphmem.memory.entities.memory import EntityMemory
from graphmem.memory.inputs import Inputs, RecallQuery
from graphmem.memory.search.candidates import Scope, Sources, TextQuery, from_graph, from_view
from graphmem.memory.search.fusion import (
    Retriever,
    add_context,
    add_links,
    base_scores,
    likely_results,
    with_vector_slots,
)
from graphmem.memory.search.querytext import STOPWORDS, lucene_query
from graphmem.memory.search.scopecache import ScopeCache
from graphmem.memory.search.scopecolumns import F32
from graphmem.memory.search.scopeview import Turn
from graphmem.memory.search.weights import Weights, query_weights
from graphmem.memory.writepath.enrichment import discard
from graphmem.memory.writepath.spaces import TenantSpaces
from graphmem.stores import GraphStore
from graphmem.stores.models import MemoryRows

#: how many more than ``limit`` of the leading candidates a graph search reads as items
#: beside their neighbours (fewer: more searches need a read of their own; more: bytes)
LEADING_SLACK = 5

Ranked = list[tuple[MemoryItem, float, float]]  # memory, ranking score, cosine
Ordered = list[tuple[Turn, float, float]]  # the same before the items are read


class QueryVectors:
    """Query embeddings by tenant and text, the most recent few: an agent repeats its
    questions, and embedding one costs milliseconds of CPU the searches share. Kept per
    tenant, so that how fast a search answers never tells one tenant what another asked.
    Held as float32 arrays (1.5 KB each; a list of Python floats is eight times that)."""

    def __init__(self, embedder: Embedder, size: int = 512) -> None:
        self.embedder = embedder
        self.size = size
        self._vectors: OrderedDict[tuple[str, str], F32] = OrderedDict()

    def clear(self) -> None:
        self._vectors.clear()

    async def __call__(self, tenant: str, text: str) -> list[float]:
        key = (tenant, text)
        found = self._vectors.get(key)
        if found is not None:
            self._vectors.move_to_end(key)
            return cast(list[float], found.tolist())
        (vector,) = await in_thread(embed_queries, self.embedder, [text])
        found = np.asarray(vector, dtype=np.float32)
        self._vectors[key] = found
        if len(self._vectors) > self.size:
            self._vectors.popitem(last=False)
        return cast(list[float], found.tolist())


class Ranker:
    def __init__(
        self,
        inputs: Inputs,
        graph: GraphStore,
        embedder: Embedder,
        weights: Weights,
        entities: EntityMemory | None = None,
        cache: ScopeCache | None = None,
        query_embedder: Embedder | None = None,
        spaces: TenantSpaces | None = None,
    ) -> None:
        self.inputs = inputs
        self.spaces = spaces
        self.graph = graph
        self.embedder = embedder
        self.weights = weights
        self.entities = entities
        self.cache = cache or ScopeCache(graph.search, None, embedder.dimension)
        self.query_vectors = QueryVectors(query_embedder or embedder)

    async def rank(self, tenant: str, q: RecallQuery) -> tuple[Ranked, list[float]]:
        """(memory, ranking score, cosine similarity) best first, and the query vector."""
        ordered, query_vector, sources = await self._order(tenant, q)
        return await self.items(tenant, ordered, sources.items), query_vector

    async def order(self, tenant: str, q: RecallQuery) -> tuple[Ordered, list[float]]:
        """The ranking without reading its items (recall reads them as it counts the
        accesses): (memory's place, ranking score, cosine) best first."""
        ordered, query_vector, _ = await self._order(tenant, q)
        return ordered, query_vector

    async def _order(self, tenant: str, q: RecallQuery) -> tuple[Ordered, list[float], Sources]:
        sources, query_vector = await self.sources(tenant, q)
        ranked: list[tuple[Turn, float, float]]
        early: Early | None = None
        w = query_weights(q.query, self.weights)
        vector_hits = [(t, best) for t, _, _, best in sources.vector]
        try:
            if q.retriever is Retriever.VECTOR:
                ranked = [(t, own, own) for t, _, own, _ in sources.vector]
            elif q.retriever is Retriever.FULLTEXT:
                ranked = [(t, bm25, own) for t, bm25, own, _ in sources.text]
            else:
                entity_hits = await self.entity_hits(tenant, q)
                pool = base_scores(
                    vector_hits,
                    [(t, bm25, best) for t, bm25, _, best in sources.text],
                    entity_hits,
                    q.query,
                    w,
                )
                leading = likely_results(pool, w, q.limit + LEADING_SLACK)
                # the links of the leading few are read while their neighbours are
                linking = (
                    asyncio.ensure_future(
                        sources.linked(leading[: w.link_seeds], w.link_max_mentions)
                    )
                    if w.links > 0 and leading
                    else None
                )
                try:
                    if w.context > 0 and pool:
                        head = sorted(pool.values(), key=lambda c: c.base, reverse=True)
                        near = await sources.near(
                            [c.item.id for c in head[: w.context_pool]], w.context_window, leading
                        )
                        add_context(pool, near, w)
                    # which of the likely head are superseded is read while the links are
                    # (a round trip after the ranking otherwise); a wider set than the
                    # head, so that the ranking's head is rarely outside it
                    if self.weights.superseded > 0 and pool:
                        ids = [
                            c.item.id
                            for c in heapq.nlargest(
                                SUPERSEDED_READ * (q.limit + LEADING_SLACK),
                                pool.values(),
                                key=lambda c: (c.score, c.cosine),
                            )
                        ]
                        early = Early(ids, self.graph.search.superseded(tenant, ids, q.moment))
                    if linking is not None:
                        add_links(pool, await linking, w)
                finally:
                    discard(linking)
                order = sorted(pool.values(), key=lambda c: (c.score, c.cosine), reverse=True)
                ranked = [(c.item, c.score, c.cosine) for c in order]
            if q.types:
                wanted = {t.value for t in q.types}
                ranked = [r for r in ranked if r[0].type in wanted]
            ranked, superseded = await self.demote_superseded(tenant, q, ranked, early)
            if q.retriever is Retriever.HYBRID:
                # a superseded memory takes no slot: it never ranks above what closed it
                ranked = with_vector_slots(
                    ranked, lambda r: r[0].id, vector_hits, q.limit, w.vector_slots, superseded
                )
        finally:
            discard(early.found if early is not None else None)
        return ranked[: q.limit], query_vector, sources

    async def sources(self, tenant: str, q: RecallQuery) -> tuple[Sources, list[float]]:
        """The candidates fusion combines, from the scope's view or from the graph."""
        self.inputs.query(q.query)
        self.inputs.limit(q.limit)
        self.inputs.scope(q.session_id, q.user_id)
        if self.spaces is not None:
            await self.spaces.require(tenant)
        w = self.weights
        tiers = [t.value for t in q.tiers]
        lucene = (
            lucene_query(q.query, query_scope_tokens(tenant, q.session_id, q.user_id))
            if q.retriever is not Retriever.VECTOR
            else None
        )
        # a view holds both clocks: a read at any moment is served by it (scopeclocks.py)
        held = self.cache.likely(tenant, q.session_id, q.user_id)
        scoped = q.session_id is not None or q.user_id is not None
        view_task = (
            asyncio.ensure_future(self.cache.view(tenant, q.session_id, q.user_id))
            if held
            else None
        )
        text_limit = q.limit if q.retriever is Retriever.FULLTEXT else w.candidates

        def lucene_hits(vectors: bool) -> asyncio.Future[MemoryRows] | None:
            if lucene is None:
                return None
            return asyncio.ensure_future(
                self.graph.search.text_hits(
                    tenant,
                    lucene,
                    text_limit,
                    session_id=q.session_id,
                    user_id=q.user_id,
                    types=q.types,
                    tiers=tiers,
                    vectors=vectors,
                    moment=q.moment,
                )
            )

        # A view computes BM25 itself, with the scope's own statistics; Lucene (the
        # tenant's statistics) serves the searches without one.
        text_task = None if held else lucene_hits(vectors=True)
        size_task = (
            asyncio.ensure_future(
                self.graph.search.scope_size(tenant, q.session_id, q.user_id, tiers)
            )
            if not held and scoped and q.retriever is not Retriever.FULLTEXT
            else None
        )
        k = q.limit if q.retriever is Retriever.VECTOR else w.candidates
        if q.retriever is Retriever.FULLTEXT:
            k = 0
        # a probe of the graph costs more per candidate than a view (Weights)
        graph_k = max(q.limit, w.graph_vector_candidates) if q.retriever is Retriever.HYBRID else k
        try:
            query_vector = await self.query_vectors(tenant, q.query)
            view = await view_task if view_task else None
            size = await size_task if size_task else None
            scope = Scope(
                tenant,
                q.session_id,
                q.user_id,
                tiers,
                q.types,
                np.asarray(query_vector, dtype=np.float32),
                q.moment,
            )
            if view is None:
                text_task = text_task or lucene_hits(vectors=True)
                # the vector probe starts now, while BM25 may still be on its way
                sources = await from_graph(
                    self.graph.search,
                    scope,
                    text_task,
                    graph_k,
                    self.embedder.dimension,
                    size,
                )
                return sources, query_vector
            text: MemoryRows | TextQuery | None = None
            if lucene is not None and view.lexical:
                text = TextQuery(lexical.query_hashes(q.query, STOPWORDS), text_limit)
            elif (late := lucene_hits(vectors=False)) is not None:
                text_task = late  # a memory in the scope is not analysed yet (backfill_terms)
                text = await late
        finally:
            discard(view_task)
            discard(text_task)
            discard(size_task)
        if len(view) > 4000:  # numpy over a large scope: off the event loop
            sources = await in_thread(from_view, view, scope, text, k, self.graph.search)
        else:
            sources = from_view(view, scope, text, k, self.graph.search)
        return sources, query_vector

    async def items(
        self, tenant: str, ranked: Ordered, read: Mapping[str, MemoryItem] | None = None
    ) -> Ranked:
        """The ranked memories as items read now (what ranking holds may be older:
        access counts, relevance), or by this search (``read``); a memory deleted
        meanwhile drops out."""
        if not ranked:
            return []
        found: dict[str, MemoryItem] = {}
        for t, _, _ in ranked:
            if read and (item := read.get(t.id)) is not None:
                found[t.id] = item
        missing = [t.id for t, _, _ in ranked if t.id not in found]
        if missing:
            found.update((i.id, i) for i in await self.graph.get(tenant, missing))
        return [(found[t.id], s, c) for t, s, c in ranked if t.id in found]

    async def entity_hits(self, tenant: str, q: RecallQuery) -> dict[str, float]:
        """Share of the query's entities each in-scope memory mentions."""
        if self.entities is None or self.weights.entity <= 0:
            return {}
        (found,) = await self.entities.extract_texts([q.query])
        keys = await self.entities.keys_for(tenant, found)
        if not keys:
            return {}
        matched = await self.graph.search.memories_mentioning(
            tenant,
            keys,
            self.weights.candidates,
            session_id=q.session_id,
            user_id=q.user_id,
            tiers=[t.value for t in q.tiers],
            moment=q.moment,
        )
        return {item_id: n / len(keys) for item_id, n in matched.items()}

    async def demote_superseded(
        self, tenant: str, q: RecallQuery, ranked: Ordered, early: Early | None = None
    ) -> tuple[Ordered, Mapping[str, list[str]]]:
        """``ranked`` with its superseded memories (every relation they assert closed by
        a later memory held at the read's moment) losing ``Weights.superseded`` of their
        score, and never above a memory that closed them; only the leading few are
        looked at: what ``early`` read of them, and one read of the others. Also which
        were superseded, and by what."""
        head = ranked[: q.limit + LEADING_SLACK]
        if self.weights.superseded <= 0 or not head:
            return ranked, {}
        ids = [t.id for t, _, _ in head]
        found: dict[str, list[str]] = {}
        if early is not None:
            found.update(await early.found)
            ids = [i for i in ids if i not in early.ids]
        if ids:
            found.update(await self.graph.search.superseded(tenant, ids, q.moment))
        if not found:
            return ranked, found
        return demoted(ranked, found, self.weights.superseded), found


#: how many times the likely head a search reads early for superseded memories
SUPERSEDED_READ = 2


class Early:
    """The superseded memories among ``ids``, read while the ranking is finished."""

    def __init__(self, ids: Sequence[str], read: Awaitable[dict[str, list[str]]]) -> None:
        self.ids = frozenset(ids)
        self.found: asyncio.Future[dict[str, list[str]]] = asyncio.ensure_future(read)


def demoted(ranked: Ordered, superseded: Mapping[str, list[str]], share: float) -> Ordered:
    """``ranked`` again, each memory of ``superseded`` scored ``1 - share`` of what it was
    and, when a memory that closed its relations is ranked, just below that one."""
    scores = {t.id: s for t, s, _ in ranked}
    out = []
    for turn, score, cosine in ranked:
        closers = superseded.get(turn.id)
        if closers is not None:
            score *= 1 - share
            above = [scores[c] for c in closers if c in scores and c != turn.id]
            if above:
                score = min(score, min(above) * (1 - 1e-6))
        out.append((turn, score, cosine))
    return sorted(out, key=lambda r: (r[1], r[2]), reverse=True)
