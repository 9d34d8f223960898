"""The enrichment worker: takes write-behind jobs from the enrichment queue and runs them
(``writebehind.py``). ``graphmem worker`` runs one as its own process, and ``graphmem
serve`` starts ``GRAPHMEM_ENRICH_WORKERS`` of them beside the API, so that embedding and
NER never share the API's event loop (or its GIL).

Two loops form a pipeline: one reads jobs and admits their items (BM25-visible at once),
the other embeds and extracts the admitted jobs while the next ones are read. A job is
acknowledged only after step 2, so a worker killed at any point leaves it pending for
another worker to reclaim; both steps are idempotent, so the graph holds each item once.
A job that fails goes back to the queue with its attempt count and is parked with its
error after ``max_attempts``. While Neo4j or Redis is down the worker waits and retries;
it never drops a job for that.

No tenant holds up the others: the queue keeps one share of each tenant on the stream
(``stores/redis/queue.py``), each enrichment call takes the admitted jobs a tenant at a
time, least recently served first (``next_chunk``), and NER gives each memory
``item_seconds`` at most: past it, the memory keeps its vector and the entities of the
part read in time. While the worker holds jobs it refreshes its claim on them, so a slow
job is never taken over by another worker while this one is alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from functools import partial
from typing import TypeVar

from ..errors import GraphmemError, Unavailable
from ..stores import EnrichmentQueue
from ..stores.models import EnrichmentJob
from .writebehind import Admitted, WriteBehind

log = logging.getLogger("graphmem.worker")
T = TypeVar("T")


def next_chunk(
    pending: Admitted, items: int, served: dict[str, int] | None = None
) -> tuple[Admitted, Admitted]:
    """The jobs to enrich next, about ``items`` items (a job is never split), and the
    rest. Tenants take turns, one job each per turn, the one served longest ago first
    (``served``: each tenant's last turn, kept by the caller; a tenant not in it comes
    first), and a tenant's jobs keep their order: a tenant with a backlog gets one job
    into a call beside everyone else's, not the whole call."""
    served = served if served is not None else {}
    lines: dict[str, list[int]] = {}
    for n, (job, _) in enumerate(pending):
        lines.setdefault(job.tenant, []).append(n)
    order = sorted(lines, key=lambda t: served.get(t, -1))  # stable: first seen first
    taken: list[int] = []
    size = 0
    for turn in itertools.count():
        if size >= items or not any(turn < len(lines[t]) for t in order):
            break
        for tenant in order:
            if turn < len(lines[tenant]) and size < items:
                taken.append(lines[tenant][turn])
                size += len(pending[lines[tenant][turn]][1])
    chosen = set(taken)
    return [pending[n] for n in sorted(chosen)], [
        p for n, p in enumerate(pending) if n not in chosen
    ]


def interleave(jobs: Sequence[EnrichmentJob]) -> list[EnrichmentJob]:
    """``jobs`` a tenant at a time, round after round (tenants in the order they first
    come, each tenant's jobs in their order)."""
    lines: dict[str, list[EnrichmentJob]] = {}
    for job in jobs:
        lines.setdefault(job.tenant, []).append(job)
    rounds = itertools.zip_longest(*lines.values())
    return [job for turn in rounds for job in turn if job is not None]


def chunks(batch: Admitted, items: int) -> list[Admitted]:
    """``batch`` cut into the calls ``next_chunk`` would make of it, in order."""
    out: list[Admitted] = []
    served: dict[str, int] = {}
    while batch:
        chunk, batch = next_chunk(batch, items, served)
        for job, _ in chunk:
            served[job.tenant] = len(out)
        out.append(chunk)
    return out


class EnrichmentWorker:
    #: jobs read at once (each job is one add's items of one session)
    batch = 64
    #: how long a read waits for new jobs
    block_ms = 500
    #: a job another worker took and left this long is taken over. A live worker
    #: refreshes its claim on the jobs it holds every third of this (``touch``), so only
    #: the jobs of a worker that died or froze ever reach it
    reclaim_idle_seconds = 30.0
    #: seconds of NER one memory may take in an enrichment call; past them it keeps its
    #: vector and the entities of the part read in time (``EntityExtractor.extract``)
    item_seconds = 10.0
    #: deliveries of a failing job before it is parked
    max_attempts = 5
    #: items embedded in one call, at most (when that many are waiting)
    enrich_batch = 256
    #: items admitted (findable by BM25) but not yet enriched, at most. Admission runs
    #: ahead of enrichment so that a burst is findable at once; the bound keeps what a
    #: worker holds in memory, and reads far enough to reach every busy tenant's share
    #: of the stream (the queue's ``tenant_items``).
    max_held = 2000
    #: how often a worker tells the queue it is alive ...
    heartbeat_seconds = 2.0
    #: ... and how long after its last heartbeat it counts as gone. While a worker is
    #: alive, spills leave the embedding of items it has not reached to it.
    silent_after_seconds = 10.0

    def __init__(
        self, queue: EnrichmentQueue, writer: WriteBehind, name: str | None = None
    ) -> None:
        self.queue = queue
        self.writer = writer
        self.name = name or f"{socket.gethostname()}-{os.getpid()}"
        self.processed = 0
        self._held = 0
        self._room = asyncio.Event()
        #: the jobs read and not yet settled (acknowledged, retried or parked), by entry
        self._holding: dict[str, EnrichmentJob] = {}
        #: each tenant with admitted jobs: the enrichment call that last took one of them
        self._served: dict[str, int] = {}
        self._calls = 0

    async def run(self, stop: asyncio.Event) -> None:
        """Work until ``stop`` is set; jobs in hand are finished or left pending."""
        admitted: asyncio.Queue[Admitted | None] = asyncio.Queue()
        reading = asyncio.create_task(self._admit_loop(stop, admitted))
        claiming = asyncio.create_task(self._keep_claims(stop))
        pending: Admitted = []
        ended = False
        try:
            while not ended or pending:
                if not pending:
                    batch = await admitted.get()
                    if batch is None:
                        break
                    pending += batch
                # Whatever has been admitted meanwhile joins the choice, so a job that
                # arrives now can go into the next call, ahead of a backlog read before it.
                while not ended and not admitted.empty():
                    more = admitted.get_nowait()
                    if more is None:
                        ended = True
                    else:
                        pending += more
                if stop.is_set():
                    # Stop at once: what is admitted but not enriched stays pending on
                    # the stream, and another worker (or this one restarted) takes it.
                    break
                # At most ``enrich_batch`` items an embedding call (a read of 64 jobs may
                # hold a thousand), so that a call's jobs are acknowledged as soon as it is
                # done and the stream's lag stays one call's work.
                chunk, pending = next_chunk(pending, self.enrich_batch, self._served)
                self._calls += 1
                for job, _ in chunk:
                    self._served[job.tenant] = self._calls
                waiting = {job.tenant for job, _ in pending}
                self._served = {t: c for t, c in self._served.items() if t in waiting}
                await self._enrich(chunk, stop)
                self._held -= sum(len(i) for _, i in chunk)
                if self._held <= self.max_held:
                    self._room.set()
        finally:
            for task in (reading, claiming):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def drain(self, seconds: float = 60.0) -> None:
        """Run until the queue is empty (tests, ``graphmem worker --drain``)."""
        stop = asyncio.Event()
        task = asyncio.create_task(self.run(stop))
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                if (await self.queue.stats()).backlog == 0:
                    return
                if task.done():
                    task.result()
                await asyncio.sleep(0.05)
            raise TimeoutError(f"the enrichment queue did not drain in {seconds:.0f}s")
        finally:
            stop.set()
            await task

    async def _admit_loop(self, stop: asyncio.Event, out: asyncio.Queue[Admitted | None]) -> None:
        last_reclaim = last_beat = 0.0
        try:
            while not stop.is_set():
                if time.monotonic() - last_beat > self.heartbeat_seconds:
                    last_beat = time.monotonic()
                    await self._patiently(stop, lambda: self.queue.beat(self.name))
                jobs: list[EnrichmentJob] = []
                if time.monotonic() - last_reclaim > self.reclaim_idle_seconds / 3:
                    last_reclaim = time.monotonic()
                    jobs += (
                        await self._patiently(
                            stop,
                            lambda: self.queue.reclaim(
                                self.name, int(self.reclaim_idle_seconds * 1000), self.batch
                            ),
                        )
                        or []
                    )
                if not jobs:
                    jobs = (
                        await self._patiently(
                            stop, lambda: self.queue.read(self.name, self.batch, self.block_ms)
                        )
                        or []
                    )
                self._hold(jobs)
                batch: Admitted = []
                # A tenant at a time, each one's jobs in order, and handed on a call's worth
                # at a time: a job read behind another tenant's many is admitted, and can be
                # enriched, before the rest of them.
                for job in interleave(jobs):
                    if sum(len(items) for _, items in batch) >= self.enrich_batch:
                        self._held += sum(len(items) for _, items in batch)
                        await out.put(batch)
                        batch = []
                    if job.attempt > self.max_attempts:
                        gave_up = (
                            f"gave up: delivered {job.attempt} times, never finished (each "
                            "time the worker died or froze on it: killed, out of memory, or "
                            f"not heard from for {self.reclaim_idle_seconds:g}s)"
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
                        continue
                    try:
                        items = await self._patiently(stop, partial(self.writer.admit, job))
                    except Exception as exc:
                        await self._failed(job, exc, stop)
                        continue
                    if items is not None:
                        batch.append((job, items))
                if batch:
                    self._held += sum(len(items) for _, items in batch)
                    await out.put(batch)
                while self._held > self.max_held and not stop.is_set():
                    self._room.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._room.wait(), 0.5)
        finally:
            await out.put(None)
            with contextlib.suppress(Exception):  # it counts as gone after a while anyway
                await asyncio.wait_for(self.queue.beat(self.name, alive=False), 2)

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

    async def _enrich(self, batch: Admitted, stop: asyncio.Event) -> None:
        try:
            done = await self._patiently(stop, lambda: self.writer.enrich(batch, self.item_seconds))
        except Exception as exc:
            if len(batch) == 1:
                await self._failed(batch[0][0], exc, stop)
                return
            # One bad job must not fail the others: run them one by one.
            for one in batch:
                await self._enrich([one], stop)
            return
        if done is None and stop.is_set():
            return  # left pending; reclaimed after a restart
        jobs = [job for job, _ in batch]
        await self._patiently(stop, lambda: self.queue.ack(jobs))
        self._settled(jobs)
        self.processed += sum(len(items) for _, items in batch)

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
