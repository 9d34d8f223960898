"""The enrichment worker: takes write-behind jobs from the enrichment queue and runs them
(``writebehind.py``). ``graphmem worker`` runs one as its own process, and ``graphmem
serve`` starts ``GRAPHMEM_ENRICH_WORKERS`` of them beside the API, so that embedding and
NER never share the API's event loop (or its GIL).

Three loops form a pipeline, an item at a time:

1. **admit** reads jobs and admits their items (BM25-visible at once);
2. **embed** embeds admitted items and sets their vectors (found by meaning from then on);
3. **read** extracts the entities of embedded items and writes them.

Embedding and NER run at once, on both cores, and an item is found by meaning as soon
as it is embedded, however long other items' NER takes. A job is acknowledged when all
of its items are through step 3, so a worker killed at any point leaves it pending for
another worker to reclaim; every step is idempotent, so the graph holds each item once.
A job that fails goes back to the queue with its attempt count and is parked with its
error after ``max_attempts``. While Neo4j or Redis is down the worker waits and retries;
it never drops a job for that.

No tenant holds up the others:

- the queue keeps one share of each tenant on the stream (``stores/redis/queue.py``);
- read jobs are admitted a job per tenant per round, for ``admit_seconds`` at a time
  before the stream is read again, and a tenant has at most ``tenant_held`` items
  admitted at once; its other jobs wait, read but not admitted (ids only), so a backlog
  never keeps another tenant's job from being read and admitted;
- each embedding or NER call is at most ``call_seconds`` of estimated work (a dearer
  item goes alone), and the tenant that will have been given the least estimated work
  once its next item is done takes it (``enrichturns.py``): a new memory waits for the
  call under way, whatever is queued ahead of it, and never rides in a long one;
- NER gives each memory ``item_seconds`` at most: past it, the memory keeps its vector
  and the entities of the part read in time.

While the worker holds jobs it refreshes its claim on them, so a slow job is never taken
over by another worker while this one is alive.

Here are the worker's life (``run``, ``drain``) and step 1; steps 2 and 3 are
``workerstages.py``'s, the jobs' claims and settling ``jobclaims.py``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from functools import partial

from graphmem.memory.writepath.enrichturns import Piece
from graphmem.memory.writepath.workerstages import EnrichmentStages
from graphmem.memory.writepath.writebehind import WriteBehind
from graphmem.stores import EnrichmentQueue
from graphmem.stores.models import EnrichmentJob


class EnrichmentWorker(EnrichmentStages):
    #: jobs read at once (each job is one add's items of one session)
    batch = 64
    #: how long a read waits for new jobs
    block_ms = 500
    #: items of one tenant admitted and not yet through, at most (``max_held`` is all
    #: tenants'): past it, the tenant's jobs are read but wait to be admitted
    tenant_held = 256
    #: seconds of admitting read jobs before the stream is looked at again
    admit_seconds = 0.2
    #: jobs read and waiting to be admitted, at most (each is a few ids): enough to
    #: reach past two busy tenants' shares of the stream, not so many that one worker
    #: holds what the others could work on
    read_ahead = 2048
    #: how often a worker tells the queue it is alive ...
    heartbeat_seconds = 2.0
    #: ... and how long after its last heartbeat it counts as gone. While a worker is
    #: alive, spills leave the embedding of items it has not reached to it.
    silent_after_seconds = 10.0
    #: once stopped, how long the calls under way may take to finish
    stop_grace_seconds = 5.0

    def __init__(
        self, queue: EnrichmentQueue, writer: WriteBehind, name: str | None = None
    ) -> None:
        super().__init__(queue, writer, name)
        self._reset()

    def _reset(self) -> None:
        super()._reset()
        #: read jobs waiting to be admitted, by tenant
        self._deferred: dict[str, deque[EnrichmentJob]] = {}

    async def run(self, stop: asyncio.Event) -> None:
        """Work until ``stop`` is set; jobs in hand are finished or left pending."""
        self._reset()
        stages = [
            asyncio.create_task(self._admit_loop(stop)),
            asyncio.create_task(self._stage_loop(stop, self._embedding)),
            asyncio.create_task(self._stage_loop(stop, self._reading)),
        ]
        claiming = asyncio.create_task(self._keep_claims(stop))
        stopped = asyncio.create_task(stop.wait())
        try:
            done, _ = await asyncio.wait([stopped, *stages], return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task is not stopped:
                    task.result()  # a stage ended without a stop: it failed
            # Stop at once: what is admitted but not through stays pending on the stream,
            # and another worker (or this one restarted) takes it.
            await asyncio.wait(stages, timeout=self.stop_grace_seconds)
        finally:
            for task in (*stages, claiming, stopped):
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

    # --- 1. admit ---------------------------------------------------------------------

    async def _admit_loop(self, stop: asyncio.Event) -> None:
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
                    jobs = await self._read_ahead(stop)
                # A job this worker holds already (taken back after a long pause) is in
                # hand; admitting it again would count its items twice.
                jobs = [job for job in jobs if job.entry not in self._holding]
                self._hold(jobs)
                for job in jobs:
                    if job.attempt > self.max_attempts:
                        await self._gave_up(job, stop)
                    else:
                        self._deferred.setdefault(job.tenant, deque()).append(job)
                await self._admit_some(stop)
                while self._held.total() > self.max_held and not stop.is_set():
                    self._room.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._room.wait(), 0.5)
        finally:
            with contextlib.suppress(Exception):  # it counts as gone after a while anyway
                await asyncio.wait_for(self.queue.beat(self.name, alive=False), 2)

    async def _read_ahead(self, stop: asyncio.Event) -> list[EnrichmentJob]:
        """New jobs, as far as the stream has them (``read_ahead`` jobs read and not
        admitted at most): a job is read in stream order, so one queued behind another
        tenant's share of the stream is reached at once, not after that share has been
        admitted. Reading costs little: a job is a few ids."""
        # With jobs to admit in hand, only a look at the stream (1 ms).
        block = 1 if self._admissible() else self.block_ms
        jobs: list[EnrichmentJob] = []
        while not stop.is_set():
            read = await self._patiently(
                stop, partial(self.queue.read, self.name, self.batch, block)
            )
            jobs += read or []
            waiting = len(jobs) + sum(len(d) for d in self._deferred.values())
            if len(read or []) < self.batch or waiting >= self.read_ahead:
                return jobs
            block = 1
        return jobs

    def _full(self, tenant: str) -> bool:
        return self._held[tenant] >= self.tenant_held

    def _admissible(self) -> bool:
        return any(not self._full(t) for t, jobs in self._deferred.items() if jobs)

    async def _admit_some(self, stop: asyncio.Event) -> None:
        """Admit read jobs for about ``admit_seconds``, a job per tenant per round (a
        tenant with ``tenant_held`` items in hand sits the round out), before the stream
        is looked at again: a job read behind another tenant's many is admitted in the
        first round, and one read later waits for one round, not for all of them."""
        started = time.monotonic()
        while self._admissible() and not stop.is_set():
            for tenant in list(self._deferred):
                waiting = self._deferred[tenant]
                if waiting and not self._full(tenant):
                    await self._admit(waiting.popleft(), stop)
                if not waiting:
                    del self._deferred[tenant]
            if time.monotonic() - started > self.admit_seconds:
                return

    async def _admit(self, job: EnrichmentJob, stop: asyncio.Event) -> None:
        try:
            items = await self._patiently(stop, partial(self.writer.admit, job))
        except Exception as exc:
            await self._failed(job, exc, stop)
            return
        if items is None:
            return  # stopped: left pending
        if not items:  # all forgotten meanwhile
            await self._acknowledge([job], stop)
            return
        self._left[job.entry] = len(items)
        self._held[job.tenant] += len(items)
        self._embedding.pending += [Piece(job, item) for item in items]
        self._embedding.ready.set()
