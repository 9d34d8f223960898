"""The hybrid ranking over the in-memory stores: BM25 and cosine fused with the documented
weights (words first, meaning first for a question asking for an inference), the same
ranking whether the scope is held in memory or read from the graph, and nothing outside
the tenant, the scope, the types and the tiers asked for."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from graphmem.domain.models import EmbeddingSpace, MemoryType, ScoredMemory, Tier
from graphmem.errors import Unavailable
from graphmem.memory.inputs import RecallQuery
from graphmem.memory.search.fusion import Retriever
from graphmem.memory.search.weights import Weights
from graphmem.memory.writepath.analysis import graph_memory
from tests.support.contracts.common import item
from tests.support.enrich import TableEmbedder
from tests.support.memory import OTHER_TENANT, TENANT, Fakes, fake_memory

#: one memory shares the query's words and not its vector, the other its vector only
WORDS = "quarterly budget review"
MEANING = "finance meeting notes"
QUESTION = "quarterly budget"
INFERENCE = "would the quarterly budget worry her"
TABLE = {
    WORDS: [1.0, 0.0, 0.0],
    MEANING: [0.0, 1.0, 0.0],
    QUESTION: [0.0, 1.0, 0.0],
    INFERENCE: [0.0, 1.0, 0.0],
}


async def spill_all(f: Fakes, tenant: str = TENANT) -> None:
    for session_id in await f.hot.index.sessions(tenant):
        held = await f.hot.items(tenant, session_id)
        await f.memory.spills.spill(tenant, session_id, item_ids=[i.id for i in held])


async def search(f: Fakes, query: str, **q: Any) -> list[ScoredMemory]:
    return await f.memory.recall.search(TENANT, RecallQuery(query=query, **q))


def contents(hits: list[ScoredMemory]) -> list[str]:
    return [h.item.content for h in hits]


@pytest.mark.parametrize("held", [True, False], ids=["scope in memory", "scope in the graph"])
async def test_words_outweigh_meaning_as_the_weights_say(held: bool) -> None:
    f = fake_memory(versions=held, embedder=TableEmbedder(TABLE))
    # one to a session: no context between them
    await f.add(WORDS, session_id="a", user_id="u")
    await f.add(MEANING, session_id="b", user_id="u")
    await spill_all(f)
    hits = await search(f, QUESTION, user_id="u", limit=2)
    assert contents(hits) == [WORDS, MEANING]
    assert [h.similarity for h in hits] == pytest.approx([0.0, 1.0])
    weights = Weights()
    assert weights.text > weights.vector
    # each alone in its session: the base score, and the session's share of it
    lift = 1 + weights.session / weights.session_top
    assert [h.score for h in hits] == pytest.approx(
        [weights.text * lift, weights.vector * lift], rel=1e-4
    )


@pytest.mark.parametrize("held", [True, False], ids=["scope in memory", "scope in the graph"])
async def test_a_question_asking_for_an_inference_ranks_by_meaning(held: bool) -> None:
    f = fake_memory(versions=held, embedder=TableEmbedder(TABLE))
    await f.add(WORDS, session_id="a", user_id="u")
    await f.add(MEANING, session_id="b", user_id="u")
    await spill_all(f)
    assert contents(await search(f, INFERENCE, user_id="u", limit=2)) == [MEANING, WORDS]


async def test_a_single_retriever_ranks_by_its_own_score() -> None:
    f = fake_memory(embedder=TableEmbedder(TABLE))
    await f.add(WORDS, session_id="a", user_id="u")
    await f.add(MEANING, session_id="b", user_id="u")
    await spill_all(f)
    by_vector = await search(f, QUESTION, user_id="u", limit=2, retriever=Retriever.VECTOR)
    assert contents(by_vector) == [MEANING, WORDS]
    assert by_vector[0].score == pytest.approx(1.0)
    by_words = await search(f, QUESTION, user_id="u", limit=2, retriever=Retriever.FULLTEXT)
    assert contents(by_words) == [WORDS]  # BM25 finds only what has the words
    assert by_words[0].score > 0


CONVERSATION = [
    "Melanie: I finally booked the dentist for Monday morning.",
    "Caroline: Good luck! Is it the same dentist as last year?",
    "Melanie: Yes, the one near the harbour. She is very patient.",
    "Caroline: I went hiking near the harbour last weekend.",
    "Melanie: Was the weather good? It rained all week here.",
    "Caroline: Sunny on Saturday, then rain. We saw seals.",
    "Melanie: Seals! The kids would love that. Any photos?",
    "Caroline: A few. I will send them after my appointment.",
]


async def conversation(held: bool) -> Fakes:
    f = fake_memory(versions=held)
    for turn in CONVERSATION:
        await f.add(turn, session_id="chat", user_id="u")
    await spill_all(f)
    return f


@pytest.mark.parametrize(
    "query",
    ["when is the dentist appointment", "seals near the harbour", "what did Melanie say"],
)
async def test_a_scope_ranks_alike_held_in_memory_or_read_from_the_graph(query: str) -> None:
    in_memory, in_graph = await conversation(True), await conversation(False)
    held = await search(in_memory, query, session_id="chat", limit=5)
    read = await search(in_graph, query, session_id="chat", limit=5)
    assert len(held) == 5
    assert contents(held) == contents(read)
    assert [h.score for h in held] == pytest.approx([h.score for h in read], rel=1e-3)
    assert in_memory.versions is not None  # the first search was served a view
    assert in_memory.memory.ranker.cache.held_bytes > 0
    assert in_graph.memory.ranker.cache.held_bytes == 0


async def test_results_keep_to_the_limit_types_and_tiers_asked_for() -> None:
    f = fake_memory()
    for n in range(4):
        await f.add(f"a fact about dentists {n}", type=MemoryType.FACT)
        await f.add(f"a message about dentists {n}")
    await spill_all(f)
    hits = await search(f, "dentists", session_id="s1", limit=3)
    assert len(hits) == 3
    facts = await search(f, "dentists", session_id="s1", limit=10, types=[MemoryType.FACT])
    assert len(facts) == 4 and {h.item.type for h in facts} == {MemoryType.FACT}
    assert await search(f, "dentists", session_id="s1", limit=10, tiers=[Tier.WARM]) == []


async def test_a_search_never_returns_another_tenants_memories() -> None:
    f = fake_memory()
    theirs = await f.add("the dentist is on monday", tenant=OTHER_TENANT, user_id="u")
    await spill_all(f, OTHER_TENANT)
    assert await search(f, "dentist monday", session_id="s1") == []
    assert await search(f, "dentist monday", user_id="u") == []
    assert await search(f, "dentist monday") == []
    mine = await f.add("the dentist is on monday", user_id="u")
    await spill_all(f)
    for scope in ({"session_id": "s1"}, {"user_id": "u"}, {}):
        assert [h.item.id for h in await search(f, "dentist monday", **scope)] == [mine.id]
    assert theirs.id in f.graph_tiers(OTHER_TENANT)


async def test_a_scope_held_in_memory_sees_every_write_after_it_was_read() -> None:
    f = fake_memory()
    await f.add("an old note about the harbour")
    await spill_all(f)
    assert contents(await search(f, "harbour seals", session_id="s1")) == [
        "an old note about the harbour"
    ]
    assert f.memory.ranker.cache.held_bytes > 0
    new = await f.add("seals were seen at the harbour")
    await spill_all(f)  # bumps the session's version: the view is patched
    hits = await search(f, "harbour seals", session_id="s1")
    assert hits[0].item.id == new.id
    await f.memory.erasure.forget(TENANT, new.id)
    assert new.id not in {h.item.id for h in await search(f, "harbour seals", session_id="s1")}


async def test_search_refuses_a_tenant_whose_vectors_are_another_models() -> None:
    f = fake_memory()
    other = EmbeddingSpace("another-model", f.embedder.dimension)
    written = graph_memory(item(TENANT, "s1", "embedded elsewhere"), [1.0] * f.embedder.dimension)
    await f.graph.upsert(TENANT, [written], other)
    with pytest.raises(Unavailable, match="another-model"):
        await search(f, "embedded", session_id="s1")


@pytest.mark.parametrize("held", [True, False], ids=["scope in memory", "scope in the graph"])
async def test_vector_slots_give_the_page_end_to_the_best_vector_hit_not_superseded(
    held: bool,
) -> None:
    other = "quarterly budget draft"
    f = fake_memory(versions=held, embedder=TableEmbedder({**TABLE, other: [0.0, 0.0, 1.0]}))
    for session, text in (("a", WORDS), ("b", MEANING), ("c", other)):
        await f.add(text, session_id=session, user_id="u")
    await spill_all(f)
    assert contents(await search(f, QUESTION, user_id="u", limit=2)) == [WORDS, other]
    f.memory.ranker.weights = dataclasses.replace(Weights(), vector_slots=0.5)
    # the last of the two places: the vector ranking's best, which the words ranked third
    assert contents(await search(f, QUESTION, user_id="u", limit=2)) == [WORDS, MEANING]
    ids = {h.item.content: h.item.id for h in await search(f, QUESTION, user_id="u", limit=3)}

    async def superseded(tenant: str, asked: Any, moment: Any = None) -> dict[str, list[str]]:
        return {ids[MEANING]: [ids[WORDS]]} if ids[MEANING] in asked else {}

    f.graph.search.superseded = superseded  # type: ignore[method-assign,assignment]
    # superseded, it takes no slot (it never ranks above what closed it)
    assert contents(await search(f, QUESTION, user_id="u", limit=2)) == [WORDS, other]
