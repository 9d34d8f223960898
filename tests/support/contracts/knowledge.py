"""The knowledge store's contract (``KnowledgeStore``): what the MCP memory-server tools
(``graphmem/memory/entities/graph.py``) rely on, against the fake and Neo4j alike.

Subclass ``KnowledgeStoreContract`` with a fixture ``knowledge_store``. Tenants are
unique per test, so the real store may hold anything else besides.
"""

from __future__ import annotations

import uuid

from graphmem.domain.knowledge import KGEntity, KGRelation
from graphmem.domain.models import utcnow
from graphmem.stores import KnowledgeStore
from tests.support.contracts.common import unique


def ent(name: str, kind: str = "person", *obs: str) -> KGEntity:
    return KGEntity(name=name, entity_type=kind, observations=list(obs))


def rel(a: str, b: str, kind: str = "knows") -> KGRelation:
    return KGRelation(source=a, target=b, relation_type=kind)


async def create(store: KnowledgeStore, tenant: str, *entities: KGEntity) -> list[KGEntity]:
    return await store.create_entities(tenant, entities, uuid.uuid4().hex, utcnow())


async def relate(store: KnowledgeStore, tenant: str, *relations: KGRelation) -> list[KGRelation]:
    done = await store.create_relations(tenant, relations, uuid.uuid4().hex, utcnow())
    assert not done.missing, done.missing
    return done.created


async def everything(
    store: KnowledgeStore, tenant: str
) -> tuple[list[KGEntity], set[tuple[str, str, str]]]:
    rows = await store.page(tenant, None, 1000)
    relations = await store.relations_from(tenant, [r.entity.name for r in rows], 1000)
    return [r.entity for r in rows], {r.key for r in relations}


class KnowledgeStoreContract:
    async def test_an_existing_name_is_left_as_it_is_and_not_returned(
        self, knowledge_store: KnowledgeStore
    ) -> None:
        t = unique("kg")
        assert await create(knowledge_store, t, ent("Ada", "person", "writes code")) == [
            ent("Ada", "person", "writes code")
        ]
        made = await create(knowledge_store, t, ent("Ada", "robot", "other"), ent("Bob"))
        assert made == [ent("Bob")]
        entities, _ = await everything(knowledge_store, t)
        assert entities == [ent("Ada", "person", "writes code"), ent("Bob")]
        # names are exact: case and spacing make another entity, as in the reference
        assert await create(knowledge_store, t, ent("ada")) == [ent("ada")]

    async def test_relations_are_new_on_from_to_and_type_and_need_both_ends(
        self, knowledge_store: KnowledgeStore
    ) -> None:
        t = unique("kg")
        await create(knowledge_store, t, ent("A"), ent("B"))
        made = await relate(knowledge_store, t, rel("A", "B"), rel("B", "A"))
        assert made == [rel("A", "B"), rel("B", "A")]
        assert await relate(knowledge_store, t, rel("A", "B"), rel("A", "B", "likes")) == [
            rel("A", "B", "likes")
        ]
        done = await knowledge_store.create_relations(
            t, [rel("A", "B", "admires"), rel("A", "Ghost")], uuid.uuid4().hex, utcnow()
        )
        assert done.missing == ["Ghost"] and done.created == []
        _, relations = await everything(knowledge_store, t)
        assert relations == {("A", "B", "knows"), ("B", "A", "knows"), ("A", "B", "likes")}

    async def test_add_observations_adds_what_is_new_or_nothing_at_all(
        self, knowledge_store: KnowledgeStore
    ) -> None:
        t = unique("kg")
        await create(knowledge_store, t, ent("A", "person", "one"), ent("B"))
        done = await knowledge_store.add_observations(
            t, [("A", ["one", "two"]), ("B", ["three"])], 10, utcnow()
        )
        assert sorted(done.added) == [("A", ["two"]), ("B", ["three"])]
        assert not done.missing and not done.full
        missing = await knowledge_store.add_observations(
            t, [("A", ["four"]), ("Ghost", ["x"])], 10, utcnow()
        )
        assert missing.missing == ["Ghost"] and missing.added == []
        full = await knowledge_store.add_observations(
            t, [("B", ["five"]), ("A", ["a", "b", "c"])], 4, utcnow()
        )
        assert full.full == ["A"] and full.added == []
        entities, _ = await everything(knowledge_store, t)
        assert entities == [ent("A", "person", "one", "two"), ent("B", "person", "three")]

    async def test_deleting_an_entity_takes_its_relations_and_absent_things_are_ignored(
        self, knowledge_store: KnowledgeStore
    ) -> None:
        t = unique("kg")
        await create(knowledge_store, t, ent("A", "p", "x", "y"), ent("B"), ent("C"))
        await relate(
            knowledge_store, t, rel("A", "B"), rel("B", "C"), rel("C", "A"), rel("B", "C", "likes")
        )
        assert await knowledge_store.delete_entities(t, ["A", "Ghost"]) == 1
        assert (
            await knowledge_store.delete_relations(t, [rel("B", "C", "likes"), rel("C", "B")]) == 1
        )
        await knowledge_store.delete_observations(t, [("Ghost", ["x"]), ("B", ["nope"])], utcnow())
        entities, relations = await everything(knowledge_store, t)
        assert entities == [ent("B"), ent("C")]
        assert relations == {("B", "C", "knows")}

    async def test_pages_go_by_name_with_the_relations_that_start_there(
        self, knowledge_store: KnowledgeStore
    ) -> None:
        t = unique("kg")
        await create(knowledge_store, t, *(ent(n) for n in ["d", "b", "a", "c"]))
        await relate(knowledge_store, t, rel("a", "d"), rel("a", "b"), rel("c", "a"))
        first = await knowledge_store.page(t, None, 2)
        assert [(r.entity.name, r.degree) for r in first] == [("a", 2), ("b", 0)]
        rest = await knowledge_store.page(t, "b", 10)
        assert [(r.entity.name, r.degree) for r in rest] == [("c", 1), ("d", 0)]
        assert await knowledge_store.relations_from(t, ["a", "b"], 10) == [
            rel("a", "b"),
            rel("a", "d"),
        ]
        assert await knowledge_store.relations_from(t, ["a", "c"], 1) == [rel("a", "b")]

    async def test_search_ignores_case_and_open_keeps_the_order_asked(
        self, knowledge_store: KnowledgeStore
    ) -> None:
        t = unique("kg")
        await create(
            knowledge_store,
            t,
            ent("Ada Lovelace", "Person", "Wrote the first PROGRAM"),
            ent("Analytical Engine", "machine"),
            ent("London", "city"),
            ent("Bob", "person"),
        )
        await relate(
            knowledge_store, t, rel("Ada Lovelace", "London", "lived_in"), rel("Bob", "London")
        )
        by_obs = await knowledge_store.search(t, "program", 10, 10)
        assert [e.name for e in by_obs.entities] == ["Ada Lovelace"]
        assert by_obs.relations == [rel("Ada Lovelace", "London", "lived_in")]
        by_type = await knowledge_store.search(t, "person", 10, 10)
        assert [e.name for e in by_type.entities] == ["Ada Lovelace", "Bob"]
        by_name = await knowledge_store.search(t, "lond", 10, 10)
        assert by_name.relations == [
            rel("Ada Lovelace", "London", "lived_in"),
            rel("Bob", "London"),
        ]
        assert len((await knowledge_store.search(t, "", 2, 10)).entities) == 2
        opened = await knowledge_store.open(t, ["London", "Ghost", "Analytical Engine"], 1)
        assert [e.name for e in opened.entities] == ["London", "Analytical Engine"]
        assert opened.relations == [rel("Ada Lovelace", "London", "lived_in")]

    async def test_no_read_or_write_crosses_tenants(self, knowledge_store: KnowledgeStore) -> None:
        a, b = unique("kg"), unique("kg")
        await create(knowledge_store, a, ent("A", "p", "secret"), ent("B"))
        await relate(knowledge_store, a, rel("A", "B"))
        assert await create(knowledge_store, b, ent("A", "p", "mine")) == [ent("A", "p", "mine")]
        done = await knowledge_store.create_relations(
            b, [rel("A", "B")], uuid.uuid4().hex, utcnow()
        )
        assert done.missing == ["B"]
        added = await knowledge_store.add_observations(b, [("B", ["x"])], 10, utcnow())
        assert added.missing == ["B"]
        assert await knowledge_store.delete_entities(b, ["B"]) == 0
        assert await knowledge_store.delete_relations(b, [rel("A", "B")]) == 0
        await knowledge_store.delete_observations(b, [("A", ["secret"])], utcnow())
        assert (await knowledge_store.search(b, "secret", 10, 10)).entities == []
        assert (await knowledge_store.open(b, ["B"], 10)).entities == []
        entities, relations = await everything(knowledge_store, a)
        assert entities == [ent("A", "p", "secret"), ent("B")]
        assert relations == {("A", "B", "knows")}
