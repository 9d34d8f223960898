"""GraphmemStore search on a real `graphmem serve`: by meaning and text inside the
namespace prefix (a match in a small namespace is found among 10,000 items elsewhere in
the tenant), filters, limit and offset, index=False, listing newest first, and
list_namespaces with prefix, suffix, wildcards and max_depth."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from graphmem.domain.models import utcnow
from graphmem.memory import Memory
from graphmem.memory.kinds.items.paths import path_of, scope_of
from graphmem.stores.models_items import ItemWrite
from tests.conftest import Stack
from tests.support.lgstore import Served, served


@pytest.fixture(scope="module")
def api(stack: Stack) -> Iterator[Served]:
    with served(stack, 3) as s:
        yield s


def test_search_ranks_by_meaning_and_honours_filter_limit_offset(api: Served) -> None:
    facts = {
        "f1": {"text": "Ada's cat is called Whiskers", "kind": "pet", "year": 2019},
        "f2": {"text": "Ada works as a pilot for an airline", "kind": "job", "year": 2021},
        "f3": {"text": "Ada plays the violin every evening", "kind": "hobby", "year": 2020},
        "f4": {"text": "Ada adopted a puppy named Rex", "kind": "pet", "year": 2023},
    }
    with api.store(0) as store:
        for key, value in facts.items():
            store.put(("users", "ada", "facts"), key, value)
        store.put(("users", "bob", "facts"), "b1", {"text": "Bob has a pet hamster", "kind": "pet"})
        store.put(("users", "ada", "facts"), "secret", {"text": "a pet parrot"}, index=False)

        job = store.search(("users", "ada"), query="what is her profession? flying planes")
        assert job[0].key == "f2" and job[0].score is not None
        pets = store.search(("users", "ada"), query="animals she owns", filter={"kind": "pet"})
        assert {i.key for i in pets} == {"f1", "f4"}  # not Bob's, not the unindexed one
        recent = store.search(("users", "ada"), query="pets", filter={"year": {"$gte": 2020}})
        assert "f1" not in {i.key for i in recent} and recent
        ranked = store.search(("users", "ada"), query="her pets and animals", limit=4)
        page = store.search(("users", "ada"), query="her pets and animals", limit=2, offset=1)
        assert [i.key for i in page] == [i.key for i in ranked[1:3]]
        assert len(store.search(("users", "ada", "facts"), limit=2)) == 2
        listed = store.search(("users", "ada"))
        assert {i.key for i in listed} == {*facts, "secret"}
        assert [i.updated_at for i in listed] == sorted(
            (i.updated_at for i in listed), reverse=True
        )
        assert {i.key for i in store.search(("users",), filter={"kind": "pet"})} == {
            "f1",
            "f4",
            "b1",
        }


async def test_a_small_namespace_is_searched_among_10000_items_elsewhere(
    api: Served, service: Memory
) -> None:
    tenant = api.tenants[1]
    assert service.items is not None
    # 10,000 items that match the query better than the one sought, written through the
    # item store itself (embedding 10,000 texts through the API would take minutes)
    noise = "the quarterly budget report is due on friday"
    (vector,) = service.embedder.embed([noise])
    for start in range(0, 10_000, 1_000):
        rows = []
        for n in range(start, start + 1_000):
            labels = ("team", f"ns{n % 50}")
            rows.append(
                ItemWrite(
                    path=path_of(labels),
                    key=f"k{n}",
                    value=json.dumps({"text": noise}),
                    text=noise,
                    scope=scope_of(tenant, labels),
                    embedding=vector.tolist(),
                    model=service.embedder.name,
                )
            )
        await service.items.store.write(tenant, rows, utcnow(), service.embedder.name)
    with api.store(1) as store:
        await store.aput(("users", "zoe", "notes"), "due", {"text": "my budget report is late"})
        found = await store.asearch(("users", "zoe"), query="quarterly budget report due")
        assert [i.key for i in found] == ["due"]
        everywhere = await store.asearch((), query="quarterly budget report due", limit=5)
        assert len(everywhere) == 5


def test_list_namespaces_prefix_suffix_depth(api: Served) -> None:
    with api.store(2) as store:
        for ns in [
            ("users", "ada", "prefs"),
            ("users", "ada", "facts"),
            ("users", "adam", "prefs"),
            ("docs", "v1"),
            ("docs", "draft", "v1"),
        ]:
            store.put(ns, "k", {"text": "x"})
        assert store.list_namespaces() == sorted(
            [
                ("docs", "draft", "v1"),
                ("docs", "v1"),
                ("users", "ada", "facts"),
                ("users", "ada", "prefs"),
                ("users", "adam", "prefs"),
            ]
        )
        assert store.list_namespaces(prefix=("users", "ada")) == [
            ("users", "ada", "facts"),
            ("users", "ada", "prefs"),
        ]
        assert store.list_namespaces(suffix=("v1",)) == [("docs", "draft", "v1"), ("docs", "v1")]
        assert store.list_namespaces(prefix=("users", "*", "prefs")) == [
            ("users", "ada", "prefs"),
            ("users", "adam", "prefs"),
        ]
        assert store.list_namespaces(max_depth=2) == [
            ("docs", "draft"),
            ("docs", "v1"),
            ("users", "ada"),
            ("users", "adam"),
        ]
        assert store.list_namespaces(max_depth=1, limit=1, offset=1) == [("users",)]
        store.delete(("docs", "v1"), "k")
        assert ("docs", "v1") not in store.list_namespaces()
