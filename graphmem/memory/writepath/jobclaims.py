"""An enrichment worker's hold on its jobs (``worker.py``): the jobs it has read and not
yet settled, the claim on them it keeps refreshing while it works on them (so that no
other worker takes over a slow job of a live one), and how each is settled:
acknowledged, retried, or parked with its reason once it failed or was delivered too
often. Every call to the queue (or the graph) waits out an outage instead of dropping a
job (``_patiently``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from typing import TypeVar

from graphmem.errors import GraphmemError, Unavailable
from graphmem.stores import EnrichmentQueue
from graphmem.stores.models import EnrichmentJob

log = logging.getLogger("graphmem.worker")
T = TypeVar("T")


class JobClaims:
    """The jobs a worker has read, from reading to settling."""

    #: a job another worker took and left this long is taken over. A live worker
    #: refreshes its claim on the jobs it holds every third of this (``touch``), so only
    #: the jobs of a worker that died or froze ever reach it
    reclaim_idle_seconds = 30.0
    #: deliveries of a failing job before it is parked
    max_attempts = 5

    def __init__(self, queue: EnrichmentQueue, name: str | None = None) -> None:
        self.queue = queue
        self.name = name or f"{socket.gethostname()}-{os.getpid()}"

    def _reset(self) -> None:
        #: the jobs read and not yet settled (acknowledged, retried or parked), by entry
        self._holding: dict[str, EnrichmentJob] = {}

    def _hold(self, jobs: Iterable[EnrichmentJob]) -> None:
        self._holding.update((job.entry, job) for job in jobs)

    def _settled(self, jobs: Iterable[EnrichmentJob]) -> None:
        for job in jobs:
            self._holding.pop(job.entry, None)

    async def _keep_claims(self, stop: asyncio.Event) -> None:
        """Refresh the claim on the jobs this worker holds, every third of
        ``reclaim_idle_seconds``: a job that takes long (a backlog admitted ahead, a slow
        memory) stays with this worker while it lives, instead of being delivered to
        another and worked on twice at once."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.reclaim_idle_seconds / 3)
            held = list(self._holding.values())
            if held and not stop.is_set():
                try:
                    await self.queue.touch(self.name, held)
                except GraphmemError as exc:  # tried again at the next turn
                    log.warning("enrichment worker cannot refresh its jobs: %s", exc.message)

    async def _acknowledge(self, jobs: list[EnrichmentJob], stop: asyncio.Event) -> None:
        await self._patiently(stop, lambda: self.queue.ack(jobs))
        self._settled(jobs)

    async def _failed(self, job: EnrichmentJob, exc: Exception, stop: asyncio.Event) -> None:
        reason = exc.message if isinstance(exc, GraphmemError) else f"{type(exc).__name__}: {exc}"
        if job.attempt >= self.max_attempts:
            log.error(
                "enrichment job %s of tenant %s parked (attempt %d): %s",
                job.entry,
                job.tenant,
                job.attempt,
                reason,
            )
            await self._patiently(stop, lambda: self.queue.park(job, reason))
        else:
            log.warning("enrichment job %s failed (attempt %d): %s", job.entry, job.attempt, reason)
            await self._patiently(stop, lambda: self.queue.retry(job))
        self._settled([job])

    async def _gave_up(self, job: EnrichmentJob, stop: asyncio.Event) -> None:
        gave_up = (
            f"gave up: delivered {job.attempt} times, never finished (each time the worker "
            "died or froze on it: killed, out of memory, or not heard from for "
            f"{self.reclaim_idle_seconds:g}s)"
        )
        log.error(
            "enrichment job %s of tenant %s parked (attempt %d): %s",
            job.entry,
            job.tenant,
            job.attempt,
            gave_up,
        )
        await self._patiently(stop, partial(self.queue.park, job, gave_up))
        self._settled([job])

    async def _patiently(self, stop: asyncio.Event, op: Callable[[], Awaitable[T]]) -> T | None:
        """``op``, retried while Neo4j or Redis is unavailable; None if stopped first."""
        delay = 0.25
        while True:
            try:
                return await op()
            except Unavailable as exc:
                log.warning("enrichment waits: %s (retry in %.1fs)", exc.message, delay)
            if stop.is_set():
                return None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            delay = min(delay * 2, 10.0)
