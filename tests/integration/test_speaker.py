"""Who said a memory: a question that names one speaker lifts what that speaker said
(``retrieval.add_speaker``), whether the scope is searched in memory or in the graph, and
memories written before speakers were stored get theirs from the backfill."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from graphmem.enrich import lexical
from graphmem.memory import Memory, RecallQuery
from graphmem.memory.builder import MemoryBuilder
from graphmem.memory.search.weights import Weights
from tests.conftest import Stack, new_tenant, run_cypher

ALICE = "Alice: Thanks, Bob! Your garden sounds lovely, Bob."
BOB = "Bob: I spent the weekend in the garden planting tomatoes."


@pytest.fixture(params=["view", "graph"])
async def searcher(request: pytest.FixtureRequest, stack: Stack) -> AsyncIterator[Memory]:
    """A service searching scopes from its views, or (no cache) from the graph."""
    cache = 256 if request.param == "view" else 0
    svc = MemoryBuilder.from_settings(stack.settings(search_cache_mb=cache)).build()
    await svc.migrate()
    try:
        yield svc
    finally:
        await svc.close()


async def store(service: Memory, tenant: str) -> None:
    # each in a session of its own: no neighbouring turn lends either any score
    for n, text in enumerate((ALICE, BOB)):
        await service.ingest.add_many(
            tenant, [{"session_id": f"s{n}", "user_id": "u", "content": text}]
        )
        await service.spills.spill(tenant, f"s{n}", count=1)


async def scores(service: Memory, tenant: str, question: str) -> dict[str, float]:
    hits = await service.recall.search(tenant, RecallQuery(query=question, user_id="u", limit=10))
    return {h.item.content: h.score for h in hits}


async def test_a_question_naming_one_speaker_lifts_what_they_said(searcher: Memory) -> None:
    tenant = new_tenant()
    await store(searcher, tenant)
    question = "What is Bob growing in the garden?"
    searcher.ranker.weights = Weights(speaker=0.0)
    without = await scores(searcher, tenant, question)
    searcher.ranker.weights = Weights()
    prior = await scores(searcher, tenant, question)
    w = Weights()
    # Bob's base gains the prior, and his session's score (the mean of its best
    # session_top bases, here his memory alone) a share of it; Alice's does not move
    lift = w.speaker * (1 + w.session / w.session_top)
    assert prior[BOB] == pytest.approx(without[BOB] + lift, abs=1e-6)
    assert prior[ALICE] == pytest.approx(without[ALICE], abs=1e-6)


async def test_a_question_naming_both_or_no_speaker_lifts_nobody(searcher: Memory) -> None:
    tenant = new_tenant()
    await store(searcher, tenant)
    for question in ("What did Alice and Bob say about the garden?", "Who has a garden?"):
        searcher.ranker.weights = Weights(speaker=0.0)
        without = await scores(searcher, tenant, question)
        searcher.ranker.weights = Weights()
        assert await scores(searcher, tenant, question) == pytest.approx(without), question


async def test_the_backfill_gives_older_memories_their_speaker(
    service: Memory, stack: Stack
) -> None:
    tenant = new_tenant()
    await store(service, tenant)
    query = "MATCH (m:Memory {tenant: $t}) RETURN m.content AS c, m.speaker AS s"
    assert {r["c"]: r["s"] for r in await run_cypher(stack, query, t=tenant)} == {
        ALICE: "alice",
        BOB: "bob",
    }
    # as memories written by the analysis before speakers were stored
    await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t}) REMOVE m.speaker SET m.termVersion = 1",
        t=tenant,
    )
    assert await service.backfill_terms() >= 2
    rows = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t}) RETURN m.content AS c, m.speaker AS s, m.termVersion AS v",
        t=tenant,
    )
    assert {r["c"]: (r["s"], r["v"]) for r in rows} == {
        ALICE: ("alice", lexical.VERSION),
        BOB: ("bob", lexical.VERSION),
    }
