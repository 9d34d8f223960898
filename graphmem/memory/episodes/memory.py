"""Episodic memory: tasks with ordered steps, episodes with outcome,
structure signature, lessons and metrics; similar episodes; prior knowledge by
similarity-weighted voting; reflections across episodes.

The voting and pattern finding are pure functions over plain data (``patterns.py``), so
their results can be checked by hand; ``EpisodicMemory`` wires them to the graph and the
embedder.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from graphmem.cputime import in_thread
from graphmem.domain.models import utcnow
from graphmem.enrich.embed import Embedder, embed_queries
from graphmem.errors import BadInput, Forbidden, NotFound
from graphmem.memory.episodes.patterns import (
    Pattern,
    StaleFilter,
    StepStatus,
    Vote,
    aggregate_votes,
    compute_signature,
    find_patterns,
)
from graphmem.memory.kinds.working import WorkingMemory
from graphmem.memory.tiers.quota import UNLIMITED, Quota, charged, text_bytes
from graphmem.stores import EpisodeStore
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
)
from graphmem.stores.redis.events import EventBus, EventKind, NullBus

if TYPE_CHECKING:
    from graphmem.memory.writepath.spaces import TenantSpaces

__all__ = [
    "SIGNATURE_BOOST",
    "EpisodicMemory",
    "Pattern",
    "StaleFilter",
    "StepStatus",
    "Vote",
    "aggregate_votes",
    "compute_signature",
    "find_patterns",
]

#: added to the similarity of an episode whose structure signature matches exactly
SIGNATURE_BOOST = 0.6
#: what one imported task may carry (an export holds what the API let a task collect)
MAX_IMPORTED = {"steps": 10_000, "transfers": 1_000, "episodes": 1_000}


class EpisodicMemory:
    def __init__(
        self,
        store: EpisodeStore,
        embedder: Embedder,
        stale_filter: StaleFilter | None = None,
        *,
        events: EventBus | NullBus | None = None,
        working: WorkingMemory | None = None,
        quota: Quota = UNLIMITED,
        spaces: TenantSpaces | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.stale_filter = stale_filter
        #: the change feed and the tasks' working memory
        self.events: EventBus | NullBus = events or NullBus()
        self.working = working
        #: tasks, steps, hand-overs, episodes and reflections are items of the quota
        self.quota = quota
        #: which model's vectors each tenant holds
        self.spaces = spaces

    async def _embed(self, text: str) -> list[float]:
        (vector,) = await in_thread(self.embedder.embed, [text])
        embedded: list[float] = vector.tolist()
        return embedded

    async def _embed_query(self, text: str) -> list[float]:
        (vector,) = await in_thread(embed_queries, self.embedder, [text])
        embedded: list[float] = vector.tolist()
        return embedded

    # --- tasks and steps -----------------------------------------------------------------
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

    # --- a user's tasks, exported and imported ------------------------------------------
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
                _episode_text(e.description, e.outcome, e.lessons, e.metrics, e.mappings)
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
        return await self.store.import_task(
            tenant,
            {
                "importId": import_id,
                "id": f"task_{uuid.uuid4().hex}",
                "description": task.description,
                "status": task.status,
                "owner": task.owner,
                "generation": task.generation,
                "createdAt": task.created_at or utcnow(),
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
                        "createdAt": e.created_at,
                        "embedding": vector.tolist(),
                    }
                    for e, vector in zip(owned.episodes, vectors[1:], strict=True)
                ],
            },
        )

    # --- episodes ----------------------------------------------------------------------------
    async def record_episode(
        self,
        tenant: str,
        *,
        outcome: str,
        success: bool,
        task_id: str | None = None,
        description: str | None = None,
        steps: Sequence[dict[str, Any]] = (),
        signature: str | None = None,
        structure: Iterable[str] | dict[str, Any] | None = None,
        lessons: Sequence[str] = (),
        metrics: dict[str, Any] | None = None,
        mappings: dict[str, str] | None = None,
        owner: str | None = None,
        generation: int | None = None,
    ) -> Episode:
        if signature is None and structure is not None:
            signature = compute_signature(structure)
        # Every check before the first write: an episode refused after its task or steps
        # were written would leave them behind.
        for step in steps:
            if not str(step.get("action") or "").strip():
                raise BadInput("action: must not be empty", field="action")
            if step.get("status", StepStatus.SUCCEEDED) not in set(StepStatus):
                raise BadInput("status: not a step status", field="status")
        if task_id is None and (not description or not description.strip()):
            raise BadInput("give a taskId, or a description to start a task with")
        # The episode, its new task and its steps are charged at once: refused before
        # any of them is written.
        new_task = task_id is None
        items = 1 + len(steps) + new_task
        size = text_bytes(
            description if new_task else None,
            *(str(step.get("action") or "") for step in steps),
            *(step.get("result") for step in steps),
            _episode_text(description, outcome, lessons, metrics, mappings),
        )
        async with charged(self.quota, tenant, items, size):
            if task_id is None:
                assert description is not None
                task_id = (await self.create_task(tenant, description)).id
            else:
                task = await self.task(tenant, task_id)
                description = description or task.task.description
            for step in steps:
                await self.add_step(
                    tenant,
                    task_id,
                    step["action"],
                    step.get("result"),
                    StepStatus(step.get("status", StepStatus.SUCCEEDED)),
                    owner=owner,
                    generation=generation,
                )
            text = " ".join([description or "", outcome, *lessons])
            episode = await self.store.record_episode(
                tenant,
                {
                    "id": f"ep_{uuid.uuid4().hex}",
                    "taskId": task_id,
                    "description": description,
                    "outcome": outcome,
                    "success": success,
                    "signature": signature,
                    "lessons": list(lessons),
                    "metrics": json.dumps(metrics or {}),
                    "mappings": json.dumps(mappings or {}),
                    "now": utcnow(),
                    "embedding": await self._embed(text),
                    "model": self.embedder.name,
                },
            )
        assert episode is not None  # the task exists: it was found or created above
        return episode

    async def similar(
        self, tenant: str, query: str, signature: str | None = None, limit: int = 5
    ) -> list[ScoredEpisode]:
        if not query.strip():
            raise BadInput("query: must not be empty", field="query")
        if not 1 <= limit <= 100:
            raise BadInput("limit: must be between 1 and 100", field="limit")
        if self.spaces is not None:
            await self.spaces.require(tenant)
        return await self.store.similar(
            tenant, await self._embed_query(query), signature, SIGNATURE_BOOST, limit
        )

    async def prior_knowledge(
        self,
        tenant: str,
        query: str,
        signature: str | None = None,
        limit: int = 5,
        valid_values: Sequence[str] | None = None,
    ) -> tuple[list[Vote], list[ScoredEpisode]]:
        """Similar episodes vote on each mapping; stale values (not in ``valid_values``, or
        rejected by the configured hook) are filtered out before the vote."""
        rows = await self.similar(tenant, query, signature, limit)
        allowed = set(valid_values) if valid_values is not None else None
        hook = self.stale_filter

        def keep(key: str, value: str) -> bool:
            return (allowed is None or value in allowed) and (hook is None or hook(key, value))

        votes = aggregate_votes([(r.episode.mappings, r.similarity) for r in rows], keep)
        return votes, rows

    async def reflect(self, tenant: str, signature: str | None = None) -> list[Reflection]:
        items = [_plain(item) for item in await self.store.with_steps(tenant, signature)]
        found = [(p, json.dumps(p.details)) for p in find_patterns(items)]
        stored = []
        # Reflections found again update those stored, charged until the next exact count.
        size = text_bytes(*(p.pattern for p, _ in found), *(d for _, d in found))
        async with charged(self.quota, tenant, len(found), size):
            for p, details in found:
                stored.append(
                    await self.store.upsert_reflection(
                        tenant,
                        {
                            "key": p.key,
                            "id": f"refl_{p.key[:16]}",
                            "kind": p.kind,
                            "pattern": p.pattern,
                            "support": p.support,
                            "confidence": p.confidence,
                            "signature": p.signature,
                            "details": details,
                            "evidence": p.evidence,
                            "now": utcnow(),
                        },
                    )
                )
        return stored

    async def reflections(
        self, tenant: str, kind: str | None = None, signature: str | None = None
    ) -> list[Reflection]:
        return await self.store.reflections(tenant, kind, signature)


def _stale(
    task_id: str, owner: Any, generation: Any, held_owner: Any, held_generation: Any
) -> Forbidden:
    return Forbidden(
        f"task {task_id} is owned by {owner!r} at generation {generation}; the handle "
        f"({held_owner!r}, generation {held_generation}) is stale",
        owner=owner,
        generation=generation,
    )


def _episode_text(
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


def _plain(item: EpisodeSteps) -> dict[str, Any]:
    """The plain-data shape ``find_patterns`` reads: ``{"episode": {...}, "steps": [...]}``."""
    return {"episode": item.episode.model_dump(), "steps": [s.model_dump() for s in item.steps]}
