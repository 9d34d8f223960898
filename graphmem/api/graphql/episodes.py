"""Episodic memory (docs/concepts.md#episodes): tasks, their steps and hand-overs,
episodes and reflections."""

from __future__ import annotations

from typing import Any, cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphmem.api.graphql.context import episodes_of
from graphmem.api.graphql.entity_types import (
    Episode,
    EpisodeInput,
    MappingVote,
    PriorKnowledge,
    Reflection,
    ScoredEpisode,
    Step,
    StepInput,
    Task,
    TaskHandle,
)
from graphmem.api.graphql.moments import AsOf, IncludeHistory, ValidAt
from graphmem.domain.moments import Moment
from graphmem.errors import BadInput
from graphmem.memory.episodes.memory import EpisodicMemory
from graphmem.memory.inputs import check_json


def string_map(value: Any, field: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise BadInput(f"{field}: an object of string values is required", field=field)
    return value


async def task_read(episodes: EpisodicMemory, tenant: str, task_id: str) -> Task:
    """A task as the API shows it: steps in order, episode ids, hand-overs."""
    found = await episodes.task(tenant, task_id)
    transfers = await episodes.transfers(tenant, task_id)
    return Task.of(found.task, found.steps, found.episodes, transfers)


@strawberry.type
class EpisodeQuery:
    @strawberry.field(description="A task with its steps in order and its episodes.")
    async def task(self, info: Info[Any, Any], id: strawberry.ID) -> Task:
        episodes, tenant = episodes_of(info)
        return await task_read(episodes, tenant, str(id))

    @strawberry.field(
        description="Episodes like the query, by cosine similarity (on the relevance scale "
        "every embedding model shares) plus a boost of 0.6 for "
        "an exact structure-signature match. asOf: only episodes recorded by then; validAt: "
        "only episodes that happened by then (createdAt); includeHistory changes nothing "
        "(an episode is never retracted)."
    )
    async def similar_episodes(
        self,
        info: Info[Any, Any],
        query: str,
        signature: str | None = None,
        limit: int = 5,
        as_of: AsOf = None,
        valid_at: ValidAt = None,
        include_history: IncludeHistory = False,
    ) -> list[ScoredEpisode]:
        episodes, tenant = episodes_of(info)
        moment = Moment.of(as_of, valid_at, include_history)
        rows = await episodes.similar(tenant, query, signature, limit, moment)
        return [ScoredEpisode.of(r) for r in rows]

    @strawberry.field(
        description="What similar episodes chose, by similarity-weighted voting: each key's "
        "winning value and its confidence. validValues drops stale choices first. asOf, "
        "validAt: only the episodes seen then vote, as in similarEpisodes."
    )
    async def prior_knowledge(
        self,
        info: Info[Any, Any],
        query: str,
        signature: str | None = None,
        limit: int = 5,
        valid_values: list[str] | None = None,
        as_of: AsOf = None,
        valid_at: ValidAt = None,
        include_history: IncludeHistory = False,
    ) -> PriorKnowledge:
        episodes, tenant = episodes_of(info)
        moment = Moment.of(as_of, valid_at, include_history)
        votes, rows = await episodes.prior_knowledge(
            tenant, query, signature, limit, valid_values, moment
        )
        return PriorKnowledge(
            votes=[
                MappingVote(
                    key=v.key,
                    value=v.value,
                    confidence=v.confidence,
                    votes=v.votes,
                    alternatives=cast(JSON, v.alternatives),
                )
                for v in votes
            ],
            episodes=[ScoredEpisode.of(r) for r in rows],
        )

    @strawberry.field(description="Stored reflections, newest first.")
    async def reflections(
        self, info: Info[Any, Any], kind: str | None = None, signature: str | None = None
    ) -> list[Reflection]:
        episodes, tenant = episodes_of(info)
        return [Reflection.of(r) for r in await episodes.reflections(tenant, kind, signature)]


@strawberry.type
class EpisodeMutation:
    @strawberry.mutation(description="Start a task (episodic memory).")
    async def create_task(
        self, info: Info[Any, Any], description: str, owner: str | None = None
    ) -> Task:
        episodes, tenant = episodes_of(info)
        return Task.of(await episodes.create_task(tenant, description, owner))

    @strawberry.mutation(
        description="Append a step to a task (HAS_STEP {order}, NEXT). A task with an owner "
        "takes steps only from its current handle: owner and generation."
    )
    async def add_step(
        self,
        info: Info[Any, Any],
        task_id: strawberry.ID,
        input: StepInput,
        owner: str | None = None,
        generation: int | None = None,
    ) -> Step:
        episodes, tenant = episodes_of(info)
        return Step.of(
            await episodes.add_step(
                tenant,
                str(task_id),
                input.action,
                input.result,
                input.status,
                owner=owner,
                generation=generation,
            )
        )

    @strawberry.mutation(
        description="Hand a task to its next owner (pipelines): only the current "
        "handle may; the generation goes up by one and the hand-over is audited. A stale "
        "handle gets FORBIDDEN naming the current owner and generation."
    )
    async def transfer_task(
        self,
        info: Info[Any, Any],
        task_id: strawberry.ID,
        to_owner: str,
        generation: int,
        from_owner: str | None = None,
        reason: str = "",
    ) -> TaskHandle:
        episodes, tenant = episodes_of(info)
        done = await episodes.transfer(
            tenant, str(task_id), from_owner, generation, to_owner, reason
        )
        return TaskHandle(task_id=task_id, owner=done["owner"], generation=done["generation"])

    @strawberry.mutation(description="Close a task with its final status.")
    async def complete_task(
        self, info: Info[Any, Any], task_id: strawberry.ID, status: str = "completed"
    ) -> Task:
        episodes, tenant = episodes_of(info)
        task = await episodes.complete_task(tenant, str(task_id), status)
        return Task.of(task)

    @strawberry.mutation(
        description="Record an episode: a task's outcome, signature, lessons, metrics and "
        "mappings. Without taskId, a task is created from description and steps."
    )
    async def record_episode(self, info: Info[Any, Any], input: EpisodeInput) -> Episode:
        episodes, tenant = episodes_of(info)
        if input.metrics is not None and not isinstance(input.metrics, dict):
            raise BadInput("metrics: an object is required", field="metrics")
        check_json(input.metrics, "metrics")
        episode = await episodes.record_episode(
            tenant,
            outcome=input.outcome,
            success=input.success,
            task_id=str(input.task_id) if input.task_id else None,
            description=input.description,
            steps=[
                {"action": s.action, "result": s.result, "status": s.status}
                for s in input.steps or []
            ],
            signature=input.signature,
            structure=input.structure,
            lessons=input.lessons or [],
            metrics=cast(dict[str, Any], input.metrics or {}),
            mappings=string_map(input.mappings, "mappings"),
        )
        return Episode.of(episode)

    @strawberry.mutation(
        description="Find patterns across episodes (failing actions, the alternative that "
        "worked, success rate per signature, a summary) and store them as reflections."
    )
    async def reflect(self, info: Info[Any, Any], signature: str | None = None) -> list[Reflection]:
        episodes, tenant = episodes_of(info)
        return [Reflection.of(r) for r in await episodes.reflect(tenant, signature)]
