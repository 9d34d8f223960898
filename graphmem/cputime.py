"""CPU time spent on behalf of the request that asked for it, wherever it runs.

The API's fair share (``api/http/fairshare.py``) debits each tenant with the CPU time its
requests use. A request runs on the event loop in steps (from one ``await`` to the
next), between other requests' steps, and hands work to threads (a long token count, a
query embedding, a schema validation) that run beside everyone else's. The process's
clock cannot say whose any of it is: split among the requests running at the time, one
tenant's 80 KB bodies and refusals were charged to another tenant's cheap reads, and
that tenant was refused turns it had not used. So the time is measured where it is
spent and handed to the *meter* of the request it was spent for:

- ``meter_tasks`` makes every task on the loop time each of its steps on the loop
  thread's own clock and charge the meter current in the task (the request's, and that
  of the tasks it starts, which inherit it);
- ``in_thread`` reads the thread's own clock around the call.

Outside a request (the enrichment worker, maintenance) there is no meter, and nothing
is charged.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import Callable, Coroutine, Generator, Iterator
from concurrent.futures import Executor
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

#: takes the CPU seconds a thread spent for the request running now
Meter = Callable[[float], None]

_meter: contextvars.ContextVar[Meter | None] = contextvars.ContextVar(
    "graphmem_cpu_meter", default=None
)


@contextlib.contextmanager
def metered(meter: Meter) -> Iterator[None]:
    """Charge the threads' CPU time of what runs inside (in this task and the tasks
    it starts) to ``meter``."""
    token = _meter.set(meter)
    try:
        yield
    finally:
        _meter.reset(token)


def charge(seconds: float) -> None:
    """Charge the current meter with work this request causes elsewhere, after it has
    answered (the enrichment worker's and Neo4j's for a new memory), as if it ran here."""
    meter = _meter.get()
    if meter is not None and seconds > 0:
        meter(seconds)


async def in_thread(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``asyncio.to_thread``, with the thread's CPU time charged to the current meter
    once the call returns. A caller that goes away before then charges nothing."""
    return await in_executor(None, fn, *args, **kwargs)


async def in_executor(
    executor: Executor | None, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
) -> T:
    """``in_thread`` on ``executor`` (the loop's default when None)."""
    meter = _meter.get()
    spent = 0.0

    def timed() -> T:
        nonlocal spent
        start = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent = time.thread_time() - start

    context = contextvars.copy_context()
    result = await asyncio.get_running_loop().run_in_executor(executor, context.run, timed)
    if meter is not None:
        meter(spent)
    return result


class _Stepped(Coroutine[Any, Any, Any]):
    """A task's coroutine, each of its steps timed on the loop thread's clock and charged
    to the meter current in the task when the step began or, for the step that set one
    (a request's first: its key, its body, its parsing), when it ended."""

    __slots__ = ("_coro",)

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self._coro = coro

    def send(self, value: Any) -> Any:
        meter, start = _meter.get(), time.thread_time()
        try:
            return self._coro.send(value)
        finally:
            _bill(meter, start)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        meter, start = _meter.get(), time.thread_time()
        try:
            if val is None and tb is None:
                return self._coro.throw(typ)
            return self._coro.throw(typ, val, tb)  # pragma: no cover - asyncio passes one
        finally:
            _bill(meter, start)

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, Any]:
        return self._coro.__await__()

    def __getattr__(self, name: str) -> Any:
        # cr_frame, cr_running, cr_code...: what inspect and anyio read of a task's coroutine
        return getattr(self._coro, name)


def _bill(meter: Meter | None, start: float) -> None:
    meter = meter or _meter.get()
    if meter is not None:
        spent = time.thread_time() - start
        if spent > 0:
            meter(spent)


def _stepped_task(
    loop: asyncio.AbstractEventLoop,
    coro: Coroutine[Any, Any, T] | Generator[Any, None, T],
    /,
    **kwargs: Any,
) -> asyncio.Task[T]:
    if not isinstance(coro, Coroutine):  # pragma: no cover - generators left as they are
        return asyncio.Task(coro, loop=loop, **kwargs)
    return asyncio.Task(_Stepped(coro), loop=loop, **kwargs)


@contextlib.contextmanager
def meter_tasks(loop: asyncio.AbstractEventLoop | None = None) -> Iterator[None]:
    """Time the steps of every task created on ``loop`` (the running one by default)
    from here on and charge them to their meters, until the block ends. Costs about
    2.5 µs a step (two reads of the thread's clock, a Python frame; BENCHMARKS.md)."""
    loop = loop or asyncio.get_running_loop()
    previous = loop.get_task_factory()
    loop.set_task_factory(_stepped_task)
    try:
        yield
    finally:
        loop.set_task_factory(previous)
