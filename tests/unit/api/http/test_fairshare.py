"""The process's fair share between tenants (graphmem/api/http/fairshare.py), on asyncio with
a clock the test moves: turns, waits, debts and refusals."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import pytest

from graphmem.api.http.fairshare import FairShare, ShareLimits
from graphmem.cputime import charge, in_thread, meter_tasks
from graphmem.errors import RateLimited
from graphmem.memory.tiers.admission import Admission, AdmissionLimits
from graphmem.metrics import Metrics


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Holder:
    """Holds a tenant's turn until released, as a request does: metered."""

    def __init__(self, share: FairShare, tenant: str, size: int = 0) -> None:
        self.share, self.tenant, self.size = share, tenant, size
        self.granted = asyncio.Event()
        self.release = asyncio.Event()
        self.error: BaseException | None = None
        self.spend = 0.0
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        with self.share.metered(self.tenant):
            try:
                async with self.share.turn(self.tenant, self.size):
                    self.granted.set()
                    await self.release.wait()
                    charge(self.spend)  # CPU time the operation took
            except RateLimited as exc:
                self.error = exc
                self.granted.set()

    async def done(self, spend: float = 0.0) -> None:
        self.spend = spend
        self.release.set()
        await self.task


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


@contextlib.asynccontextmanager
async def holders(*items: Holder) -> AsyncIterator[None]:
    try:
        yield
    finally:
        for h in items:
            h.release.set()
        await asyncio.gather(*(h.task for h in items), return_exceptions=True)


async def test_a_tenant_alone_may_use_every_slot() -> None:
    share = FairShare(ShareLimits(slots=3, tenant_slots=1), Clock())
    held = [Holder(share, "b") for _ in range(4)]
    async with holders(*held):
        await settle()
        assert [h.granted.is_set() for h in held] == [True, True, True, False]
        await held[0].done()
        await settle()
        assert held[3].granted.is_set()


async def test_a_light_tenant_goes_before_a_heavy_tenants_queue() -> None:
    clock = Clock()
    share = FairShare(ShareLimits(slots=2, tenant_slots=2, max_wait=5), clock)
    running = [Holder(share, "b") for _ in range(2)]
    await settle()
    queued = [Holder(share, "b") for _ in range(5)]
    light = Holder(share, "c")
    async with holders(*running, *queued, light):
        await settle()
        assert not light.granted.is_set()
        await running[0].done()  # the next free slot goes to c, not b's queue
        await settle()
        assert light.granted.is_set() and light.error is None
        assert not any(h.granted.is_set() for h in queued)


async def test_while_others_are_active_a_tenant_runs_at_most_its_slots() -> None:
    """A tenant that spent its credit runs ``tenant_slots`` at once; one that holds at
    least half its burst, ``light_slots`` (slowed by others, its few operations would
    otherwise queue behind their own slots)."""
    clock = Clock()
    limits = ShareLimits(slots=8, tenant_slots=2, light_slots=4, max_wait=5, overhead=0.0)
    share = FairShare(limits, clock)
    other = Holder(share, "c")
    await settle()
    spender = Holder(share, "b")
    await settle()
    await spender.done(spend=0.15)  # b is left 0.05 of its 0.2
    heavy = [Holder(share, "b") for _ in range(4)]
    light = [Holder(share, "c") for _ in range(4)]
    async with holders(other, *heavy, *light):
        await settle()
        assert sum(h.granted.is_set() for h in heavy) == 2
        assert sum(h.granted.is_set() for h in light) == 3  # with the one c already runs


async def test_large_bodies_run_one_at_a_time_while_others_are_active() -> None:
    """A tenant with its credit whole starts four small operations at once, but its large
    ones (documents: most of their cost is charged once they are stored) one at a time,
    and its small ones queue behind a large one; alone, it is not held back."""
    clock = Clock()
    limits = ShareLimits(slots=8, tenant_slots=2, light_slots=4, max_wait=5, solo_bytes=4096)
    share = FairShare(limits, clock)
    alone = [Holder(share, "b", size=80_000) for _ in range(3)]
    async with holders(*alone):
        await settle()
        assert all(h.granted.is_set() for h in alone)
    clock.now += 10  # b's turns above are out of the active window
    other = Holder(share, "c")
    await settle()
    large = [Holder(share, "b", size=80_000) for _ in range(3)]
    small = Holder(share, "b", size=100)
    async with holders(other, *large, small):
        await settle()
        assert [h.granted.is_set() for h in large] == [True, False, False]
        assert not small.granted.is_set()
        await large[0].done()
        await settle()
        assert [h.granted.is_set() for h in large] == [True, True, False]
        await large[1].done()
        await large[2].done()
        await settle()
        assert small.granted.is_set() and small.error is None


async def test_a_tenant_in_debt_waits_for_its_share_then_runs() -> None:
    clock = Clock()
    limits = ShareLimits(slots=8, tenant_slots=2, capacity=1.0, max_wait=1.0, overhead=0.0)
    share = FairShare(limits, clock)
    other = Holder(share, "c")
    await settle()
    first = Holder(share, "b")
    await settle()
    await first.done(spend=10.0)  # deep in debt, capped at rate * max_wait / 2
    late = Holder(share, "b")
    async with holders(other, late):
        await settle()
        assert not late.granted.is_set()
        # two tenants active: b refills at 0.5 s/s, its debt (0.25 s) is paid in 0.5 s
        clock.now += 0.6
        await asyncio.sleep(0.6)
        await settle()
        assert late.granted.is_set() and late.error is None


async def test_the_wait_is_bounded_and_the_refusal_says_when_to_retry() -> None:
    clock = Clock()
    share = FairShare(ShareLimits(slots=1, tenant_slots=1, max_wait=0.05), clock)
    blocker = Holder(share, "b")
    await settle()
    waiting = Holder(share, "b")
    async with holders(blocker, waiting):
        await asyncio.wait_for(waiting.granted.wait(), 2)
        assert isinstance(waiting.error, RateLimited)
        assert waiting.error.details["retryAfterMs"] > 0
        assert share.running == 1


async def test_a_tenants_queue_is_bounded() -> None:
    share = FairShare(ShareLimits(slots=1, max_queued=2, max_wait=5), Clock())
    blocker = Holder(share, "b")
    await settle()
    queued = [Holder(share, "b") for _ in range(3)]
    async with holders(blocker, *queued):
        await settle()
        refused = [h for h in queued if h.error is not None]
        assert len(refused) == 1 and isinstance(refused[0].error, RateLimited)


async def test_a_cancelled_wait_gives_its_turn_back() -> None:
    share = FairShare(ShareLimits(slots=1, max_wait=5), Clock())
    blocker = Holder(share, "b")
    await settle()
    waiting = Holder(share, "b")
    await settle()
    waiting.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting.task
    await blocker.done()
    assert share.running == 0
    after = Holder(share, "b")
    async with holders(after):
        await settle()
        assert after.granted.is_set() and share.running == 1


async def test_waiting_costs_nothing_and_wall_time_is_not_charged() -> None:
    clock = Clock()
    share = FairShare(ShareLimits(slots=8, burst=1.0, overhead=0.0), clock)
    with share.metered("b"):
        async with share.turn("b"):
            clock.now += 5.0  # waiting on Neo4j: no CPU
            charge(0.01)
    assert share._tenants["b"].balance == pytest.approx(0.99)


def _burn(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


async def test_each_request_is_charged_its_own_steps_on_the_loop() -> None:
    """Two tenants' requests interleave on the loop; each is charged the loop time of its
    own steps (and of the tasks it starts), not a split of whatever ran meanwhile."""
    limits = ShareLimits(slots=8, burst=1.0, max_wait=5, overhead=0.0)
    share = FairShare(limits, Clock())

    async def child() -> None:
        await asyncio.sleep(0)
        _burn(0.03)

    async def request(tenant: str, seconds: float) -> None:
        with share.metered(tenant):
            async with share.turn(tenant):
                for _ in range(3):
                    await asyncio.sleep(0)
                    _burn(seconds)
                if seconds:
                    await asyncio.gather(child(), child())

    with meter_tasks():
        b = asyncio.create_task(request("b", 0.02))
        c = asyncio.create_task(request("c", 0.0))
        await asyncio.gather(b, c)
    spent_b = 1.0 - share._tenants["b"].balance
    spent_c = 1.0 - share._tenants["c"].balance
    assert 0.12 <= spent_b < 0.2  # 3 x 0.02 on its own steps, 2 x 0.03 in its tasks
    assert spent_c < 0.01


async def test_a_threads_cpu_time_is_charged_to_the_tenant_that_asked_for_it() -> None:
    """A long token count in a thread is the asking tenant's, not split with whoever
    else held a turn meanwhile."""
    share = FairShare(ShareLimits(slots=8, burst=1.0, max_wait=5, overhead=0.0), Clock())
    other = Holder(share, "c")
    async with holders(other):
        await asyncio.wait_for(other.granted.wait(), 2)

        async def request() -> None:
            with share.metered("b"):
                async with share.turn("b"):
                    await in_thread(_burn, 0.05)

        await asyncio.wait_for(request(), 5)
        assert 1.0 - share._tenants["b"].balance >= 0.045
        assert share._tenants["c"].balance == 1.0


async def test_an_add_charges_the_work_it_causes_later_to_its_tenant_only() -> None:
    admission = Admission(None, AdmissionLimits(later_seconds_per_kb=0.01), Metrics(), _usage)
    limits = ShareLimits(burst=1.0, capacity=4.0, max_wait=5, overhead=0.0)
    share = FairShare(limits, Clock())
    with share.metered("b"):
        async with share.turn("b"):
            admission.charge_later(20 * 1024)  # 20 KB of new memories
    assert share._tenants["b"].balance == pytest.approx(1.0 - 0.2)
    admission.charge_later(20 * 1024)  # outside a request (an import, the worker): nobody's
    assert share._tenants["b"].balance == pytest.approx(1.0 - 0.2)


async def _usage(tenant: str) -> tuple[int, int]:
    return 0, 0
