"""The enrichment worker: takes write-behind jobs from the enrichment queue and runs them
(``writebehind.py``). ``graphmem worker`` runs one as its own process, and ``graphmem
serve`` starts ``GRAPHMEM_ENRICH_WORKERS`` of them beside the API, so that embedding and
NER never share the API's event loop (or its GIL).

Two loops form a pipeline: one reads jobs and admits their items (BM25-visible at once),
the other embeds and extracts the admitted batch while the next one is read. A job is
acknowledged only after step 2, so a worker killed at any point leaves it pending for
another worker to reclaim; both steps are idempotent, so the graph holds each item once.
A job that fails goes back to the queue with its attempt count and is parked with its
error after ``max_attempts``. While Neo4j or Redis is down the worker waits and retries;
it never drops a job for that.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TypeVar

from ..errors import GraphmemError, Unavailable
from ..stores import EnrichmentQueue
from ..stores.models import EnrichmentJob
from .writebehind import Admitted, WriteBehind

log = logging.getLogger("graphmem.worker")
T = TypeVar("T")


def chunks(batch: Admitted, items: int) -> list[Admitted]:
    """Consecutive runs of jobs of about ``items`` items each (a job is never split)."""
    out: list[Admitted] = []
    size = items
    for job in batch:
        if size >= items:
            out.append([])
            size = 0
        out[-1].append(job)
        size += len(job[1])
    return out


class EnrichmentWorker:
    #: jobs read at once (each job is one add's items of one session)
    batch = 64
    #: how long a read waits for new jobs
    block_ms = 500
    #: a job another worker took and left this long is taken over
    reclaim_idle_seconds = 30.0
    #: deliveries of a failing job before it is parked
    max_attempts = 5
    #: items embedded in one call, at most (when that many are waiting)
    enrich_batch = 256
    #: items admitted (findable by BM25) but not yet enriched, at most. Admission runs
    #: ahead of enrichment so that a burst is findable at once; the bound keeps what a
    #: worker holds well within ``reclaim_idle_seconds`` of enrichment, or another
    #: worker would take it over while it waits.
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

    async def run(self, stop: asyncio.Event) -> None:
        """Work until ``stop`` is set; jobs in hand are finished or left pending."""
        admitted: asyncio.Queue[Admitted | None] = asyncio.Queue()
        reading = asyncio.create_task(self._admit_loop(stop, admitted))
        try:
            while (batch := await admitted.get()) is not None:
                if stop.is_set():
                    # Stop at once: what is admitted but not enriched stays pending on
                    # the stream, and another worker (or this one restarted) takes it.
                    break
                # Enrich what has queued up meanwhile in the same call: bigger batches
                # are cheaper per item, and the admitted items wait less.
                ended = False
                while sum(len(i) for _, i in batch) < self.enrich_batch and not admitted.empty():
                    more = admitted.get_nowait()
                    if more is None:
                        ended = True
                        break
                    batch += more
                # At most ``enrich_batch`` items an embedding call (a read of 64 jobs may hold
                # a thousand): each chunk's jobs are acknowledged as soon as it is done, so
                # the stream's lag stays one chunk's work, not one read's.
                for chunk in chunks(batch, self.enrich_batch):
                    if stop.is_set():
                        break
                    await self._enrich(chunk, stop)
                    self._held -= sum(len(i) for _, i in chunk)
                    if self._held <= self.max_held:
                        self._room.set()
                if ended:
                    break
        finally:
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading

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
                batch: Admitted = []
                for job in jobs:
                    if job.attempt > self.max_attempts:
                        gave_up = "gave up: delivered too often (a worker died on it?)"
                        await self._patiently(stop, partial(self.queue.park, job, gave_up))
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

    async def _enrich(self, batch: Admitted, stop: asyncio.Event) -> None:
        try:
            done = await self._patiently(stop, lambda: self.writer.enrich(batch))
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
        await self._patiently(stop, lambda: self.queue.ack([job for job, _ in batch]))
        self.processed += sum(len(items) for _, items in batch)

    async def _failed(self, job: EnrichmentJob, exc: Exception, stop: asyncio.Event) -> None:
        reason = exc.message if isinstance(exc, GraphmemError) else f"{type(exc).__name__}: {exc}"
        if job.attempt >= self.max_attempts:
            log.error("enrichment job %s parked (attempt %d): %s", job.entry, job.attempt, reason)
            await self._patiently(stop, lambda: self.queue.park(job, reason))
        else:
            log.warning("enrichment job %s failed (attempt %d): %s", job.entry, job.attempt, reason)
            await self._patiently(stop, lambda: self.queue.retry(job))

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
