"""One memory, or one tenant, must not stall enrichment for every tenant: a
tenant's backlog is queued behind one share of the stream and enriched a job per turn,
a memory past its NER budget keeps its vector and lets the batch go on, a job worked on
longer than the claim-idle time stays with its worker, and a parked job says why."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import time
from typing import Any

import pytest

from graphmem.enrich.pieces import CHUNK_CHARS
from graphmem.memory import Memory
from graphmem.memory.builder import MemoryBuilder
from graphmem.stores.redis.queue import RedisEnrichmentQueue
from tests.conftest import ROOT, Stack, empty_redis_db, new_tenant, run_cypher, stack_env
from tests.support.texts import conversation

pytestmark = pytest.mark.asyncio


async def built(stack: Stack, **settings: Any) -> tuple[Memory, str]:
    url = await empty_redis_db(stack, 3)
    service = MemoryBuilder.from_settings(stack.settings(redis_url=url, **settings)).build()
    await service.migrate()
    assert service.worker is not None and service.queue is not None
    return service, url


def queue_of(service: Memory) -> RedisEnrichmentQueue:
    assert isinstance(service.queue, RedisEnrichmentQueue)
    return service.queue


async def vectors(stack: Stack, tenant: str) -> dict[str, bool]:
    rows = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t}) RETURN m.id AS id, m.embedding IS NOT NULL AS v",
        t=tenant,
    )
    return {r["id"]: r["v"] for r in rows}


async def test_a_tenants_backlog_does_not_hold_up_another_tenants_memory(stack: Stack) -> None:
    service, url = await built(stack, entities_enabled=False)
    assert service.worker is not None
    queue_of(service).tenant_items = 40  # a share of four jobs: the backlog is 30
    service.worker.enrich_batch = 20
    service.worker.max_held = 40
    big, small = new_tenant(), new_tenant()
    try:
        await service.sessions.configure(big, "bulk", {"hotTokenLimit": 1_000_000})
        for start in range(0, 300, 10):
            await service.ingest.add_many(
                big,
                [
                    {"session_id": "bulk", "content": f"Backlog note {n} about the harvest."}
                    for n in range(start, start + 10)
                ],
            )
        mine = await service.ingest.add(small, {"session_id": "s", "content": "Hello there"})
        stats = await service.queue.stats()  # type: ignore[union-attr]
        assert stats.backlog == 31  # on the stream and in the lane alike
        calls: list[list[str]] = []  # each embedding call's items, by tenant
        embed = service.write_behind.embed

        async def recording(items: Any) -> Any:
            calls.append([item.tenant for item in items])
            return await embed(items)

        service.write_behind.embed = recording  # type: ignore[method-assign]
        await service.worker.drain(seconds=240)
        turn = next(n for n, call in enumerate(calls) if small in call)
        ahead = sum(call.count(big) for call in calls[:turn])
        # before: the whole backlog (300 items); now at most a call of it
        assert ahead <= 20, [len(c) for c in calls[: turn + 1]]
        # nothing lost, nothing left behind
        done = await vectors(stack, big)
        assert len(done) == 300 and all(done.values())
        assert (await vectors(stack, small)) == {mine.id: True}
        assert (await service.reports.enrichment(big)).waiting == 0
        async with stack.redis(url) as client:
            assert await client.zcard(queue_of(service).lanes_key) == 0
            assert await client.hlen(queue_of(service).placed_key) == 0
    finally:
        await service.close()


async def test_another_tenants_long_memories_do_not_keep_a_new_one_from_being_found(
    stack: Stack,
) -> None:
    # with 256 items in one enrichment call, embedding and NER alike, a memory added
    # behind a tenant's long ones would wait for all of their NER (minutes)
    service, _ = await built(stack)
    worker = service.worker
    assert worker is not None
    big, small = new_tenant(), new_tenant()
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        await service.sessions.configure(big, "long", {"hotTokenLimit": 1_000_000})
        for n in range(6):  # about 2 s of NER each on two cores
            await service.ingest.add_many(
                big,
                [
                    {"session_id": "long", "content": f"{n}-{k} " + conversation(20_000)}
                    for k in range(5)
                ],
            )
        deadline = time.monotonic() + 60
        while not any((await vectors(stack, big)).values()):  # the worker is on them
            assert time.monotonic() < deadline and not running.done()
            await asyncio.sleep(0.05)
        mine = await service.ingest.add(small, {"session_id": "s", "content": "Hello there"})
        added = time.monotonic()
        while not (await vectors(stack, small)).get(mine.id):
            # 1.4 s here with a test suite running beside it; before, over 20 s
            assert time.monotonic() - added < 10, "not found by meaning within 10 s"
            assert not running.done()
            await asyncio.sleep(0.05)
        waited = time.monotonic() - added
        rows = await run_cypher(
            stack,
            "MATCH (m:Memory {tenant: $t}) WHERE m.embedding IS NOT NULL "
            "RETURN count(m) AS embedded, count { (m)-[:MENTIONS]->() } AS mentions",
            t=big,
        )
        backlog = (await service.reports.enrichment(big)).waiting
        # it came before most of the 30 long memories were read for entities
        assert backlog > 10, (waited, backlog, rows)
    finally:
        stop.set()
        await running
        await service.close()


async def test_lanes_move_up_when_the_stream_was_emptied_by_hand(stack: Stack) -> None:
    service, url = await built(stack, entities_enabled=False)
    assert service.worker is not None
    queue_of(service).tenant_items = 1
    tenant = new_tenant()
    try:
        added = [
            await service.ingest.add(tenant, {"session_id": "s", "content": f"note {n}"})
            for n in range(3)
        ]
        async with stack.redis(url) as client:
            await client.delete(queue_of(service).stream)  # its count stays behind
        # the first job is gone with the stream; the two in the lane are still done
        await service.worker.drain(seconds=60)
        done = await vectors(stack, tenant)
        assert [done.get(i.id) for i in added[1:]] == [True, True]
    finally:
        await service.close()


async def test_a_memory_past_its_ner_budget_keeps_its_vector_and_the_batch_goes_on(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    service, _ = await built(stack)
    assert service.worker is not None and service.entities is not None
    service.worker.item_seconds = 0.01
    service.entities.extractor.group_chars = 3000  # a budget check every piece or two
    tenant = new_tenant()
    try:
        await service.sessions.configure(tenant, "s", {"hotTokenLimit": 1_000_000})
        long = await service.ingest.add(tenant, {"session_id": "s", "content": conversation(20000)})
        short = [
            await service.ingest.add(tenant, {"session_id": "s", "content": text})
            for text in ["Alice met Bob in Paris.", "Maria Garcia flew to Rome."]
        ]
        with caplog.at_level(logging.WARNING, logger="graphmem.worker"):
            await service.worker.drain(seconds=120)
        rows = await run_cypher(
            stack,
            "MATCH (m:Memory {tenant: $t}) RETURN m.id AS id, m.embedding IS NOT NULL AS v, "
            "[(m)-[r:MENTIONS]->(:Entity) | r.start] AS starts",
            t=tenant,
        )
        by_id = {r["id"]: r for r in rows}
        assert all(r["v"] for r in rows) and len(rows) == 3
        # the long memory: its first pieces' entities (it names people to its end)
        assert by_id[long.id]["starts"] and max(by_id[long.id]["starts"]) < 2 * CHUNK_CHARS
        # the others keep every entity: Alice, Bob, Paris; Maria Garcia, Rome
        assert [len(by_id[i.id]["starts"]) for i in short] == [3, 2]
        warned = [r.getMessage() for r in caplog.records if long.id in r.getMessage()]
        assert warned and "budget" in warned[0]
        stats = await service.queue.stats()  # type: ignore[union-attr]
        assert (stats.backlog, stats.parked) == (0, 0)
    finally:
        await service.close()


async def test_a_job_worked_on_longer_than_the_claim_idle_time_stays_with_its_worker(
    stack: Stack,
) -> None:
    service, _ = await built(stack, entities_enabled=False)
    worker = service.worker
    assert worker is not None
    worker.reclaim_idle_seconds = 1.5
    tenant = new_tenant()
    entered: list[list[str]] = []
    embed = service.write_behind.embed

    async def slow(items: Any) -> Any:
        entered.append([item.id for item in items])
        await asyncio.sleep(5)  # three times the claim-idle time
        return await embed(items)

    service.write_behind.embed = slow  # type: ignore[method-assign]
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        item = await service.ingest.add(tenant, {"session_id": "s", "content": "slow one"})
        deadline = time.monotonic() + 60
        while not entered:
            assert time.monotonic() < deadline and not running.done()
            await asyncio.sleep(0.05)
        taken = []
        for _ in range(8):  # another worker looks for jobs left idle, as it does
            await asyncio.sleep(0.5)
            taken += await service.queue.reclaim("another-worker", 1500, 10)  # type: ignore[union-attr]
        assert taken == []
        while (await service.queue.stats()).backlog:  # type: ignore[union-attr]
            assert time.monotonic() < deadline and not running.done()
            await asyncio.sleep(0.1)
    finally:
        stop.set()
        await running
        await service.close()
    assert len(entered) == 1  # worked on once: before, taken over and done twice at once
    assert (await vectors(stack, tenant)) == {item.id: True}


async def test_a_job_delivered_too_often_is_parked_with_its_reason_logged_and_listed(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    service, url = await built(stack, entities_enabled=False)
    worker = service.worker
    assert worker is not None and service.queue is not None
    tenant = new_tenant()
    try:
        await service.ingest.add(tenant, {"session_id": "s", "content": "never finished"})
        # a worker took it and died on it
        assert len(await service.queue.read("dead-worker", 10, 100)) == 1
        worker.max_attempts = 1
        worker.reclaim_idle_seconds = 0.3
        await asyncio.sleep(0.5)
        with caplog.at_level(logging.WARNING, logger="graphmem.worker"):
            await worker.drain(seconds=60)
        assert (await service.queue.stats()).parked == 1
        logged = [
            r.getMessage()
            for r in caplog.records
            if r.levelno == logging.ERROR and "parked" in r.getMessage()
        ]
        assert len(logged) == 1 and tenant in logged[0] and "delivered 2 times" in logged[0]
    finally:
        await service.close()
    listed = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "graphmem.ops.cli", "worker", "--parked"],
        cwd=ROOT,
        env=stack_env(stack, REDIS_URL=url),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr[-2000:]
    (job,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert job["t"] == tenant and job["attempts"] == "2"
    assert job["error"].startswith("gave up: delivered 2 times")
