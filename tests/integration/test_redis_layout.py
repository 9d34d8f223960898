"""Data written under the older Redis key layout (tenant-tagged session keys, stream
``gm:enrich``) is moved on migrate and served as before: an upgrade loses no hot item,
no queued enrichment job and no working memory."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import astuple

import pytest

from graphmem.memory.builder import MemoryBuilder
from graphmem.stores.redis.keys import session_keys
from graphmem.stores.redis.layout import LAYOUT_KEY
from graphmem.stores.redis.queue import STREAM
from graphmem.stores.redis.working import task_key
from tests.conftest import ROOT, Stack, empty_redis_db, new_tenant, stack_env

KINDS = ("items", "meta", "config", "emb", "lock", "messages")


def layout_one(tenant: str, session: str, task: str) -> dict[str, str]:
    """Current name → the name graphmem gave the same key before layout 2."""
    names = dict(zip(astuple(session_keys(tenant, session)), KINDS, strict=True))
    old = {new: f"gm:{{{tenant}}}:s:{session}:{kind}" for new, kind in names.items()}
    old[task_key(tenant, task)] = f"gm:{{{tenant}}}:wm:{task}"
    for suffix in ("", ":workers", ":waiting"):
        old[STREAM + suffix] = "gm:enrich" + suffix
    return old


async def test_an_upgrade_moves_layout_one_keys_and_loses_nothing(stack: Stack) -> None:
    if stack.redis_cluster:
        pytest.fail("run on a single Redis: layout 1 never ran on a cluster")
    url = await empty_redis_db(stack, 6)
    tenant = new_tenant()
    service = MemoryBuilder.from_settings(stack.settings(redis_url=url)).build()
    try:
        await service.migrate()
        added = [
            await service.ingest.add(tenant, {"session_id": "s1", "content": f"fact {n}"})
            for n in range(3)
        ]
        await service.working.set(tenant, "task-1", "plan", {"step": 2})
        stats = await service.queue.stats()  # type: ignore[union-attr]
        assert stats.backlog == 3

        # the same data as the previous version left it
        renamed = 0
        async with stack.redis(url) as client:
            for new, old in layout_one(tenant, "s1", "task-1").items():
                if await client.exists(new):
                    await client.rename(new, old)
                    renamed += 1
            await client.delete(LAYOUT_KEY)
        assert renamed >= 5  # items, meta, working memory, the stream and its counts
        assert await service.hot_tier.items(tenant, "s1") == []

        assert await service.hot_tier.migrate() == renamed
        hot = await service.hot_tier.items(tenant, "s1")
        assert sorted(i.id for i in hot) == sorted(i.id for i in added)
        assert await service.hot_tier.tokens(tenant, "s1") == sum(i.token_count for i in added)
        assert await service.working.get(tenant, "task-1") == {"plan": {"step": 2}}
        assert (await service.queue.stats()).backlog == 3  # type: ignore[union-attr]
        assert (await service.reports.enrichment(tenant)).waiting == 3
        assert await service.hot_tier.migrate() == 0  # once
        async with stack.redis(url) as client:
            assert [k async for k in client.scan_iter(match="gm:enrich*")] == []
    finally:
        await service.close()


async def test_redis_copy_moves_a_deployment_to_another_redis(stack: Stack) -> None:
    if stack.redis_cluster:
        pytest.fail("copies between databases of the single Redis")
    source_url, target_url = await empty_redis_db(stack, 6), await empty_redis_db(stack, 4)
    tenant = new_tenant()
    source = MemoryBuilder.from_settings(stack.settings(redis_url=source_url)).build()
    try:
        added = await source.ingest.add(tenant, {"session_id": "s1", "content": "kept"})
        await source.working.set(tenant, "task-1", "plan", {"step": 2})
        async with source.sessions.lock(tenant, "s1"):  # a lock of the old deployment
            done = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "graphmem.ops.cli", "redis-copy", "--to", target_url],
                cwd=ROOT,
                env=stack_env(stack, REDIS_URL=source_url),
                capture_output=True,
                text=True,
                timeout=120,
            )
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        await source.close()
    target = MemoryBuilder.from_settings(stack.settings(redis_url=target_url)).build()
    try:
        assert [i.id for i in await target.hot_tier.items(tenant, "s1")] == [added.id]
        assert await target.working.get(tenant, "task-1") == {"plan": {"step": 2}}
        assert (await target.queue.stats()).backlog == 1  # type: ignore[union-attr]
        async with stack.redis(target_url) as client:
            assert await client.exists(session_keys(tenant, "s1").lock) == 0
            assert 0 < await client.ttl(session_keys(tenant, "s1").items)
    finally:
        await target.close()
