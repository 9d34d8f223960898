"""Erasure against writers in flight (docs/concepts.md#erasure): a user is forgotten while
a real enrichment worker is writing 1,000 of their adds behind and another replica
searches; once the stream has drained, nothing of theirs is found by any query or in any
store, the receipt verifies (and one changed byte does not), and the user may come back.

The services here read a stream of their own (``STREAM``) on the stack's Redis: no other
test's or process's worker takes these jobs (one running older code would write them
without looking at tombstones), and this module needs no Redis database number."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from graphmem.memory import Memory, RecallQuery
from graphmem.memory.builder import MemoryBuilder
from graphmem.memory.erasure.receipt import canonical, parse, verify
from graphmem.receiptkey import receipt_key
from graphmem.stores.redis.hot import RedisHotTier
from graphmem.stores.redis.queue import RedisEnrichmentQueue
from tests.conftest import Stack, new_tenant, receipt_verify, run_cypher

pytestmark = pytest.mark.asyncio

STREAM = f"gm:{{erasure-race-{uuid.uuid4().hex[:8]}}}"
ADDS = 1000
WORD = "zanzibarite"  # in every one of ada's memories, in nobody else's
# Given to the services and to `graphmem receipt verify` alike: the key file under
# GRAPHMEM_HOME would differ between this process and the command's clean environment.
RECEIPT_KEY = "a-receipt-key-for-the-race-test-only"


def build(stack: Stack) -> Memory:
    settings = stack.settings(maintenance_enabled=False, receipt_key=RECEIPT_KEY)
    builder = MemoryBuilder.from_settings(settings)
    hot = builder._parts.hot
    assert isinstance(hot, RedisHotTier)
    return builder.with_queue(RedisEnrichmentQueue(hot.client, stream=STREAM)).build()


@pytest.fixture
async def services(stack: Stack) -> AsyncIterator[tuple[Memory, Memory]]:
    """The API replica that forgets, with its worker running, and another that searches."""
    service, replica = build(stack), build(stack)
    await service.migrate()
    assert service.worker is not None
    stop = asyncio.Event()
    worker = asyncio.create_task(service.worker.run(stop))
    try:
        yield service, replica
    finally:
        stop.set()
        await worker
        for s in (service, replica):
            await s.close()
        async with stack.redis() as client:
            await client.delete(STREAM, *[k async for k in client.scan_iter(f"{STREAM}:*")])


async def drained(service: Memory, tenant: str, seconds: float = 240) -> None:
    assert service.queue is not None
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        waiting, parked = await service.queue.tenant_backlog(tenant)
        if waiting == 0:
            assert parked == 0
            return
        await asyncio.sleep(0.2)
    raise AssertionError("the enrichment stream did not drain")


async def test_forget_user_while_their_adds_are_enriched_and_a_replica_searches(
    stack: Stack, services: tuple[Memory, Memory], tmp_path: Path
) -> None:
    service, replica = services
    tenant = new_tenant()
    for batch in range(ADDS // 100):
        await service.ingest.add_many(
            tenant,
            [
                {
                    "session_id": f"s{(batch * 100 + n) % 7}",
                    "user_id": "ada",
                    "content": f"Ada met Grace Hopper in Paris about {WORD} batch {batch} note {n}",
                }
                for n in range(100)
            ],
        )
    bob = await service.ingest.add_many(
        tenant,
        [
            {"session_id": "s0", "user_id": "bob", "content": f"Bob's plain note {n}"}
            for n in range(20)
        ],
    )
    searching = asyncio.Event()
    searches = 0

    async def search_meanwhile() -> None:
        nonlocal searches
        while not searching.is_set():
            await replica.recall.search(tenant, RecallQuery(query=WORD, user_id="ada", limit=5))
            searches += 1

    searcher = asyncio.create_task(search_meanwhile())
    await asyncio.sleep(1.0)  # the worker is admitting and embedding ada's adds by now
    done = await service.erasure.forget_user(tenant, "ada")
    searching.set()
    await searcher
    await drained(service, tenant)
    assert searches > 0

    # The receipt: verified, clean, ids and counts only, one changed byte invalid.
    receipt = done.receipt
    key = receipt_key(stack.settings(receipt_key=RECEIPT_KEY))
    assert verify(parse(done.document.encode()), key) is None
    assert receipt["verification"]["clean"] is True, receipt["verification"]
    assert WORD not in done.document
    removed = receipt["removed"]
    # Most were still in Redis; some were written behind or spilled first. A spill
    # that ran after the tombstone dropped its items itself: the receipt does not count
    # them, and the checks below find none of them anywhere.
    assert removed["redis.hotItems"] > 0 and removed["neo4j.nodes"]["User"] == 1
    assert removed["redis.hotItems"] == done.counts["hotMemories"]

    # Nothing of ada's is found by any query, through either replica.
    for s in (service, replica):
        for scope in ({"user_id": "ada"}, {}):
            hits = await s.recall.search(tenant, RecallQuery(query=WORD, limit=20, **scope))
            assert [h for h in hits if h.item.user_id == "ada" or WORD in h.item.content] == []
        page = await s.listing.page(tenant, user_id="ada")
        assert page.items == []
        assert s.entities is not None
        assert await s.entities.user_entities(tenant, "ada") == []
    recalled = await service.recall.recall(tenant, RecallQuery(query=WORD, session_id="s1"))
    assert [i for i in recalled.items if i.user_id == "ada"] == []

    # ... nor in any store: Redis keys, stream entries, Neo4j nodes, index entries.
    async with stack.redis() as client:
        left = 0
        async for k in client.scan_iter(f"gm:{{{tenant}:*}}:items"):
            left += sum(1 for v in (await client.hvals(k)) if '"userId":"ada"' in v)
        assert left == 0
        entries = await client.xrange(STREAM)
        assert [e for e in entries if e[1].get("t") == tenant] == []
        assert await client.llen(f"{STREAM}:lane:{tenant}") == 0
    rows = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $tenant}) WHERE m.userId = 'ada' OR m.content CONTAINS $word "
        "RETURN count(m) AS n",
        tenant=tenant,
        word=WORD,
    )
    assert rows[0]["n"] == 0
    rows = await run_cypher(
        stack, "MATCH (u:User {tenant: $tenant, id: 'ada'}) RETURN count(u) AS n", tenant=tenant
    )
    assert rows[0]["n"] == 0
    rows = await run_cypher(
        stack,
        "MATCH (e:Entity {tenant: $tenant}) WHERE any(a IN e.aliases WHERE a CONTAINS 'Grace') "
        "RETURN count(e) AS n",
        tenant=tenant,
    )
    assert rows[0]["n"] == 0  # only ada mentioned her: the entity went with the memories
    rows = await run_cypher(
        stack,
        "MATCH (t:Tombstone {tenant: $tenant, kind: 'user', subject: 'ada'}) RETURN count(t) AS n",
        tenant=tenant,
    )
    assert rows[0]["n"] == 1
    page = await service.listing.page(tenant, user_id="bob")
    assert {i.id for i in page.items} == {i.id for i in bob}

    # The receipt is in the tenant's log, and the command line checks a saved copy.
    logged, _ = await service.erasure.receipts(tenant, "ada")
    assert [canonical(r).decode() for r in logged] == [done.document]
    saved = tmp_path / f"{receipt['id']}.json"
    saved.write_text(done.document, encoding="utf-8")
    code, out = receipt_verify(stack, saved, RECEIPT_KEY)
    assert (code, out.split(":")[0]) == (0, "valid")
    data = bytearray(saved.read_bytes())
    at = data.index(b'"Memory":') + len(b'"Memory":')
    data[at] = ord("9") if data[at] != ord("9") else ord("8")
    saved.write_bytes(bytes(data))
    code, out = receipt_verify(stack, saved, RECEIPT_KEY)
    assert code == 1 and out.startswith("invalid")

    # Ada may come back: a memory added after the erasure is written behind and found.
    (again,) = await service.ingest.add_many(
        tenant, [{"session_id": "s9", "user_id": "ada", "content": f"back with {WORD} again"}]
    )
    await drained(service, tenant)
    hits = await replica.recall.search(tenant, RecallQuery(query=WORD, user_id="ada", limit=5))
    assert [h.item.id for h in hits] == [again.id]
