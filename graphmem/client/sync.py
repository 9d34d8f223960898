"""``Graphmem``: the blocking client."""

from __future__ import annotations

import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any, TypeVar

import httpx

from graphmem.client import operations as ops
from graphmem.client.erasure import ErasureCalls
from graphmem.client.errors import Unavailable
from graphmem.client.graph_calls import GraphCalls
from graphmem.client.knowledge import KnowledgeCalls
from graphmem.client.models import (
    At,
    Enrichment,
    Episode,
    ImportedTask,
    MemoryItem,
    MemoryPage,
    RecallResult,
    ScoredMemory,
    SpillResult,
    Status,
    Step,
    Task,
    TaskHandle,
    TaskPage,
    UserEntity,
)
from graphmem.client.transport import (
    JSON_HEADERS,
    Retry,
    auth_headers,
    data_of,
    encode,
    read,
    unreachable,
)

T = TypeVar("T")


class Graphmem(ErasureCalls, GraphCalls, KnowledgeCalls):
    """graphmem's GraphQL API at ``url`` (``http://127.0.0.1:8000``) with an API key.

    Errors are raised as ``graphmem.client.errors`` exceptions by code; UNAVAILABLE
    answers and refused connections are retried with backoff (``retry``)."""

    def __init__(
        self,
        url: str,
        key: str,
        *,
        timeout: float = 60.0,
        retry: Retry | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self._headers = auth_headers(key)  # first: a refused key leaves nothing open
        self.retry = retry or Retry()
        self._http = http or httpx.Client(timeout=timeout)
        self._endpoint = url.rstrip("/") + "/graphql"

    def __enter__(self) -> Graphmem:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def execute(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        """Any GraphQL document; its data, or the first error raised."""
        content = encode(query, variables or {})
        for attempt in range(self.retry.attempts):
            try:
                response = self._http.post(
                    self._endpoint, content=content, headers={**self._headers, **JSON_HEADERS}
                )
                return data_of(response)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                # Nothing was sent: safe to try again, even a mutation.
                failure = unreachable(exc)
            except httpx.TransportError as exc:
                raise unreachable(exc) from exc
            except Unavailable as exc:
                failure = exc
            if attempt + 1 < self.retry.attempts:
                time.sleep(self.retry.delay(attempt))
        raise failure

    def _run(self, op: ops.Op[T]) -> T:
        return read(op, self.execute(op.document, op.variables))

    # --- memories ---------------------------------------------------------------------
    def add(
        self,
        session_id: str,
        content: str,
        *,
        type: str = "MESSAGE",
        user_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> MemoryItem:
        return self._run(
            ops.add(
                ops.memory_input(session_id, content, type=type, user_id=user_id, metadata=metadata)
            )
        )

    def add_many(self, memories: Sequence[dict[str, Any]]) -> list[MemoryItem]:
        """``memories`` made with ``graphmem.client.memory(...)``."""
        return self._run(ops.add_many(memories))

    def spill(
        self,
        session_id: str,
        *,
        count: int | None = None,
        item_ids: Sequence[str] | None = None,
        tier: str | None = None,
    ) -> SpillResult:
        """``tier`` ("WARM" or "COLD") for every item instead of by its access count."""
        return self._run(ops.spill(session_id, count, item_ids, tier))

    def memories(
        self,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        metadata_field: str | None = None,
        metadata_values: Sequence[Any] | None = None,
        first: int = 100,
        after: str | None = None,
        at: At | None = None,
    ) -> MemoryPage:
        """One page of a scope's memories in every tier, in conversation order; with
        ``metadata_field`` (and ``metadata_values``) only those whose metadata has it
        (equal to one of the values)."""
        return self._run(
            ops.memories(session_id, user_id, metadata_field, metadata_values, first, after, at)
        )

    def sessions(
        self,
        *,
        prefix: str = "",
        user_id: str | None = None,
        first: int = 100,
        after: str | None = None,
    ) -> list[str]:
        """Ids of sessions holding a memory, in id order."""
        return self._run(ops.sessions(prefix, user_id, first, after))

    def recall(
        self,
        query: str,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        limit: int = 3,
        auto_promote: bool = True,
        at: At | None = None,
    ) -> RecallResult:
        """``at``: what the recall sees (default: what graphmem holds now)."""
        return self._run(ops.recall(query, session_id, user_id, limit, auto_promote, at))

    def search(
        self,
        query: str,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        limit: int = 10,
        at: At | None = None,
    ) -> list[ScoredMemory]:
        return self._run(ops.search(query, session_id, user_id, limit, at))

    def status(self, session_id: str) -> Status:
        return self._run(ops.status(session_id))

    def enrichment(self) -> Enrichment:
        """How many of the tenant's memories still wait for their vectors and entities."""
        return self._run(ops.enrichment())

    def forget(self, item_id: str) -> bool:
        return self._run(ops.forget(item_id))

    def entities(
        self, user_id: str, *, type: str | None = None, limit: int = 50, at: At | None = None
    ) -> list[UserEntity]:
        return self._run(ops.entities(user_id, type, limit, at))

    def retract(self, item_ids: Sequence[str], reason: str = "") -> list[str]:
        """Mark memories no longer held (kept for history); the ids this call changed."""
        return self._run(ops.retract(item_ids, reason))

    def unretract(self, item_ids: Sequence[str]) -> list[str]:
        return self._run(ops.unretract(item_ids))

    # --- tasks ------------------------------------------------------------------------
    def create_task(self, description: str, *, owner: str | None = None) -> Task:
        return self._run(ops.create_task(description, owner))

    def add_step(
        self,
        task_id: str,
        action: str,
        *,
        result: str | None = None,
        status: str = "SUCCEEDED",
        owner: str | None = None,
        generation: int | None = None,
    ) -> Step:
        return self._run(ops.add_step(task_id, action, result, status, owner, generation))

    def task(self, task_id: str) -> Task:
        return self._run(ops.task(task_id))

    def transfer_task(
        self,
        task_id: str,
        to_owner: str,
        generation: int,
        *,
        from_owner: str | None = None,
        reason: str = "",
    ) -> TaskHandle:
        """Hand a task on; only its current handle (``from_owner``, ``generation``) may."""
        return self._run(ops.transfer_task(task_id, to_owner, generation, from_owner, reason))

    def record_episode(
        self,
        outcome: str,
        success: bool,
        *,
        task_id: str | None = None,
        description: str | None = None,
        lessons: Sequence[str] = (),
        metrics: dict[str, Any] | None = None,
        mappings: dict[str, str] | None = None,
        signature: str | None = None,
    ) -> Episode:
        """Record how a task went (without ``task_id``, a task of ``description``)."""
        episode = {
            "outcome": outcome,
            "success": success,
            "taskId": task_id,
            "description": description,
            "lessons": list(lessons),
            "metrics": metrics,
            "mappings": mappings,
            "signature": signature,
        }
        return self._run(ops.record_episode({k: v for k, v in episode.items() if v is not None}))

    def owned_tasks(self, owner: str, *, first: int = 100, after: str | None = None) -> TaskPage:
        """One page of the tasks ``owner`` holds now, each with its steps, hand-overs and
        episodes, in the shape ``import_task`` takes."""
        return self._run(ops.owned_tasks(owner, first, after))

    def import_task(self, task: dict[str, Any]) -> ImportedTask:
        """Write an exported task back as it was, once per ``importId``."""
        return self._run(ops.import_task(task))

    def complete_task(self, task_id: str, status: str = "completed") -> Task:
        return self._run(ops.complete_task(task_id, status))
