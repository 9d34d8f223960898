"""Tombstones past their lifetime leave the graph (erasure/tombstones_expire, run by the
maintenance pass), a bounded batch at a time and only the tenant's own; live ones stay
and keep refusing the erased subject's old memories."""

from __future__ import annotations

from datetime import timedelta

import pytest

from graphmem.domain.models import utcnow
from graphmem.memory import Memory
from graphmem.memory.writepath.analysis import graph_memory
from tests.conftest import new_tenant
from tests.support.contracts.common import item

pytestmark = pytest.mark.asyncio


async def test_expired_tombstones_go_in_bounded_batches_and_live_ones_keep_guarding(
    service: Memory,
) -> None:
    tenant, other = new_tenant(), new_tenant()
    erasure = service.graph.erasure
    now = utcnow()
    # As GRAPHMEM_TOMBSTONE_DAYS=1 would leave them: erased 3 days ago, expired 2 days ago.
    old = now - timedelta(days=3)
    await erasure.tombstone(tenant, "user", ["u1", "u2", "u3"], old, old + timedelta(days=1))
    await erasure.tombstone(tenant, "user", ["live"], now, now + timedelta(days=1))
    await erasure.tombstone(other, "user", ["u1"], old, old + timedelta(days=1))
    # bounded batches; counts are not asserted exactly, since another server's
    # maintenance on the same Neo4j (CI's second lane) may expire some first
    removed = [await erasure.expire_tombstones(tenant, utcnow(), limit=2) for _ in range(3)]
    assert all(n <= 2 for n in removed) and sum(removed) <= 3 and removed[-1] == 0, removed
    left = await erasure.tombstones(tenant, "user", ["u1", "u2", "u3", "live"])
    assert set(left) == {"live"}
    assert set(await erasure.tombstones(other, "user", ["u1"])) == {"u1"}  # not its tenant
    # The maintenance pass removes the other tenant's (it visits every tenant).
    report = await service.maintenance.run_once()
    assert report.expired.get(other) == 1
    assert await erasure.tombstones(other, "user", ["u1"]) == {}
    # The live one still refuses a memory of "live" from before its erasure; an expired
    # one no longer refuses "u1"'s.
    before = now - timedelta(hours=1)
    refused = item(tenant, "s1", "old memory of live", user_id="live", created_at=before)
    allowed = item(tenant, "s1", "old memory of u1", user_id="u1", created_at=before)
    written = await service.graph.upsert_hot(tenant, [graph_memory(refused), graph_memory(allowed)])
    assert written == [allowed.id]
