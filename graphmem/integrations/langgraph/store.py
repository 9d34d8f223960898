"""``GraphmemStore``: LangGraph's ``BaseStore`` over graphmem's API.

Each item is one graphmem memory in the session of its namespace (``namespaces.py``). The
memory's content is the value's text (what search ranks); its metadata keeps the LangGraph
key (``lgKey``), the value itself (``lgValue``) and when the key was first written
(``lgCreatedAt``). graphmem chooses memory ids, so an item is found by its key through
the ``memories`` query's metadata lookup. A put adds the new memory, spills it into the
graph (search ranks graph memories) and then forgets the one it replaces.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Iterable
from concurrent.futures import Future
from datetime import datetime
from types import TracebackType
from typing import Any, TypeVar

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from graphmem.client import AsyncGraphmem, MemoryItem
from graphmem.integrations.langgraph.namespaces import (
    namespace_of,
    session_of,
    session_prefix,
    user_of,
)
from graphmem.integrations.langgraph.values import passes, text_of

KEY, VALUE, CREATED, INDEXED = "lgKey", "lgValue", "lgCreatedAt", "lgIndexed"
T = TypeVar("T")


def _item(memory: MemoryItem, namespace: tuple[str, ...]) -> Item:
    updated = memory.created_at or datetime.now().astimezone()
    created = memory.metadata.get(CREATED)
    return Item(
        value=memory.metadata[VALUE],
        key=memory.metadata[KEY],
        namespace=namespace,
        created_at=datetime.fromisoformat(created) if created else updated,
        updated_at=updated,
    )


def _under(namespace: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    return namespace[: len(prefix)] == prefix


def _fits(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))


class GraphmemStore(BaseStore):
    """A LangGraph store whose items are graphmem memories.

    ``memory_type`` is the type of every memory written; ``index`` the value fields
    search ranks by (LangGraph's path syntax; default: every string in the value), which
    a put's own ``index`` overrides (``False``: kept, but never found by a query).
    ``search_pool`` is how many of graphmem's best matches a query search filters and
    pages through (graphmem answers at most 100).

    Every call runs on one event loop in a thread of the store's own, so ``batch`` and
    ``abatch`` share one async client whichever thread or loop they are called from."""

    supports_ttl = False

    def __init__(
        self,
        url: str,
        key: str,
        *,
        memory_type: str = "FACT",
        index: list[str] | None = None,
        search_pool: int = 100,
        timeout: float = 60.0,
    ) -> None:
        self.memory_type = memory_type
        self.index = index
        self.search_pool = search_pool
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="graphmem-store", daemon=True
        )
        self._thread.start()
        self._client = AsyncGraphmem(url, key, timeout=timeout)

    # --- lifecycle ----------------------------------------------------------------------
    def _submit(self, work: Awaitable[T]) -> Future[T]:
        async def run() -> T:
            return await work

        return asyncio.run_coroutine_threadsafe(run(), self._loop)

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._submit(self._client.close()).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> GraphmemStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- BaseStore ----------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return self._submit(self._run(list(ops))).result()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.wrap_future(self._submit(self._run(list(ops))))

    async def _run(self, ops: list[Op]) -> list[Result]:
        # In order: a get after a put in the same batch sees the put.
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self._get(op))
            elif isinstance(op, PutOp):
                await self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(await self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._list_namespaces(op))
            else:
                raise TypeError(f"unknown store operation: {op!r}")
        return results

    # --- operations ---------------------------------------------------------------------
    async def _by_key(self, namespace: tuple[str, ...], key: str) -> list[MemoryItem]:
        """The memories holding a key, oldest first (two only while a put replaces)."""
        page = await self._client.memories(
            session_id=session_of(namespace), metadata_field=KEY, metadata_values=[key]
        )
        return page.items

    async def _get(self, op: GetOp) -> Item | None:
        found = await self._by_key(op.namespace, op.key)
        return _item(found[-1], op.namespace) if found else None

    async def _put(self, op: PutOp) -> None:
        old = await self._by_key(op.namespace, op.key)
        if op.value is not None:
            value = dict(op.value)
            fields = op.index if isinstance(op.index, list) else self.index
            metadata: dict[str, Any] = {KEY: op.key, VALUE: value}
            if old:
                first = old[0].metadata.get(CREATED) or old[0].created_at
                metadata[CREATED] = first.isoformat() if isinstance(first, datetime) else first
            if op.index is False:
                metadata[INDEXED] = False
            session = session_of(op.namespace)
            added = await self._client.add(
                session,
                text_of(value, fields),
                type=self.memory_type,
                user_id=user_of(op.namespace),
                metadata=metadata,
            )
            await self._client.spill(session, item_ids=[added.id])
        for memory in old:
            await self._client.forget(memory.id)

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        found: list[tuple[MemoryItem, tuple[str, ...], float | None]] = []
        if op.query:
            hits = await self._client.search(
                op.query, user_id=user_of(prefix), limit=min(self.search_pool, 100)
            )
            for hit in hits:
                namespace = namespace_of(hit.item.session_id)
                meta = hit.item.metadata
                if namespace is None or KEY not in meta or meta.get(INDEXED) is False:
                    continue
                if _under(namespace, prefix):
                    found.append((hit.item, namespace, hit.score))
        else:
            for namespace in await self._namespaces(prefix):
                for memory in await self._all_in(namespace):
                    found.append((memory, namespace, None))
            found.sort(key=lambda f: f[0].created_at or datetime.min, reverse=True)
        seen: set[tuple[tuple[str, ...], str]] = set()
        results: list[SearchItem] = []
        for memory, namespace, score in found:
            ident = (namespace, memory.metadata[KEY])
            if ident in seen or not passes(memory.metadata[VALUE], op.filter):
                continue
            seen.add(ident)
            item = _item(memory, namespace)
            results.append(
                SearchItem(
                    item.namespace, item.key, item.value, item.created_at, item.updated_at, score
                )
            )
        return results[op.offset : op.offset + op.limit]

    async def _all_in(self, namespace: tuple[str, ...]) -> list[MemoryItem]:
        memories: list[MemoryItem] = []
        after: str | None = None
        while True:
            page = await self._client.memories(
                session_id=session_of(namespace), metadata_field=KEY, after=after
            )
            memories += page.items
            if page.next is None:
                return memories
            after = page.next

    async def _namespaces(self, prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
        namespaces: list[tuple[str, ...]] = []
        after: str | None = None
        while True:
            page = await self._client.sessions(prefix=session_prefix(prefix), after=after)
            for session in page:
                namespace = namespace_of(session)
                if namespace is not None and _under(namespace, prefix):
                    namespaces.append(namespace)
            if len(page) < 100:
                return namespaces
            after = page[-1]

    async def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        wanted = [
            n
            for n in await self._namespaces(())
            if all(_fits(n, c) for c in op.match_conditions or ())
        ]
        if op.max_depth is not None:
            wanted = [n[: op.max_depth] for n in wanted]
        return sorted(set(wanted))[op.offset : op.offset + op.limit]
