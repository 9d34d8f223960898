"""Enrichment workers under faults: a worker killed mid-batch, and jobs that always fail."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphmem.memory import Memory
from graphmem.memory.builder import MemoryBuilder
from graphmem.stores.redis.queue import STREAM
from tests.conftest import (
    ROOT,
    Stack,
    embed_calls,
    empty_redis_db,
    new_tenant,
    run_cypher,
    stack_env,
)

pytestmark = pytest.mark.asyncio

ITEMS = 2000
PEOPLE = ["Alice", "Bob", "Carol", "Dmitri", "Erin"]
CITIES = ["Paris", "London", "Berlin", "Madrid", "Rome"]


def start_worker(stack: Stack, redis_url: str, log: Path) -> subprocess.Popen[bytes]:
    env = stack_env(stack, GRAPHMEM_ENRICH_RECLAIM_SECONDS="2") | {"REDIS_URL": redis_url}
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "graphmem.ops.cli", "worker"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


async def enriched_count(stack: Stack, tenant: str) -> int:
    (row,) = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t}) WHERE m.embedding IS NOT NULL RETURN count(m) AS n",
        t=tenant,
    )
    return int(row["n"])


async def test_a_worker_killed_mid_batch_loses_and_doubles_nothing(
    stack: Stack, tmp_path: Path
) -> None:
    url = await empty_redis_db(stack, 12)
    service = MemoryBuilder.from_settings(stack.settings(redis_url=url)).build()
    await service.migrate()
    tenant = new_tenant()
    await service.sessions.configure(tenant, "bulk", {"hotTokenLimit": 1_000_000})
    added: list[str] = []
    for start in range(0, ITEMS, 20):
        batch = await service.ingest.add_many(
            tenant,
            [
                {
                    "session_id": "bulk",
                    "user_id": "u1",
                    "content": f"Note {n}: {PEOPLE[n % 5]} met {PEOPLE[(n + 1) % 5]} "
                    f"in {CITIES[n % 5]} on day {n}.",
                }
                for n in range(start, start + 20)
            ],
        )
        added += [i.id for i in batch]
    assert (await service.reports.enrichment(tenant)).waiting == ITEMS
    first = start_worker(stack, url, tmp_path / "first.log")
    try:
        deadline = time.monotonic() + 240
        while (done := await enriched_count(stack, tenant)) < 100:
            assert time.monotonic() < deadline, "the first worker enriched nothing"
            await asyncio.sleep(0.2)
        os.kill(first.pid, signal.SIGKILL)  # in the middle of the batch, no goodbye
        first.wait(timeout=10)
        assert done < ITEMS, "the first worker finished before it could be killed"
    finally:
        if first.poll() is None:
            first.kill()
    second = start_worker(stack, url, tmp_path / "second.log")
    try:
        assert service.queue is not None
        deadline = time.monotonic() + 300
        while (await service.queue.stats()).backlog:
            assert time.monotonic() < deadline, "the second worker did not finish"
            assert second.poll() is None, "the second worker died"
            await asyncio.sleep(0.5)
    finally:
        second.terminate()
        try:
            second.wait(timeout=30)
        except subprocess.TimeoutExpired:
            second.kill()
            raise AssertionError(
                "the second worker ignored SIGTERM:\n"
                + (tmp_path / "second.log").read_text()[-3000:]
            ) from None
    try:
        assert (await service.reports.enrichment(tenant)).waiting == 0  # counted once each
        await assert_each_once_with_vectors_and_mentions(service, stack, tenant, added)
    finally:
        await service.close()


async def assert_each_once_with_vectors_and_mentions(
    service: Memory, stack: Stack, tenant: str, added: list[str]
) -> None:
    rows = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t}) "
        "RETURN m.id AS id, m.tier AS tier, m.embedding IS NOT NULL AS vector, "
        "COUNT { (m)-[:MENTIONS]->(:Entity) } AS mentions",
        t=tenant,
    )
    assert sorted(r["id"] for r in rows) == sorted(added)  # each once, none missing
    assert all(r["vector"] for r in rows)
    assert all(r["mentions"] >= 2 for r in rows)
    # Then the spill moves them all out of Redis without computing anything again.
    with embed_calls(service) as calls:
        result = await service.spills.spill(tenant, "bulk", count=ITEMS)
    assert result.spilled_count == ITEMS and calls == []
    assert await service.hot_tier.items(tenant, "bulk") == []
    (after,) = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t}) RETURN count(m) AS n, "
        "count(CASE WHEN m.tier = 'cold' THEN 1 END) AS cold",
        t=tenant,
    )
    assert after == {"n": ITEMS, "cold": ITEMS}


async def test_a_poison_job_is_parked_and_the_jobs_after_it_are_done(stack: Stack) -> None:
    url = await empty_redis_db(stack, 12)
    service = MemoryBuilder.from_settings(stack.settings(redis_url=url)).build()
    await service.migrate()
    assert service.worker is not None and service.queue is not None
    tenant = new_tenant()
    embed = service.embedder.embed

    def failing(texts: list[str]):  # type: ignore[no-untyped-def]
        if any("POISON" in t for t in texts):
            raise RuntimeError("the embedder cannot take this text")
        return embed(texts)

    service.embedder.embed = failing  # type: ignore[method-assign]
    try:
        await service.ingest.add(tenant, {"session_id": "s", "content": "a POISON pill"})
        good = [
            await service.ingest.add(tenant, {"session_id": "s", "content": f"fine text {n}"})
            for n in range(3)
        ]
        # And an entry no version of graphmem wrote: parked, not a crash of every read.
        async with stack.redis(url) as client:
            await client.xadd(STREAM, {"garbage": "1"})
        service.worker.max_attempts = 3
        assert (await service.reports.enrichment(tenant)).waiting == 4
        await service.worker.drain(seconds=60)
    finally:
        service.embedder.embed = embed  # type: ignore[method-assign]
    try:
        stats = await service.queue.stats()
        assert stats.backlog == 0 and stats.parked == 2
        parked = await service.queue.parked()
        errors = sorted(p["error"] for p in parked)
        assert errors[0].startswith("RuntimeError: the embedder cannot take this text")
        assert errors[1].startswith("malformed entry")
        enriched = await service.hot_tier.enrichment(
            tenant, "s", [i.id for i in good], model=service.embedder.name
        )
        assert set(enriched) == {i.id for i in good}
        await service.observe_queue()
        text = service.metrics.exposition().decode()
        assert "graphmem_enrichment_parked 2.0" in text
        # The tenant sees its own item parked (the malformed entry belongs to nobody).
        mine = await service.reports.enrichment(tenant)
        assert (mine.waiting, mine.parked) == (0, 1)
    finally:
        await service.close()
