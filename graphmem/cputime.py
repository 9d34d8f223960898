"""CPU time that threads spend on behalf of the request that asked for it.

The API's fair share (``api/fairshare.py``) debits each tenant with the CPU time its
requests use. What runs on the event loop it measures with the loop thread's own clock
and splits among the requests running at the time. Work handed to a thread (a long
token count, a query embedding, a schema validation) runs beside every other request's,
so the process's clock cannot say whose it is: split like the loop's time, one tenant's
20 KB token counts were charged to another tenant's cheap reads, and that tenant waited
for turns it had not used. ``in_thread`` therefore reads the thread's own clock around
the call and hands the time to the meter of the request that asked for it.

Outside a request (the enrichment worker, maintenance) there is no meter and the call
runs as ``asyncio.to_thread`` would.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from typing import ParamSpec, TypeVar

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
