"""The knowledge graph of the MCP memory-server tools, over the in-memory store: the
reference server's semantics, graphmem's bounds, and pages that end before too many
relations."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from graphmem.errors import BadInput, NotFound, Unavailable
from graphmem.memory.entities import graph as kg
from graphmem.memory.entities.graph import (
    DeletionInput,
    EntityInput,
    KnowledgeGraph,
    ObservationInput,
    RelationInput,
)
from tests.support.fakes.knowledge import FakeKnowledgeStore

T = "tenant"


def e(name: str, kind: str = "person", *obs: str) -> EntityInput:
    return EntityInput.model_validate({"name": name, "entityType": kind, "observations": list(obs)})


def r(a: str, b: str, kind: str = "knows") -> RelationInput:
    return RelationInput.model_validate({"from": a, "to": b, "relationType": kind})


@pytest.fixture
def graph() -> KnowledgeGraph:
    return KnowledgeGraph(FakeKnowledgeStore())


async def test_a_name_given_twice_in_one_call_is_created_once(graph: KnowledgeGraph) -> None:
    made = await graph.create_entities(T, [e("A", "p", "x", "x"), e("A", "q"), e("B")])
    assert [(m.name, m.entity_type, m.observations) for m in made] == [
        ("A", "p", ["x"]),
        ("B", "person", []),
    ]
    assert await graph.create_entities(T, [e("A")]) == []


async def test_a_relation_to_an_unknown_entity_is_not_found_and_writes_nothing(
    graph: KnowledgeGraph,
) -> None:
    await graph.create_entities(T, [e("A"), e("B")])
    with pytest.raises(NotFound) as caught:
        await graph.create_relations(T, [r("A", "B"), r("A", "Ghost")])
    assert caught.value.details == {"entityNames": ["Ghost"]}
    assert (await graph.read_graph(T)).relations == []
    made = await graph.create_relations(T, [r("A", "B"), r("A", "B")])
    assert [x.key for x in made] == [("A", "B", "knows")]


async def test_add_observations_groups_by_entity_and_refuses_unknown_or_full_entities(
    graph: KnowledgeGraph,
) -> None:
    await graph.create_entities(T, [e("A", "p", "one")])
    added = await graph.add_observations(
        T,
        [
            ObservationInput.model_validate({"entityName": "A", "contents": ["one", "two"]}),
            ObservationInput.model_validate({"entityName": "A", "contents": ["three", "two"]}),
        ],
    )
    assert added == [("A", ["two", "three"])]
    with pytest.raises(NotFound, match="Ghost"):
        await graph.add_observations(
            T, [ObservationInput.model_validate({"entityName": "Ghost", "contents": ["x"]})]
        )
    room = kg.MAX_ENTITY_OBSERVATIONS - 3
    fill = [f"o{n}" for n in range(room)]
    chunks = [fill[i : i + 400] for i in range(0, room, 400)]
    for chunk in chunks:
        await graph.add_observations(
            T, [ObservationInput.model_validate({"entityName": "A", "contents": chunk})]
        )
    with pytest.raises(BadInput, match="at most"):
        await graph.add_observations(
            T, [ObservationInput.model_validate({"entityName": "A", "contents": ["last"]})]
        )
    opened = await graph.open_nodes(T, ["A"])
    assert len(opened.entities[0].observations) == kg.MAX_ENTITY_OBSERVATIONS


async def test_deletions_cascade_and_ignore_what_is_absent(graph: KnowledgeGraph) -> None:
    await graph.create_entities(T, [e("A", "p", "x"), e("B"), e("C")])
    await graph.create_relations(T, [r("A", "B"), r("B", "C")])
    assert await graph.delete_entities(T, ["A", "A", "Ghost"]) == 1
    deletion = DeletionInput.model_validate({"entityName": "Ghost", "observations": ["x"]})
    await graph.delete_observations(T, [deletion])
    assert await graph.delete_relations(T, [r("C", "B"), r("B", "C")]) == 1
    after = await graph.read_graph(T)
    assert [x.name for x in after.entities] == ["B", "C"] and after.relations == []


async def test_a_read_page_ends_before_an_entity_whose_relations_would_pass_the_budget(
    graph: KnowledgeGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kg, "RELATION_BUDGET", 3)
    await graph.create_entities(T, [e(n) for n in "abcde"])
    await graph.create_relations(T, [r("a", "b"), r("a", "c"), r("b", "c"), r("b", "d")])
    await graph.create_relations(T, [r("c", x, "k") for x in "abde"])
    first = await graph.read_graph(T, limit=10)
    assert [x.name for x in first.entities] == ["a"]
    assert first.truncated and first.next_cursor == "a"
    second = await graph.read_graph(T, first.next_cursor, limit=10)
    # "b" fits alone; "c" (4 relations) passes the budget on its own: alone, cut
    assert [x.name for x in second.entities] == ["b"] and second.next_cursor == "b"
    third = await graph.read_graph(T, second.next_cursor, limit=10)
    assert [x.name for x in third.entities] == ["c"] and len(third.relations) == 3
    assert third.truncated and third.next_cursor == "c"
    last = await graph.read_graph(T, third.next_cursor, limit=10)
    assert [x.name for x in last.entities] == ["d", "e"]
    assert not last.truncated and last.next_cursor is None


async def test_search_is_capped_and_says_so(
    graph: KnowledgeGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kg, "SEARCH_LIMIT", 2)
    await graph.create_entities(T, [e("x1"), e("x2"), e("x3"), e("other", "place")])
    await graph.create_relations(T, [r("x3", "other")])
    found = await graph.search_nodes(T, "X")
    assert [x.name for x in found.entities] == ["x1", "x2"] and found.truncated
    # the relation of the third, cut, match is not this answer's
    assert found.relations == []
    assert not (await graph.search_nodes(T, "PLACE")).truncated


@pytest.mark.parametrize(
    ("model", "raw"),
    [
        (EntityInput, {"name": "", "entityType": "p", "observations": []}),
        (
            EntityInput,
            {"name": "n" * (kg.MAX_NAME_CHARS + 1), "entityType": "p", "observations": []},
        ),
        (EntityInput, {"name": "a", "entityType": "p", "observations": ["o" * 2001]}),
        (EntityInput, {"name": "a", "entityType": "p", "observations": [5]}),
        (EntityInput, {"name": "\ud800", "entityType": "p", "observations": []}),
        (EntityInput, {"name": "a", "entityType": "p"}),
        (RelationInput, {"from": "a", "to": "b", "relationType": ""}),
        (ObservationInput, {"entityName": "a", "contents": ["x"] * 501}),
    ],
)
def test_inputs_are_bounded(model: Any, raw: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(raw)


async def test_counts_per_call_are_bounded(graph: KnowledgeGraph) -> None:
    with pytest.raises(BadInput, match="at most 100"):
        await graph.create_entities(T, [e(f"n{i}") for i in range(kg.MAX_ITEMS + 1)])
    with pytest.raises(BadInput, match="at most 100"):
        await graph.open_nodes(T, ["a"] * (kg.MAX_ITEMS + 1))
    many = [
        ObservationInput.model_validate({"entityName": f"n{i}", "contents": ["x"] * 100})
        for i in range(11)
    ]
    with pytest.raises(BadInput, match="contents per call"):
        await graph.add_observations(T, many)
    with pytest.raises(BadInput, match="query"):
        await graph.search_nodes(T, "q" * (kg.MAX_QUERY_CHARS + 1))
    with pytest.raises(BadInput, match="limit"):
        await graph.read_graph(T, limit=kg.PAGE_MAX + 1)


async def test_a_merge_that_answers_an_error_has_written_nothing(graph: KnowledgeGraph) -> None:
    await graph.create_entities(T, [e("Old", "person", *[f"o{i}" for i in range(3)])])
    before = await graph.read_graph(T)
    # a relation's unknown end: refused before the new entity is written
    with pytest.raises(NotFound) as caught:
        await graph.merge(T, [e("New", "person", "n")], [r("New", "Old"), r("New", "Ghost")])
    assert caught.value.details == {"entityNames": ["Ghost"]}
    assert await graph.read_graph(T) == before
    # a later step failing (Old would pass its observation cap): the entity created
    # and the observations added before it are taken back
    full = [f"x{i}" for i in range(kg.MAX_ENTITY_OBSERVATIONS)]
    with pytest.raises(BadInput):
        await graph.merge(T, [e("New", "person", "n"), e("Old", "person", *full)], [])
    assert await graph.read_graph(T) == before
    # the relations failing last (the store): entity and observations taken back
    store = graph.store
    assert isinstance(store, FakeKnowledgeStore)

    async def unreachable(*args: Any) -> Any:
        raise Unavailable("the graph store (Neo4j) is unreachable")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(store, "create_relations", unreachable)
        with pytest.raises(Unavailable):
            await graph.merge(T, [e("New"), e("Old", "person", "o9")], [r("New", "Old")])
    assert await graph.read_graph(T) == before
    # a relation whose ends this call creates is fine, and a rerun adds nothing
    assert await graph.merge(T, [e("New", "person", "n")], [r("New", "Old")]) == (1, 0, 1)
    assert await graph.merge(T, [e("New", "person", "n")], [r("New", "Old")]) == (0, 0, 0)
