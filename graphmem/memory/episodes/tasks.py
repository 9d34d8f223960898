"""Tasks and their steps (``memory.py``'s ``EpisodicMemory`` builds on these): a task is
created with its embedding, takes ordered steps, and is handed on from owner to owner;
an owned task takes steps only from its current handle (owner, generation), so a
handed-over task ignores its old owner.
"""

from __future__ import annotations

import uuid
from typing import Any

from graphmem.cputime import in_thread
from graphmem.domain.models import EventKind, utcnow
from graphmem.enrich.embed import Embedder
from graphmem.errors import BadInput, Forbidden, NotFound
from graphmem.memory.episodes.patterns import StepStatus
from graphmem.memory.kinds.working import WorkingMemory
from graphmem.memory.tiers.quota import UNLIMITED, Quota, charged, text_bytes
from graphmem.stores import ChangeFeed, EpisodeStore
from graphmem.stores.models import Step, Task, TaskDetail, Transfer
from graphmem.stores.null import NullBus


class TaskMemory:
    """Tasks, steps and hand-overs: the base of ``EpisodicMemory``."""

    def __init__(
        self,
        store: EpisodeStore,
        embedder: Embedder,
        *,
        events: ChangeFeed | None = None,
        working: WorkingMemory | None = None,
        quota: Quota = UNLIMITED,
    ) -> None:
        self.store = store
        self.embedder = embedder
        #: the change feed and the tasks' working memory
        self.events: ChangeFeed = events or NullBus()
        self.working = working
        #: tasks, steps, hand-overs, episodes and reflections are items of the quota
        self.quota = quota

    async def _embed(self, text: str) -> list[float]:
        (vector,) = await in_thread(self.embedder.embed, [text])
        embedded: list[float] = vector.tolist()
        return embedded

    async def create_task(
        self, tenant: str, description: str, owner: str | None = None, task_id: str | None = None
    ) -> Task:
        if not description.strip():
            raise BadInput("description: must not be empty", field="description")
        task_id = task_id or f"task_{uuid.uuid4().hex}"
        async with charged(self.quota, tenant, 1, text_bytes(description)):
            return await self.store.create_task(
                tenant,
                task_id,
                description,
                owner,
                await self._embed(description),
                utcnow(),
                self.embedder.name,
            )

    async def add_step(
        self,
        tenant: str,
        task_id: str,
        action: str,
        result: str | None = None,
        status: StepStatus = StepStatus.SUCCEEDED,
        started_at: Any = None,
        ended_at: Any = None,
        owner: str | None = None,
        generation: int | None = None,
    ) -> Step:
        """Append a step. A task with an owner only takes steps from the handle
        (owner, generation) that is current, so a handed-over task ignores its old owner."""
        if not action.strip():
            raise BadInput("action: must not be empty", field="action")
        now = utcnow()
        async with charged(self.quota, tenant, 1, text_bytes(action, result)):
            step = await self.store.add_step(
                tenant,
                task_id,
                {
                    "id": f"step_{uuid.uuid4().hex}",
                    "action": action,
                    "result": result,
                    "status": StepStatus(status).value,
                    "startedAt": started_at or now,
                    "endedAt": ended_at or now,
                    "owner": owner,
                    "generation": generation,
                },
            )
            if step is None:
                task = (await self.task(tenant, task_id)).task  # NOT_FOUND when missing
                raise _stale(task_id, task.owner, task.generation, owner, generation)
        return step

    async def transfer(
        self,
        tenant: str,
        task_id: str,
        from_owner: str | None,
        generation: int,
        to_owner: str,
        reason: str = "",
    ) -> dict[str, Any]:
        """Hand the task on: only the current handle may, the generation goes up by one and
        the hand-over joins the task's audit trail. Of concurrent transfers, one wins."""
        if not to_owner.strip():
            raise BadInput("toOwner: must not be empty", field="toOwner")
        async with charged(self.quota, tenant, 1, text_bytes(reason)):
            done = await self.store.transfer(
                tenant,
                task_id,
                {
                    "fromOwner": from_owner,
                    "toOwner": to_owner,
                    "generation": generation,
                    "reason": reason,
                    "id": f"xfer_{uuid.uuid4().hex}",
                    "now": utcnow(),
                },
            )
            if done is None:
                raise NotFound(f"no task {task_id}", taskId=task_id)
            if not done.moved:
                raise _stale(task_id, done.owner, done.generation, from_owner, generation)
        await self.events.publish(
            tenant,
            EventKind.TASK_TRANSFERRED,
            taskId=task_id,
            fromOwner=from_owner,
            toOwner=done.owner,
            generation=done.generation,
        )
        return {"owner": done.owner, "generation": done.generation}

    async def transfers(self, tenant: str, task_id: str) -> list[Transfer]:
        await self.task(tenant, task_id)  # NOT_FOUND for an unknown task
        return await self.store.transfers(tenant, task_id)

    async def complete_task(self, tenant: str, task_id: str, status: str) -> Task:
        task = await self.store.complete_task(tenant, task_id, status, utcnow())
        if task is None:
            raise NotFound(f"no task {task_id}", taskId=task_id)
        if self.working is not None:
            await self.working.clear(tenant, task_id)  # a finished task's pad is done
        return task

    async def task(self, tenant: str, task_id: str) -> TaskDetail:
        found = await self.store.get_task(tenant, task_id)
        if found is None:
            raise NotFound(f"no task {task_id}", taskId=task_id)
        return found


def _stale(
    task_id: str, owner: Any, generation: Any, held_owner: Any, held_generation: Any
) -> Forbidden:
    return Forbidden(
        f"task {task_id} is owned by {owner!r} at generation {generation}; the handle "
        f"({held_owner!r}, generation {held_generation}) is stale",
        owner=owner,
        generation=generation,
    )
