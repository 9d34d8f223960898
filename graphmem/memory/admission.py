"""Admission control: no tenant may crowd out the others.

Per tenant (an API key decides the tenant): requests per second, expensive operations
(recall, search, spill ...) in flight at once, and the memories and bytes it may store.
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

from ..errors import GraphmemError, QuotaExceeded, RateLimited
from ..metrics import Metrics
from ..stores import AdmissionStore

log = logging.getLogger("graphmem.memory")

#: a holder of an expensive slot that died frees it after this long
SLOT_TTL_MS = 60_000


class AdmissionLimits(BaseModel):
    """0 switches a limit off."""

    model_config = ConfigDict(frozen=True)

    requests_per_second: int = Field(1000, ge=0)
    concurrent_expensive: int = Field(8, ge=0)
    max_memories: int = Field(0, ge=0)
    max_bytes: int = Field(0, ge=0)


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

    async def request(self, tenant: str) -> None:
        """Count one request; RATE_LIMITED past the tenant's requests per second."""
        limit = self.limits.requests_per_second
        if self.store is None or not limit:
            return
        now = time.time()
        try:
            count = await self.store.hit(tenant, int(now))
        except GraphmemError as exc:
            log.warning("rate limit not checked: %s", exc)
            return
        if count > limit:
            self.metrics.refused.labels(tenant, "rate").inc()
            retry_ms = max(1, int(1000 * (1 - (now % 1))))
            raise RateLimited(
                f"more than {limit} requests per second for this key; retry in {retry_ms} ms",
                retryAfterMs=retry_ms,
            )

    @asynccontextmanager
    async def expensive(self, tenant: str) -> AsyncIterator[None]:
        """Hold one of the tenant's slots for expensive work; RATE_LIMITED if none is free."""
        limit = self.limits.concurrent_expensive
        if self.store is None or not limit:
            yield
            return
        token = uuid.uuid4().hex
        try:
            granted = await self.store.acquire(
                tenant, token, limit, int(time.time() * 1000), SLOT_TTL_MS
            )
        except GraphmemError as exc:
            log.warning("concurrency limit not checked: %s", exc)
            granted, token = True, ""
        if not granted:
            self.metrics.refused.labels(tenant, "concurrency").inc()
            raise RateLimited(
                f"{limit} expensive operations (recall, search, spill ...) already run for "
                "this key; retry when one finishes",
                retryAfterMs=100,
            )
        try:
            yield
        finally:
            if token:
                try:
                    await self.store.release(tenant, token)
                except GraphmemError as exc:  # the slot expires by itself
                    log.warning("expensive slot not released: %s", exc)

    async def reserve(self, tenant: str, memories: int, size: int) -> None:
        """QUOTA_EXCEEDED if storing ``memories`` more (``size`` bytes) would pass the
        tenant's quota. The running count may drift (deletions do not all know their
        sizes), so near the limit the exact usage is counted and stored first."""
        cap_n, cap_b = self.limits.max_memories, self.limits.max_bytes
        if self.store is None or not (cap_n or cap_b):
            return
        held_n, held_b = await self.store.usage(tenant)
        if _over(held_n + memories, cap_n) or _over(held_b + size, cap_b):
            held_n, held_b = await self.exact_usage(tenant)
            await self.store.set_usage(tenant, held_n, held_b)
            if _over(held_n + memories, cap_n) or _over(held_b + size, cap_b):
                self.metrics.refused.labels(tenant, "quota").inc()
                raise QuotaExceeded(
                    f"this tenant holds {held_n} memories ({held_b} bytes); its quota is "
                    f"{cap_n or 'unlimited'} memories and {cap_b or 'unlimited'} bytes",
                    memories=held_n,
                    bytes=held_b,
                )

    async def added(self, tenant: str, memories: int, size: int) -> None:
        if self.store is not None and (self.limits.max_memories or self.limits.max_bytes):
            await self.store.add_usage(tenant, memories, size)


def _over(value: int, cap: int) -> bool:
    return bool(cap) and value > cap
