"""An in-memory enrichment queue (``EnrichmentQueue``): jobs read once each, in the order
they were added, until acknowledged; the tenant's waiting count follows its jobs; worker
heartbeats counted within a window. The fairness lanes of
``graphmem/stores/redis/queue.py`` (a tenant's jobs beyond its share wait off the stream)
are not modelled: every job is readable at once. Retries, parking and taking over another
consumer's jobs are the worker's concern, not modelled either."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Sequence
from typing import NoReturn

from graphmem.stores.models import EnrichmentJob, QueueStats
from tests.support.fakes.clock import Clock


def not_modelled(what: str) -> NoReturn:
    raise NotImplementedError(f"the in-memory enrichment queue does not model {what}")


class FakeEnrichmentQueue:
    def __init__(self, clock: Clock = time.time) -> None:
        self.clock = clock
        self._ids = itertools.count(1)
        #: jobs not yet read, in order; read and not acknowledged, by entry
        self._new: list[tuple[EnrichmentJob, float]] = []
        self._pending: dict[str, tuple[EnrichmentJob, float]] = {}
        self._waiting: dict[str, int] = {}
        self._beats: dict[str, float] = {}
        self._added = asyncio.Event()

    async def ensure(self) -> None:
        return None

    async def add(self, tenant: str, session_id: str, ids: Sequence[str]) -> None:
        entry = f"{int(self.clock() * 1000)}-{next(self._ids)}"
        job = EnrichmentJob(entry=entry, tenant=tenant, session_id=session_id, ids=list(ids))
        self._new.append((job, self.clock()))
        self._waiting[tenant] = self._waiting.get(tenant, 0) + len(ids)
        self._added.set()

    def jobs(self) -> list[EnrichmentJob]:
        """Every job not acknowledged yet, read or not, in the order added."""
        return sorted(
            [j for j, _ in self._new] + [j for j, _ in self._pending.values()],
            key=lambda j: tuple(int(x) for x in j.entry.split("-")),
        )

    async def read(self, consumer: str, count: int, block_ms: int) -> list[EnrichmentJob]:
        if not self._new and block_ms > 0:
            self._added.clear()
            try:
                await asyncio.wait_for(self._added.wait(), block_ms / 1000)
            except TimeoutError:
                return []
        taken, self._new = self._new[:count], self._new[count:]
        for job, added in taken:
            self._pending[job.entry] = (job, added)
        return [job for job, _ in taken]

    async def ack(self, jobs: Sequence[EnrichmentJob]) -> None:
        for job in jobs:
            if self._pending.pop(job.entry, None) is not None:
                left = self._waiting.get(job.tenant, 0) - len(job.ids)
                self._waiting[job.tenant] = max(0, left)

    async def tenant_backlog(self, tenant: str) -> tuple[int, int]:
        return self._waiting.get(tenant, 0), 0

    async def stats(self) -> QueueStats:
        queued = [added for _, added in self._new] + [a for _, a in self._pending.values()]
        oldest = max(0.0, self.clock() - min(queued)) if queued else 0.0
        return QueueStats(
            backlog=len(queued),
            pending=len(self._pending),
            parked=0,
            oldest_seconds=round(oldest, 3),
        )

    async def beat(self, consumer: str, alive: bool = True) -> None:
        if alive:
            self._beats[consumer] = self.clock()
        else:
            self._beats.pop(consumer, None)

    async def workers(self, within_seconds: float) -> int:
        now = self.clock()
        return sum(1 for at in self._beats.values() if at >= now - within_seconds)

    async def reclaim(self, consumer: str, idle_ms: int, count: int) -> list[EnrichmentJob]:
        not_modelled("taking over another consumer's jobs (reclaim)")

    async def touch(self, consumer: str, jobs: Sequence[EnrichmentJob]) -> int:
        not_modelled("claims on jobs held (touch)")

    async def retry(self, job: EnrichmentJob) -> None:
        not_modelled("retries of failed jobs")

    async def park(self, job: EnrichmentJob, error: str) -> None:
        not_modelled("parking failed jobs")

    async def parked(self, count: int = 100) -> list[dict[str, str]]:
        not_modelled("parked jobs")
