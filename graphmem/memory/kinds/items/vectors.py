"""Store items' vectors, set after their put has answered.

A put of a few items (at most ``DEFER_MAX`` texts) writes them with ``vectorDue`` set
instead of embedding them on the request path: the embedding took about 4 ms of a
single put and the vector index's update on commit as much again (BENCHMARKS.md,
LangGraph store). The process that put them embeds them at once (``ItemVectors.run``,
handed the items by the put); Neo4j, not this process, is the record of what is due,
so an item whose process died before its vector was set is found by the sweep every
process runs (``sweep``, after ``SWEEP_AFTER``). Until then a query search compares a
pending item with the query itself (``ItemMemory._ranked``): it is found by meaning from
the moment its put returns, in every replica. Setting the vector also labels a new item
for the tenant's fulltext index (``item/vectors_set``), which its put left out of the
put's commit; the search scores its words meanwhile (``textscore.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime, timedelta
from typing import Protocol

from graphmem.cputime import in_thread
from graphmem.domain.models import utcnow
from graphmem.enrich.embed import Embedder
from graphmem.memory.kinds.items.values import MAX_EMBEDDED
from graphmem.stores import ItemStore
from graphmem.stores.models_items import ItemText, ItemVector

log = logging.getLogger("graphmem.memory")

#: texts a put may leave to be embedded after it answers; a larger put embeds on its
#: request path, in one batch, as an expensive operation (docs/limits.md)
DEFER_MAX = 16
#: items embedded and set in one batch
BATCH = 64
#: items handed over and not yet embedded that a process holds; past it the sweep finds
#: them (so memory stays bounded under a flood of puts)
QUEUE_CAP = 10_000
#: how often a process looks for items left pending, and how old they must be: younger
#: ones are their own process's, embedded within milliseconds
SWEEP_SECONDS = 5.0
SWEEP_AFTER = timedelta(seconds=10)
#: batches one sweep embeds per tenant before the next tenant's turn
SWEEP_BATCHES = 50
#: seconds the first item handed over waits for others to share its batch: one
#: item's embedding and vector write took 22 ms on a loaded machine, ten items' 49 ms
#: (BENCHMARKS.md, LangGraph store); a search meanwhile compares it itself
LINGER = 0.2
#: seconds a stopping process spends on what it was handed over
STOP_SECONDS = 5.0


class Costs(Protocol):
    """What a put costs beyond its request (``memory/tiers/admission.py``'s Admission)."""

    def expensive(self, tenant: str, count: int = 1) -> AbstractAsyncContextManager[None]:
        """Hold one of the tenant's expensive slots, and charge its cost."""

    def charge_later(self, size: int) -> None:
        """Charge the request with the later CPU work of ``size`` bytes of text."""


class Free:
    def expensive(self, tenant: str, count: int = 1) -> AbstractAsyncContextManager[None]:
        return contextlib.nullcontext()

    def charge_later(self, size: int) -> None:
        return None


class ItemVectors:
    """``embedder`` embeds on one onnxruntime thread (the API's query embedder), so that
    the pass holds one core, not both, while requests run; its vectors are ``model``'s.
    Not at a lower priority: a nice'd thread descheduled while it holds the GIL stalls
    the event loop (the bench's put went from 16-22 to 33 ms p50 so)."""

    def __init__(self, store: ItemStore, embedder: Embedder, model: str) -> None:
        self.store = store
        self.embedder = embedder
        self.model = model
        self._due: dict[str, list[ItemText]] = {}
        self._held = 0
        self._wake = asyncio.Event()

    def due(self, tenant: str, items: Sequence[ItemText]) -> None:
        """Items just put with their vector due: embedded by ``run`` as soon as it can."""
        if not items or self._held + len(items) > QUEUE_CAP:
            return  # the sweep finds them in Neo4j
        self._due.setdefault(tenant, []).extend(items)
        self._held += len(items)
        self._wake.set()

    async def embed(self, tenant: str, items: Sequence[ItemText]) -> int:
        """Embed the items' texts and set each vector whose item still holds that text;
        how many were set."""
        vectors = await in_thread(self.embedder.embed, [i.text for i in items])
        rows = [
            ItemVector(path=i.path, key=i.key, text=i.text, embedding=vector.tolist())
            for i, vector in zip(items, vectors, strict=True)
        ]
        return await self.store.set_vectors(tenant, rows, self.model, MAX_EMBEDDED)

    async def drain(self) -> int:
        """Embed every item handed over so far, one batch of a tenant at a time, the
        tenants in turn; a failed batch is left to the sweep."""
        done = 0
        while self._due:
            tenant = next(iter(self._due))
            items = self._due.pop(tenant)
            batch, rest = items[:BATCH], items[BATCH:]
            if rest:
                self._due[tenant] = rest  # back of the line
            self._held -= len(batch)
            try:
                done += await self.embed(tenant, batch)
            except Exception:  # the items stay due in Neo4j: the sweep retries them
                log.exception("store item vectors of %s not set", tenant)
        return done

    async def sweep(self, now: datetime | None = None) -> int:
        """Embed the items left due for longer than ``SWEEP_AFTER``, whichever process
        put them (one that died, or whose queue was full); how many were set."""
        before = (now or utcnow()) - SWEEP_AFTER
        done = 0
        for tenant in await self.store.vector_tenants(before, 100):
            for _ in range(SWEEP_BATCHES):
                items = await self.store.vectors_due(tenant, before, BATCH, MAX_EMBEDDED)
                set_now = await self.embed(tenant, items) if items else 0
                done += set_now
                if len(items) < BATCH or not set_now:
                    break
        return done

    async def run(self, stop: asyncio.Event) -> None:
        """Until ``stop``: embed what puts hand over as it comes, and sweep every
        ``SWEEP_SECONDS``. On ``stop``, what was handed over is embedded first, for up
        to ``STOP_SECONDS``."""
        next_sweep = 0.0
        stopping = asyncio.ensure_future(stop.wait())
        try:
            while not stop.is_set():
                if time.monotonic() >= next_sweep:
                    try:
                        await self.sweep()
                    except Exception:
                        log.exception("store item vector sweep failed")
                    next_sweep = time.monotonic() + SWEEP_SECONDS
                if self._due:
                    await asyncio.wait({stopping}, timeout=LINGER)
                    self._wake.clear()
                    await self.drain()
                    continue
                # nothing is due, so whatever set the event was taken by the last drain
                # (puts made while it ran join it): left set, the wait below returned at
                # once and this loop spun a core until the next put, slowing every
                # request the process served meanwhile (BENCHMARKS.md, LangGraph store)
                self._wake.clear()
                waking = asyncio.ensure_future(self._wake.wait())
                await asyncio.wait(
                    {waking, stopping},
                    timeout=max(0.0, next_sweep - time.monotonic()),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                waking.cancel()
            # what is left when time runs out stays due in Neo4j, for the next sweep
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.drain(), STOP_SECONDS)
        finally:
            stopping.cancel()
