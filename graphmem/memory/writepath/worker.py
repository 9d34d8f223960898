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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from graphmem.enrich.sentences import MAX_SENTENCES
from graphmem.errors import GraphmemError, Unavailable
from graphmem.memory.writepath.enrichturns import CostRate, Piece, Turns, next_call
from graphmem.memory.writepath.writebehind import WriteBehind
from graphmem.stores import EnrichmentQueue
from graphmem.stores.models import EnrichmentJob

log = logging.getLogger("graphmem.worker")
T = TypeVar("T")


@dataclass
class Stage:
    """Step 2 or 3: its pieces waiting, its turns and cost, and ``run``, which takes a
    call's pieces and returns those that are through."""

    run: Callable[[list[Piece]], Awaitable[list[Piece]]]
    cost: CostRate
    pending: list[Piece] = field(default_factory=list)
    turns: Turns = field(default_factory=Turns)
    ready: asyncio.Event = field(default_factory=asyncio.Event)


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
    #: items in one embedding or NER call, at most
    enrich_batch = 256
    #: estimated seconds of work in one embedding or NER call: what a memory added now
    #: waits for behind the call under way (the estimate is learned, ``CostRate``)
    call_seconds = 0.3
    #: items admitted and not yet through, at most. Admission runs ahead of enrichment
    #: so that a burst is findable (by BM25) at once; the bound keeps what a worker holds
    #: in memory
    max_held = 2000
    #: ... and of one tenant: past it, the tenant's jobs are read but wait to be admitted
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
        self.queue = queue
        self.writer = writer
        self.name = name or f"{socket.gethostname()}-{os.getpid()}"
        self.processed = 0
        # Per character, measured on this machine: 20 KB take about 0.13 s to embed (the
        # embedder reads 16 sentences at most) and 1.5 to 2 s of NER.
        self.embed_cost = CostRate(1e-5, cap_chars=MAX_SENTENCES * 1000)
        self.read_cost = CostRate(1e-4)
        self._reset()

    def _reset(self) -> None:
        #: the jobs read and not yet settled (acknowledged, retried or parked), by entry
        self._holding: dict[str, EnrichmentJob] = {}
        #: admitted jobs: their items not yet through the last step
        self._left: dict[str, int] = {}
        #: read jobs waiting to be admitted, by tenant
        self._deferred: dict[str, deque[EnrichmentJob]] = {}
        self._embedding = Stage(self._embed, self.embed_cost)
        self._reading = Stage(self._read, self.read_cost)
        #: each tenant's items admitted and not yet through
        self._held: Counter[str] = Counter()
        self._room = asyncio.Event()

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

    # --- 2. embed and 3. read ---------------------------------------------------------

    async def _stage_loop(self, stop: asyncio.Event, stage: Stage) -> None:
        while not stop.is_set():
            chunk = self._next(stage)
            if not chunk:
                stage.ready.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stage.ready.wait(), 0.5)
                continue
            await self._call(stage, chunk, stop)

    def _next(self, stage: Stage) -> list[Piece]:
        chunk, stage.pending = next_call(
            stage.pending, self.enrich_batch, self.call_seconds, stage.cost.estimate, stage.turns
        )
        return chunk

    async def _call(self, stage: Stage, chunk: list[Piece], stop: asyncio.Event) -> None:
        """``stage`` on ``chunk``; if it fails, on each piece alone, so that one bad item
        fails its own job and not the others."""
        live = [p for p in chunk if p.job.entry in self._left]
        await self._release([p for p in chunk if p.job.entry not in self._left], stop)
        if not live:
            return
        try:
            started = time.monotonic()
            through = await self._patiently(stop, lambda: stage.run(live))
        except Exception as exc:
            if len(live) > 1:
                for piece in live:
                    await self._call(stage, [piece], stop)
                return
            (piece,) = live
            await self._release(live, stop, done=False)
            await self._fail(piece.job, exc, stop)
            return
        if through is None:
            return  # stopped: left pending
        stage.cost.learn(live, time.monotonic() - started)
        await self._release(through, stop)

    async def _embed(self, chunk: list[Piece]) -> list[Piece]:
        """Step 2: vectors set; the pieces go on to step 3, but for those forgotten
        meanwhile, which are through."""
        embedded = await self.writer.embed([p.item for p in chunk])
        forgotten = []
        for piece, vectors in zip(chunk, embedded, strict=True):
            if vectors is None:
                forgotten.append(piece)
            else:
                piece.embedded = vectors
                self._reading.pending.append(piece)
        self._reading.ready.set()
        return forgotten

    async def _read(self, chunk: list[Piece]) -> list[Piece]:
        """Step 3: entities written, vectors and entities cached; the pieces are through."""
        embedded = [p.embedded for p in chunk if p.embedded is not None]
        assert len(embedded) == len(chunk)  # only embedded pieces come this far
        await self.writer.extract([p.item for p in chunk], embedded, self.item_seconds)
        return chunk

    async def _release(
        self, pieces: Sequence[Piece], stop: asyncio.Event, done: bool = True
    ) -> None:
        """``pieces`` leave the worker: through (``done``), or dropped with their failed
        job. A job whose pieces are all through is acknowledged."""
        finished = []
        for piece in pieces:
            self._held[piece.tenant] -= 1
            if self._held[piece.tenant] <= 0:
                del self._held[piece.tenant]
            entry = piece.job.entry
            if done and entry in self._left:
                self.processed += 1
                self._left[entry] -= 1
                if self._left[entry] == 0:
                    del self._left[entry]
                    finished.append(piece.job)
        if self._held.total() <= self.max_held:
            self._room.set()
        if finished:
            await self._acknowledge(finished, stop)

    async def _acknowledge(self, jobs: list[EnrichmentJob], stop: asyncio.Event) -> None:
        await self._patiently(stop, lambda: self.queue.ack(jobs))
        self._settled(jobs)

    async def _fail(self, job: EnrichmentJob, exc: Exception, stop: asyncio.Event) -> None:
        """``job`` failed: its pieces still waiting are dropped (those in a call of the
        other stage are when it ends), and it is retried or parked."""
        if self._left.pop(job.entry, None) is None:
            return  # failed already
        dropped = []
        for stage in (self._embedding, self._reading):
            dropped += [p for p in stage.pending if p.job.entry == job.entry]
            stage.pending = [p for p in stage.pending if p.job.entry != job.entry]
        await self._release(dropped, stop, done=False)
        await self._failed(job, exc, stop)

    # --- claims -----------------------------------------------------------------------

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
