"""Tasks, steps, episodes and reflections in Neo4j, by named Cypher."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from graphmem.domain.models import EmbeddingSpace
from graphmem.domain.moments import NOW, Moment
from graphmem.stores.models import (
    Episode,
    EpisodeSteps,
    OwnedTask,
    Reflection,
    ScoredEpisode,
    Step,
    Task,
    TaskDetail,
    Transfer,
    TransferOutcome,
)
from graphmem.stores.neo4j import records_kinds as parse
from graphmem.stores.neo4j.session import Neo4jSession


class Neo4jEpisodeStore:
    def __init__(self, graph: Neo4jSession) -> None:
        self.graph = graph

    async def create_task(
        self,
        tenant: str,
        task_id: str,
        description: str,
        owner: str | None,
        embedding: Sequence[float],
        now: datetime,
        model: str,
    ) -> Task:
        records = await self.graph.run(
            "episode/create_task",
            {
                "tenant": tenant,
                "id": task_id,
                "description": description,
                "owner": owner,
                "embedding": list(embedding),
                "now": now,
                "model": model,
            },
        )
        return parse.task(records[0]["task"])

    async def add_step(self, tenant: str, task_id: str, step: dict[str, Any]) -> Step | None:
        records = await self.graph.run(
            "episode/add_step", {"tenant": tenant, "taskId": task_id, **step}
        )
        return parse.step(records[0]["step"]) if records else None

    async def complete_task(
        self, tenant: str, task_id: str, status: str, now: datetime
    ) -> Task | None:
        records = await self.graph.run(
            "episode/complete_task",
            {"tenant": tenant, "taskId": task_id, "status": status, "now": now},
        )
        return parse.task(records[0]["task"]) if records else None

    async def transfer(
        self, tenant: str, task_id: str, transfer: dict[str, Any]
    ) -> TransferOutcome | None:
        records = await self.graph.run(
            "episode/transfer_task",
            {"tenant": tenant, "taskId": task_id, **transfer},
        )
        return parse.transfer_outcome(records[0]) if records else None

    async def transfers(self, tenant: str, task_id: str) -> list[Transfer]:
        records = await self.graph.run("episode/transfers", {"tenant": tenant, "taskId": task_id})
        return [parse.transfer(r["transfer"]) for r in records]

    async def get_task(self, tenant: str, task_id: str) -> TaskDetail | None:
        records = await self.graph.run("episode/get_task", {"tenant": tenant, "taskId": task_id})
        return parse.task_detail(records[0]) if records else None

    async def owned_tasks(
        self, tenant: str, owner: str, after: str | None, limit: int
    ) -> list[OwnedTask]:
        records = await self.graph.run(
            "episode/owned_tasks",
            {"tenant": tenant, "owner": owner, "after": after, "limit": limit},
        )
        return [parse.owned_task(r) for r in records]

    async def import_task(self, tenant: str, task: dict[str, Any]) -> tuple[Task, bool] | None:
        """The task as imported (or found from an earlier run) and whether it is new; None
        when a tombstone keeps it out (the task, or its owner, was forgotten)."""
        records = await self.graph.run("episode/import_task", {"tenant": tenant, **task})
        if not records:
            return None
        return parse.task(records[0]["task"]), bool(records[0]["created"])

    async def record_episode(self, tenant: str, episode: dict[str, Any]) -> Episode | None:
        records = await self.graph.run("episode/record_episode", {"tenant": tenant, **episode})
        return parse.episode(records[0]["episode"]) if records else None

    async def similar(
        self,
        tenant: str,
        embedding: Sequence[float],
        signature: str | None,
        boost: float,
        limit: int,
        space: EmbeddingSpace,
        moment: Moment = NOW,
        scale: tuple[float, float] = (0.0, 1.0),
    ) -> list[ScoredEpisode]:
        """``space``: the model of ``embedding`` (only its episodes are compared);
        ``scale``: the cosines that map to similarity 0 and 1 before the boost (the
        embedder's relevance scale, ``memory/search/relevance.py``)."""
        records = await self.graph.run(
            "episode/similar",
            {
                "tenant": tenant,
                "embedding": list(embedding),
                "signature": signature,
                "boost": boost,
                "limit": limit,
                "floor": scale[0],
                "ceiling": scale[1],
                **space.params(),
                **moment.params(),
            },
        )
        return [parse.scored_episode(r) for r in records]

    async def with_steps(self, tenant: str, signature: str | None) -> list[EpisodeSteps]:
        records = await self.graph.run(
            "episode/with_steps", {"tenant": tenant, "signature": signature}
        )
        return [parse.episode_steps(r) for r in records]

    async def upsert_reflection(self, tenant: str, reflection: dict[str, Any]) -> Reflection | None:
        """None when it drew on an episode a forgetTask tombstoned (nothing written)."""
        records = await self.graph.run(
            "episode/upsert_reflection", {"tenant": tenant, **reflection}
        )
        return parse.reflection(records[0]["reflection"]) if records else None

    async def reflections(
        self, tenant: str, kind: str | None, signature: str | None
    ) -> list[Reflection]:
        records = await self.graph.run(
            "episode/reflections", {"tenant": tenant, "kind": kind, "signature": signature}
        )
        return [parse.reflection(r["reflection"]) for r in records]
