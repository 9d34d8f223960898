"""Maintenance over the in-memory stores: sessions about to expire are flushed into the
graph, sessions left over budget are caught up, idle warm memories turn cold, one failure
stays with its session, and the pass runs where the lease is held."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from graphmem.domain.models import utcnow
from graphmem.errors import Unavailable
from graphmem.memory.tiers.maintenance import LEASE, MaintenanceReport
from graphmem.memory.tiers.maintenance import TOMBSTONES_PER_PASS as MAX
from graphmem.memory.writepath.analysis import graph_memory
from tests.support.contracts.common import item
from tests.support.memory import OTHER_TENANT, TENANT, fake_memory

#: a session lifetime whose flush margin (half of it) is 50 s
TTL = 100


async def test_sessions_about_to_expire_are_flushed_and_leave_the_index() -> None:
    f = fake_memory(sessionTtlSeconds=TTL)
    f.clock.advance(-60)  # these adds were a minute ago: more than the margin
    idle = [await f.add(f"idle memory {n}", session_id="idle") for n in range(3)]
    other = await f.add("another tenant's idle one", tenant=OTHER_TENANT, session_id="idle")
    f.clock.advance(60)
    recent = await f.add("a recent memory", session_id="recent")
    report = await f.memory.maintenance.run_once()
    assert report.errors == []
    assert set(report.flushed[f"{TENANT}/idle"]) == {i.id for i in idle}
    assert report.flushed[f"{OTHER_TENANT}/idle"] == [other.id]
    assert f"{TENANT}/recent" not in report.flushed
    assert await f.hot_ids("idle") == set() and await f.hot_ids("recent") == {recent.id}
    assert set(f.graph_tiers()) == {i.id for i in idle}
    assert await f.hot.index.sessions(TENANT) == ["recent"]


async def test_a_session_left_over_budget_is_caught_up() -> None:
    f = fake_memory(hotTokenLimit=16, spillLowWater=0.5)
    # over budget with no spill running (as after a graph outage)
    items = [item(TENANT, "over", f"memory number {n} here") for n in range(6)]
    await f.hot.put(TENANT, "over", items)
    await f.hot.index.mark_over_budget(TENANT, "over")
    await f.hot.put(TENANT, "under", [item(TENANT, "under", "small")])
    await f.hot.index.mark_over_budget(TENANT, "under")
    report = await f.memory.maintenance.run_once()
    assert await f.hot.tokens(TENANT, "over") <= 8
    assert set(report.caught_up[f"{TENANT}/over"]) == set(f.graph_tiers())
    assert f"{TENANT}/under" not in report.caught_up
    # the session under budget leaves the set; the other is checked again next pass
    assert await f.hot.index.over_budget(TENANT) == ["over"]
    await f.memory.maintenance.run_once()
    assert await f.hot.index.over_budget(TENANT) == []


async def test_idle_warm_memories_turn_cold_and_every_scope_is_read_again() -> None:
    f = fake_memory(demoteAfterIdleSeconds=3600)
    stale = item(TENANT, "s1", "untouched for a day", access_count=9)
    stale = stale.model_copy(update={"last_accessed_at": utcnow() - timedelta(days=1)})
    fresh = item(TENANT, "s1", "recalled a minute ago", access_count=9)
    await f.hot.put(TENANT, "s1", [stale, fresh])
    await f.memory.spills.spill(TENANT, "s1", count=2)
    assert f.graph_tiers() == {stale.id: "warm", fresh.id: "warm"}
    report = await f.memory.maintenance.run_once()
    assert report.demoted == {TENANT: [stale.id]}
    assert f.graph_tiers() == {stale.id: "cold", fresh.id: "warm"}
    assert f.versions is not None and f.versions.bumps[-1] == (TENANT, {}, True)


async def test_a_failing_session_is_reported_and_the_others_are_flushed() -> None:
    f = fake_memory(sessionTtlSeconds=TTL)
    f.memory.spills.backoff_seconds = 0
    f.clock.advance(-60)
    first = await f.add("in the session that fails", session_id="a")
    f.clock.advance(1)
    second = await f.add("in the session after it", session_id="b")
    f.clock.advance(59)
    f.graph.faults.plan("upsert", Unavailable("neo4j went away"), times=f.memory.spills.retries)
    report = await f.memory.maintenance.run_once()
    assert report.errors == [f"{TENANT}/a: neo4j went away"]
    assert report.flushed == {f"{TENANT}/b": [second.id]}
    assert await f.hot_ids("a") == {first.id}  # kept for the next pass
    report = await f.memory.maintenance.run_once()
    assert report.flushed == {f"{TENANT}/a": [first.id]} and report.errors == []
    assert f.graph.node(TENANT, first.id) is not None


async def test_demotion_of_one_tenant_failing_leaves_the_others() -> None:
    f = fake_memory()
    await f.graph.upsert_hot(TENANT, [graph_memory(item(TENANT, "s", "a"))])
    await f.graph.upsert_hot(OTHER_TENANT, [graph_memory(item(OTHER_TENANT, "s", "b"))])
    f.graph.faults.plan("demote_idle_warm", Unavailable("neo4j went away"))
    report = await f.memory.maintenance.run_once()
    # tenants are visited in order: the first failed, the second was still visited
    assert sorted([TENANT, OTHER_TENANT])[0] == TENANT
    assert report.errors == [f"demotion of {TENANT}: neo4j went away"]
    assert f.graph.faults.calls["demote_idle_warm"] == 2


async def run_briefly(stop: asyncio.Event, loop: asyncio.Task[None]) -> None:
    await asyncio.sleep(0.05)
    stop.set()
    await loop


async def test_the_loop_runs_passes_only_while_it_holds_the_lease() -> None:
    f = fake_memory()
    maintenance = f.memory.maintenance
    assert await f.leases.hold(LEASE, "another replica", 60)
    stop = asyncio.Event()
    await run_briefly(stop, asyncio.create_task(maintenance.run(stop)))
    assert maintenance.passes == 0 and await f.leases.holder(LEASE) == "another replica"
    # the other replica stopped renewing: its lease lapses, this one takes over
    f.clock.advance(61)
    stop = asyncio.Event()
    await run_briefly(stop, asyncio.create_task(maintenance.run(stop)))
    assert maintenance.passes == 1
    assert await f.leases.holder(LEASE) is None  # released on the way out


async def test_a_pass_with_nothing_due_moves_nothing() -> None:
    f = fake_memory()
    recent = await f.add("nothing is due")
    report = await f.memory.maintenance.run_once()
    assert report == MaintenanceReport()
    assert await f.hot_ids() == {recent.id} and f.graph.nodes(TENANT) == []


async def test_expired_tombstones_are_removed_a_bounded_batch_per_tenant_live_ones_kept() -> None:
    f = fake_memory()
    now = utcnow()
    erasure = f.graph.erasure
    # As with GRAPHMEM_TOMBSTONE_DAYS of one day, erased two days ago: past its lifetime.
    old = now - timedelta(days=2)
    await erasure.tombstone(TENANT, "user", ["gone"], old, old + timedelta(days=1))
    await erasure.tombstone(TENANT, "user", ["recent"], now, now + timedelta(days=1))
    many = [f"m{n}" for n in range(MAX + 5)]
    await erasure.tombstone(OTHER_TENANT, "memory", many, old, old + timedelta(days=1))
    report = await f.memory.maintenance.run_once()
    assert report.errors == []
    assert report.expired == {TENANT: 1, OTHER_TENANT: MAX}
    assert await erasure.tombstones(TENANT, "user", ["gone", "recent"]) == {"recent": now}
    assert len(await erasure.tombstones(OTHER_TENANT, "memory", many)) == 5
    report = await f.memory.maintenance.run_once()  # the rest, on the next pass
    assert report.expired == {OTHER_TENANT: 5}
    assert await erasure.tombstones(OTHER_TENANT, "memory", many) == {}
