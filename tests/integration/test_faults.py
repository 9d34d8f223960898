"""Fault tests with the real processes: bounded in count and time, and self-stopping.

(a) Neo4j stopped while adds force spills; (b) the API killed with SIGKILL mid-spill;
(c) Redis killed with SIGKILL after acknowledged adds, with appendfsync always.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j import GraphDatabase

from graphmem.memory.builder import MemoryBuilder
from graphmem.ops.devstack import LocalStack
from graphmem.settings import Settings
from tests.conftest import (
    ROOT,
    Stack,
    empty_redis_db,
    free_port,
    new_tenant,
    stack_env,
    start_server,
)


def own_stack_settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "home": tmp_path / "stack",
        "neo4j_lib_dir": ROOT / ".graphmem" / "neo4j-lib",
        "neo4j_bolt_port": free_port(),
        "neo4j_http_port": free_port(),
        "redis_port": free_port(),
        "neo4j_heap": "512m",
        "neo4j_pagecache": "64m",
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture
def own_stack(tmp_path: Path) -> Iterator[LocalStack]:
    local = LocalStack(own_stack_settings(tmp_path, redis_appendfsync="always"))
    try:
        yield local
    finally:
        local.down()


def graph_ids(uri: str, password: str, tenant: str) -> list[str]:
    with GraphDatabase.driver(uri, auth=("neo4j", password)) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (m:Memory {tenant: $t}) RETURN m.id AS id, m.contentHash AS h", {"t": tenant}
        )
    ids = [r["id"] for r in records]
    assert len({r["h"] for r in records}) == len(ids), "duplicate content in the graph"
    return ids


async def test_a_neo4j_down_during_1000_adds_loses_and_duplicates_nothing(
    own_stack: LocalStack, stack: Stack
) -> None:
    settings = own_stack.settings
    own_stack.neo4j.start()
    tenant = new_tenant()
    # A Redis database of its own: this test's maintenance pass visits every tenant in
    # Redis, and must not spill other tests' sessions into this test's private Neo4j.
    redis_db = await empty_redis_db(stack, 7)
    service = (
        MemoryBuilder.from_settings(
            settings.model_copy(update={"neo4j_uri": own_stack.neo4j_uri, "redis_url": redis_db})
        )
        .with_config(hotTokenLimit=200, spillWaitSeconds=2)
        .build()
    )
    try:
        await service.migrate()
        own_stack.neo4j.stop()
        started = time.monotonic()
        added = []
        for i in range(1000):
            item = await service.ingest.add(
                tenant, {"session_id": "s", "content": f"fact {i}: the parcel went to depot {i}"}
            )
            added.append(item.id)
        assert time.monotonic() - started < 120  # adds stay acknowledged and quick
        assert await service.hot_tier.tokens(tenant, "s") > 200  # nothing could spill
        # an automatic spill still retrying when Neo4j returns would race the catch-up
        await service.spills.settle()

        own_stack.neo4j.start()
        report = await service.maintenance.run_once()  # catch-up spill of the over-budget session
        assert not report.errors, report.errors
        assert len(report.caught_up[f"{tenant}/s"]) > 900

        in_graph = graph_ids(own_stack.neo4j_uri, settings.neo4j_password, tenant)
        in_hot = [i.id for i in await service.reports.hot_items(tenant, "s")]
        assert len(in_graph) == len(set(in_graph))
        assert not set(in_graph) & set(in_hot)
        assert set(in_graph) | set(in_hot) == set(added)
        assert await service.hot_tier.tokens(tenant, "s") <= 200
        for item_id in added[::50]:  # readable through the cascading read
            found = await service.promotion.get(tenant, item_id)
            assert found is not None and found.id == item_id
    finally:
        await service.close()


def serve(stack: Stack, port: int, key: str, tenant: str) -> subprocess.Popen[bytes]:
    env = stack_env(
        stack,
        GRAPHMEM_API_KEYS=f"{key}={tenant}",
        GRAPHMEM_MEMORY__AUTO_SPILL_ENABLED="false",
        GRAPHMEM_MEMORY__SPILL_BATCH_SIZE="50",
        GRAPHMEM_MAINTENANCE_ENABLED="false",
    )
    return start_server(env, port)


def test_b_api_killed_mid_spill_then_rerun_loses_and_duplicates_nothing(stack: Stack) -> None:
    tenant, key = new_tenant(), "key-" + os.urandom(8).hex()
    headers = {"Authorization": f"Bearer {key}"}
    port = free_port()
    proc = serve(stack, port, key, tenant)
    added: list[str] = []
    try:
        add = "mutation($i: [AddMemoryInput!]!) { addMemories(inputs: $i) { id } }"
        for chunk in range(3):
            inputs = [
                {"sessionId": "s", "content": f"record {chunk}-{i}: shipment to bay {i}"}
                for i in range(500)
            ]
            body = httpx.post(
                f"http://127.0.0.1:{port}/graphql",
                headers=headers,
                timeout=60,
                json={"query": add, "variables": {"i": inputs}},
            ).json()
            added += [m["id"] for m in body["data"]["addMemories"]]
        spill = {"query": 'mutation { spill(sessionId: "s", count: 1500) { spilledCount } }'}
        # fire the spill without waiting for it, then kill the process once batches land
        client = httpx.Client(timeout=60)
        pending = subprocess.Popen(
            [
                "curl",
                "-s",
                "-o",
                "/dev/null",
                "-H",
                f"Authorization: Bearer {key}",
                "-H",
                "Content-Type: application/json",
                "-d",
                '{"query": "mutation { spill(sessionId: \\"s\\", count: 1500) { spilledCount } }"}',
                f"http://127.0.0.1:{port}/graphql",
            ]
        )
        deadline = time.monotonic() + 60
        while not graph_ids(stack.neo4j_uri, stack.neo4j_password, tenant):
            assert time.monotonic() < deadline, "no batch reached the graph"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        pending.wait(timeout=30)
        partial = graph_ids(stack.neo4j_uri, stack.neo4j_password, tenant)
        assert 0 < len(partial) < 1500, len(partial)

        port = free_port()
        proc = serve(stack, port, key, tenant)
        status = 'query { memoryStatus(sessionId: "s") { hot { items } cold { items } } }'
        before = client.post(
            f"http://127.0.0.1:{port}/graphql", headers=headers, json={"query": status}
        ).json()["data"]["memoryStatus"]
        # every item is in at least one tier; some may be in both (written, not yet removed)
        assert before["hot"]["items"] + before["cold"]["items"] >= 1500
        rerun = client.post(f"http://127.0.0.1:{port}/graphql", headers=headers, json=spill).json()[
            "data"
        ]["spill"]
        assert rerun["spilledCount"] == before["hot"]["items"]
        final = graph_ids(stack.neo4j_uri, stack.neo4j_password, tenant)
        assert sorted(final) == sorted(added)  # all there, each once
        after = client.post(
            f"http://127.0.0.1:{port}/graphql", headers=headers, json={"query": status}
        ).json()["data"]["memoryStatus"]
        assert after == {"hot": {"items": 0}, "cold": {"items": 1500}}
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)


async def test_c_redis_killed_after_acknowledged_adds_with_appendfsync_always(
    own_stack: LocalStack, stack: Stack
) -> None:
    own_stack.redis.start()
    settings = own_stack.settings.model_copy(
        update={"neo4j_uri": stack.neo4j_uri, "redis_url": own_stack.redis_url}
    )
    tenant = new_tenant()
    service = MemoryBuilder.from_settings(settings).build()
    try:
        acknowledged = []
        for i in range(300):
            item = await service.ingest.add(tenant, {"session_id": "s", "content": f"note {i}"})
            acknowledged.append(item.id)  # add returned: the write is acknowledged
        own_stack.redis.kill()  # SIGKILL: no shutdown save, only what the AOF holds
        own_stack.redis.start()
        survivors = {i.id for i in await service.reports.hot_items(tenant, "s")}
        assert survivors == set(acknowledged)
        assert await service.hot_tier.tokens(tenant, "s") == sum(
            i.token_count for i in await service.reports.hot_items(tenant, "s")
        )
    finally:
        await service.close()
