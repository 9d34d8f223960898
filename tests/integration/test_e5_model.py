"""e5-small-v2 as `graphmem services install` unpacks it from its Maven jar (the setup ran
that before these tests): the real model's vectors, its two instructions, and a memory
embedded whole."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from graphmem.enrich.e5 import E5SmallEmbedder
from graphmem.enrich.embed import embed_queries
from graphmem.enrich.embedders import make_embedder
from graphmem.enrich.sentences import embed_memories
from graphmem.memory import Memory, RecallQuery
from graphmem.memory.builder import MemoryBuilder
from graphmem.memory.search.fusion import Retriever
from graphmem.settings import load_settings
from tests.conftest import Stack, new_tenant

DOCUMENTS = [
    "Caroline: I went to an LGBTQ support group on Tuesday. It was so powerful.",
    "Melanie: I painted a sunrise over the lake last summer.",
    "The quarterly report is due on Friday; send your numbers to finance.",
    "ok",
]
QUESTION = "When did Caroline go to the support group?"


@pytest.fixture(scope="module")
def e5() -> E5SmallEmbedder:
    embedder = make_embedder("e5-small-int8", 1, models_dir=load_settings().models_dir)
    assert isinstance(embedder, E5SmallEmbedder)
    return embedder


def test_the_question_finds_its_memory(e5: E5SmallEmbedder) -> None:
    memories = np.array([m.vector for m in embed_memories(e5, DOCUMENTS)], dtype=np.float32)
    (query,) = embed_queries(e5, [QUESTION])
    assert memories.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(memories, axis=1), 1.0, atol=1e-5)
    scores = memories @ query
    assert int(np.argmax(scores)) == 0
    # e5's cosines lie in a narrow band: the answer leads by a few hundredths
    assert scores[0] - max(scores[1:]) > 0.03


def test_memories_and_queries_carry_the_instructions_e5_was_trained_with(
    e5: E5SmallEmbedder,
) -> None:
    (embedded,) = embed_memories(e5, [DOCUMENTS[0]])
    # whole, not by sentence, and behind "passage: "
    assert embedded.sentences is None
    (passage,) = e5.embed(["passage: " + DOCUMENTS[0]])
    (bare,) = e5.embed([DOCUMENTS[0]])
    np.testing.assert_array_equal(np.asarray(embedded.vector, np.float32), passage)
    assert float(passage @ bare) < 0.99
    (query,) = embed_queries(e5, [QUESTION])
    (plain,) = e5.embed([QUESTION])
    assert float(query @ plain) < 0.99


def test_a_vector_never_depends_on_its_batch_mates(e5: E5SmallEmbedder) -> None:
    alone = e5.embed([DOCUMENTS[1]])
    together = e5.embed(DOCUMENTS)
    np.testing.assert_array_equal(alone[0], together[1])


@pytest.fixture
async def e5_service(stack: Stack) -> AsyncIterator[Memory]:
    settings = stack.settings(write_behind=False, embedder="e5-small-int8")
    service = MemoryBuilder.from_settings(settings).build()
    await service.migrate()
    yield service
    await service.close()


async def test_a_hybrid_page_ends_with_the_best_vector_hits_the_fusion_ranked_lower(
    e5_service: Memory,
) -> None:
    tenant, session = new_tenant(), "s"
    # many memories share the question's words, and one says something near in others
    crowd = [f"Ben: The budget meeting about the garden budget, part {k}." for k in range(30)]
    needle = "Ben: We agreed to spend less money on plants and seeds this spring."
    for content in [*crowd, needle]:
        await e5_service.ingest.add(tenant, {"session_id": session, "content": content})
    await e5_service.spills.spill(tenant, session, count=100_000)
    question = "What did they decide about the garden budget?"

    async def search(retriever: Retriever, limit: int) -> list[str]:
        q = RecallQuery(query=question, retriever=retriever, limit=limit, session_id=session)
        return [hit.item.content for hit in await e5_service.recall.search(tenant, q)]

    assert e5_service.ranker.weights.vector_slots == 0.2
    hybrid, vector = await search(Retriever.HYBRID, 10), await search(Retriever.VECTOR, 40)
    assert len(hybrid) == 10 and len(set(hybrid)) == 10
    head = hybrid[:8]
    # the last two places: the vector ranking's best that the first eight do not hold
    assert hybrid[8:] == [c for c in vector if c not in head][:2]


async def test_similarities_are_on_the_scale_the_thresholds_are_written_in(
    e5_service: Memory,
) -> None:
    """e5's cosines lie between about 0.75 and 0.9 for any text: read raw, the finance
    report would be 'relevant' to a question about a support group (minRelevance 0.3)."""
    tenant, session = new_tenant(), "s"
    for content in DOCUMENTS:
        await e5_service.ingest.add(tenant, {"session_id": session, "content": content})
    await e5_service.spills.spill(tenant, session, count=100_000)
    q = RecallQuery(query=QUESTION, retriever=Retriever.VECTOR, limit=4, session_id=session)
    similarity = {h.item.content: h.similarity for h in await e5_service.recall.search(tenant, q)}
    minimum = e5_service.sessions.defaults.min_relevance
    assert similarity[DOCUMENTS[0]] > 0.5
    assert similarity[DOCUMENTS[2]] < minimum
    result = await e5_service.recall.recall(tenant, q)
    assert {s.item.content: s.similarity for s in result.scores} == similarity


async def test_an_unrelated_episode_is_not_similar_on_e5s_scale(e5_service: Memory) -> None:
    tenant = new_tenant()
    await e5_service.episodes.record_episode(
        tenant,
        outcome="The staging deploy finished after the database migration.",
        success=True,
        description="Deploy the web service to staging",
    )
    (row,) = await e5_service.episodes.similar(tenant, "What did Melanie paint last summer?")
    (near,) = await e5_service.episodes.similar(tenant, "How did the staging deploy go?")
    assert row.similarity < e5_service.sessions.defaults.min_relevance < near.similarity
