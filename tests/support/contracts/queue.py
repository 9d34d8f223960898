"""The enrichment queue's contract (``EnrichmentQueue``), as far as ingest and the
enrichment path rely on it: jobs read once each, in order, until acknowledged; a tenant's
backlog is its own; worker heartbeats are counted.

Subclass ``EnrichmentQueueContract`` with a fixture ``queue_setup`` returning a
``QueueSetup`` whose queue holds nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphmem.stores import EnrichmentQueue
from tests.support.contracts.common import Elapse, unique


@dataclass
class QueueSetup:
    queue: EnrichmentQueue
    elapse: Elapse


class EnrichmentQueueContract:
    async def test_jobs_are_read_once_in_order_until_acknowledged(
        self, queue_setup: QueueSetup
    ) -> None:
        queue, one, two = queue_setup.queue, unique(), unique()
        await queue.ensure()
        await queue.add(one, "s1", ["a", "b"])
        await queue.add(two, "s9", ["z"])
        await queue.add(one, "s2", ["c"])
        jobs = await queue.read("worker-1", 10, 10)
        assert [(j.tenant, j.session_id, j.ids) for j in jobs] == [
            (one, "s1", ["a", "b"]),
            (two, "s9", ["z"]),
            (one, "s2", ["c"]),
        ]
        assert all(j.attempt == 1 for j in jobs)
        assert await queue.read("worker-2", 10, 10) == []
        stats = await queue.stats()
        assert (stats.backlog, stats.pending, stats.parked) == (3, 3, 0)
        await queue.ack(jobs[:2])
        stats = await queue.stats()
        assert (stats.backlog, stats.pending) == (1, 1)
        await queue.ack(jobs[2:])
        assert (await queue.stats()).backlog == 0

    async def test_a_read_takes_at_most_count_jobs(self, queue_setup: QueueSetup) -> None:
        queue, tenant = queue_setup.queue, unique()
        for n in range(3):
            await queue.add(tenant, "s", [f"m{n}"])
        first = await queue.read("w", 2, 10)
        rest = await queue.read("w", 2, 10)
        assert [j.ids for j in first] == [["m0"], ["m1"]] and [j.ids for j in rest] == [["m2"]]

    async def test_a_tenant_follows_its_own_backlog(self, queue_setup: QueueSetup) -> None:
        queue, one, two = queue_setup.queue, unique(), unique()
        await queue.add(one, "s", ["a", "b", "c"])
        await queue.add(two, "s", ["x"])
        assert await queue.tenant_backlog(one) == (3, 0)
        assert await queue.tenant_backlog(two) == (1, 0)
        jobs = await queue.read("w", 10, 10)
        assert await queue.tenant_backlog(one) == (3, 0)  # read is not done
        await queue.ack([j for j in jobs if j.tenant == one])
        assert await queue.tenant_backlog(one) == (0, 0)
        assert await queue.tenant_backlog(two) == (1, 0)

    async def test_workers_are_counted_by_their_heartbeats(self, queue_setup: QueueSetup) -> None:
        queue = queue_setup.queue
        assert await queue.workers(10) == 0
        await queue.beat("w1")
        await queue.beat("w2")
        assert await queue.workers(10) == 2
        await queue.beat("w2", alive=False)
        assert await queue.workers(10) == 1
        await queue_setup.elapse(0.3)
        assert await queue.workers(0.2) == 0
