"""``AsyncGraphmem``: the asyncio client, with the change feed as an async iterator."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Any, TypeVar

import httpx

from graphmem.client import items
from graphmem.client import operations as ops
from graphmem.client.erasure import AsyncErasureCalls
from graphmem.client.errors import Internal, Unauthenticated, Unavailable, from_graphql
from graphmem.client.graph_calls import AsyncGraphCalls
from graphmem.client.items import StoreItem
from graphmem.client.knowledge import AsyncKnowledgeCalls
from graphmem.client.models import (
    At,
    Enrichment,
    Episode,
    Event,
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


class AsyncGraphmem(AsyncErasureCalls, AsyncKnowledgeCalls, AsyncGraphCalls):
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
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self._headers = auth_headers(key)  # first: a refused key leaves nothing open
        self.retry = retry or Retry()
        self._http = http or httpx.AsyncClient(timeout=timeout)
        self._endpoint = url.rstrip("/") + "/graphql"

    async def __aenter__(self) -> AsyncGraphmem:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def execute(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        """Any GraphQL document; its data, or the first error raised."""
        content = encode(query, variables or {})
        for attempt in range(self.retry.attempts):
            try:
                response = await self._http.post(
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
                await asyncio.sleep(self.retry.delay(attempt))
        raise failure

    async def _run(self, op: ops.Op[T]) -> T:
        return read(op, await self.execute(op.document, op.variables))

    # --- memories ---------------------------------------------------------------------
    async def add(
        self,
        session_id: str,
        content: str,
        *,
        type: str = "MESSAGE",
        user_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> MemoryItem:
        return await self._run(
            ops.add(
                ops.memory_input(session_id, content, type=type, user_id=user_id, metadata=metadata)
            )
        )

    async def add_many(self, memories: Sequence[dict[str, Any]]) -> list[MemoryItem]:
        """``memories`` made with ``graphmem.client.memory(...)``."""
        return await self._run(ops.add_many(memories))

    async def spill(
        self,
        session_id: str,
        *,
        count: int | None = None,
        item_ids: Sequence[str] | None = None,
        tier: str | None = None,
    ) -> SpillResult:
        """``tier`` ("WARM" or "COLD") for every item instead of by its access count."""
        return await self._run(ops.spill(session_id, count, item_ids, tier))

    async def memories(
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
        return await self._run(
            ops.memories(session_id, user_id, metadata_field, metadata_values, first, after, at)
        )

    async def sessions(
        self,
        *,
        prefix: str = "",
        user_id: str | None = None,
        first: int = 100,
        after: str | None = None,
    ) -> list[str]:
        """Ids of sessions holding a memory, in id order."""
        return await self._run(ops.sessions(prefix, user_id, first, after))

    async def recall(
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
        return await self._run(ops.recall(query, session_id, user_id, limit, auto_promote, at))

    async def search(
        self,
        query: str,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        limit: int = 10,
        at: At | None = None,
    ) -> list[ScoredMemory]:
        return await self._run(ops.search(query, session_id, user_id, limit, at))

    async def status(self, session_id: str) -> Status:
        return await self._run(ops.status(session_id))

    async def enrichment(self) -> Enrichment:
        """How many of the tenant's memories still wait for their vectors and entities."""
        return await self._run(ops.enrichment())

    async def forget(self, item_id: str) -> bool:
        return await self._run(ops.forget(item_id))

    async def entities(
        self, user_id: str, *, type: str | None = None, limit: int = 50, at: At | None = None
    ) -> list[UserEntity]:
        return await self._run(ops.entities(user_id, type, limit, at))

    async def retract(self, item_ids: Sequence[str], reason: str = "") -> list[str]:
        """Mark memories no longer held (kept for history); the ids this call changed."""
        return await self._run(ops.retract(item_ids, reason))

    async def unretract(self, item_ids: Sequence[str]) -> list[str]:
        return await self._run(ops.unretract(item_ids))

    # --- LangGraph store items (graphmem.client.items) --------------------------------
    async def put_items(self, puts: Sequence[dict[str, Any]]) -> int:
        """Puts made with ``graphmem.client.item_put``, in one atomic write."""
        return await self._run(items.put_items(puts))

    async def get_items(self, keys: Sequence[tuple[Sequence[str], str]]) -> list[StoreItem | None]:
        return await self._run(items.get_items(keys))

    async def search_items(
        self,
        prefix: Sequence[str],
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
    ) -> list[StoreItem]:
        return await self._run(items.search_items(prefix, query, filter, limit, offset))

    async def item_namespaces(
        self,
        *,
        prefix: Sequence[str] | None = None,
        suffix: Sequence[str] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        return await self._run(items.item_namespaces(prefix, suffix, max_depth, limit, offset))

    # --- tasks ------------------------------------------------------------------------
    async def create_task(self, description: str, *, owner: str | None = None) -> Task:
        return await self._run(ops.create_task(description, owner))

    async def add_step(
        self,
        task_id: str,
        action: str,
        *,
        result: str | None = None,
        status: str = "SUCCEEDED",
        owner: str | None = None,
        generation: int | None = None,
    ) -> Step:
        return await self._run(ops.add_step(task_id, action, result, status, owner, generation))

    async def task(self, task_id: str) -> Task:
        return await self._run(ops.task(task_id))

    async def transfer_task(
        self,
        task_id: str,
        to_owner: str,
        generation: int,
        *,
        from_owner: str | None = None,
        reason: str = "",
    ) -> TaskHandle:
        """Hand a task on; only its current handle (``from_owner``, ``generation``) may."""
        return await self._run(ops.transfer_task(task_id, to_owner, generation, from_owner, reason))

    async def record_episode(
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
        return await self._run(
            ops.record_episode({k: v for k, v in episode.items() if v is not None})
        )

    async def owned_tasks(
        self, owner: str, *, first: int = 100, after: str | None = None
    ) -> TaskPage:
        """One page of the tasks ``owner`` holds now, each with its steps, hand-overs and
        episodes, in the shape ``import_task`` takes."""
        return await self._run(ops.owned_tasks(owner, first, after))

    async def import_task(self, task: dict[str, Any]) -> ImportedTask:
        """Write an exported task back as it was, once per ``importId``."""
        return await self._run(ops.import_task(task))

    async def complete_task(self, task_id: str, status: str = "completed") -> Task:
        return await self._run(ops.complete_task(task_id, status))

    # --- the change feed ----------------------------------------------------------------
    async def events(
        self,
        *,
        kinds: Sequence[str] | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> AsyncIterator[Event]:
        """The tenant's change feed (graphql-transport-ws), until the caller stops
        iterating. Events published before the subscription is in place are not seen."""
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed, InvalidStatus

        url = "ws" + self._endpoint.removeprefix("http")
        wanted = {"kinds": kinds, "sessionId": session_id, "userId": user_id}
        subscribe = {
            "id": "1",
            "type": "subscribe",
            "payload": {
                "query": f"subscription($f: EventFilter) {{ memoryEvents(filter: $f) "
                f"{{ {Event.FIELDS} }} }}",
                "variables": {"f": {k: v for k, v in wanted.items() if v is not None}},
            },
        }
        try:
            async with connect(url, subprotocols=["graphql-transport-ws"]) as ws:  # type: ignore[list-item]
                # Browsers cannot send headers on a WebSocket, so the key goes in the
                # connection_init payload, which the server reads the same way.
                init = {"type": "connection_init", "payload": self._headers}
                await ws.send(json.dumps(init))
                while _message(await ws.recv()).get("type") != "connection_ack":
                    pass
                await ws.send(json.dumps(subscribe))
                async for raw in ws:
                    message = _message(raw)
                    kind = message.get("type")
                    if kind == "ping":
                        await ws.send(json.dumps({"type": "pong"}))
                    elif kind == "next":
                        yield _event(message.get("payload"))
                    elif kind == "error":
                        raise from_graphql(_first(message.get("payload")))
                    elif kind == "complete":
                        return
        except ConnectionClosed as exc:
            if exc.rcvd is not None and exc.rcvd.code in (4401, 4403):
                raise Unauthenticated(exc.rcvd.reason or "the key was refused") from exc
            raise Unavailable(f"the change feed closed: {exc}") from exc
        except (OSError, InvalidStatus) as exc:
            raise Unavailable(f"graphmem did not answer: {exc}") from exc


def _message(raw: str | bytes) -> dict[str, Any]:
    """One graphql-transport-ws message; ``Internal`` for one that is not a JSON object."""
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise Internal("the change feed sent a message that is not JSON") from exc
    if not isinstance(message, dict):
        raise Internal("the change feed sent a message that is not a JSON object")
    return message


def _first(errors: Any) -> Any:
    return errors[0] if isinstance(errors, list) and errors else errors


def _event(payload: Any) -> Event:
    """The event of a ``next`` message, or the error it carries as an exception."""
    if isinstance(payload, dict) and payload.get("errors"):
        raise from_graphql(_first(payload["errors"]))
    try:
        return Event.of(payload["data"]["memoryEvents"])
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise Internal(f"a change-feed event of the wrong shape ({type(exc).__name__})") from exc
