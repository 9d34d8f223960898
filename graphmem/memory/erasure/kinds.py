"""Erasure of what is not a memory (docs/concepts.md#erasure): ``forgetTask`` (the task,
its steps, hand-overs, episodes, the reflections drawn from them, its working memory),
``forgetRecords`` (structured records by id), and the tasks a user holds, which
``forgetUser`` erases with the rest of the user.

The order is ``Erasure``'s: tombstones first, then every place, then a second look, then
the signed receipt. A task's tombstones are written under the task's write lock, which
every writer of a task takes before it checks for them (episode/add_step,
record_episode, transfer_task), so no step, episode or hand-over lands after the
removal began; an import of the task's export is refused by its import id
(episode/import_task), a reflect that read its episodes before by theirs
(episode/upsert_reflection), and a working-memory write by the pad's seal in Redis.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from graphmem.domain.models import utcnow
from graphmem.errors import BadInput, Forbidden, NotFound, Unavailable
from graphmem.memory.erasure.signed import Erased, Subject, signed
from graphmem.memory.inputs import Inputs, check_id
from graphmem.stores import GraphStore, KindErasure, WorkingStore
from graphmem.stores.erasure_models import TaskCounts

#: record ids one forgetRecords takes, at most (the receipt names each)
MAX_RECORDS = 500
#: a user's tasks forgotten per page
USER_TASKS_PAGE = 100
_NODES = {
    "Task": "tasks",
    "Step": "steps",
    "Transfer": "transfers",
    "Episode": "episodes",
    "Reflection": "reflections",
}


class KindForgets:
    """The forgets of tasks and records (``Erasure`` has them)."""

    graph: GraphStore
    key: bytes
    tombstone_days: float
    kinds: KindErasure | None
    working: WorkingStore | None

    def _kinds(self) -> KindErasure:
        if self.kinds is None:
            raise Unavailable("tasks and records are not configured (they need Neo4j)")
        return self.kinds

    def _expiry(self, at: datetime) -> datetime:
        return at + timedelta(days=self.tombstone_days)

    async def forget_task(
        self,
        tenant: str,
        task_id: str,
        owner: str | None = None,
        generation: int | None = None,
    ) -> Erased:
        """Erase a task and all it holds. An owned task only by its current handle, as it
        takes steps: a handed-over task ignores its old owner."""
        _check(task_id, "taskId")
        kinds = self._kinds()
        at = utcnow()
        mark = await kinds.mark_task(tenant, task_id, owner, generation, at, self._expiry(at))
        if mark is None:
            raise NotFound(f"no task {task_id}", taskId=task_id)
        if not mark.held:
            raise Forbidden(
                f"task {task_id} is owned by {mark.owner!r} at generation {mark.generation}; "
                f"the handle ({owner!r}, generation {generation}) is stale",
                owner=mark.owner,
                generation=mark.generation,
            )
        counts, removed, found = await self._erase_tasks(tenant, [task_id])
        subject = Subject("task", task_id=task_id, import_id=mark.import_id)
        return await signed(
            self.graph.erasure, self.key, tenant, subject, at, counts, removed, found
        )

    async def _forget_user_tasks(
        self, tenant: str, user_id: str
    ) -> tuple[dict[str, int], dict[str, Any], dict[str, int]]:
        """The tasks the user holds now (owner = userId), each tombstoned and erased as
        forgetTask does, without a handle: the user's erasure is the tenant's call."""
        if self.kinds is None:
            return {}, {}, {}
        counts: dict[str, int] = {}
        removed: dict[str, Any] = {}
        found: dict[str, int] = {}
        while ids := await self.kinds.user_tasks(tenant, user_id, USER_TASKS_PAGE):
            for task_id in ids:
                at = utcnow()
                await self.kinds.mark_task(
                    tenant, task_id, None, None, at, self._expiry(at), check_handle=False
                )
            some = await self._erase_tasks(tenant, ids)
            _add(counts, some[0])
            _add(removed, some[1])
            _add(found, some[2])
            if not some[0]["tasks"]:
                break  # nothing removable (a concurrent erasure): do not loop
        left = len(await self.kinds.user_tasks(tenant, user_id, 1))
        found["neo4j.Task"] = found.get("neo4j.Task", 0) + left
        return counts, removed, found

    async def _erase_tasks(
        self, tenant: str, task_ids: Sequence[str]
    ) -> tuple[dict[str, int], dict[str, Any], dict[str, int]]:
        """Tombstoned tasks erased: (counts, the receipt's removed, its found)."""
        kinds = self._kinds()
        before = await kinds.task_counts(tenant, task_ids)
        pads = 0
        ttl = int(self.tombstone_days * 86400)
        if self.working is not None:
            for task_id in task_ids:
                pads += await self.working.seal(tenant, task_id, ttl)
        done: dict[str, int] = {}
        for task_id in task_ids:
            _add(done, await kinds.remove_task(tenant, task_id))
        after = await kinds.task_counts(tenant, task_ids, before.step_ids, before.reflection_keys)
        left_pads = 0
        if self.working is not None:
            for task_id in task_ids:
                left_pads += len(await self.working.get(tenant, task_id))
        removed: dict[str, Any] = {
            "redis.workingMemory": pads,
            "neo4j.nodes": {label: done.get(name, 0) for label, name in _NODES.items()},
            "neo4j.relationships": {"all": before.relationships},
            "neo4j.vectorIndexEntries": done.get("embedded", 0),
        }
        counts = {name: done.get(name, 0) for name in _NODES.values()} | {"workingMemory": pads}
        return counts, removed, {"redis.workingMemory": left_pads, **_found(after)}

    async def forget_records(self, tenant: str, record_ids: Sequence[str]) -> Erased:
        """Erase structured records by id; tombstones for the ids found only, so ids made
        up leave nothing behind (and their receipt, which removed nothing, is not logged)."""
        ids = Inputs.id_batch(record_ids, "ids", MAX_RECORDS)
        for record_id in ids:
            _check(record_id, "ids")
        kinds = self._kinds()
        before = await kinds.record_counts(tenant, ids)
        at = utcnow()
        if before.found:
            await self.graph.erasure.tombstone(tenant, "record", before.found, at, self._expiry(at))
        records, links = (
            await kinds.remove_records(tenant, before.found) if before.found else (0, 0)
        )
        after = await kinds.record_counts(tenant, ids)
        removed = {
            "neo4j.nodes": {"Record": records},
            "neo4j.relationships": {"CONFORMS_TO": links, "all": links},
        }
        found = {"neo4j.Record": len(after.found), "neo4j.relationships": after.relationships}
        subject = Subject("records", record_ids=tuple(ids))
        return await signed(
            self.graph.erasure, self.key, tenant, subject, at, {"records": records}, removed, found
        )


def _check(value: str, field: str) -> None:
    try:
        check_id(value, field)
    except ValueError as exc:
        raise BadInput(str(exc), field=field) from None


def _found(after: TaskCounts) -> dict[str, int]:
    return {
        **{f"neo4j.{label}": getattr(after, name) for label, name in _NODES.items()},
        "neo4j.vectorIndexEntries": after.embedded,
        "neo4j.relationships": after.relationships,
    }


def _add(total: dict[str, Any], more: dict[str, Any]) -> None:
    """Counts summed into ``total``, nested places too."""
    for k, v in more.items():
        if isinstance(v, dict):
            _add(total.setdefault(k, {}), v)
        else:
            total[k] = total.get(k, 0) + v
