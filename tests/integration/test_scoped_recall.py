"""BM25 ranks inside the asked scope, and memories written before scope tokens existed
are backfilled by migrate."""

from __future__ import annotations

import numpy as np
import pytest

from graphmem.domain.models import query_scope_tokens, scope_token
from graphmem.memory import Memory, RecallQuery
from graphmem.memory.search.fusion import Retriever
from graphmem.memory.search.querytext import lucene_query
from tests.conftest import Stack, run_cypher


async def test_a_user_finds_their_memory_when_others_match_the_query_far_more(
    service: Memory, tenant: str
) -> None:
    # 150 memories of another user outrank ours on BM25; a tenant-wide top 100 filtered
    # to our user afterwards would hold none of ours.
    await service.ingest.add_many(
        tenant,
        [
            {"session_id": "noisy", "user_id": "bob", "content": f"zebra zebra zebra note {n}"}
            for n in range(150)
        ],
    )
    (ours,) = await service.ingest.add_many(
        tenant,
        [{"session_id": "quiet", "user_id": "alice", "content": "a zebra at the zoo today"}],
    )
    await service.spills.spill(tenant, "noisy", count=150)
    await service.spills.spill(tenant, "quiet", count=1)
    for retriever in (Retriever.FULLTEXT, Retriever.HYBRID):
        hits = await service.recall.search(
            tenant, RecallQuery(query="zebra", user_id="alice", limit=5, retriever=retriever)
        )
        assert [h.item.id for h in hits] == [ours.id], retriever
    by_session = await service.recall.search(
        tenant, RecallQuery(query="zebra", session_id="quiet", retriever=Retriever.FULLTEXT)
    )
    assert [h.item.id for h in by_session] == [ours.id]


async def test_migrate_gives_old_memories_their_session_and_user_tokens(
    service: Memory, tenant: str, stack: Stack
) -> None:
    (item,) = await service.ingest.add_many(
        tenant, [{"session_id": "old", "user_id": "carol", "content": "the okapi enclosure"}]
    )
    await service.spills.spill(tenant, "old", count=1)
    # as a memory written before session and user tokens existed
    await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $tenant, id: $id}) SET m.scopeToken = $token",
        tenant=tenant,
        id=item.id,
        token=scope_token(tenant),
    )
    # Lucene's user-scoped query (a scope held in memory scores BM25 without tokens)
    lucene = lucene_query("okapi", query_scope_tokens(tenant, user_id="carol"))
    assert lucene is not None

    async def found() -> list[str]:
        return (await service.graph.search.text_hits(tenant, lucene, 10)).ids

    assert await found() == []
    await service.migrate()
    assert await found() == [item.id]


async def test_a_memory_of_several_sentences_is_ranked_by_its_best_sentence(
    service: Memory, tenant: str, stack: Stack
) -> None:
    long, short = await service.ingest.add_many(
        tenant,
        [
            {
                "session_id": "s",
                "user_id": "dora",
                "content": "The weather was awful all week. We visited my aunt in Leeds. "
                "Then we adopted a rescue greyhound named Biscuit.",
            },
            {"session_id": "s", "user_id": "dora", "content": "The bakery opens at nine."},
        ],
    )
    await service.spills.spill(tenant, "s", count=2)
    rows = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $tenant}) RETURN m.id AS id, m.sentenceVectors AS v",
        tenant=tenant,
    )
    stored = {r["id"]: r["v"] for r in rows}
    assert stored[short.id] is None
    assert len(stored[long.id]) == 3 * 384 * 2  # three float16 sentence vectors
    query = "adopted a rescue greyhound"
    (q,) = service.embedder.embed([query])
    (node,) = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $tenant, id: $id}) RETURN m.embedding AS e",
        tenant=tenant,
        id=long.id,
    )
    mean_cosine = float(np.dot(q, np.asarray(node["e"], dtype=np.float32)))
    hits = await service.recall.search(tenant, RecallQuery(query=query, user_id="dora", limit=2))
    assert hits[0].item.id == long.id
    # ranked (and reported) by its best sentence, closer than its averaged vector
    assert hits[0].similarity > mean_cosine + 0.05


async def test_a_question_naming_a_period_ranks_what_happened_then_first(
    service: Memory, tenant: str
) -> None:
    """The same words on three dates: "in June" picks June's, resolved against the
    conversation's latest date (2023), not today's year."""
    days = {"march": "2023-03-14T10:00:00Z", "june": "2023-06-20T10:00:00Z"}
    days["october"] = "2023-10-02T10:00:00Z"
    added = await service.ingest.add_many(
        tenant,
        [
            {
                "session_id": f"s-{month}",
                "user_id": "erin",
                "content": "We went hiking in the hills with the dog",
                "occurred_at": when,
            }
            for month, when in days.items()
        ],
    )
    for month in days:
        await service.spills.spill(tenant, f"s-{month}", count=1)
    query = RecallQuery(query="Where did we go hiking in June?", user_id="erin")
    hits = await service.recall.search(tenant, query)
    assert hits[0].item.id == added[1].id
    assert hits[0].score > hits[1].score
    # without a period the three are alike: nothing singles out June's
    plain = await service.recall.search(
        tenant, RecallQuery(query="Where did we go hiking?", user_id="erin")
    )
    assert {h.item.id for h in plain} == {a.id for a in added}
    assert plain[0].score == pytest.approx(plain[2].score, abs=1e-6)
