"""Tasks, steps, episodes and reflections in Neo4j (seeds 002 and 003), by named Cypher."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .graph import Neo4jGraphStore


class EpisodeStore:
    def __init__(self, graph: Neo4jGraphStore) -> None:
        self.graph = graph

    async def create_task(
        self,
        tenant: str,
        task_id: str,
        description: str,
        owner: str | None,
        embedding: Sequence[float],
        now: datetime,
    ) -> dict[str, Any]:
        records = await self.graph.run(
            "episode/create_task",
            {
                "tenant": tenant,
                "id": task_id,
                "description": description,
                "owner": owner,
                "embedding": list(embedding),
                "now": now,
            },
            write=True,
        )
        return dict(records[0]["task"])

    async def add_step(
        self, tenant: str, task_id: str, step: dict[str, Any]
    ) -> dict[str, Any] | None:
        records = await self.graph.run(
            "episode/add_step", {"tenant": tenant, "taskId": task_id, **step}, write=True
        )
        return dict(records[0]["step"]) if records else None

    async def complete_task(
        self, tenant: str, task_id: str, status: str, now: datetime
    ) -> dict[str, Any] | None:
        records = await self.graph.run(
            "episode/complete_task",
            {"tenant": tenant, "taskId": task_id, "status": status, "now": now},
            write=True,
        )
        return dict(records[0]["task"]) if records else None

    async def transfer(
        self, tenant: str, task_id: str, transfer: dict[str, Any]
    ) -> dict[str, Any] | None:
        records = await self.graph.run(
            "episode/transfer_task",
            {"tenant": tenant, "taskId": task_id, **transfer},
            write=True,
        )
        return dict(records[0]) if records else None

    async def transfers(self, tenant: str, task_id: str) -> list[dict[str, Any]]:
        records = await self.graph.run("episode/transfers", {"tenant": tenant, "taskId": task_id})
        return [dict(r["transfer"]) for r in records]

    async def get_task(self, tenant: str, task_id: str) -> dict[str, Any] | None:
        records = await self.graph.run("episode/get_task", {"tenant": tenant, "taskId": task_id})
        return dict(records[0]) if records else None

    async def record_episode(self, tenant: str, episode: dict[str, Any]) -> dict[str, Any] | None:
        records = await self.graph.run(
            "episode/record_episode", {"tenant": tenant, **episode}, write=True
        )
        return dict(records[0]["episode"]) if records else None

    async def similar(
        self,
        tenant: str,
        embedding: Sequence[float],
        signature: str | None,
        boost: float,
        limit: int,
    ) -> list[dict[str, Any]]:
        records = await self.graph.run(
            "episode/similar",
            {
                "tenant": tenant,
                "embedding": list(embedding),
                "signature": signature,
                "boost": boost,
                "limit": limit,
            },
        )
        return [dict(r) for r in records]

    async def with_steps(self, tenant: str, signature: str | None) -> list[dict[str, Any]]:
        records = await self.graph.run(
            "episode/with_steps", {"tenant": tenant, "signature": signature}
        )
        return [dict(r) for r in records]

    async def upsert_reflection(self, tenant: str, reflection: dict[str, Any]) -> dict[str, Any]:
        records = await self.graph.run(
            "episode/upsert_reflection", {"tenant": tenant, **reflection}, write=True
        )
        return dict(records[0]["reflection"])

    async def reflections(
        self, tenant: str, kind: str | None, signature: str | None
    ) -> list[dict[str, Any]]:
        records = await self.graph.run(
            "episode/reflections", {"tenant": tenant, "kind": kind, "signature": signature}
        )
        return [dict(r["reflection"]) for r in records]
