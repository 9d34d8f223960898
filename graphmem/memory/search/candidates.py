"""Where a search's candidates come from: the scope's view in memory (``scopeview.py``)
when this process holds it at the current version, else the graph. Both give fusion the
same things: vector hits and BM25 hits with their best-sentence cosines, and a way to
the turns around any memory.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import ChainMap
from collections.abc import Awaitable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast

import numpy as np

from graphmem.domain.models import MemoryItem, MemoryType
from graphmem.domain.moments import NOW, Moment
from graphmem.enrich.sentences import best_cosines
from graphmem.memory.search.scopecolumns import F32, U32
from graphmem.memory.search.scopeview import ScopeView, Turn
from graphmem.memory.writepath.enrichment import discard
from graphmem.stores import GraphSearch
from graphmem.stores.models import MemoryRows


class Near(Protocol):
    """The turns within ``window`` of each of ``ids`` in its session, as (memory, turn
    next to it, its best cosine); ``leading``: memories the ranking will probably keep,
    whose items a graph search reads on the same trip."""

    def __call__(
        self, ids: Sequence[str], window: int, leading: Sequence[str] = ()
    ) -> Awaitable[list[tuple[str, Turn, float]]]: ...


class Linked(Protocol):
    """The memories of the scope sharing a rare entity (at most ``max_mentions`` of the
    scope's memories mention it) with one of ``seeds``, as (seed, linked turn, its best
    cosine): the link step's second hop (``retrieval.add_links``)."""

    def __call__(
        self, seeds: Sequence[str], max_mentions: int
    ) -> Awaitable[list[tuple[str, Turn, float]]]: ...


Hit = tuple[Turn, float, float, float]  # memory, retriever score, own cosine, best cosine


@dataclass(frozen=True)
class Scope:
    """Who is searched, for which tiers and types, with the query's vector."""

    tenant: str
    session_id: str | None
    user_id: str | None
    tiers: list[str]
    types: list[MemoryType] | None
    query: F32
    #: the read's moment (a view masks its rows by it, the graph filters by it)
    moment: Moment = NOW


@dataclass(frozen=True)
class Sources:
    #: vector hits best first; their retriever score is their own cosine
    vector: list[Hit]
    #: BM25 hits best first; retriever score BM25
    text: list[Hit]
    near: Near
    linked: Linked
    #: memories ``near`` has read as items on its way (from the graph), by id: a search
    #: need not read these again
    items: Mapping[str, MemoryItem] = field(default_factory=dict)


def rows_turns(rows: MemoryRows) -> list[Turn]:
    return [
        Turn(i, s, u, q, t, c, w)
        for i, s, u, q, t, c, w in zip(
            rows.ids,
            rows.sessions,
            rows.users,
            rows.seqs,
            rows.types,
            rows.dates(),
            rows.said_by(),
            strict=True,
        )
    ]


def weighed(rows: MemoryRows, query: F32, dimension: int) -> list[tuple[str, Turn, float]]:
    """Rows read beside other memories (``anchors``) as (that memory, the row's turn, its
    best cosine), from the vectors the rows carry."""
    best = _best(rows, query, dimension, _own(rows, query))
    return list(zip(rows.anchors, rows_turns(rows), best, strict=True))


def links(
    graph: GraphSearch, scope: Scope, seeds: Sequence[str], max_mentions: int, *, vectors: bool
) -> Awaitable[MemoryRows]:
    """The scope's memories linked to ``seeds`` (``cypher/memory/linked.cypher``)."""
    return graph.linked(
        scope.tenant,
        seeds,
        max_mentions,
        session_id=scope.session_id,
        user_id=scope.user_id,
        tiers=scope.tiers,
        vectors=vectors,
        moment=scope.moment,
    )


def _clip(cosine: float) -> float:
    return max(0.0, min(1.0, cosine))


# --- from a view in memory --------------------------------------------------------------
@dataclass(frozen=True)
class TextQuery:
    """BM25 for a view to compute itself: the query's stem hashes and how many hits."""

    terms: U32
    limit: int


def from_view(
    view: ScopeView,
    scope: Scope,
    text: MemoryRows | TextQuery | None,
    k: int,
    graph: GraphSearch,
) -> Sources:
    """Vector hits ranked over the whole scope in numpy; BM25 hits computed here with the
    scope's own statistics (``TextQuery``), or Lucene's (``MemoryRows``) given their
    cosines from the view. CPU only, about a millisecond for a user's thousand memories;
    the links alone are read from the graph, without the vectors the view holds."""
    own = view.cosines(scope.query)
    shown = view.mask(scope.tiers, scope.types, scope.user_id, scope.moment)
    nearest = [int(i) for i in view.nearest(own, shown, k)] if k > 0 else []
    if isinstance(text, TextQuery):
        found, scores = view.bm25(text.terms, shown, text.limit)
        rows_of: list[int | None] = found.tolist()
        turns = [view.turn(int(r)) for r in found]
        bm25s: list[float] = scores.tolist()
    elif text is not None:
        rows_of, turns, bm25s = view.rows_of(text.ids), rows_turns(text), text.scores
    else:
        rows_of, turns, bm25s = [], [], []
    weighed = nearest + [r for r in rows_of if r is not None]
    best = dict(zip(weighed, view.best(weighed, own, scope.query).tolist(), strict=True))
    vector = []
    for i in nearest:
        cosine = _clip(float(own[i]))
        vector.append((view.turn(i), cosine, cosine, max(cosine, best[i])))
    texts: list[Hit] = []
    for turn, bm25, row in zip(turns, bm25s, rows_of, strict=True):
        if row is None:  # written after the view's version was read: no vector yet
            texts.append((turn, bm25, 0.0, 0.0))
        else:
            texts.append((turn, bm25, float(own[row]), best[row]))
    around = view.mask(scope.tiers, None, scope.user_id, scope.moment)

    async def near(
        ids: Sequence[str], window: int, leading: Sequence[str] = ()
    ) -> list[tuple[str, Turn, float]]:
        pairs = [
            (item_id, other)
            for item_id, row in zip(ids, view.rows_of(ids), strict=True)
            if row is not None
            for other in view.neighbours(row, window, around)
        ]
        scores = view.best([other for _, other in pairs], own, scope.query).tolist()
        return [
            (item_id, view.turn(other), score)
            for (item_id, other), score in zip(pairs, scores, strict=True)
        ]

    async def linked(seeds: Sequence[str], max_mentions: int) -> list[tuple[str, Turn, float]]:
        if not seeds:
            return []
        rows = await links(graph, scope, seeds, max_mentions, vectors=False)
        at = view.rows_of(rows.ids)
        known = [r for r in at if r is not None]
        best = dict(zip(known, view.best(known, own, scope.query).tolist(), strict=True))
        # a memory written after the view's version was read has no vector here yet
        return [
            (seed, turn, 0.0 if row is None else best[row])
            for seed, turn, row in zip(rows.anchors, rows_turns(rows), at, strict=True)
        ]

    return Sources(vector, texts, near, linked)


# --- from the graph ---------------------------------------------------------------------
def _best(rows: MemoryRows, query: F32, dimension: int, own: list[float]) -> list[float]:
    """Each row's best cosine: its own, or its best sentence's when that is closer."""
    packed = {i: s for i, s in zip(rows.ids, rows.sentences, strict=True) if s is not None}
    sentences = best_cosines(query.tolist(), packed, dimension) if packed else {}
    return [max(c, sentences.get(i, c)) for i, c in zip(rows.ids, own, strict=True)]


def _own(rows: MemoryRows, query: F32) -> list[float]:
    """Cosines of rows that carry their vectors (0 for a memory not embedded yet, or
    whose vector is not the query's size), in one product."""
    width = 4 * len(query)
    kept = [n for n, v in enumerate(rows.vectors) if v is not None and len(v) == width]
    own = [0.0] * len(rows.vectors)
    if kept:
        joined = b"".join(rows.vectors[n] or b"" for n in kept)
        matrix = np.frombuffer(joined, dtype="<f4").reshape(len(kept), len(query))
        cosines = np.einsum("ij,j->i", matrix, query)  # not @: see scopeview.cosines
        for n, cosine in zip(kept, cosines.tolist(), strict=True):
            own[n] = cosine
    return own


def _with_vectors(text: MemoryRows, read: MemoryRows) -> MemoryRows:
    """BM25 hits that came without vectors, given those ``read`` holds."""
    by_id = dict(zip(read.ids, read.vectors, strict=True))
    sentences = dict(zip(read.ids, read.sentences, strict=True))
    return dataclasses.replace(
        text,
        vectors=[by_id.get(i) for i in text.ids],
        sentences=[sentences.get(i) for i in text.ids],
    )


def _text_hits(text: MemoryRows, query: F32, dimension: int) -> list[Hit]:
    own = _own(text, query)
    best = _best(text, query, dimension, own)
    return [
        (t, s, o, b) for t, s, o, b in zip(rows_turns(text), text.scores, own, best, strict=True)
    ]


async def from_graph(
    graph: GraphSearch,
    scope: Scope,
    text_hits: Awaitable[MemoryRows] | None,
    k: int,
    dimension: int,
    scope_size: int | None,
) -> Sources:
    """Vector hits from Cypher (exact in a small scope, the vector index beyond), probed
    as soon as the query is embedded, beside the BM25 hits still coming; the BM25 hits'
    cosines from the vectors their rows carry (read now when they do not), computed while
    the probe is out. What else was tried on this path, and why it was left out, is in
    docs/recall.md ("Where search time goes")."""
    probe = (
        asyncio.ensure_future(
            graph.vector_hits(
                scope.tenant,
                scope.query.tolist(),
                k,
                session_id=scope.session_id,
                user_id=scope.user_id,
                types=scope.types,
                tiers=scope.tiers,
                scope_size=scope_size,
                moment=scope.moment,
            )
        )
        if k > 0
        else None
    )
    try:
        text = await text_hits if text_hits is not None else None
        texts: list[Hit] = []
        if text is not None:
            if text.ids and all(v is None for v in text.vectors):
                text = _with_vectors(text, await graph.rows_by_ids(scope.tenant, text.ids))
            # scored while the probe is still out
            texts = _text_hits(text, scope.query, dimension)
        vector: list[Hit] = []
        if probe is not None:
            hits = await probe
            vector_best = _best(hits, scope.query, dimension, hits.scores)
            vector = [
                (t, c, c, b)
                for t, c, b in zip(rows_turns(hits), hits.scores, vector_best, strict=True)
            ]
    finally:
        discard(probe)

    read: ChainMap[str, MemoryItem] = ChainMap()

    async def near(
        ids: Sequence[str], window: int, leading: Sequence[str] = ()
    ) -> list[tuple[str, Turn, float]]:
        if not ids:
            return []
        rows, items = await graph.neighbours(
            scope.tenant,
            ids,
            window,
            user_id=scope.user_id,
            tiers=scope.tiers,
            also=leading,
            moment=scope.moment,
        )
        # parsed only when the ranking keeps them; a ChainMap writes only to maps[0]
        read.maps.append(cast(MutableMapping[str, MemoryItem], items))
        return weighed(rows, scope.query, dimension)

    async def linked(seeds: Sequence[str], max_mentions: int) -> list[tuple[str, Turn, float]]:
        if not seeds:
            return []
        rows = await links(graph, scope, seeds, max_mentions, vectors=True)
        return weighed(rows, scope.query, dimension)

    return Sources(vector, texts, near, linked, read)
