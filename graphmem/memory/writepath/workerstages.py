"""Steps 2 and 3 of the enrichment worker's pipeline (``worker.py``): embedding admitted
items, then reading their entities, each in calls of bounded estimated work that take
the tenants in turn (``enrichturns.py``); a call that fails is tried again piece by
piece, so that one bad item fails only its own job. A job whose items are all through
is acknowledged.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from graphmem.enrich.sentences import MAX_SENTENCES
from graphmem.memory.writepath.enrichturns import CostRate, Piece, Turns, next_call
from graphmem.memory.writepath.jobclaims import JobClaims
from graphmem.memory.writepath.writebehind import WriteBehind
from graphmem.stores import EnrichmentQueue
from graphmem.stores.models import EnrichmentJob


@dataclass
class Stage:
    """Step 2 or 3: its pieces waiting, its turns and cost, and ``run``, which takes a
    call's pieces and returns those that are through."""

    run: Callable[[list[Piece]], Awaitable[list[Piece]]]
    cost: CostRate
    pending: list[Piece] = field(default_factory=list)
    turns: Turns = field(default_factory=Turns)
    ready: asyncio.Event = field(default_factory=asyncio.Event)


class EnrichmentStages(JobClaims):
    """Steps 2 and 3, and the items admitted (by ``EnrichmentWorker``) not yet through."""

    #: seconds of NER one memory may take in an enrichment call; past them it keeps its
    #: vector and the entities of the part read in time (``EntityExtractor.extract``)
    item_seconds = 10.0
    #: items in one embedding or NER call, at most
    enrich_batch = 256
    #: estimated seconds of work in one embedding or NER call: what a memory added now
    #: waits for behind the call under way (the estimate is learned, ``CostRate``)
    call_seconds = 0.3
    #: items admitted and not yet through, at most. Admission runs ahead of enrichment
    #: so that a burst is findable (by BM25) at once; the bound keeps what a worker holds
    #: in memory
    max_held = 2000

    def __init__(
        self, queue: EnrichmentQueue, writer: WriteBehind, name: str | None = None
    ) -> None:
        super().__init__(queue, name)
        self.writer = writer
        self.processed = 0
        # Per character, as measured on a 2-core x86 server: 20 KB take about 0.13 s to
        # embed (the embedder reads 16 sentences at most) and 1.5 to 2 s of NER.
        self.embed_cost = CostRate(1e-5, cap_chars=MAX_SENTENCES * 1000)
        self.read_cost = CostRate(1e-4)

    def _reset(self) -> None:
        super()._reset()
        #: admitted jobs: their items not yet through the last step
        self._left: dict[str, int] = {}
        self._embedding = Stage(self._embed, self.embed_cost)
        self._reading = Stage(self._read, self.read_cost)
        #: each tenant's items admitted and not yet through
        self._held: Counter[str] = Counter()
        self._room = asyncio.Event()

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
