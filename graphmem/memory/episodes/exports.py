"""A user's tasks exported and imported: the tasks an owner holds, read with their
steps, hand-overs and episodes, and an exported task written back as it was under new
ids (its embeddings computed here, as for a new task), once per import id.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from graphmem.cputime import in_thread
from graphmem.domain.models import utcnow
from graphmem.errors import BadInput
from graphmem.memory.episodes.patterns import StepStatus
from graphmem.memory.episodes.tasks import TaskMemory
from graphmem.memory.tiers.quota import charged, text_bytes
from graphmem.stores.models import OwnedTask, Task

#: what one imported task may carry (an export holds what the API let a task collect)
MAX_IMPORTED = {"steps": 10_000, "transfers": 1_000, "episodes": 1_000}


class TaskExports(TaskMemory):
    """A user's tasks read for an export and written back by an import."""

    async def owned_tasks(
        self, tenant: str, owner: str, after: str | None = None, limit: int = 100
    ) -> list[OwnedTask]:
        """The tasks ``owner`` holds now (a user's, when agents own tasks by user id), in
        id order after ``after``, with their steps, hand-overs and episodes."""
        if not 1 <= limit <= 500:
            raise BadInput("first: between 1 and 500", field="first")
        return await self.store.owned_tasks(tenant, owner, after, limit)

    async def import_task(self, tenant: str, import_id: str, owned: OwnedTask) -> tuple[Task, bool]:
        """Write an exported task as it was (status, handle, times, steps, hand-overs,
        episodes) under new ids; the embeddings are computed here, as for a new task. A
        task imported before under ``import_id`` is returned as it is, with False."""
        if not import_id.strip():
            raise BadInput("importId: must not be empty", field="importId")
        if not owned.task.description.strip():
            raise BadInput("description: must not be empty", field="description")
        for field, most in MAX_IMPORTED.items():
            if len(getattr(owned, field)) > most:
                raise BadInput(f"{field}: at most {most} per task", field=field)
        # A task imported before (returned as it is) is charged until the next exact count.
        items = 1 + len(owned.steps) + len(owned.transfers) + len(owned.episodes)
        size = text_bytes(
            owned.task.description,
            *(s.action for s in owned.steps),
            *(s.result for s in owned.steps),
            *(x.reason for x in owned.transfers),
            *(
                episode_text(e.description, e.outcome, e.lessons, e.metrics, e.mappings)
                for e in owned.episodes
            ),
        )
        async with charged(self.quota, tenant, items, size):
            return await self._import(tenant, import_id, owned)

    async def _import(self, tenant: str, import_id: str, owned: OwnedTask) -> tuple[Task, bool]:
        task = owned.task
        texts = [task.description] + [
            " ".join([e.description or task.description, e.outcome, *e.lessons])
            for e in owned.episodes
        ]
        vectors = await in_thread(self.embedder.embed, texts)
        steps = [
            {
                "id": f"step_{uuid.uuid4().hex}",
                "action": s.action,
                "result": s.result,
                "status": StepStatus(s.status).value,
                "startedAt": s.started_at,
                "endedAt": s.ended_at,
                "order": order,
                "owner": s.owner,
                "generation": s.generation,
            }
            for order, s in enumerate(sorted(owned.steps, key=lambda s: s.order))
        ]
        # recorded here now, as an imported memory is; when it happened is the export's
        now = utcnow()
        done = await self.store.import_task(
            tenant,
            {
                "now": now,
                "importId": import_id,
                "id": f"task_{uuid.uuid4().hex}",
                "description": task.description,
                "status": task.status,
                "owner": task.owner,
                "generation": task.generation,
                "createdAt": task.created_at or now,
                "completedAt": task.completed_at,
                "embedding": vectors[0].tolist(),
                "model": self.embedder.name,
                "steps": steps,
                "links": [[a["id"], b["id"]] for a, b in pairwise(steps)],
                "transfers": [
                    {
                        "id": f"xfer_{uuid.uuid4().hex}",
                        "fromOwner": x.from_owner,
                        "toOwner": x.to_owner,
                        "fromGeneration": x.from_generation,
                        "toGeneration": x.to_generation,
                        "reason": x.reason or "",
                        "at": x.at,
                    }
                    for x in owned.transfers
                ],
                "episodes": [
                    {
                        "id": f"ep_{uuid.uuid4().hex}",
                        "description": e.description,
                        "outcome": e.outcome,
                        "success": e.success,
                        "signature": e.signature,
                        "lessons": list(e.lessons),
                        "metrics": json.dumps(e.metrics),
                        "mappings": json.dumps(e.mappings),
                        "createdAt": e.created_at or now,
                        "embedding": vector.tolist(),
                    }
                    for e, vector in zip(owned.episodes, vectors[1:], strict=True)
                ],
            },
        )
        if done is None:
            raise BadInput(
                f"importId: task {import_id} was forgotten here (or its owner was, after it "
                "was created); an import does not bring it back",
                field="importId",
            )
        return done


def episode_text(
    description: str | None,
    outcome: str,
    lessons: Sequence[str],
    metrics: dict[str, Any] | None,
    mappings: dict[str, str] | None,
) -> str:
    """An episode's text and JSON as the graph holds them, for its size."""
    return "".join(
        [
            description or "",
            outcome,
            *lessons,
            json.dumps(metrics or {}),
            json.dumps(mappings or {}),
        ]
    )
