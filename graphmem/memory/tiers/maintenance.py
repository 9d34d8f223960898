"""Maintenance: flush sessions whose hot tier is about to expire, catch up sessions left
over budget (after a graph outage), run the demotion policy, and remove tombstones past
their lifetime (docs/concepts.md#erasure).

A failure is contained to its session (or tenant, for demotion) and reported: one bad
session must not keep the pass from reaching every other session and tenant.

With several API replicas, the loop runs in one of them at a time: the one holding the
``maintenance`` lease in Redis (``stores/redis/lease.py``), renewed while it works. When
that replica dies, its lease expires and the next replica to look takes over, within
``lease_seconds`` plus one interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Awaitable
from typing import TypeVar

from pydantic import BaseModel, Field

from graphmem.domain.models import utcnow
from graphmem.errors import GraphmemError
from graphmem.memory.policy import DemotionPolicy
from graphmem.memory.tiers.sessions import Sessions
from graphmem.memory.tiers.spill import Spiller
from graphmem.memory.writepath.changes import ScopeChanges
from graphmem.settings import MemoryConfig
from graphmem.stores import GraphStore, HotTier, Leases

log = logging.getLogger("graphmem.memory")
T = TypeVar("T")
LEASE = "maintenance"
#: tombstones one pass removes per tenant (one statement): a tenant with a backlog of
#: expired tombstones catches up over passes instead of holding every other tenant's turn
TOMBSTONES_PER_PASS = 1000


class MaintenanceReport(BaseModel):
    flushed: dict[str, list[str]] = Field(default_factory=dict)  # "tenant/session" → ids
    caught_up: dict[str, list[str]] = Field(default_factory=dict)
    demoted: dict[str, list[str]] = Field(default_factory=dict)  # tenant → ids
    #: tenant → tombstones removed because their lifetime ended
    expired: dict[str, int] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)


def _reason(exc: Exception) -> str:
    return exc.message if isinstance(exc, GraphmemError) else type(exc).__name__


class Maintenance:
    def __init__(
        self,
        hot: HotTier,
        graph: GraphStore,
        sessions: Sessions,
        spiller: Spiller,
        demotion: DemotionPolicy,
        config: MemoryConfig,
        changes: ScopeChanges | None = None,
        leases: Leases | None = None,
    ) -> None:
        self.hot = hot
        self.graph = graph
        self.sessions = sessions
        self.spiller = spiller
        self.demotion = demotion
        self.config = config
        self.changes = changes or ScopeChanges(None)
        #: None: this process runs every pass (one replica, or `graphmem maintain`)
        self.leases = leases
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        #: passes this process ran (the lease decides whether it runs them)
        self.passes = 0

    @property
    def lease_seconds(self) -> float:
        """How long a replica that stopped renewing keeps the others from taking over."""
        return max(5.0, 3 * self.config.maintenance_interval)

    async def run_once(self) -> MaintenanceReport:
        report = MaintenanceReport()
        idle_since = time.time() - (self.config.session_ttl_seconds - self.config.flush_margin)
        # Only two kinds of session need work: idle ones (from the activity index) and
        # ones an add saw over budget. Walking every live session each pass would cost
        # O(sessions) round trips and delay the flushes that are due.
        for tenant in await self.hot.index.tenants():
            idle = await self.hot.index.idle_sessions(tenant, idle_since)
            for session_id in idle:
                try:
                    await self._flush_idle(tenant, session_id, report)
                except Exception as exc:
                    self._failed(report, f"{tenant}/{session_id}", exc)
            for session_id in await self.hot.index.over_budget(tenant):
                if session_id in idle:
                    continue
                try:
                    await self._catch_up(tenant, session_id, report)
                except Exception as exc:
                    self._failed(report, f"{tenant}/{session_id}", exc)
        now = utcnow()
        try:
            tenants = await self.graph.tenants()
        except Exception as exc:
            self._failed(report, "demotion", exc)
            tenants = []
        for tenant in tenants:
            try:
                demoted = await self.demotion.demote(self.graph, tenant, now)
                if demoted:
                    # A policy names the ids it demoted, not where they live.
                    await self.changes.everything(tenant)
                    report.demoted[tenant] = demoted
            except Exception as exc:
                self._failed(report, f"demotion of {tenant}", exc)
        # Only the tenants with expired tombstones (one read): a write for every tenant on
        # every pass would cost each of them a transaction to remove nothing.
        try:
            swept = await self.graph.erasure.expired_tenants(now)
        except Exception as exc:
            self._failed(report, "tombstones", exc)
            swept = []
        for tenant in swept:
            try:
                expired = await self.graph.erasure.expire_tombstones(
                    tenant, now, TOMBSTONES_PER_PASS
                )
                if expired:
                    report.expired[tenant] = expired
            except Exception as exc:
                self._failed(report, f"tombstones of {tenant}", exc)
        return report

    async def _flush_idle(self, tenant: str, session_id: str, report: MaintenanceReport) -> None:
        config = await self.sessions.config(tenant, session_id)
        async with self.sessions.lock(tenant, session_id):
            items = await self.hot.items(tenant, session_id)
            result = await self.spiller.flush(tenant, session_id, items, config)
        if result.spilled_ids:
            report.flushed[f"{tenant}/{session_id}"] = result.spilled_ids
        await self.hot.index.drop_if_gone(tenant, session_id)

    async def _catch_up(self, tenant: str, session_id: str, report: MaintenanceReport) -> None:
        config = await self.sessions.config(tenant, session_id)
        if await self.hot.tokens(tenant, session_id) > config.hot_token_limit:
            result = await self.spiller.to_budget(
                tenant, session_id, config, retries=self.spiller.retries
            )
            if result.spilled_ids:
                report.caught_up[f"{tenant}/{session_id}"] = result.spilled_ids
        else:
            await self.hot.index.clear_over_budget(tenant, session_id)

    @staticmethod
    def _failed(report: MaintenanceReport, where: str, exc: Exception) -> None:
        if not isinstance(exc, GraphmemError):
            log.error("maintenance of %s failed", where, exc_info=exc)
        report.errors.append(f"{where}: {_reason(exc)}")

    async def run(self, stop: asyncio.Event) -> None:
        """The background loop the API runs: a pass every interval until ``stop``, while
        this process holds the lease (released on the way out, for a quick hand-over)."""
        try:
            while not stop.is_set():
                try:
                    if await self._leading():
                        report = await self._renewing(self.run_once())
                        self.passes += 1
                        if any((report.flushed, report.caught_up, report.demoted, report.expired)):
                            log.info("maintenance: %s", report.model_dump_json())
                except Exception:  # the loop must outlive any one failed pass
                    log.exception("maintenance pass failed")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.config.maintenance_interval)
        finally:
            if self.leases is not None:
                with contextlib.suppress(GraphmemError):
                    await self.leases.release(LEASE, self.holder)

    async def _leading(self) -> bool:
        if self.leases is None:
            return True
        return await self.leases.hold(LEASE, self.holder, self.lease_seconds)

    async def _renewing(self, work: Awaitable[T]) -> T:
        """Run a pass, renewing the lease beside it (a pass may outlast the lease)."""
        if self.leases is None:
            return await work
        leases = self.leases

        async def renew() -> None:
            while True:
                await asyncio.sleep(self.lease_seconds / 3)
                with contextlib.suppress(GraphmemError):
                    await leases.hold(LEASE, self.holder, self.lease_seconds)

        renewer = asyncio.create_task(renew())
        try:
            return await work
        finally:
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer
