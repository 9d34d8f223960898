"""Fair shares of one API process's time between tenants.

One process serves every tenant from one event loop, so a tenant that sends work flat
out (cheap or expensive, valid or not) takes the loop's time from everybody else. A
per-tenant request rate cannot fix that: it counts requests, not what they cost, and a
rate high enough for one busy tenant alone is more than the process serves.

Here every operation takes a *turn* before it runs:

- at most ``slots`` operations run at once in the process;
- while more than one tenant is active (sent something in the last ``active_window``
  seconds), each tenant runs at most ``tenant_slots`` at once, and spends at most
  ``capacity / active tenants`` seconds of the process's CPU per second;
- a tenant holding at least half its ``burst`` in credit runs up to ``light_slots`` at
  once: it spent little lately, so its operations wait on the stores, and slowed down
  by others they would otherwise queue behind its own few slots;
- a tenant's balance is debited with the CPU time its requests spend, as they spend it:
  on the event loop (from the moment its key is known, waiting and refusals included)
  and in the threads they hand work to (``cputime``: measured where it runs, so one
  tenant is never charged for another's work), plus ``overhead`` per operation for
  what runs before its key is known (HTTP parsing). It is refilled at the tenant's
  rate, and its debt is capped at what the tenant repays in half of ``max_wait``;
- an operation that brings a large body (``solo_bytes``: a document, not a message)
  runs only while none of its tenant's others do: most of what it costs comes after it
  answers (the enrichment worker's, Neo4j's) and is charged when it is stored, so large
  ones started side by side on a full balance would all start before the first charge;
- a tenant alone is not slowed: it may use every slot (its balance still counts, so a
  tenant that had the process to itself yields at once when another arrives);
- a tenant whose operation cannot start waits in its own queue (waiting costs no CPU),
  at most ``max_wait`` seconds and at most ``max_queued`` operations deep; past either
  it is refused with ``RATE_LIMITED`` and ``retryAfterMs``. The waiting tenant with the
  most credit goes first, so a light tenant is never queued behind a heavy one.

The shares are per process on purpose: the loop's time is what they divide, and each
replica has its own. The limits that must hold across replicas (cost per second,
expensive operations at once) are counted in Redis (``memory/tiers/admission.py``).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field

from graphmem.cputime import metered
from graphmem.errors import RateLimited


@dataclass(frozen=True)
class ShareLimits:
    slots: int = 8
    tenant_slots: int = 2
    #: a tenant's slots while it holds at least half its ``burst`` in credit
    light_slots: int = 4
    #: CPU seconds per second divided among the active tenants (the event loop is one;
    #: at two thirds of it, others' operations seldom queue behind the turns, and two
    #: tenants get a third of a core each: a steady client's quarter fits in it)
    capacity: float = 0.65
    max_wait: float = 1.0
    max_queued: int = 64
    active_window: float = 2.0
    #: the most credit a tenant may bank (CPU seconds)
    burst: float = 0.2
    #: seconds charged per operation for what runs before its turn (HTTP, key, body)
    overhead: float = 0.0005
    #: a body at least this large runs only while none of its tenant's others run
    solo_bytes: int = 4096


@dataclass
class _Tenant:
    balance: float
    stamp: float
    seen: float
    running: int = 0
    waiting: deque[_Waiter] = field(default_factory=deque)


@dataclass
class _Waiter:
    future: asyncio.Future[None]
    solo: bool


class FairShare:
    def __init__(self, limits: ShareLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.clock = clock
        self.running = 0
        self._tenants: dict[str, _Tenant] = {}
        self._active = 1
        self._timer: asyncio.TimerHandle | None = None
        self._pruned = 0.0

    @contextmanager
    def metered(self, tenant: str) -> Iterator[None]:
        """Charge the CPU time of what runs inside (on the loop, when its tasks are
        metered: ``cputime.meter_tasks``; and in threads) to ``tenant``."""
        with metered(lambda seconds: self._charge(tenant, seconds)):
            yield

    @asynccontextmanager
    async def turn(self, tenant: str, size: int = 0) -> AsyncIterator[None]:
        """A turn for an operation of ``tenant`` whose request body is ``size`` bytes."""
        now = self.clock()
        state = self._tenant(tenant, now)
        solo = size >= self.limits.solo_bytes
        if state.waiting or not self._may_start(state, now, solo):
            await self._wait(state, now, solo)
        else:
            self._start(state)
        try:
            yield
        finally:
            self._finish(state)

    def _charge(self, tenant: str, seconds: float) -> None:
        now = self.clock()
        state = self._tenants.get(tenant) or self._tenant(tenant, now)
        self._refill(state, now, self._active)
        state.balance = max(self._floor(self._active), state.balance - seconds)

    def _floor(self, active: int) -> float:
        """The deepest debt: what the tenant repays in half the longest wait. One slow
        operation delays its tenant's next one, but never past a refusal."""
        return -self._rate(active) * self.limits.max_wait / 2

    def active(self, now: float | None = None) -> int:
        now = self.clock() if now is None else now
        since = now - self.limits.active_window
        return sum(1 for t in self._tenants.values() if t.seen >= since or t.running)

    # -- bookkeeping ------------------------------------------------------------------

    def _tenant(self, tenant: str, now: float) -> _Tenant:
        state = self._tenants.get(tenant)
        if state is None:
            state = self._tenants[tenant] = _Tenant(self.limits.burst, now, now)
        state.seen = now
        if now - self._pruned > self.limits.active_window:
            self._prune(now)
        return state

    def _prune(self, now: float) -> None:
        """Forget tenants idle past the window whose debt is paid: the map stays as
        small as the set of tenants active lately."""
        self._pruned = now
        since = now - self.limits.active_window
        for name, state in list(self._tenants.items()):
            if state.seen < since and not state.running and not state.waiting:
                self._refill(state, now, self.active(now))
                if state.balance >= 0:
                    del self._tenants[name]

    def _rate(self, active: int) -> float:
        return self.limits.capacity / max(1, active)

    def _refill(self, state: _Tenant, now: float, active: int) -> None:
        elapsed = now - state.stamp
        if elapsed > 0:
            state.balance = min(self.limits.burst, state.balance + elapsed * self._rate(active))
            state.stamp = now

    def _may_start(self, state: _Tenant, now: float, solo: bool) -> bool:
        if self.running >= self.limits.slots:
            return False
        active = self._active = self.active(now)
        if active <= 1:
            return True
        self._refill(state, now, active)
        return state.running < self._slots(state, solo) and state.balance > 0

    def _slots(self, state: _Tenant, solo: bool = False) -> int:
        if solo:
            return 1
        light = state.balance >= self.limits.burst / 2
        return max(self.limits.tenant_slots, self.limits.light_slots if light else 0)

    def _start(self, state: _Tenant) -> None:
        state.running += 1
        self.running += 1

    def _finish(self, state: _Tenant) -> None:
        state.running -= 1
        self.running -= 1
        now = state.seen = self.clock()
        active = self.active(now)
        self._refill(state, now, active)
        state.balance = max(self._floor(active), state.balance - self.limits.overhead)
        self._dispatch()

    # -- waiting ----------------------------------------------------------------------

    async def _wait(self, state: _Tenant, now: float, solo: bool) -> None:
        if len(state.waiting) >= self.limits.max_queued:
            raise self._refusal(state, now, "operations already wait")
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = _Waiter(waiter, solo)
        state.waiting.append(entry)
        self._dispatch()
        try:
            async with asyncio.timeout(self.limits.max_wait):
                await asyncio.shield(waiter)
        except TimeoutError:
            if not waiter.done():
                waiter.cancel()
                state.waiting.remove(entry)
                raise self._refusal(state, self.clock(), "the wait for a turn ran out") from None
        except asyncio.CancelledError:
            # The request went away: give back a turn granted in the meantime.
            if waiter.done() and not waiter.cancelled():
                self._finish(state)
            else:
                waiter.cancel()
                if entry in state.waiting:
                    state.waiting.remove(entry)
            raise

    def _refusal(self, state: _Tenant, now: float, why: str) -> RateLimited:
        active = self.active(now)
        debt = max(0.0, -state.balance)
        retry_ms = max(50, min(5_000, int(1000 * debt / self._rate(active)) + 50))
        return RateLimited(
            f"this tenant is over its share of the server ({why}); retry in {retry_ms} ms",
            retryAfterMs=retry_ms,
        )

    def _dispatch(self) -> None:
        """Start waiting operations while slots are free, the tenant with the most credit
        first; if only indebted tenants wait, look again when the first is paid up."""
        now = self.clock()
        active = self._active = self.active(now)
        while self.running < self.limits.slots:
            best: _Tenant | None = None
            for state in self._tenants.values():
                while state.waiting and state.waiting[0].future.done():
                    state.waiting.popleft()
                if not state.waiting:
                    continue
                if active > 1:
                    self._refill(state, now, active)
                    solo = state.waiting[0].solo
                    if state.running >= self._slots(state, solo) or state.balance <= 0:
                        continue
                if best is None or state.balance > best.balance:
                    best = state
            if best is None:
                break
            self._start(best)
            best.waiting.popleft().future.set_result(None)
        self._wake_later(now, active)

    def _wake_later(self, now: float, active: int) -> None:
        due = [
            -state.balance / self._rate(active)
            for state in self._tenants.values()
            if state.waiting
            and state.balance <= 0
            and state.running < self._slots(state, state.waiting[0].solo)
        ]
        if not due or self.running >= self.limits.slots:
            return
        delay = min(due) + 0.001
        if self._timer is not None:
            if self._timer.when() <= asyncio.get_running_loop().time() + delay:
                return
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(delay, self._wake)

    def _wake(self) -> None:
        self._timer = None
        self._dispatch()
