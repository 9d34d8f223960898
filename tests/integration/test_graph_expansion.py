"""Graph expansion (``Weights.links``): a question whose answer is split over two
memories that share a name but not the question's words. BM25 and the vector find the
first; the entity both mention (extracted by spaCy when they spill) leads to the second."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from graphmem.memory import Memory, RecallQuery
from graphmem.memory.search.candidates import Scope, from_graph, from_view
from graphmem.memory.search.weights import Weights
from graphmem.stores.neo4j.search import GRAPH_TIERS
from tests.conftest import Stack, new_tenant, run_cypher

SISTER = "Nadia: My sister works at Google now."
MOVE = "Nadia: Google moved the whole team to Zurich in June."
# closer to the question than the answer is, by its words or its topic, and everyday
# chatter; each labelled with the speaker, which spaCy tags as an entity (the link step
# passes over a label)
OTHERS = [
    "Nadia: I want to find a job I love.",
    "Nadia: The new job at the bakery starts in May.",
    "Nadia: The city council met on Tuesday about the new park.",
    "Nadia: I baked bread this morning.",
    "Nadia: The cat sleeps all day.",
    "Nadia: We watched a movie last night.",
    "Nadia: It rained all weekend.",
    "Nadia: I need new running shoes.",
    "Nadia: Dinner was pasta tonight.",
]
QUESTION = "In which city does Nadia's sister work now?"


async def ranked(service: Memory, tenant: str, weights: Weights) -> list[str]:
    service.ranker.weights = weights
    hits = await service.recall.search(tenant, RecallQuery(query=QUESTION, user_id="u", limit=3))
    return [h.item.content for h in hits]


@pytest.fixture
async def stored(service: Memory) -> str:
    tenant = new_tenant()
    texts = [SISTER, *OTHERS, MOVE]
    # one session each: no neighbouring turn or session score carries the answer
    for n, text in enumerate(texts):
        await service.ingest.add_many(
            tenant, [{"session_id": f"s{n}", "user_id": "u", "content": text}]
        )
        await service.spills.spill(tenant, f"s{n}", count=1)
    return tenant


async def test_an_entity_link_answers_what_bm25_and_the_vector_miss(
    service: Memory, stored: str
) -> None:
    alone = await ranked(service, stored, dataclasses.replace(Weights(), links=0.0))
    assert SISTER in alone and MOVE not in alone
    expanded = await ranked(service, stored, Weights())
    assert SISTER in expanded and MOVE in expanded


async def test_links_stay_inside_the_scope(service: Memory, stored: str) -> None:
    # another user of the tenant mentions the same company: never linked into u's results
    await service.ingest.add_many(
        stored,
        [{"session_id": "other", "user_id": "v", "content": "Vera: Google hired me today."}],
    )
    await service.spills.spill(stored, "other", count=1)
    expanded = await ranked(service, stored, Weights())
    assert all(not text.startswith("Vera") for text in expanded)
    rows = await service.graph.search.linked(stored, ["nothing-here"], 10, user_id="u")
    assert rows.ids == []


async def test_a_label_links_nothing_even_after_leading_whitespace(
    service: Memory, stack: Stack
) -> None:
    tenant = new_tenant()
    texts = ["  Nadia: My sister works at Google now.", "\tNadia: I baked bread.", "Nadia: Hi."]
    ids = []
    for n, text in enumerate(texts):
        (item,) = await service.ingest.add_many(
            tenant, [{"session_id": f"s{n}", "user_id": "u", "content": text}]
        )
        ids.append(item.id)
        await service.spills.spill(tenant, f"s{n}", count=1)
    labels = await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t})-[r:MENTIONS]->(e:Entity) WHERE r.surface = 'Nadia' "
        "RETURN m.id AS id, r.start AS start",
        t=tenant,
    )
    # spaCy tags the labels, after the whitespace: the statement has to pass them over
    assert {(r["id"], r["start"]) for r in labels} >= {(ids[0], 2), (ids[1], 1)}
    rows = await service.graph.search.linked(tenant, [ids[0]], 10, user_id="u")
    assert rows.ids == []


async def test_a_view_links_what_the_graph_links(service: Memory, stored: str) -> None:
    # a search served from the scope's view reads the links without their vectors and
    # weighs them with its own; one served by the graph reads them with vectors
    hits = await service.recall.search(stored, RecallQuery(query=SISTER, user_id="u", limit=1))
    seed = hits[0].item.id
    view = await service.ranker.cache.view(stored, None, "u")
    assert view is not None
    query = np.asarray(await service.ranker.query_vectors(stored, QUESTION), dtype=np.float32)
    scope = Scope(stored, None, "u", list(GRAPH_TIERS), None, query)
    dimension = service.embedder.dimension
    viewed = await from_view(view, scope, None, 0, service.graph.search).linked([seed], 10)
    graphed = await (
        await from_graph(service.graph.search, scope, None, 0, dimension, None)
    ).linked([seed], 10)
    assert [(s, t.id) for s, t, _ in viewed] == [(s, t.id) for s, t, _ in graphed]
    assert [c for _, _, c in viewed] == pytest.approx([c for _, _, c in graphed], abs=1e-3)
    linked = await service.graph.get(stored, [t.id for _, t, _ in viewed])
    assert MOVE in {item.content for item in linked}
