"""How long one request may still wait, in all, for work it does not do itself.

Some capabilities wait on purpose: an explicit spill gives a live enrichment worker up
to a second to finish the session's new memories, so that they reach the graph with
their vectors. Each such wait is bounded, but a request may run several (two aliased
``learnPersonaTrait`` mutations run one after the other), and their sum is what its
client waits. So the API layer gives each request one *allowance* (``allowance``), and
every deliberate wait draws on it (``budget``): the request's waits together stay
within it, and once it is spent the capability goes on without waiting (the spill
embeds what the worker has not).

Outside a request (a notebook, the worker, maintenance) there is no allowance, and each
wait is as long as its caller asks.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class _Allowance:
    left: float


_allowance: contextvars.ContextVar[_Allowance | None] = contextvars.ContextVar(
    "graphmem_wait_allowance", default=None
)


@contextlib.contextmanager
def allowance(seconds: float) -> Iterator[None]:
    """The waits of what runs inside (in this task and the tasks it starts) may take
    ``seconds`` in all."""
    token = _allowance.set(_Allowance(seconds))
    try:
        yield
    finally:
        _allowance.reset(token)


@contextlib.contextmanager
def budget(seconds: float) -> Iterator[float]:
    """A deliberate wait of up to ``seconds``: yields the seconds it may take (less once
    the request's allowance is low; 0 once it is spent) and draws the time the block
    took from the allowance."""
    held = _allowance.get()
    if held is None:
        yield seconds
        return
    started = time.monotonic()
    try:
        yield max(0.0, min(seconds, held.left))
    finally:
        held.left -= time.monotonic() - started
