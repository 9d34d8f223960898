"""``GraphmemStore``: LangGraph's ``BaseStore`` over graphmem's API.

Each item is a graphmem store item addressed by (namespace, key) on the server
(``putItems``, ``items``, ``searchItems``, ``itemNamespaces``): a put is one atomic
server write, so concurrent puts of a key leave the last one, and a refused put leaves
nothing behind. A batch runs in order, in as few requests as that allows: each run of
consecutive puts is one ``putItems``, the reads between two runs (gets in one
``items``, searches and namespace listings beside it) run at once.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Awaitable, Callable, Iterable, Sequence
from concurrent.futures import Future
from functools import partial
from types import TracebackType
from typing import TypeVar

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from graphmem.client import AsyncGraphmem, RateLimited, StoreItem, item_put

T = TypeVar("T")
#: puts and gets per request (the server's limits)
PUTS_PER_CALL, GETS_PER_CALL = 500, 1_000


def _checked(ops: Iterable[Op]) -> list[Op]:
    """``ops`` as a list, refused here (in the caller) when one is malformed, so that a
    bad call never fails the others run with it."""
    listed = list(ops)
    for op in listed:
        if not isinstance(op, GetOp | PutOp | SearchOp | ListNamespacesOp):
            raise TypeError(f"unknown store operation: {op!r}")
        validate_op_namespace(op)  # ops given to batch() skip BaseStore's checks
    return listed


async def _settle(done: asyncio.Future[list[Result]], work: Awaitable[list[Result]]) -> None:
    try:
        result = await work
    except Exception as exc:
        if not done.done():
            done.set_exception(exc)
    else:
        if not done.done():
            done.set_result(result)


def _item(found: StoreItem) -> Item:
    return Item(
        value=found.value,
        key=found.key,
        namespace=found.namespace,
        created_at=found.created_at,
        updated_at=found.updated_at,
    )


def _search_item(found: StoreItem) -> SearchItem:
    return SearchItem(
        found.namespace,
        found.key,
        found.value,
        found.created_at,
        found.updated_at,
        found.score,
    )


class GraphmemStore(BaseStore):
    """A LangGraph store whose items live in graphmem (docs/integrations.md).

    ``index`` is the value fields search ranks by (LangGraph's path syntax; default:
    every string in the value), which a put's own ``index`` overrides (``False``: kept,
    never found by a query). A RATE_LIMITED answer is waited out (``retryAfterMs``) and
    the request sent again, up to ``rate_limit_wait`` seconds in all: every write is
    atomic on the server, so a refused one changed nothing and is safe to repeat.

    Every call runs on one event loop in a thread of the store's own, so ``batch`` and
    ``abatch`` share one async client whichever thread or loop they are called from.
    Calls run in the order they were made, as with LangGraph's batched stores: the ones
    made while a batch is in flight are run together next, in order (so ``put``,
    ``delete``, ``put`` of one key gathered at once leave the second put)."""

    supports_ttl = False

    def __init__(
        self,
        url: str,
        key: str,
        *,
        index: list[str] | None = None,
        timeout: float = 60.0,
        rate_limit_wait: float = 60.0,
    ) -> None:
        self.index = index
        self.rate_limit_wait = rate_limit_wait
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="graphmem-store", daemon=True
        )
        self._thread.start()
        self._client = AsyncGraphmem(url, key, timeout=timeout)
        #: calls waiting for the running batch (touched only on the store's loop)
        self._queued: list[tuple[list[Op], asyncio.Future[list[Result]]]] = []
        self._draining = False

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
        return self._submit(self._ordered(_checked(ops))).result()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.wrap_future(self._submit(self._ordered(_checked(ops))))

    async def _ordered(self, ops: list[Op]) -> list[Result]:
        """``ops`` run after every call made before this one (the store's loop takes
        submissions in the order they were made)."""
        done: asyncio.Future[list[Result]] = self._loop.create_future()
        self._queued.append((ops, done))
        if not self._draining:
            self._draining = True
            self._loop.create_task(self._drain())
        return await done

    async def _drain(self) -> None:
        try:
            while self._queued:
                calls, self._queued = self._queued, []
                try:
                    results = await self._run([op for ops, _ in calls for op in ops])
                except Exception as exc:
                    if len(calls) == 1:
                        if not calls[0][1].done():
                            calls[0][1].set_exception(exc)
                        continue
                    # A refusal of the whole (a server's write is atomic: nothing of it
                    # was stored) is answered call by call, in order, so that one bad
                    # call never fails the others.
                    for ops, done in calls:
                        await _settle(done, self._run(ops))
                    continue
                at = 0
                for ops, done in calls:
                    if not done.done():
                        done.set_result(results[at : at + len(ops)])
                    at += len(ops)
        finally:
            self._draining = False

    async def _run(self, ops: list[Op]) -> list[Result]:
        results: list[Result] = [None] * len(ops)
        start = 0
        while start < len(ops):
            end = start
            writes = isinstance(ops[start], PutOp)
            while end < len(ops) and isinstance(ops[end], PutOp) == writes:
                end += 1
            if writes:
                await self._puts([op for op in ops[start:end] if isinstance(op, PutOp)])
            else:
                await self._reads(ops, range(start, end), results)
            start = end
        return results

    # --- requests -----------------------------------------------------------------------
    async def _call(self, request: Callable[[], Awaitable[T]]) -> T:
        """The request, sent again after each RATE_LIMITED answer's ``retryAfterMs``
        until ``rate_limit_wait`` seconds have been waited."""
        waited = 0.0
        while True:
            try:
                return await request()
            except RateLimited as exc:
                pause = (exc.retry_after or 0.1) * random.uniform(1.0, 1.25)
                if waited + pause > self.rate_limit_wait:
                    raise
                await asyncio.sleep(pause)
                waited += pause

    async def _puts(self, ops: Sequence[PutOp]) -> None:
        last: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            last.pop((op.namespace, op.key), None)  # keep the last put, in its place
            last[(op.namespace, op.key)] = op
        puts = [
            item_put(
                op.namespace,
                op.key,
                None if op.value is None else dict(op.value),
                index=op.index if isinstance(op.index, list) else self.index,
                indexed=op.index is not False,
            )
            for op in last.values()
        ]
        for n in range(0, len(puts), PUTS_PER_CALL):
            await self._call(partial(self._client.put_items, puts[n : n + PUTS_PER_CALL]))

    async def _reads(self, ops: list[Op], where: range, results: list[Result]) -> None:
        gets = [n for n in where if isinstance(ops[n], GetOp)]

        async def get_all() -> None:
            for n in range(0, len(gets), GETS_PER_CALL):
                part = gets[n : n + GETS_PER_CALL]
                keys = [(ops[i].namespace, ops[i].key) for i in part]  # type: ignore[union-attr]
                found = await self._call(partial(self._client.get_items, keys))
                for i, item in zip(part, found, strict=True):
                    results[i] = _item(item) if item is not None else None

        async def one(n: int) -> None:
            op = ops[n]
            if isinstance(op, SearchOp):
                results[n] = await self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[n] = await self._list_namespaces(op)

        work: list[Awaitable[None]] = [one(n) for n in where if not isinstance(ops[n], GetOp)]
        await asyncio.gather(get_all(), *work)

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        found = await self._call(
            lambda: self._client.search_items(
                op.namespace_prefix,
                query=op.query,
                filter=op.filter,
                limit=op.limit,
                offset=op.offset,
            )
        )
        return [_search_item(f) for f in found]

    async def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        prefix = next((tuple(c.path) for c in conditions if c.match_type == "prefix"), None)
        suffix = next((tuple(c.path) for c in conditions if c.match_type == "suffix"), None)
        return await self._call(
            lambda: self._client.item_namespaces(
                prefix=prefix,
                suffix=suffix,
                max_depth=op.max_depth,
                limit=op.limit,
                offset=op.offset,
            )
        )
