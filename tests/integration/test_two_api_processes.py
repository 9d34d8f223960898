"""Two `graphmem serve` processes on the same Redis and Neo4j, Neo4j reached through the
routing scheme (``neo4j://``) with shared bookmarks: everything one replica acknowledges,
the other serves. Nothing but Redis and Neo4j is shared: each process has its own
caches, its own Neo4j driver and its own maintenance loop (of which one runs at a time)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

from graphmem.stores.redis.keys import session_keys
from graphmem.stores.redis.lease import lease_key
from tests.conftest import Stack, empty_redis_db, free_port, new_tenant, stack_env, start_server
from tests.support.feed import next_event, subscription

pytestmark = pytest.mark.asyncio

LEASE_SECONDS = 5.0  # three maintenance intervals of 1 s, at least 5 s (maintenance.py)


@dataclass
class Replica:
    port: int
    proc: subprocess.Popen[bytes]

    async def gql(self, key: str, query: str, **variables: Any) -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=60) as client:
            response = await client.post(
                f"http://127.0.0.1:{self.port}/graphql",
                json={"query": query, "variables": variables},
                headers={"Authorization": f"Bearer {key}"},
            )
        body: dict[str, Any] = response.json()
        assert "errors" not in body, body
        data: dict[str, Any] = body["data"]
        return data


@dataclass
class Pair:
    a: Replica
    b: Replica
    key: str
    redis_url: str
    stack: Stack
    tenant: str


@pytest.fixture
async def pair(stack: Stack) -> AsyncIterator[Pair]:
    url = await empty_redis_db(stack, 1)
    tenant = new_tenant()
    key = f"key-{uuid.uuid4().hex}"
    env = stack_env(
        stack,
        NEO4J_URI=urlunsplit(urlsplit(stack.neo4j_uri)._replace(scheme="neo4j")),
        REDIS_URL=url,
        GRAPHMEM_API_KEYS=f"{key}={tenant}",
        GRAPHMEM_MEMORY__MAINTENANCE_INTERVAL_SECONDS="1",
    )
    ports = [free_port(), free_port()]
    procs = [start_server(env, port) for port in ports]
    try:
        yield Pair(
            Replica(ports[0], procs[0]), Replica(ports[1], procs[1]), key, url, stack, tenant
        )
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


ADD = """mutation($s: ID!, $u: ID!, $c: String!) {
  addMemory(input: {sessionId: $s, userId: $u, content: $c}) { id } }"""
HOT = "query($s: ID!) { hot(sessionId: $s) { id content } }"


async def test_what_one_replica_acknowledges_the_other_serves(pair: Pair) -> None:
    a, b, key = pair.a, pair.b, pair.key
    # 12 sessions written through A, read back whole through B
    written: dict[str, list[tuple[str, str]]] = {}
    for n in range(12):
        session = f"s{n}"
        written[session] = []
        for turn in range(3):
            content = f"session {n} turn {turn}: the parcel went to Lyon"
            added = await a.gql(key, ADD, s=session, u="ada", c=content)
            written[session].append((added["addMemory"]["id"], content))
    for session, items in written.items():
        hot = (await b.gql(key, HOT, s=session))["hot"]
        assert sorted((h["id"], h["content"]) for h in hot) == sorted(items), session
    if pair.stack.redis_cluster:
        # per-session hash tags: the sessions spread over the cluster's masters
        async with pair.stack.redis() as client:
            nodes = {
                client.get_node_from_key(session_keys(pair.tenant, s).items).name  # type: ignore[attr-defined]
                for s in written
            }
        assert len(nodes) >= 2, nodes

    # a spill through B is found by a search through A at once
    spilled = await b.gql(
        key,
        "mutation($s: ID!) { spill(sessionId: $s, count: 3) { spilledIds } }",
        s="s0",
    )
    assert len(spilled["spill"]["spilledIds"]) == 3
    found = await a.gql(
        key,
        'query { search(query: "session 0 turn 1 parcel", sessionId: "s0") { item { id tier } } }',
    )
    hits = found["search"]
    assert hits and hits[0]["item"]["id"] == written["s0"][1][0]
    assert hits[0]["item"]["tier"] in ("WARM", "COLD")

    # an event produced through A reaches a subscriber of B
    async with subscription(b.port, key) as ws:
        added = await a.gql(key, ADD, s="s-events", u="ada", c="an event for B")
        event = await next_event(ws)
        assert event["kind"] == "ADDED" and added["addMemory"]["id"] in event["itemIds"]

    # working memory set through A is read through B
    task = (await a.gql(key, 'mutation { createTask(description: "pack") { id } }'))["createTask"]
    await a.gql(
        key,
        'mutation($t: ID!) { setWorkingMemory(taskId: $t, key: "box", value: {n: 3}) }',
        t=task["id"],
    )
    held = await b.gql(key, "query($t: ID!) { workingMemory(taskId: $t) }", t=task["id"])
    assert held["workingMemory"] == {"box": {"n": 3}}


async def holder(pair: Pair) -> str | None:
    async with pair.stack.redis(pair.redis_url) as client:
        value: str | None = await client.get(lease_key("maintenance"))
        return value


async def test_maintenance_runs_in_one_replica_and_the_other_takes_over(pair: Pair) -> None:
    pids = {pair.a.proc.pid: pair.a, pair.b.proc.pid: pair.b}
    deadline = time.monotonic() + 20
    while (held := await holder(pair)) is None:
        assert time.monotonic() < deadline, "no replica took the maintenance lease"
        await asyncio.sleep(0.2)
    running = [pid for pid in pids if f":{pid}:" in held]
    assert len(running) == 1, held  # exactly one replica runs maintenance
    # it stays with that replica while it lives
    await asyncio.sleep(2 * LEASE_SECONDS / 3)
    assert await holder(pair) == held
    os.kill(running[0], signal.SIGKILL)  # dies without releasing the lease
    killed = time.monotonic()
    (other,) = [pid for pid in pids if pid != running[0]]
    while f":{other}:" not in (await holder(pair) or ""):
        assert time.monotonic() - killed < LEASE_SECONDS + 3, "no takeover within the lease"
        await asyncio.sleep(0.1)
