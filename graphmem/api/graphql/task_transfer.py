"""A user's tasks out and in (docs/integrations.md#import-and-export): the `tasks` page
that `graphmem export --user` reads, and `importTask`, which `graphmem import` calls to
write one back as it was, once."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphmem.api.graphql.context import episodes_of
from graphmem.api.graphql.entity_types import Episode, Task
from graphmem.api.graphql.episodes import string_map, task_read
from graphmem.domain.models import as_utc
from graphmem.errors import BadInput
from graphmem.memory.episodes.patterns import StepStatus
from graphmem.memory.inputs import check_json
from graphmem.stores import models


@strawberry.type(description="A task with its episodes: one task of an owner's export")
class OwnedTask:
    task: Task
    episodes: list[Episode]

    @classmethod
    def of(cls, owned: models.OwnedTask) -> OwnedTask:
        return cls(
            task=Task.of(owned.task, owned.steps, [e.id for e in owned.episodes], owned.transfers),
            episodes=[Episode.of(e) for e in owned.episodes],
        )


@strawberry.type
class TaskPage:
    items: list[OwnedTask]
    next: str | None = strawberry.field(
        description="Pass as `after` for the next page; null after the last."
    )


@strawberry.type
class ImportedTask:
    task: Task
    created: bool = strawberry.field(
        description="False when a task of this importId was imported before (it is "
        "returned as it is, unchanged)"
    )


@strawberry.input(description="A step as it was exported")
class ImportedStep:
    action: str
    order: int
    result: str | None = None
    status: StepStatus = StepStatus.SUCCEEDED
    started_at: datetime | None = None
    ended_at: datetime | None = None
    owner: str | None = None
    generation: int | None = None


@strawberry.input(description="A hand-over as it was exported")
class ImportedTransfer:
    to_owner: str
    from_generation: int
    to_generation: int
    from_owner: str | None = None
    reason: str | None = None
    at: datetime | None = None


@strawberry.input(description="An episode as it was exported")
class ImportedEpisode:
    outcome: str
    success: bool
    description: str | None = None
    signature: str | None = None
    lessons: list[str] = strawberry.field(default_factory=list)
    metrics: JSON | None = None
    mappings: JSON | None = None
    created_at: datetime | None = strawberry.field(
        default=None, description="When it happened: kept (default: the moment of the import)"
    )
    recorded_at: datetime | None = strawberry.field(
        default=None,
        description="When the exporting graphmem learned of it: read, not kept. The "
        "episode is recorded here at the import, as an imported memory is",
    )


@strawberry.input(description="A task as `graphmem export` writes it")
class TaskImportInput:
    import_id: str = strawberry.field(
        description="The task's id where it came from: a second import of it is skipped"
    )
    description: str
    status: str = "open"
    owner: str | None = None
    generation: int = 1
    created_at: datetime | None = None
    completed_at: datetime | None = None
    steps: list[ImportedStep] = strawberry.field(default_factory=list)
    transfers: list[ImportedTransfer] = strawberry.field(default_factory=list)
    episodes: list[ImportedEpisode] = strawberry.field(default_factory=list)


def _time(value: datetime | None, field: str) -> datetime | None:
    if value is None:
        return None
    try:
        return as_utc(value)
    except ValueError as exc:
        raise BadInput(f"{field}: {exc}", field=field) from exc


def _generation(value: int | None, field: str) -> int | None:
    if value is not None and value < 1:
        raise BadInput(f"{field}: at least 1", field=field)
    return value


def _owned(i: TaskImportInput) -> models.OwnedTask:
    """The input as the store's model, every time in UTC and every JSON checked."""
    episodes = []
    for e in i.episodes:
        if e.metrics is not None and not isinstance(e.metrics, dict):
            raise BadInput("metrics: an object is required", field="metrics")
        check_json(e.metrics, "metrics")
        episodes.append(
            models.Episode(
                id="",
                task_id="",
                description=e.description,
                outcome=e.outcome,
                success=e.success,
                signature=e.signature,
                lessons=list(e.lessons),
                metrics=cast(dict[str, Any], e.metrics or {}),
                mappings=string_map(e.mappings, "mappings"),
                created_at=_time(e.created_at, "createdAt"),
            )
        )
    return models.OwnedTask(
        task=models.Task(
            id="",
            description=i.description,
            status=i.status,
            owner=i.owner,
            generation=_generation(i.generation, "generation") or 1,
            created_at=_time(i.created_at, "createdAt"),
            completed_at=_time(i.completed_at, "completedAt"),
        ),
        steps=[
            models.Step(
                id="",
                action=s.action,
                result=s.result,
                status=StepStatus(s.status).value,
                order=s.order,
                started_at=_time(s.started_at, "startedAt"),
                ended_at=_time(s.ended_at, "endedAt"),
                owner=s.owner,
                generation=_generation(s.generation, "generation"),
            )
            for s in i.steps
        ],
        transfers=[
            models.Transfer(
                from_owner=x.from_owner,
                to_owner=x.to_owner,
                from_generation=_generation(x.from_generation, "fromGeneration") or 1,
                to_generation=_generation(x.to_generation, "toGeneration") or 1,
                reason=x.reason,
                at=_time(x.at, "at"),
            )
            for x in i.transfers
        ],
        episodes=episodes,
    )


@strawberry.type
class TaskTransferQuery:
    @strawberry.field(
        description="The tasks `owner` holds now, in id order, a page at a time, each with "
        "its steps, hand-overs and episodes: what `graphmem export --user` writes when "
        "agents own tasks by the user's id."
    )
    async def tasks(
        self, info: Info[Any, Any], owner: str, first: int = 100, after: str | None = None
    ) -> TaskPage:
        episodes, tenant = episodes_of(info)
        rows = await episodes.owned_tasks(tenant, owner, after, first)
        return TaskPage(
            items=[OwnedTask.of(r) for r in rows],
            next=rows[-1].task.id if len(rows) == first else None,
        )


@strawberry.type
class TaskTransferMutation:
    @strawberry.mutation(
        description="Write an exported task back as it was (status, handle, times, steps, "
        "hand-overs, episodes) under new ids. Idempotent by importId: a rerun of an "
        "interrupted import skips the tasks it wrote."
    )
    async def import_task(self, info: Info[Any, Any], input: TaskImportInput) -> ImportedTask:
        episodes, tenant = episodes_of(info)
        task, created = await episodes.import_task(tenant, input.import_id, _owned(input))
        return ImportedTask(task=await task_read(episodes, tenant, task.id), created=created)
