"""LangGraph store items in Neo4j (``cypher/item``): one ``:StoreItem`` node per
(tenant, namespace path, key), written by MERGE under a uniqueness constraint, searched
through the tenant's own item fulltext index and by cosine under a namespace prefix."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import neo4j

from graphmem.domain.models import tenant_item_fulltext, to_datetime
from graphmem.stores.models_items import (
    ItemText,
    ItemTextHits,
    ItemVector,
    ItemWrite,
    StoredItem,
)
from graphmem.stores.neo4j.fulltext import create_tenant_index
from graphmem.stores.neo4j.session import Neo4jSession


def _item(record: neo4j.Record, score: float | None = None) -> StoredItem:
    return StoredItem(
        path=record["path"],
        key=record["key"],
        value=record["value"],
        created_at=to_datetime(record["createdAt"]),
        updated_at=to_datetime(record["updatedAt"]),
        score=score,
    )


class Neo4jItemStore:
    def __init__(self, graph: Neo4jSession) -> None:
        self.graph = graph
        self._indexed: set[str] = set()
        self._creating: dict[str, asyncio.Lock] = {}

    async def _ensure_index(self, tenant: str) -> tuple[str, str]:
        """The tenant's item fulltext index and label, the index created on first use
        (idempotent: several processes may race to create it)."""
        index, label = tenant_item_fulltext(tenant)
        if tenant in self._indexed:
            return index, label
        # One creation at a time per tenant (the requests behind it then find it); not
        # one for the process: a tenant whose index takes its minute to come online
        # held up every other tenant's first item write.
        lock = self._creating.setdefault(tenant, asyncio.Lock())
        async with lock:
            if tenant not in self._indexed:
                await create_tenant_index(
                    self.graph, "tenant/item_fulltext_index", index, label, {}
                )
                await self.graph.run("admin/await_index", {"name": index, "timeoutSeconds": 60})
                self._indexed.add(tenant)
                self._creating.pop(tenant, None)
        return index, label

    async def write(
        self, tenant: str, writes: Sequence[ItemWrite], now: datetime, model: str
    ) -> int:
        """Apply puts and deletes in one transaction; how many items were written or
        deleted. Puts go in (path, key) order so that concurrent batches lock alike.
        ``model``: the embedder's, whose vector of an unchanged text a put keeps."""
        _, label = await self._ensure_index(tenant)
        puts: list[dict[str, Any]] = [
            {
                "path": w.path,
                "key": w.key,
                "value": w.value,
                "text": w.text,
                "scope": w.scope,
                "embedding": w.embedding,
                "model": w.model,
                "userId": w.user_id,
                "due": w.vector_due,
                "createdAt": w.created_at,
                "updatedAt": w.updated_at,
            }
            for w in sorted(writes, key=lambda w: (w.path, w.key))
            if w.value is not None
        ]
        deletes = [{"path": w.path, "key": w.key} for w in writes if w.value is None]
        (row,) = await self.graph.run(
            "item/write",
            {
                "tenant": tenant,
                "label": label,
                "puts": puts,
                "deletes": deletes,
                "now": now,
                "model": model,
            },
        )
        return int(row["written"]) + int(row["deleted"])

    async def get(self, tenant: str, keys: Sequence[tuple[str, str]]) -> list[StoredItem | None]:
        rows = [{"i": i, "path": p, "key": k} for i, (p, k) in enumerate(keys)]
        records = await self.graph.run("item/get", {"tenant": tenant, "rows": rows})
        found: list[StoredItem | None] = [None] * len(keys)
        for record in records:
            if record["path"] is not None:
                found[int(record["i"])] = _item(record)
        return found

    async def page(self, tenant: str, prefix: str, skip: int, first: int) -> list[StoredItem]:
        records = await self.graph.run(
            "item/page", {"tenant": tenant, "prefix": prefix, "skip": skip, "first": first}
        )
        return [_item(r) for r in records]

    async def scan(
        self, tenant: str, prefix: str, after_path: str, after_key: str, first: int
    ) -> list[StoredItem]:
        records = await self.graph.run(
            "item/scan",
            {
                "tenant": tenant,
                "prefix": prefix,
                "afterPath": after_path,
                "afterKey": after_key,
                "first": first,
            },
        )
        return [_item(r) for r in records]

    async def text_hits(
        self, tenant: str, prefix: str, lucene: str | None, k: int, cap: int, chars: int
    ) -> ItemTextHits:
        """The top ``k`` by BM25 under the prefix (none without ``lucene``), and the
        items there whose vector is still due (``pending_hits``), in one round trip."""
        if lucene is None:
            return ItemTextHits(due=await self.pending_hits(tenant, prefix, cap, chars))
        index, label = await self._ensure_index(tenant)
        records = await self.graph.run(
            "item/text_hits",
            {
                "tenant": tenant,
                "index": index,
                "label": label,
                "prefix": prefix,
                "lucene": lucene,
                "k": k,
                "cap": cap,
                "chars": chars,
            },
        )
        hits, texts = [], []
        due: list[tuple[StoredItem, str]] = []
        unindexed: list[tuple[StoredItem, str]] = []
        for r in records:
            text = str(r["text"] or "")
            if r["score"] is not None:
                hits.append(_item(r, float(r["score"])))
                texts.append(text)
                continue
            item = _item(r)
            due.append((item, text[:chars]))
            if not r["indexed"]:
                unindexed.append((item, text))
        return ItemTextHits(hits=hits, texts=texts, due=due, unindexed=unindexed)

    async def vector_hits(
        self, tenant: str, prefix: str, vector: list[float], model: str, k: int, cap: int
    ) -> list[StoredItem]:
        """The ``k`` items nearest ``vector`` under the prefix, scored by cosine in
        [-1, 1]: exact over up to ``cap`` items, else through the vector index."""
        params = {"tenant": tenant, "prefix": prefix, "vector": vector, "model": model, "k": k}
        records = await self.graph.run("item/vector_exact", {**params, "cap": cap})
        if records and int(records[0]["seen"]) >= cap:
            records = await self.graph.run(
                "item/vector_index", {**params, "k": min(max(k * 20, 200), 4096)}
            )
            records = records[:k]
        # Neo4j's cosine similarity is (1 + cos) / 2
        return [_item(r, 2 * float(r["score"]) - 1) for r in records]

    async def paths(self, tenant: str, prefix: str, after: str, first: int) -> list[str]:
        records = await self.graph.run(
            "item/paths", {"tenant": tenant, "prefix": prefix, "after": after, "first": first}
        )
        return [str(r["path"]) for r in records]

    # --- vectors set after the put (memory/kinds/items/vectors.py) ----------------------
    async def pending_hits(
        self, tenant: str, prefix: str, cap: int, chars: int
    ) -> list[tuple[StoredItem, str]]:
        """Items under the prefix whose vector is still due, newest first, with the text
        to embed (its first ``chars`` characters)."""
        records = await self.graph.run(
            "item/pending_hits",
            {"tenant": tenant, "prefix": prefix, "cap": cap, "chars": chars},
        )
        return [(_item(r), str(r["text"])) for r in records]

    async def vectors_due(
        self, tenant: str, before: datetime, first: int, chars: int
    ) -> list[ItemText]:
        records = await self.graph.run(
            "item/vectors_due",
            {"tenant": tenant, "before": before, "first": first, "chars": chars},
        )
        return [ItemText(path=r["path"], key=r["key"], text=r["text"]) for r in records]

    async def set_vectors(
        self, tenant: str, rows: Sequence[ItemVector], model: str, chars: int
    ) -> int:
        """Set each row's vector if its item still holds the text it was computed from;
        how many were set."""
        _, label = await self._ensure_index(tenant)
        (row,) = await self.graph.run(
            "item/vectors_set",
            {
                "tenant": tenant,
                "label": label,
                "model": model,
                "chars": chars,
                "rows": [
                    {"path": r.path, "key": r.key, "text": r.text, "embedding": r.embedding}
                    for r in sorted(rows, key=lambda r: (r.path, r.key))
                ],
            },
        )
        return int(row["set"])

    async def vector_tenants(self, before: datetime, first: int) -> list[str]:
        records = await self.graph.run(
            "admin/item_vector_tenants", {"before": before, "first": first}
        )
        return [str(r["tenant"]) for r in records]
