"""The Neo4j graph store: warm and cold memories, and the long-term indexes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import neo4j
from neo4j import AsyncDriver

from ...cypher import CypherLibrary
from ...models import MemoryItem, MemoryType, Tier, TierCount
from .fulltext import TenantFulltext
from .records import memory_item, parsed
from .session import Neo4jSession

GRAPH_TIERS = (Tier.WARM.value, Tier.COLD.value)
INDEX_NAMES = ["memory_embedding"]  # the fulltext indexes are per tenant (fulltext.py)


class Neo4jGraphStore(Neo4jSession):
    def __init__(self, driver: AsyncDriver, cypher: CypherLibrary, database: str = "neo4j"):
        super().__init__(driver, cypher, database)
        self.fulltext = TenantFulltext(self)

    #: below this many memories in a scope, recall ranks them exactly instead of via ANN
    exact_scan_limit = 20_000

    # --- lifecycle --------------------------------------------------------------------
    async def ping(self) -> None:
        await self.run("admin/ping", {})

    async def migrate(self, dimension: int) -> list[str]:
        """Apply every ``cypher/schema`` file in order; all statements are IF NOT EXISTS."""
        applied = []
        for name in self._cypher.names("schema"):
            for statement in self._cypher.statements(name):
                await self.run_schema(statement, {"dimension": dimension})
            applied.append(name)
        await self.run("admin/await_indexes", {"timeoutSeconds": 300}, write=True)
        await self.fulltext.migrate()
        return applied

    async def backfill_scope_tokens(
        self, tokens: Callable[[str, str | None, str | None], str], batch: int = 5000
    ) -> int:
        """Give memories written before session and user scope tokens existed their full
        ``scopeToken`` (tokens are hashes, computed here rather than in Cypher)."""
        done = 0
        while rows := await self.run("admin/scope_tokens_missing", {"batch": batch}):
            updates = [
                {
                    "tenant": r["tenant"],
                    "id": r["id"],
                    "scopeToken": tokens(r["tenant"], r["sessionId"], r["userId"]),
                }
                for r in rows
            ]
            await self.run("admin/scope_tokens_set", {"rows": updates}, write=True)
            done += len(updates)
        return done

    async def index_state(self, names: Sequence[str] = INDEX_NAMES) -> dict[str, dict[str, Any]]:
        records = await self.run("admin/index_state", {"names": list(names)})
        return {r["name"]: dict(r) for r in records}

    # --- memories ---------------------------------------------------------------------
    async def upsert(self, tenant: str, rows: Sequence[dict[str, Any]]) -> list[str]:
        if not rows:
            return []
        _, label = await self.fulltext.ensure(tenant)
        records = await self.run(
            "memory/upsert_batch",
            {"tenant": tenant, "label": label, "items": list(rows)},
            write=True,
        )
        return [r["id"] for r in records]

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
                records = await self.run(exact, params)
                return parsed(records, lambda r: self._scored(tenant, r))
        # The index is shared across tenants: over-fetch, and widen until the scope
        # filter leaves enough hits or the whole index has been looked at. The first probe
        # is small (HNSW's cost grows with k); a tenant that owns a small share of the
        # index pays for one or two wider probes.
        k = max(limit * 2, 100)
        while True:
            records = await self.run("memory/vector_search_index", {**params, "k": k})
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
        (row,) = await self.run(name, params)
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
        index, _ = await self.fulltext.ensure(tenant)
        records = await self.run(
            "memory/fulltext_search",
            {
                "tenant": tenant,
                "index": index,
                "lucene": lucene,
                "sessionId": session_id,
                "userId": user_id,
                "tiers": list(tiers),
                "types": [t.value for t in types] if types else None,
                "k": limit * 2,
                "limit": limit,
            },
        )
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
        records = await self.run(
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
        records = await self.run(
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
        records = await self.run(
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

    async def record_access(
        self,
        tenant: str,
        hits: Sequence[tuple[str, float]],
        now: datetime,
        warm_access_threshold: int,
    ) -> list[MemoryItem]:
        if not hits:
            return []
        records = await self.run(
            "memory/record_access",
            {
                "tenant": tenant,
                "hits": [{"id": i, "score": s} for i, s in hits],
                "now": now,
                "warmAccessThreshold": warm_access_threshold,
            },
            write=True,
        )
        return parsed(records, lambda r: memory_item(tenant, r["memory"]))

    async def get(self, tenant: str, ids: Sequence[str]) -> list[MemoryItem]:
        records = await self.run("memory/get_by_ids", {"tenant": tenant, "ids": list(ids)})
        return parsed(records, lambda r: memory_item(tenant, r["memory"]))

    async def mark_hot(self, tenant: str, ids: Sequence[str], now: datetime) -> list[str]:
        records = await self.run(
            "memory/mark_hot", {"tenant": tenant, "ids": list(ids), "now": now}, write=True
        )
        return [r["id"] for r in records]

    async def count_by_tier(self, tenant: str, session_id: str) -> dict[Tier, TierCount]:
        records = await self.run(
            "memory/count_by_tier", {"tenant": tenant, "sessionId": session_id}
        )
        counts = {Tier.WARM: TierCount(), Tier.COLD: TierCount()}
        for r in records:
            counts[Tier(r["tier"])] = TierCount(items=r["items"], tokens=r["tokens"])
        return counts

    async def tenants(self) -> list[str]:
        return [r["tenant"] for r in await self.run("admin/tenants", {})]

    async def demote_idle_warm(self, tenant: str, before: datetime, now: datetime) -> list[str]:
        records = await self.run(
            "memory/demote_idle_warm",
            {"tenant": tenant, "before": before, "now": now},
            write=True,
        )
        return [r["id"] for r in records]

    async def prune_candidates(
        self,
        tenant: str,
        tiers: Sequence[str],
        types: Sequence[str] | None,
        session_id: str | None,
        user_id: str | None,
    ) -> list[dict[str, Any]]:
        records = await self.run(
            "memory/prune_candidates",
            {
                "tenant": tenant,
                "tiers": list(tiers),
                "types": list(types) if types else None,
                "sessionId": session_id,
                "userId": user_id,
            },
        )
        return [dict(r) for r in records]

    async def delete_many(self, tenant: str, ids: Sequence[str]) -> dict[str, Any]:
        records = await self.run(
            "memory/delete_many", {"tenant": tenant, "ids": list(ids)}, write=True
        )
        return dict(records[0]) if records else {"removed": 0, "keys": []}

    async def stats(
        self, tenant: str, session_id: str | None, user_id: str | None
    ) -> list[dict[str, Any]]:
        records = await self.run(
            "memory/stats", {"tenant": tenant, "sessionId": session_id, "userId": user_id}
        )
        return [dict(r) for r in records]

    async def substring(
        self, tenant: str, needle: str, session_id: str | None, user_id: str | None, limit: int
    ) -> list[MemoryItem]:
        records = await self.run(
            "memory/substring",
            {
                "tenant": tenant,
                "needle": needle.lower(),
                "sessionId": session_id,
                "userId": user_id,
                "limit": limit,
            },
        )
        return parsed(records, lambda r: memory_item(tenant, r["memory"]))

    async def forget_user(self, tenant: str, user_id: str) -> dict[str, Any]:
        """Delete a user's memories, empty sessions and node; returns {keys, removed,
        sessions} with the keys of the entities those memories mentioned."""
        ids = [
            r["id"]
            for r in await self.run("user/memory_ids", {"tenant": tenant, "userId": user_id})
        ]
        keys: set[str] = set()
        removed = 0
        for start in range(0, len(ids), 500):
            done = await self.delete_many(tenant, ids[start : start + 500])
            removed += int(done["removed"])
            keys.update(done["keys"])
        (rest,) = await self.run("user/remove", {"tenant": tenant, "userId": user_id}, write=True)
        return {"keys": sorted(keys), "removed": removed, "sessions": int(rest["sessions"])}

    async def delete(self, tenant: str, item_id: str) -> list[str] | None:
        """Delete a memory; None when there was none, else the keys of the entities it
        mentioned (their counts need a refresh)."""
        done = await self.delete_many(tenant, [item_id])
        return [str(k) for k in done["keys"]] if done["removed"] else None
