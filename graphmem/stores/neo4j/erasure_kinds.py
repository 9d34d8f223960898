"""Erasure of tasks and records in the graph (``graphmem/memory/erasure/kinds.py``): a
task's tombstones under its lock, what the graph holds of it, its removal in bounded
batches, the tasks a user holds, and records by id."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from graphmem.stores.erasure_models import RecordCounts, TaskCounts, TaskMark
from graphmem.stores.neo4j.session import Neo4jSession

#: a task's parts (steps, hand-overs, episodes) deleted per transaction
BATCH = 500
_PARTS = ("steps", "transfers", "episodes", "embedded")


class Neo4jKindErasure:
    def __init__(self, session: Neo4jSession) -> None:
        self.session = session

    async def mark_task(
        self,
        tenant: str,
        task_id: str,
        owner: str | None,
        generation: int | None,
        at: datetime,
        expires_at: datetime,
        check_handle: bool = True,
    ) -> TaskMark | None:
        """None when the tenant has no such task; else the tombstones written (none when
        the handle is not the task's: ``held`` False)."""
        rows = await self.session.run(
            "erasure/task_tombstone",
            {
                "tenant": tenant,
                "taskId": task_id,
                "owner": owner,
                "generation": generation,
                "checkHandle": check_handle,
                "at": at,
                "expiresAt": expires_at,
            },
        )
        if not rows:
            return None
        (row,) = rows
        return TaskMark(
            held=bool(row["held"]),
            owner=row["owner"],
            generation=int(row["generation"]),
            import_id=row["importId"],
            tombstones=int(row["tombstones"]),
        )

    async def task_counts(
        self,
        tenant: str,
        task_ids: Sequence[str],
        step_ids: Sequence[str] = (),
        reflection_keys: Sequence[str] = (),
    ) -> TaskCounts:
        (row,) = await self.session.run(
            "erasure/task_counts",
            {
                "tenant": tenant,
                "taskIds": list(task_ids),
                "stepIds": list(step_ids),
                "reflectionKeys": list(reflection_keys),
            },
        )
        return TaskCounts(
            tasks=int(row["tasks"]),
            steps=int(row["steps"]),
            transfers=int(row["transfers"]),
            episodes=int(row["episodes"]),
            reflections=int(row["reflections"]),
            embedded=int(row["embedded"]),
            relationships=int(row["relationships"]),
            step_ids=[str(s) for s in row["stepIds"]],
            reflection_keys=[str(k) for k in row["reflectionKeys"]],
        )

    async def remove_task(self, tenant: str, task_id: str) -> dict[str, int]:
        """The reflections drawn from the task's episodes, its parts ``BATCH`` per
        transaction, then the task node: how many of each were removed."""
        params = {"tenant": tenant, "taskId": task_id}
        (row,) = await self.session.run("erasure/task_reflections_remove", params)
        done = {"reflections": int(row["removed"]), **dict.fromkeys(_PARTS, 0)}
        while True:
            (row,) = await self.session.run("erasure/task_parts_remove", {**params, "limit": BATCH})
            if not row["removed"]:
                break
            for part in _PARTS:
                done[part] += int(row[part] or 0)
        (row,) = await self.session.run("erasure/task_remove", params)
        done["tasks"] = int(row["tasks"])
        done["embedded"] += int(row["embedded"] or 0)
        return done

    async def user_tasks(self, tenant: str, user_id: str, limit: int) -> list[str]:
        rows = await self.session.run(
            "erasure/user_tasks", {"tenant": tenant, "userId": user_id, "limit": limit}
        )
        return [str(r["id"]) for r in rows]

    async def record_counts(self, tenant: str, ids: Sequence[str]) -> RecordCounts:
        (row,) = await self.session.run(
            "erasure/records_counts", {"tenant": tenant, "ids": list(ids)}
        )
        return RecordCounts(
            found=[str(i) for i in row["found"]], relationships=int(row["relationships"] or 0)
        )

    async def remove_records(self, tenant: str, ids: Sequence[str]) -> tuple[int, int]:
        """(records removed, their relationships removed)."""
        (row,) = await self.session.run(
            "erasure/records_remove", {"tenant": tenant, "ids": list(ids)}
        )
        return int(row["removed"]), int(row["relationships"] or 0)
