"""Spill: hot items into the graph, lowest relevance and oldest first.

Which items go and when: an explicit spill (a count, or the items named), and the
automatic spills that take a session back to budget off the add's critical path, at most
one at a time per session, which reads after an add can wait for. Writing them (the
durability rule, retries, the breaker) is ``flush.py``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence

from graphmem import waits
from graphmem.domain.models import MemoryItem, SpillResult, Tier
from graphmem.errors import BadInput, NotFound, Unavailable
from graphmem.memory.inputs import Inputs
from graphmem.memory.tiers.flush import Flusher
from graphmem.memory.tiers.sessions import Sessions
from graphmem.memory.writepath.changes import ScopeChanges
from graphmem.memory.writepath.enrichment import Enrichment
from graphmem.metrics import Metrics
from graphmem.settings import MemoryConfig
from graphmem.stores import ChangeFeed, GraphStore, HotTier

log = logging.getLogger("graphmem.memory")


def spill_order(items: list[MemoryItem]) -> list[MemoryItem]:
    """Lowest relevance first, then oldest."""
    return sorted(items, key=lambda i: (i.relevance_score, i.created_at, i.id))


def combined(results: Sequence[SpillResult]) -> SpillResult:
    """Several spills of one session reported as one."""
    warm = [i for r in results for i in r.warm_ids]
    cold = [i for r in results for i in r.cold_ids]
    return SpillResult(
        spilled_count=len(warm) + len(cold),
        spilled_ids=[i for r in results for i in r.spilled_ids],
        target_tier=Tier.WARM if len(warm) > len(cold) else Tier.COLD,
        warm_ids=warm,
        cold_ids=cold,
    )


class Spiller(Flusher):
    #: spills of one session in a row, at most, while adds keep taking it over budget
    #: (then the next add starts another)
    max_rounds = 20
    #: how long an explicit spill waits for a live worker close to done with the session
    #: (it embeds a new memory in one call of about 0.3 s; a memory still waiting after
    #: this is written without its vector and its job sets it)
    enrich_wait_seconds = 1.0

    def __init__(
        self,
        hot: HotTier,
        graph: GraphStore,
        sessions: Sessions,
        enrichment: Enrichment,
        metrics: Metrics,
        events: ChangeFeed,
        changes: ScopeChanges | None = None,
    ) -> None:
        super().__init__(hot, graph, enrichment, metrics, events, changes)
        self.sessions = sessions
        self._running: dict[tuple[str, str], asyncio.Task[SpillResult]] = {}
        #: sessions whose running spill must run once more when it ends
        self._again: dict[tuple[str, str], MemoryConfig] = {}

    async def spill(
        self,
        tenant: str,
        session_id: str,
        count: int | None = None,
        item_ids: Sequence[str] | None = None,
        tier: Tier | None = None,
    ) -> SpillResult:
        """``tier`` puts every spilled item in that tier instead of deciding by its
        access count: how an import restores the tier an export recorded."""
        Inputs.scope(session_id, None)
        if tier is Tier.HOT:
            raise BadInput("tier: spill writes to WARM or COLD", field="tier")
        if count is not None and item_ids:
            raise BadInput("give either count or itemIds, not both")
        if count is not None and not 1 <= count <= 100_000:
            raise BadInput("count: must be between 1 and 100000", field="count")
        config = await self.sessions.config(tenant, session_id)
        # Before the lock: the worker needs it to take the session's new items.
        with waits.budget(self.enrich_wait_seconds) as seconds:
            await self.enrichment.caught_up(tenant, session_id, seconds)
        async with self.sessions.lock(tenant, session_id):
            if item_ids:
                chosen = await self.hot.get(tenant, session_id, list(dict.fromkeys(item_ids)))
                missing = set(item_ids) - {i.id for i in chosen}
                if missing:
                    raise NotFound(
                        f"not in the hot tier of session {session_id}: "
                        + ", ".join(sorted(missing)),
                        itemIds=sorted(missing),
                    )
            else:
                held = await self.hot.items(tenant, session_id)
                ordered = spill_order([i for i in held if i.parked is None])
                chosen = ordered[: count or config.spill_count]
            return await self.flush(tenant, session_id, chosen, config, tier=tier)

    async def in_background(
        self, tenant: str, session_id: str, config: MemoryConfig, total: int
    ) -> None:
        """Spill back to budget off the add's critical path. The add waits for it only when
        the hot tier (``total`` tokens) has grown past ``spillWaitAbove`` times its budget:
        that is back-pressure on a writer faster than its spills, while every other add
        returns at once (docs/concepts.md#tiers)."""
        if self.breaker.open:
            return  # the graph failed moments ago; the items wait in Redis
        key = (tenant, session_id)
        task = self._running.get(key)
        if task is None:
            task = self._start(key, config)
        else:
            # It may have read the hot tier before this add: it runs once more after.
            self._again[key] = config
        if total <= config.hot_token_limit * config.spill_wait_above:
            return
        # Back-pressure only: the add is stored, whatever this spill's outcome (``_done``
        # logs a failure). Its error was once the add's answer, and a client retried an
        # add that had been stored. asyncio.wait neither raises nor cancels the spill.
        await asyncio.wait({task}, timeout=config.spill_wait_seconds)

    def _start(self, key: tuple[str, str], config: MemoryConfig) -> asyncio.Task[SpillResult]:
        task = asyncio.create_task(self.to_budget(*key, config))
        self._running[key] = task
        task.add_done_callback(lambda t: self._done(key, t))
        return task

    async def settled(self, tenant: str, session_id: str, seconds: float) -> None:
        """Wait, up to ``seconds``, for the automatic spills of the session in flight:
        this process's own, or another replica's or worker's (by taking its lock once), so
        a read after an add sees the spill that add started. Whatever their outcome."""
        key = (tenant, session_id)
        deadline = time.monotonic() + seconds
        if key not in self._running:
            with contextlib.suppress(TimeoutError, Unavailable):
                async with asyncio.timeout(seconds), self.sessions.lock(tenant, session_id):
                    return
        while (task := self._running.get(key)) is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            await asyncio.wait({asyncio.shield(task)}, timeout=left)

    def _done(self, key: tuple[str, str], task: asyncio.Task[SpillResult]) -> None:
        again = None
        if self._running.get(key) is task:
            del self._running[key]
            again = self._again.pop(key, None)
        if task.cancelled():
            return
        exc = task.exception()
        if isinstance(exc, Unavailable):
            self.breaker.trip()  # the items wait in Redis; maintenance retries later
            log.warning("auto-spill of %s/%s postponed: %s", *key, exc.message)
        elif exc is not None:
            log.error("auto-spill of %s/%s failed", *key, exc_info=exc)
        elif again is not None:
            self._start(key, again)

    async def to_budget(
        self,
        tenant: str,
        session_id: str,
        config: MemoryConfig,
        keep: Sequence[str] = (),
        retries: int = 1,
    ) -> SpillResult:
        """Spill down to the low-water mark, so that one spill serves many adds. Adds do
        not wait for it (nor take the lock), so those that came in meanwhile may take the
        session over budget again: another round spills them."""
        done: list[SpillResult] = []
        async with self.sessions.lock(tenant, session_id):
            for _ in range(self.max_rounds):
                # Parked items stay in the hot tier but no spill can move them.
                items = [i for i in await self.hot.items(tenant, session_id) if i.parked is None]
                total = sum(i.token_count for i in items)
                if total <= config.hot_token_limit and done:
                    break
                chosen: list[MemoryItem] = []
                if total > config.hot_token_limit:
                    target = config.hot_token_limit * config.spill_low_water
                    # Items just promoted go last: spilling them would undo the promotion.
                    for item in sorted(spill_order(items), key=lambda i: i.id in keep):
                        if total <= target:
                            break
                        chosen.append(item)
                        total -= item.token_count
                done.append(await self.flush(tenant, session_id, chosen, config, retries=retries))
                if not chosen:
                    break
        return combined(done)

    async def settle(self) -> None:
        """Wait for the automatic spills in flight to end (whatever their outcome)."""
        while self._running:
            await asyncio.gather(*self._running.values(), return_exceptions=True)

    async def close(self) -> None:
        self._again.clear()
        for task in list(self._running.values()):
            task.cancel()
        await asyncio.gather(*self._running.values(), return_exceptions=True)
