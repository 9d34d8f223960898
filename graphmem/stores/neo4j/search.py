"""Searching the graph store's memories: BM25 through the tenant's fulltext index,
nearest neighbours (exact in a small scope, the shared vector index beyond), the scores
recall fuses, the turns around a hit and the memories that mention an entity.

Reached as ``Neo4jGraphStore.search``; runs on the store's driver.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import neo4j

from ...errors import GraphmemError, Unavailable
from ...models import MemoryItem, MemoryType, Tier
from .fulltext import TenantFulltext
from .records import memory_item, parsed
from .session import Neo4jSession

# Search ranks every node: warm and cold ones, and the 'hot' copies of items still in
# Redis (written behind, or promoted), so an item is findable whatever its tier.
GRAPH_TIERS = (Tier.HOT.value, Tier.WARM.value, Tier.COLD.value)


class Neo4jGraphSearch:
    def __init__(self, session: Neo4jSession, fulltext: TenantFulltext) -> None:
        self._session = session
        # The store's, so that an index ensured by a write is known to searches too.
        self._fulltext = fulltext

    #: below this many memories in a scope, recall ranks them exactly instead of via ANN
    exact_scan_limit = 20_000

    async def vector_search(
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
    ) -> list[tuple[MemoryItem, float]]:
        """Scoped nearest neighbours, scored by cosine similarity in [0, 1]. A session or
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
        }
        if session_id is not None or user_id is not None:
            if scope_size is None:
                scope_size = await self.scope_size(tenant, session_id, user_id, tiers)
            if scope_size <= self.exact_scan_limit:
                exact = (
                    "memory/vector_exact_session"
                    if session_id is not None
                    else "memory/vector_exact_user"
                )
                records = await self._session.run(exact, params)
                return parsed(records, lambda r: self._scored(tenant, r))
        # The index is shared across tenants: over-fetch, and widen until the scope
        # filter leaves enough hits or the whole index has been looked at. The first probe
        # is small (HNSW's cost grows with k); a tenant that owns a small share of the
        # index pays for one or two wider probes.
        k = max(limit * 2, 100)
        while True:
            records = await self._session.run("memory/vector_search_index", {**params, "k": k})
            if len(records) >= limit or k >= 100_000:
                return parsed(records, lambda r: self._scored(tenant, r))
            k *= 10

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

    async def fulltext_search(
        self,
        tenant: str,
        lucene: str,
        limit: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        types: Sequence[MemoryType] | None = None,
        tiers: Sequence[str] = GRAPH_TIERS,
    ) -> list[tuple[MemoryItem, float]]:
        """(memory, BM25 score) through the fulltext index; ``lucene`` already pins the
        scope's tokens, so little is filtered afterwards (hot-tier nodes, types)."""
        params = {
            "tenant": tenant,
            "lucene": lucene,
            "sessionId": session_id,
            "userId": user_id,
            "tiers": list(tiers),
            "types": [t.value for t in types] if types else None,
            "k": limit * 2,
            "limit": limit,
        }
        index, _ = await self._fulltext.ensure(tenant)
        try:
            records = await self._session.run("memory/fulltext_search", params | {"index": index})
        except Unavailable:
            raise
        except GraphmemError:
            # The index this process knew may have been dropped since (by an operator,
            # a restore): create it again, once, before giving up.
            self._fulltext.forget(tenant)
            index, _ = await self._fulltext.ensure(tenant)
            records = await self._session.run("memory/fulltext_search", params | {"index": index})
        return parsed(records, lambda r: (memory_item(tenant, r["memory"]), float(r["score"])))

    async def candidate_scores(
        self,
        tenant: str,
        ids: Sequence[str],
        embedding: Sequence[float],
        cosine_ids: Sequence[str] = (),
    ) -> dict[str, tuple[float | None, bytes | None]]:
        """id → (cosine to the query for ``cosine_ids``, packed sentence vectors or None)."""
        if not ids:
            return {}
        records = await self._session.run(
            "memory/candidate_scores",
            {
                "tenant": tenant,
                "ids": list(ids),
                "cosineIds": list(cosine_ids),
                "embedding": list(map(float, embedding)),
            },
        )
        return {
            r["id"]: (
                None if r["cosine"] is None else float(r["cosine"]),
                None if r["vectors"] is None else bytes(r["vectors"]),
            )
            for r in records
        }

    async def neighbours(
        self,
        tenant: str,
        ids: Sequence[str],
        embedding: Sequence[float],
        window: int = 1,
        tiers: Sequence[str] = GRAPH_TIERS,
    ) -> list[tuple[str, MemoryItem, float, bytes | None]]:
        """(of, neighbour, cosine to the query, packed sentence vectors) for the turns
        around each memory."""
        if not ids:
            return []
        records = await self._session.run(
            "memory/neighbours",
            {
                "tenant": tenant,
                "ids": list(ids),
                "embedding": list(map(float, embedding)),
                "window": window,
                "tiers": list(tiers),
            },
        )
        return parsed(
            records,
            lambda r: (
                r["of"],
                memory_item(tenant, r["memory"]),
                float(r["cosine"] or 0.0),
                None if r["vectors"] is None else bytes(r["vectors"]),
            ),
        )

    async def memories_mentioning(
        self,
        tenant: str,
        keys: Sequence[str],
        limit: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        tiers: Sequence[str] = GRAPH_TIERS,
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
            },
        )
        return {r["id"]: int(r["matched"]) for r in records}

    @staticmethod
    def _scored(tenant: str, record: neo4j.Record) -> tuple[MemoryItem, float]:
        # Neo4j reports cosine as (1 + cos) / 2; relevance is the cosine itself.
        cosine = 2.0 * float(record["score"]) - 1.0
        return memory_item(tenant, record["memory"]), max(0.0, min(1.0, cosine))
