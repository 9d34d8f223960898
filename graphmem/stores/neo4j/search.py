"""Searching the graph store's memories: BM25 through the tenant's fulltext index,
nearest neighbours (exact in a small scope, a vector index beyond: ``vectorindex.py``
says which), the turns
around a hit, the memories that mention an entity, and the rows a scope's in-memory copy
is built from (``memory/search/scopecache.py``).

Every read returns one Cypher row of lists (``MemoryRows``, ``records.memory_rows``): the
driver decodes one row of lists many times faster than a row per memory, and search needs
columns, not items.
Reached as ``Neo4jGraphStore.search``; runs on the store's driver.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from graphmem.domain.models import MemoryItem, MemoryType, Tier
from graphmem.domain.moments import NOW, Moment
from graphmem.enrich import lexical
from graphmem.enrich.ner import RELATION_TYPES
from graphmem.errors import GraphmemError, Unavailable
from graphmem.stores.models import MemoryRows, ScopeTooLarge
from graphmem.stores.neo4j.fulltext import TenantFulltext
from graphmem.stores.neo4j.records import (
    ParsedOnRead,
    memory_item,
    memory_rows,
    mention_counts,
)
from graphmem.stores.neo4j.session import Neo4jSession
from graphmem.stores.neo4j.vectorindex import SHARED_INDEX, TenantVectorIndexes

log = logging.getLogger("graphmem.search")

# The default when a caller names no tiers (memory/inputs.py SEARCH_TIERS is search's).
GRAPH_TIERS = (Tier.HOT.value, Tier.WARM.value, Tier.COLD.value)


#: memories per row of a whole-scope read (about half a MB with vectors and sentence
#: vectors: every pooled connection keeps a receive buffer the size of its largest row)
SCOPE_PAGE = 128


#: an entity mentioned more often than this in a tenant is not followed by the link step
#: (``memory/linked``): walking a hub's mentions would cost more than any link it gives
LINK_MAX_DEGREE = 10_000


class Neo4jGraphSearch:
    def __init__(self, session: Neo4jSession, fulltext: TenantFulltext) -> None:
        self._session = session
        # The store's, so that an index ensured by a write is known to searches too.
        self._fulltext = fulltext
        self.vector_indexes = TenantVectorIndexes(session, fulltext)

    #: below this many memories in a scope, recall ranks them exactly instead of via ANN
    exact_scan_limit = 20_000

    async def vector_hits(
        self,
        tenant: str,
        embedding: Sequence[float],
        limit: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        types: Sequence[MemoryType] | None = None,
        tiers: Sequence[str] = GRAPH_TIERS,
        scope_size: int | None = None,
        moment: Moment = NOW,
    ) -> MemoryRows:
        """Scoped nearest neighbours; ``scores`` are cosine similarities. A session or
        user scope is ranked exactly when it holds at most ``exact_scan_limit`` memories
        (``scope_size``, counted here unless the caller already has it)."""
        params: dict[str, Any] = {
            "tenant": tenant,
            "sessionId": session_id,
            "userId": user_id,
            "tiers": list(tiers),
            "types": [t.value for t in types] if types else None,
            "embedding": list(map(float, embedding)),
            "limit": limit,
            **moment.params(),
        }
        if session_id is not None or user_id is not None:
            if scope_size is None:
                scope_size = await self.scope_size(tenant, session_id, user_id, tiers)
            if scope_size <= self.exact_scan_limit:
                exact = (
                    "memory/vector_hits_session"
                    if session_id is not None
                    else "memory/vector_hits_user"
                )
                (record,) = await self._session.run(exact, params)
                return _cosines(memory_rows(record))
        # In the shared index, over-fetch by the tenant's share of it, and widen until
        # the scope filter leaves enough hits or the whole index has been looked at.
        # HNSW's cost grows with k, and a probe too small costs a second one: sizing the
        # first by the share makes a second rare.
        index = self.vector_indexes.current(tenant, len(params["embedding"]))
        params["index"] = index.name
        k = min(100_000, max(limit * 2, 100, int(1.5 * limit / index.share)))
        if index.name != SHARED_INDEX and _whole_tenant(params):
            # The tenant's own index holds only what this probe may return: nothing is
            # filtered out, and HNSW's cost grows with k (9.9 against 15.1 ms for 100
            # and 200 of 100,000 memories).
            k = limit
            if params["asOf"] is not None or params["validAt"] is not None:
                # a moment in the middle of the tenant's history leaves half of it out: a
                # probe of limit would cost a second, wider one nearly every time
                k = MOMENT_OVERFETCH * limit
        while True:
            (record,) = await self._session.run("memory/vector_hits_index", {**params, "k": k})
            rows = memory_rows(record)
            if len(rows.ids) >= limit or k >= 100_000:
                return _cosines(rows)
            # Near the query, other tenants may hold more than their share (the same
            # texts, the same topics): widen by the yield this probe had, not blindly.
            found = len(rows.ids)
            k = min(100_000, 10 * k if found == 0 else max(2 * k, int(1.5 * k * limit / found)))

    async def scope_size(
        self,
        tenant: str,
        session_id: str | None,
        user_id: str | None,
        tiers: Sequence[str] = GRAPH_TIERS,
    ) -> int:
        """Graph memories in a session or user scope, counted up to one past
        ``exact_scan_limit`` (all that decides exact scan versus ANN)."""
        params = {
            "tenant": tenant,
            "sessionId": session_id,
            "userId": user_id,
            "tiers": list(tiers),
            "cap": self.exact_scan_limit + 1,
        }
        name = "memory/scope_size_session" if session_id is not None else "memory/scope_size_user"
        (row,) = await self._session.run(name, params)
        return int(row["n"])

    async def text_hits(
        self,
        tenant: str,
        lucene: str,
        limit: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        types: Sequence[MemoryType] | None = None,
        tiers: Sequence[str] = GRAPH_TIERS,
        vectors: bool = False,
        moment: Moment = NOW,
    ) -> MemoryRows:
        """BM25 hits (``scores``) through the fulltext index, best first, with their
        vectors when ``vectors``; ``lucene`` already pins the scope's tokens, so little
        is filtered afterwards (tiers, types)."""
        params = {
            "tenant": tenant,
            "lucene": lucene,
            "sessionId": session_id,
            "userId": user_id,
            "tiers": list(tiers),
            "types": [t.value for t in types] if types else None,
            "k": limit * 2,
            "limit": limit,
            "vectors": vectors,
            **moment.params(),
        }
        index, _ = await self._fulltext.ensure(tenant)
        try:
            (record,) = await self._session.run("memory/text_hits", params | {"index": index})
        except Unavailable:
            raise
        except GraphmemError:
            # The index this process knew may have been dropped since (by an operator,
            # a restore): create it again, once, before giving up.
            self._fulltext.forget(tenant)
            index, _ = await self._fulltext.ensure(tenant)
            (record,) = await self._session.run("memory/text_hits", params | {"index": index})
        return memory_rows(record)

    async def neighbours(
        self,
        tenant: str,
        ids: Sequence[str],
        window: int = 1,
        *,
        user_id: str | None = None,
        tiers: Sequence[str] = GRAPH_TIERS,
        also: Sequence[str] = (),
        moment: Moment = NOW,
    ) -> tuple[MemoryRows, Mapping[str, MemoryItem]]:
        """The ``window`` turns on each side of each memory in its session (of the user,
        when the search is a user's), ``anchors`` naming the memory each is next to; and
        the memories of ``ids`` and ``also`` with those turns as items by id, read now
        as ``get`` reads them (a memory of ``ids`` with no turn around it in the scope
        is not among them), parsed when asked for."""
        params = {
            "tenant": tenant,
            "ids": list(ids),
            "window": window,
            "userId": user_id,
            "tiers": list(tiers),
            "also": list(also),
            **moment.params(),
        }
        (record,) = await self._session.run("memory/neighbours", params)
        items = ParsedOnRead(record["items"], lambda m: memory_item(tenant, m))
        return memory_rows(record), items

    async def linked(
        self,
        tenant: str,
        ids: Sequence[str],
        max_mentions: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        tiers: Sequence[str] = GRAPH_TIERS,
        vectors: bool = True,
        moment: Moment = NOW,
    ) -> MemoryRows:
        """The memories of the scope sharing with one of ``ids`` an entity that at most
        ``max_mentions`` of the scope's memories mention, ``anchors`` naming the memory
        each is linked from, with vectors when ``vectors``."""
        (record,) = await self._session.run(
            "memory/linked",
            {
                "tenant": tenant,
                "ids": list(ids),
                "maxMentions": max_mentions,
                "maxDegree": LINK_MAX_DEGREE,
                "sessionId": session_id,
                "userId": user_id,
                "tiers": list(tiers),
                "vectors": vectors,
                **moment.params(),
            },
        )
        return memory_rows(record)

    async def scope_pages(
        self, tenant: str, session_id: str | None, user_id: str | None, cap: int
    ) -> AsyncIterator[MemoryRows]:
        """Every memory (all tiers) of a session, else a user, else the tenant, a page
        (``SCOPE_PAGE`` memories) at a time as they come off the wire; raises
        ``ScopeTooLarge`` when the scope holds ``cap`` or more. A caller that turns each
        page into arrays before it takes the next never holds more than one page of
        per-memory byte strings: a whole scope of them at once (tens of megabytes of
        blocks of a few KB) is what made the C heap grow with the largest scope read."""
        params: dict[str, Any] = {
            "tenant": tenant,
            "cap": cap,
            "page": SCOPE_PAGE,
            "termVersion": lexical.VERSION,
        }
        if session_id is not None:
            name, params["sessionId"] = "memory/scope_rows_session", session_id
        elif user_id is not None:
            name, params["userId"] = "memory/scope_rows_user", user_id
        else:
            name = "memory/scope_rows_tenant"
        async with contextlib.aclosing(self._session.stream(name, params)) as records:
            async for record in records:
                if int(record["n"]) >= cap:
                    raise ScopeTooLarge(f"{tenant}: {record['n']} memories or more")
                yield memory_rows(record)

    async def rows_by_ids(self, tenant: str, ids: Sequence[str]) -> MemoryRows:
        """The memories of ``ids`` still in the graph, as ``scope_pages`` returns them."""
        (record,) = await self._session.run(
            "memory/rows_by_ids",
            {"tenant": tenant, "ids": list(ids), "termVersion": lexical.VERSION},
        )
        return memory_rows(record)

    async def memories_mentioning(
        self,
        tenant: str,
        keys: Sequence[str],
        limit: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        tiers: Sequence[str] = GRAPH_TIERS,
        moment: Moment = NOW,
    ) -> dict[str, int]:
        if not keys:
            return {}
        records = await self._session.run(
            "entity/memories_mentioning",
            {
                "tenant": tenant,
                "keys": list(keys),
                "sessionId": session_id,
                "userId": user_id,
                "tiers": list(tiers),
                "limit": limit,
                **moment.params(),
            },
        )
        return mention_counts(records)

    async def superseded(
        self, tenant: str, ids: Sequence[str], moment: Moment = NOW
    ) -> dict[str, list[str]]:
        """Those of ``ids`` every relation of which a later memory held at ``moment`` has
        closed, each with the memories that closed them (``memory/superseded``)."""
        if not ids:
            return {}
        records = await self._session.run(
            "memory/superseded",
            {
                "tenant": tenant,
                "ids": list(ids),
                "types": list(RELATION_TYPES),
                "asOf": moment.as_of,
                "validAt": moment.valid_at,
            },
        )
        return {str(r["id"]): [str(c) for c in r["closers"]] for r in records}


def _cosines(rows: MemoryRows) -> MemoryRows:
    # Neo4j reports cosine as (1 + cos) / 2; relevance is the cosine itself.
    scores = [max(0.0, min(1.0, 2.0 * s - 1.0)) for s in rows.scores]
    return dataclasses.replace(rows, scores=scores)


#: how much wider than the hits wanted a probe of a tenant's own index is at a moment
MOMENT_OVERFETCH = 3


def _whole_tenant(params: dict[str, Any]) -> bool:
    """Whether a probe's filter keeps every memory of the tenant's (every graph tier)."""
    return (
        params["sessionId"] is None
        and params["userId"] is None
        and params["types"] is None
        and set(GRAPH_TIERS) <= set(params["tiers"])
    )
