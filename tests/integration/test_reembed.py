"""One model per tenant (docs/recall.md): a tenant's vectors record their model, a server
with another model neither searches nor writes them, and `graphmem reembed` moves the
tenant to another model online, resuming after a kill."""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import AsyncIterator

import numpy as np
import pytest

from graphmem.domain.models import EmbeddingSpace
from graphmem.enrich.sentences import embed_memories
from graphmem.errors import Unavailable
from graphmem.memory import Memory, RecallQuery
from graphmem.memory.builder import MemoryBuilder
from graphmem.memory.search.fusion import Retriever
from graphmem.memory.writepath.reembed import Reembed
from tests.conftest import ROOT, Stack, new_tenant, run_cypher, stack_env

TOPICS = ["the garden", "a violin lesson", "the budget", "hiking boots", "a chess match"]
NEEDLE = "Priya adopted a grey kitten called Mochi from the shelter on Elm Street."


def texts(n: int) -> list[str]:
    return [f"Note {k} about {TOPICS[k % len(TOPICS)]}, day {k // 5}." for k in range(n)]


@pytest.fixture
async def minilm(stack: Stack) -> AsyncIterator[Memory]:
    # no write-behind: each spill embeds its memories itself, so nothing here waits on a
    # worker of another test
    service = MemoryBuilder.from_settings(stack.settings(write_behind=False)).build()
    await service.migrate()
    service.spaces.ttl_seconds = 0  # see each flip at once
    yield service
    await service.close()


@pytest.fixture
async def bge(stack: Stack) -> AsyncIterator[Memory]:
    settings = stack.settings(write_behind=False, embedder="bge-small-int8")
    service = MemoryBuilder.from_settings(settings).build()
    await service.migrate()
    service.spaces.ttl_seconds = 0
    yield service
    await service.close()


async def remember(service: Memory, tenant: str, contents: list[str], session: str = "s") -> None:
    for content in contents:
        await service.ingest.add(tenant, {"session_id": session, "content": content})
    await service.spills.spill(tenant, session, count=100_000)


async def vector_search(service: Memory, tenant: str, query: str) -> list[str]:
    q = RecallQuery(query=query, retriever=Retriever.VECTOR, limit=3, session_id="s")
    return [hit.item.content for hit in await service.recall.search(tenant, q)]


def reembed_command(stack: Stack, tenant: str) -> tuple[list[str], dict[str, str]]:
    env = stack_env(stack, GRAPHMEM_EMBEDDER="bge-small-int8")
    return [sys.executable, "-m", "graphmem.ops.cli", "reembed", "--tenant", tenant], env


async def test_reembed_moves_a_tenant_online_and_resumes_after_a_kill(
    stack: Stack, minilm: Memory, bge: Memory
) -> None:
    tenant = new_tenant()
    old, new = minilm.embedder.name, bge.embedder.name
    await remember(minilm, tenant, [*texts(299), NEEDLE])
    task = await minilm.episodes.create_task(tenant, "adopt a kitten from the shelter")
    (row,) = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t}) RETURN count(m) AS n, "
        "collect(DISTINCT m.embeddingModel) AS models",
        t=tenant,
    )
    assert row == {"n": 300, "models": [old]}
    assert await minilm.spaces.model_of(tenant) == old

    # a first run, killed once it has embedded some of the memories
    command, env = reembed_command(stack, tenant)
    proc = await asyncio.create_subprocess_exec(
        *command, cwd=ROOT, env=env, stderr=asyncio.subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    ready = 0
    while time.monotonic() < deadline and proc.returncode is None:
        (row,) = await run_cypher(
            stack,
            "MATCH (m:Memory {tenant: $t}) WHERE m.nextModel = $m RETURN count(m) AS n",
            t=tenant,
            m=new,
        )
        ready = row["n"]
        if ready >= 64:
            break
        # search answers from the old vectors all along
        assert (await vector_search(minilm, tenant, "Who adopted a kitten?"))[0] == NEEDLE
        await asyncio.sleep(0.05)
    proc.kill()
    await proc.wait()
    assert 64 <= ready < 300, ready
    assert await minilm.spaces.model_of(tenant) == old  # not flipped: the old model serves
    assert (await vector_search(minilm, tenant, "Who adopted a kitten?"))[0] == NEEDLE

    # the second run takes up where the first stopped
    second = await asyncio.create_subprocess_exec(
        *command, cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(second.communicate(), 600)
    assert second.returncode == 0, err.decode()[-2000:]
    report = re.search(
        r"300 memories hold \S+'s vectors \((\d+) embedded in this run", out.decode()
    )
    assert report is not None, out.decode()
    assert int(report.group(1)) <= 300 - ready

    (row,) = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t}) RETURN collect(DISTINCT m.embeddingModel) AS models, "
        "count(m.nextModel) + count(m.embeddingNext) + count(m.vectorBytesNext) AS leftovers",
        t=tenant,
    )
    assert row == {"models": [new], "leftovers": 0}
    (node,) = await run_cypher(
        stack,
        "MATCH (n:Task {tenant: $t, id: $id}) RETURN n.embeddingModel AS model",
        t=tenant,
        id=task.id,
    )
    assert node["model"] == new
    # every vector is the new model's: as bge embeds the content now
    sample = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t}) RETURN m.content AS content, m.embedding AS vector "
        "ORDER BY m.id LIMIT 8",
        t=tenant,
    )
    expected = embed_memories(bge.embedder, [s["content"] for s in sample])
    for stored, want in zip(sample, expected, strict=True):
        assert float(np.dot(stored["vector"], want.vector)) > 0.999

    # the old model's server refuses to rank bge vectors; the new one finds the memory
    with pytest.raises(Unavailable, match="graphmem reembed"):
        await vector_search(minilm, tenant, "Who adopted a kitten?")
    # the start-up line counts the tenant among those of another model (it names five)
    assert (await minilm.graph.spaces.all())[tenant] == new
    report_line = await minilm.spaces.report()
    assert report_line is not None and "graphmem reembed" in report_line
    assert (await vector_search(bge, tenant, "Who adopted a kitten?"))[0] == NEEDLE
    assert tenant not in (await bge.spaces.report() or "")


async def test_a_server_of_another_model_writes_no_vectors_and_reembed_catches_up(
    stack: Stack, minilm: Memory, bge: Memory
) -> None:
    tenant = new_tenant()
    await remember(bge, tenant, texts(20))
    assert await bge.spaces.model_of(tenant) == bge.embedder.name
    # a server still on MiniLM adds to the bge tenant: stored and found by words, but
    # its MiniLM vectors are not written
    await remember(minilm, tenant, [NEEDLE])
    (row,) = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t}) WHERE m.content STARTS WITH 'Priya' "
        "RETURN m.vectorBytes IS NULL AS bare, m.embeddingModel AS model",
        t=tenant,
    )
    assert row == {"bare": True, "model": None}
    text = RecallQuery(query="kitten Mochi", retriever=Retriever.FULLTEXT, session_id="s")
    with pytest.raises(Unavailable):
        await minilm.recall.search(tenant, text)
    assert next(h.item.content for h in await bge.recall.search(tenant, text)) == NEEDLE

    report = await Reembed(bge.graph.spaces, bge.embedder, bge.changes).tenant(tenant)
    assert (report.memories, report.embedded) == (21, 1)
    assert (await vector_search(bge, tenant, "Who adopted a kitten?"))[0] == NEEDLE


async def test_the_hot_tier_keeps_one_models_vectors(minilm: Memory, bge: Memory) -> None:
    tenant = new_tenant()
    item = await minilm.ingest.add(tenant, {"session_id": "s", "content": NEEDLE})
    hot = minilm.hot_tier
    old, new = minilm.embedder.name, bge.embedder.name
    await hot.cache_embeddings(tenant, "s", {item.id: [0.5] * 384}, model=old)
    assert await hot.cached_model(tenant, "s") == old
    assert list(await hot.embeddings(tenant, "s", [item.id], model=old)) == [item.id]
    assert await hot.embeddings(tenant, "s", [item.id], model=new) == {}
    # another model's vectors replace the whole cache
    await hot.cache_embeddings(tenant, "s", {item.id: [0.25] * 384}, model=new)
    assert await hot.cached_model(tenant, "s") == new
    assert await hot.embeddings(tenant, "s", [item.id], model=old) == {}
    assert (await hot.embeddings(tenant, "s", [item.id], model=new))[item.id][0] == 0.25


async def test_the_flip_waits_for_a_writer_that_read_the_old_model(
    stack: Stack, minilm: Memory, bge: Memory
) -> None:
    """A worker of the old model that read the tenant's model before the flip must commit
    before the flip does, so that the swap rounds after it find what it wrote. Read
    without a lock (as it was), the flip committed first, the worker's vectors landed
    after the last round, and the tenant kept one memory of the old model for good."""
    from neo4j import AsyncGraphDatabase

    from graphmem.stores.models import MemoryVectors
    from graphmem.stores.neo4j.rows import vector_row

    tenant = new_tenant()
    await remember(minilm, tenant, texts(6))
    (row,) = await run_cypher(
        stack, "MATCH (m:Memory {tenant: $t}) RETURN m.id AS id, m.content AS c LIMIT 1", t=tenant
    )
    (embedded,) = embed_memories(minilm.embedder, [row["c"]])
    stale = vector_row(MemoryVectors(row["id"], embedded.vector, None))
    driver = AsyncGraphDatabase.driver(
        stack.neo4j_uri, auth=(stack.neo4j_user, stack.neo4j_password)
    )
    async with driver, driver.session() as session:
        writer = await session.begin_transaction()
        # a MiniLM worker's memory/set_vectors, run but not committed: it has read the
        # tenant's model (MiniLM's) and written its vector
        result = await writer.run(
            minilm.graph.cypher["memory/set_vectors"],
            tenant=tenant,
            rows=[stale],
            stripe=5,
            model=minilm.embedder.name,
            dimensions=minilm.embedder.dimension,
        )
        assert [r["id"] async for r in result] == [row["id"]]
        flip = asyncio.ensure_future(bge.graph.spaces.flip(tenant, EmbeddingSpace.of(bge.embedder)))
        await asyncio.sleep(1.0)
        assert not flip.done(), "the flip committed while a writer of the old model was open"
        await writer.commit()
        await asyncio.wait_for(flip, 30)
    assert await bge.spaces.model_of(tenant) == bge.embedder.name
    report = await Reembed(bge.graph.spaces, bge.embedder, bge.changes).tenant(tenant)
    assert report.memories == 6
    models = await run_cypher(
        stack, "MATCH (m:Memory {tenant: $t}) RETURN DISTINCT m.embeddingModel AS m", t=tenant
    )
    assert models == [{"m": bge.embedder.name}]


async def test_an_episode_of_another_model_is_not_compared_until_reembed(
    minilm: Memory, bge: Memory
) -> None:
    """A server still on the tenant's old model records its episodes with that model's
    vectors (after the last reembed, or before its restart): those are left out of
    similarEpisodes, not ranked as noise, until a reembed embeds them again."""
    tenant = new_tenant()
    await remember(bge, tenant, texts(3))
    await minilm.episodes.record_episode(
        tenant, outcome="Deployed after the migration.", success=True, description="Deploy web"
    )
    await bge.episodes.record_episode(
        tenant, outcome="Deployed on the second try.", success=True, description="Deploy api"
    )
    found = await bge.episodes.similar(tenant, "How did the deploy go?")
    assert [r.episode.outcome for r in found] == ["Deployed on the second try."]
    report = await Reembed(bge.graph.spaces, bge.embedder, bge.changes).tenant(tenant)
    assert report.tasks >= 1
    found = await bge.episodes.similar(tenant, "How did the deploy go?")
    assert sorted(r.episode.outcome for r in found) == [
        "Deployed after the migration.",
        "Deployed on the second try.",
    ]
