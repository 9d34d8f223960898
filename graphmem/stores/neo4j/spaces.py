"""Which model's vectors each tenant holds, and the steps of `graphmem reembed`
(``memory/writepath/reembed.py``): the graph side of "one model per tenant" (docs/recall.md)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from graphmem.domain.models import EmbeddingSpace
from graphmem.stores.models import MemoryVectors
from graphmem.stores.neo4j.rows import vector_row
from graphmem.stores.neo4j.session import Neo4jSession

#: locks a tenant's vector writers take one of (memory/upsert_batch, memory/set_vectors)
#: and `graphmem reembed`'s flip takes all of (reembed/flip). More stripes, fewer writers
#: waiting for each other; a writer waits only for one holding its own stripe.
MODEL_STRIPES = 16


def model_stripe() -> int:
    """The model stripe a vector writer locks (any one: they differ only in which other
    writers they wait for)."""
    return random.randrange(MODEL_STRIPES)


class Neo4jSpaces:
    def __init__(self, graph: Neo4jSession) -> None:
        self.graph = graph

    async def of(self, tenant: str) -> str | None:
        (row,) = await self.graph.run("tenant/embedding_space", {"tenant": tenant})
        model: str | None = row["model"]
        return model

    async def all(self) -> dict[str, str]:
        rows = await self.graph.run("admin/embedding_spaces", {})
        return {r["tenant"]: r["model"] for r in rows}

    async def tag_legacy(self, space: EmbeddingSpace) -> int:
        (row,) = await self.graph.run("admin/embedding_spaces_legacy", space.params())
        return int(row["tenants"])

    async def count(self, tenant: str, space: EmbeddingSpace) -> tuple[int, int]:
        """The tenant's memories, and those with ``space``'s vectors (or next vectors)."""
        (row,) = await self.graph.run("reembed/memory_count", {"tenant": tenant, **space.params()})
        return int(row["total"]), int(row["done"])

    async def pending(
        self, tenant: str, space: EmbeddingSpace, after: str, batch: int
    ) -> list[tuple[str, str]]:
        rows = await self.graph.run(
            "reembed/memory_pending",
            {"tenant": tenant, "after": after, "batch": batch, **space.params()},
        )
        return [(r["id"], r["content"] or "") for r in rows]

    async def set_next(
        self, tenant: str, space: EmbeddingSpace, vectors: Sequence[MemoryVectors]
    ) -> int:
        rows = [vector_row(v) for v in vectors]
        (row,) = await self.graph.run(
            "reembed/memory_next", {"tenant": tenant, "rows": rows, **space.params()}
        )
        return int(row["written"])

    async def flip(self, tenant: str, space: EmbeddingSpace) -> None:
        await self.graph.run(
            "reembed/flip", {"tenant": tenant, "stripes": MODEL_STRIPES, **space.params()}
        )

    async def swap(self, tenant: str, space: EmbeddingSpace, batch: int) -> int:
        (row,) = await self.graph.run(
            "reembed/memory_swap", {"tenant": tenant, "batch": batch, **space.params()}
        )
        return int(row["swapped"])

    async def tasks_pending(
        self, tenant: str, space: EmbeddingSpace, batch: int
    ) -> list[tuple[str, str]]:
        """Tasks and episodes without ``space``'s vectors: (id, the text they embed)."""
        rows = await self.graph.run(
            "reembed/tasks_pending", {"tenant": tenant, "batch": batch, **space.params()}
        )
        out = []
        for r in rows:
            if r["task"]:
                text = r["description"] or ""
            else:  # as episodes.py embeds an episode
                text = " ".join([r["description"] or "", r["outcome"] or "", *(r["lessons"] or [])])
            out.append((r["id"], text))
        return out

    async def set_tasks(
        self, tenant: str, space: EmbeddingSpace, rows: Sequence[dict[str, Any]]
    ) -> int:
        (row,) = await self.graph.run(
            "reembed/tasks_set", {"tenant": tenant, "rows": list(rows), **space.params()}
        )
        return int(row["written"])
