"""The Neo4j graph store: warm and cold memories, and the long-term indexes.

Searching them is ``search`` (``search.py``) and scope-wide scans for reports and
maintenance are ``scans`` (``scans.py``); both run on this store's driver.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from neo4j import AsyncDriver
from neo4j.api import AsyncBookmarkManager

from graphmem.domain.models import LEGACY_EMBEDDING_MODEL, EmbeddingSpace, MemoryItem
from graphmem.stores import GraphErasure, GraphScans, GraphSearch, GraphSpaces
from graphmem.stores.models import (
    GraphMemory,
    Located,
    MemoryVectors,
    Removed,
    TextAnalysis,
    UserRemoved,
)
from graphmem.stores.neo4j import record_fields
from graphmem.stores.neo4j.erasure import Neo4jGraphErasure
from graphmem.stores.neo4j.fulltext import TenantFulltext
from graphmem.stores.neo4j.library import CypherLibrary
from graphmem.stores.neo4j.records import index_states, memory_item, parsed, removed, row_ids
from graphmem.stores.neo4j.rows import analysis_row, memory_row, pack_vector, vector_row
from graphmem.stores.neo4j.scans import Neo4jGraphScans
from graphmem.stores.neo4j.search import Neo4jGraphSearch
from graphmem.stores.neo4j.session import Neo4jSession
from graphmem.stores.neo4j.spaces import Neo4jSpaces, model_stripe

VECTOR_BYTES_MIGRATION = "memory-vector-bytes"
SPACES_MIGRATION = "embedding-spaces"
INDEX_NAMES = ["memory_embedding"]  # the fulltext indexes are per tenant (fulltext.py)


class Neo4jGraphStore(Neo4jSession):
    def __init__(
        self,
        driver: AsyncDriver,
        cypher: CypherLibrary,
        database: str = "neo4j",
        bookmarks: AsyncBookmarkManager | None = None,
    ):
        super().__init__(driver, cypher, database, bookmarks)
        self.fulltext = TenantFulltext(self)
        # Declared as the protocol types: GraphStore's attributes are settable, so a
        # structural match needs these exact types.
        self.search: GraphSearch = Neo4jGraphSearch(self, self.fulltext)
        self.scans: GraphScans = Neo4jGraphScans(self)
        self.spaces: GraphSpaces = Neo4jSpaces(self)
        self.erasure: GraphErasure = Neo4jGraphErasure(self)

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
        await self.run("admin/await_indexes", {"timeoutSeconds": 300})
        await self.fulltext.migrate()
        await self.backfill_vector_bytes()
        # before any write can claim a tenant for the model this process embeds with
        legacy = EmbeddingSpace(LEGACY_EMBEDDING_MODEL, dimension)
        await self._once(SPACES_MIGRATION, lambda: self.spaces.tag_legacy(legacy))
        await self._once(record_fields.MIGRATION, self.backfill_record_fields)
        return applied

    async def provision(self, tenants: Sequence[str]) -> list[str]:
        """Create the per-tenant indexes these tenants lack (``fulltext.provision``:
        why before they are used); the names of those created."""
        return await self.fulltext.provision(tenants)

    async def _once(self, name: str, migration: Callable[[], Awaitable[int]]) -> None:
        """Run a one-off data migration unless the database records it as done."""
        (row,) = await self.run("admin/migration_done", {"name": name})
        if not row["done"]:
            await migration()
            await self.run("admin/migration_mark", {"name": name})

    async def backfill_record_fields(self) -> int:
        """Move records stored with a property per field to field tokens
        (``record_fields``); how many it rewrote."""
        return await record_fields.backfill(self)

    async def backfill_vector_bytes(self, batch: int = 2000) -> int:
        """Once per database: give memories embedded before ``vectorBytes`` existed their
        float32 bytes (search reads those; the list of floats is a hundred times slower
        to decode). Search falls back on the list for any memory still without them."""
        marker = {"name": VECTOR_BYTES_MIGRATION}
        (row,) = await self.run("admin/migration_done", marker)
        if row["done"]:
            return 0
        done = 0
        for tenant in await self.tenants():
            params = {"tenant": tenant, "batch": batch}
            while rows := await self.run("memory/vector_bytes_missing", params):
                updates = [
                    {"id": r["id"], "vectorBytes": pack_vector(r["embedding"])} for r in rows
                ]
                await self.run("memory/vector_bytes_set", {"tenant": tenant, "rows": updates})
                done += len(updates)
        await self.run("admin/migration_mark", marker)
        return done

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
            await self.run("admin/scope_tokens_set", {"rows": updates})
            done += len(updates)
        return done

    async def backfill_terms(
        self, analyse: Callable[[str], TextAnalysis], version: int, batch: int = 2000
    ) -> int:
        """Give memories analysed by no or another version of ``enrich/lexical.py`` the
        properties ``analyse`` derives from their content."""
        done = 0
        for record in await self.run("admin/memory_tenants", {}):
            tenant, after = record["tenant"], ""
            params = {"tenant": tenant, "batch": batch, "termVersion": version}
            while rows := await self.run("admin/term_bytes_missing", params | {"after": after}):
                updates = [
                    {"tenant": tenant, "id": r["id"], **analysis_row(analyse(r["content"] or ""))}
                    for r in rows
                ]
                await self.run("admin/term_bytes_set", {"rows": updates, "termVersion": version})
                done += len(updates)
                after = rows[-1]["id"]
        return done

    async def index_state(self, names: Sequence[str] = INDEX_NAMES) -> dict[str, dict[str, Any]]:
        return index_states(await self.run("admin/index_state", {"names": list(names)}))

    # --- memories ---------------------------------------------------------------------
    async def upsert(
        self, tenant: str, memories: Sequence[GraphMemory], space: EmbeddingSpace
    ) -> list[str]:
        """``space``: the model of the memories' vectors (not written if the tenant holds
        another's)."""
        if not memories:
            return []
        _, label = await self.fulltext.ensure(tenant)
        items = [memory_row(m) for m in memories]
        records = await self.run(
            "memory/upsert_batch",
            {
                "tenant": tenant,
                "label": label,
                "items": items,
                "stripe": model_stripe(),
                **space.params(),
            },
        )
        return row_ids(records)

    async def upsert_hot(self, tenant: str, memories: Sequence[GraphMemory]) -> list[str]:
        """Write hot items behind as 'hot' nodes without vectors (existing nodes stay)."""
        if not memories:
            return []
        _, label = await self.fulltext.ensure(tenant)
        items = [memory_row(m) for m in memories]
        records = await self.run(
            "memory/upsert_hot",
            {"tenant": tenant, "label": label, "items": items},
        )
        return row_ids(records)

    async def set_vectors(
        self, tenant: str, vectors: Sequence[MemoryVectors], space: EmbeddingSpace
    ) -> list[str]:
        """Vectors of nodes that exist (written only if the tenant holds ``space``'s
        vectors); returns their ids."""
        if not vectors:
            return []
        rows = [vector_row(v) for v in vectors]
        records = await self.run(
            "memory/set_vectors",
            {"tenant": tenant, "rows": rows, "stripe": model_stripe(), **space.params()},
        )
        return row_ids(records)

    async def record_access(
        self,
        tenant: str,
        hits: Sequence[tuple[str, float]],
        now: datetime,
        warm_access_threshold: int,
    ) -> list[tuple[MemoryItem, str]]:
        """The hits' accesses counted; each item as it is now, with its tier before."""
        if not hits:
            return []
        (record,) = await self.run(
            "memory/record_access",
            {
                "tenant": tenant,
                "hits": [{"id": i, "score": s} for i, s in hits],
                "now": now,
                "warmAccessThreshold": warm_access_threshold,
            },
        )
        return parsed(record["memories"], lambda m: (memory_item(tenant, m), str(m["was"])))

    async def get(self, tenant: str, ids: Sequence[str]) -> list[MemoryItem]:
        (record,) = await self.run("memory/get_by_ids", {"tenant": tenant, "ids": list(ids)})
        return parsed(record["memories"], lambda m: memory_item(tenant, m))

    async def unenriched(self, tenant: str, ids: Sequence[str]) -> list[MemoryItem]:
        """Those of ``ids`` in the graph without vectors (a spill left them to a worker)."""
        (record,) = await self.run("memory/unenriched", {"tenant": tenant, "ids": list(ids)})
        return parsed(record["memories"], lambda m: memory_item(tenant, m))

    async def mark_hot(self, tenant: str, ids: Sequence[str], now: datetime) -> list[str]:
        records = await self.run(
            "memory/mark_hot", {"tenant": tenant, "ids": list(ids), "now": now}
        )
        return row_ids(records)

    async def retract(
        self, tenant: str, ids: Sequence[str], reason: str, now: datetime
    ) -> list[tuple[Located, bool]]:
        """Mark memories retracted at ``now`` (``memory/retract``): where each lives, and
        whether this call retracted it (False: it already was)."""
        records = await self.run(
            "memory/retract", {"tenant": tenant, "ids": list(ids), "reason": reason, "now": now}
        )
        return [((r["id"], r["sessionId"], r["userId"]), bool(r["changed"])) for r in records]

    async def unretract(
        self, tenant: str, ids: Sequence[str], now: datetime
    ) -> list[tuple[Located, bool]]:
        """Hold retracted memories again from ``now``, the retraction kept as a past span."""
        records = await self.run(
            "memory/unretract", {"tenant": tenant, "ids": list(ids), "now": now}
        )
        return [((r["id"], r["sessionId"], r["userId"]), bool(r["changed"])) for r in records]

    async def tenants(self) -> list[str]:
        return [r["tenant"] for r in await self.run("admin/tenants", {})]

    async def delete_many(self, tenant: str, ids: Sequence[str]) -> Removed:
        """Delete memories."""
        return removed(await self.run("memory/delete_many", {"tenant": tenant, "ids": list(ids)}))

    async def forget_user(self, tenant: str, user_id: str) -> UserRemoved:
        """Delete a user's memories, empty sessions and node."""
        memory_ids = row_ids(
            await self.run("user/memory_ids", {"tenant": tenant, "userId": user_id})
        )
        keys: set[str] = set()
        located: list[Located] = []
        count = 0
        for start in range(0, len(memory_ids), 500):
            done = await self.delete_many(tenant, memory_ids[start : start + 500])
            count += done.removed
            keys.update(done.keys)
            located += done.located
        (rest,) = await self.run("user/remove", {"tenant": tenant, "userId": user_id})
        return UserRemoved(
            removed=count, keys=sorted(keys), located=located, sessions=int(rest["sessions"])
        )

    async def delete(self, tenant: str, item_id: str) -> list[str] | None:
        """Delete a memory; None when there was none, else the keys of the entities it
        mentioned (their counts need a refresh)."""
        done = await self.delete_many(tenant, [item_id])
        return [str(k) for k in done.keys] if done.removed else None
