"""Admission control: no tenant may crowd out the others.

Per tenant (an API key decides the tenant): cost units per second (one per operation,
valid or not, and ``expensive_cost`` more for each expensive field it runs: recall,
search, spill ...), expensive fields in flight at once, and the memories and bytes it
may store (every kind of item counts as a memory, ``graphmem/memory/tiers/quota.py``). How one
process's time is shared between tenants is ``api/http/fairshare.py``.
The counters live in Redis (``stores/redis/admission.py``) so every replica enforces one
limit. If Redis cannot be asked, requests are admitted: Redis being down already fails
every write, and reads should not fail for want of a counter.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from pydantic import BaseModel, ConfigDict, Field

from graphmem.cputime import charge
from graphmem.errors import BadInput, GraphmemError, QuotaExceeded, RateLimited
from graphmem.memory.tiers.quota import Pad
from graphmem.metrics import Metrics
from graphmem.stores import AdmissionStore

log = logging.getLogger("graphmem.memory")

#: a holder of an expensive slot that died frees it after this long
SLOT_TTL_MS = 60_000
#: a replica that died counting a tenant's usage exactly lets another count after this
RECOUNT_TTL_MS = 30_000


class AdmissionLimits(BaseModel):
    """0 switches a limit off."""

    model_config = ConfigDict(frozen=True)

    cost_per_second: int = Field(500, ge=0)
    expensive_cost: int = Field(10, ge=1)
    concurrent_expensive: int = Field(8, ge=0)
    max_memories: int = Field(0, ge=0)
    max_bytes: int = Field(0, ge=0)
    #: seconds of the enrichment worker's and Neo4j's CPU a KB of new memory costs after
    #: the add has answered, charged to the adding tenant's fair share (api/http/fairshare.py)
    later_seconds_per_kb: float = Field(0.01, ge=0)


class Admission:
    def __init__(
        self,
        store: AdmissionStore | None,
        limits: AdmissionLimits,
        metrics: Metrics,
        exact_usage: Callable[[str], Awaitable[tuple[int, int]]],
    ) -> None:
        self.store = store
        self.limits = limits
        self.metrics = metrics
        self.exact_usage = exact_usage

    def charge_later(self, size: int) -> None:
        """Charge the request running now (its tenant's fair share, ``cputime``) with
        what ``size`` bytes of new memories cost after it has answered: the worker
        embeds them and reads them for entities, and Neo4j indexes them. Not counting
        it, a tenant adding 20 KB memories within its share of the API kept the worker
        and Neo4j busy for everyone (BENCHMARKS.md, Neighbours)."""
        charge(size / 1024 * self.limits.later_seconds_per_kb)

    async def request(self, tenant: str, cost: int = 1, *, refuse: bool = True) -> None:
        """Count ``cost`` units; RATE_LIMITED past the tenant's cost per second (unless
        not ``refuse``: work already decided on is counted against the next requests)."""
        limit = self.limits.cost_per_second
        if self.store is None or not limit or cost <= 0:
            return
        now = time.time()
        try:
            count = await self.store.hit(tenant, int(now), cost)
        except GraphmemError as exc:
            log.warning("rate limit not checked: %s", exc)
            return
        if count > limit and refuse:
            self.metrics.refused.labels(tenant, "rate").inc()
            retry_ms = max(1, int(1000 * (1 - (now % 1))))
            raise RateLimited(
                f"more than {limit} cost units per second for this key (an operation costs"
                f" 1, each expensive field {self.limits.expensive_cost} more);"
                f" retry in {retry_ms} ms",
                retryAfterMs=retry_ms,
            )

    def check_expensive(self, count: int) -> None:
        """BAD_INPUT for an operation with more expensive fields than the tenant may run
        at once: it could never be admitted, so it is not worth a retry."""
        limit = self.limits.concurrent_expensive
        if limit and count > limit:
            raise BadInput(
                f"the operation runs {count} expensive fields (recall, search, spill ...,"
                f" aliases and fragments counted); at most {limit} may run at once",
                reason="TOO_COSTLY",
            )

    @asynccontextmanager
    async def expensive(self, tenant: str, count: int = 1) -> AsyncIterator[None]:
        """Hold ``count`` of the tenant's slots for expensive work, and charge their cost;
        RATE_LIMITED if not enough are free."""
        limit = self.limits.concurrent_expensive
        self.check_expensive(count)
        await self.request(tenant, count * self.limits.expensive_cost)
        if self.store is None or not limit:
            yield
            return
        token = uuid.uuid4().hex
        try:
            granted = await self.store.acquire(
                tenant, token, limit, int(time.time() * 1000), SLOT_TTL_MS, count
            )
        except GraphmemError as exc:
            log.warning("concurrency limit not checked: %s", exc)
            granted, token = True, ""
        if not granted:
            self.metrics.refused.labels(tenant, "concurrency").inc()
            raise RateLimited(
                f"{limit} expensive fields (recall, search, spill ...) at once for this key,"
                f" and this operation needs {count} more; retry when one finishes",
                retryAfterMs=100,
            )
        try:
            yield
        finally:
            if token:
                try:
                    await self.store.release(tenant, token, count)
                except GraphmemError as exc:  # the slot expires by itself
                    log.warning("expensive slot not released: %s", exc)

    async def reserve(self, tenant: str, memories: int, size: int) -> None:
        """QUOTA_EXCEEDED if storing ``memories`` more items of any kind (``size`` bytes)
        would pass the tenant's quota (``graphmem/memory/tiers/quota.py``). The running count drifts
        upwards (deletions, expiries, replacements and trimmed messages are not all
        subtracted), so near the limit the exact usage is counted and stored first.

        The exact count reads the whole tenant (the graph, every hot session, every
        pad), so a tenant at its quota, refused write after write, must not run one per
        write: one runs at a time per tenant (a write arriving meanwhile is judged by
        the running count), and each costs the tenant an expensive field's units."""
        cap_n, cap_b = self.limits.max_memories, self.limits.max_bytes
        if self.store is None or not (cap_n or cap_b):
            return
        held_n, held_b = await self.store.usage(tenant)
        if _over(held_n + memories, cap_n) or _over(held_b + size, cap_b):
            if await self.store.claim_recount(tenant, RECOUNT_TTL_MS):
                try:
                    # counted, not refused: a tenant with a small budget must still
                    # learn that it is over its quota, not be told to retry forever
                    await self.request(tenant, self.limits.expensive_cost, refuse=False)
                    held_n, held_b = await self._exact(tenant)
                    await self.store.set_usage(tenant, held_n, held_b)
                finally:
                    await self.store.end_recount(tenant)
            if _over(held_n + memories, cap_n) or _over(held_b + size, cap_b):
                self.metrics.refused.labels(tenant, "quota").inc()
                raise QuotaExceeded(
                    f"this tenant holds {held_n} items (memories, records, messages, tasks,"
                    f" episodes ...: {held_b} bytes) and this write adds {memories}"
                    f" ({size} bytes); its quota is {cap_n or 'unlimited'} items and"
                    f" {cap_b or 'unlimited'} bytes",
                    memories=held_n,
                    bytes=held_b,
                )

    async def added(self, tenant: str, memories: int, size: int) -> None:
        if self.store is not None and (self.limits.max_memories or self.limits.max_bytes):
            await self.store.add_usage(tenant, memories, size)

    async def holding(self, tenant: str, pad: Pad, owner: str, ttl_seconds: int) -> None:
        """Note that the tenant keeps ``pad`` of ``owner`` in Redis for ``ttl_seconds``
        (renewed by each write), so the exact count finds it until it expires."""
        if self.store is None or not (self.limits.max_memories or self.limits.max_bytes):
            return
        try:
            await self.store.hold_pad(
                tenant, pad.value, owner, int(time.time() * 1000), ttl_seconds
            )
        except GraphmemError as exc:  # counted in the running count all the same
            log.warning("quota: %s of %s not noted: %s", pad.name, tenant, exc.message)

    async def _exact(self, tenant: str) -> tuple[int, int]:
        held_n, held_b = await self.exact_usage(tenant)
        assert self.store is not None
        pads_n, pads_b = await self.store.pads_usage(tenant, int(time.time() * 1000))
        return held_n + pads_n, held_b + pads_b


def _over(value: int, cap: int) -> bool:
    return bool(cap) and value > cap
