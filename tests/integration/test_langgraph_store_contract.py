"""LangGraph's own store tests (langgraph ``libs/checkpoint/tests/test_store.py``) name the
behaviours every ``BaseStore`` keeps; these are the ones the other files here do not
already cover, against GraphmemStore on a real `graphmem serve`: namespaces LangGraph
refuses, an update re-embedding its item, queries that are empty, long or all
punctuation, comparison filters, puts, deletes and puts of the same keys gathered at
once and then searched with filters, and namespace listings with wildcards and pages."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from langgraph.store.base import InvalidNamespaceError

from tests.conftest import Stack
from tests.support.lgstore import Served, served

COLORS = ["red", "blue", "green", "yellow", "purple"]
THINGS = ["apple", "car", "house", "book", "phone"]
SCORES = [3.0, 3.5, 4.0, 4.5, 5.0]


@pytest.fixture(scope="module")
def api(stack: Stack) -> Iterator[Served]:
    with served(stack, 4) as s:
        yield s


async def test_namespaces_langgraph_refuses_are_refused_before_any_request(api: Served) -> None:
    with api.store(0) as store:
        for bad in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
            with pytest.raises(InvalidNamespaceError):
                await store.aput(bad, "k", {"a": 1})
        # "langgraph" is reserved only as the first label
        await store.aput(("foo", "langgraph", "foo"), "bar", {"foo": "bar"})
        got = await store.aget(("foo", "langgraph", "foo"), "bar")
        assert got is not None and got.value == {"foo": "bar"}
        assert [i.value for i in await store.asearch(("foo", "langgraph", "foo"))] == [
            {"foo": "bar"}
        ]
        await store.adelete(("foo", "langgraph", "foo"), "bar")
        assert await store.aget(("foo", "langgraph", "foo"), "bar") is None


def test_an_update_is_searched_by_its_new_text_and_index_false_is_never_ranked(
    api: Served,
) -> None:
    ns = ("test", "update")
    with api.store(1) as store:
        store.put(ns, "doc1", {"text": "zany zebra Xerxes"})
        store.put(ns, "doc2", {"text": "something about dogs"})
        store.put(ns, "doc3", {"text": "text about birds"})
        first = store.search(ns, query="Zany Xerxes")
        assert first[0].key == "doc1" and first[0].score is not None
        before = first[0].score

        store.put(ns, "doc1", {"text": "new text about dogs"})
        after = next(i.score for i in store.search(ns, query="Zany Xerxes") if i.key == "doc1")
        assert after is not None and after < before
        about_dogs = {i.key: i.score for i in store.search(ns, query="new text about dogs")}
        assert about_dogs["doc1"] is not None and about_dogs["doc1"] > after

        store.put(ns, "doc4", {"text": "new text about dogs"}, index=False)
        assert "doc4" not in {i.key for i in store.search(ns, query="new text about dogs")}
        assert "doc4" in {i.key for i in store.search(ns)}  # listed, never ranked


def test_empty_long_and_punctuation_queries_find_the_document(api: Served) -> None:
    ns = ("test", "edges")
    with api.store(2) as store:
        store.put(ns, "doc1", {"text": "test document"})
        for query in [
            "",
            None,
            "test " * 100,
            "test!@#$%^&*()",
            '"unbalanced (quote',
            "AND OR NOT",
        ]:
            assert [i.key for i in store.search(ns, query=query)] == ["doc1"], query


def test_comparison_filters_with_and_without_a_query(api: Served) -> None:
    ns = ("test", "filters")
    docs = {
        "doc1": {"text": "red apple", "color": "red", "score": 4.5},
        "doc2": {"text": "red car", "color": "red", "score": 3.0},
        "doc3": {"text": "green apple", "color": "green", "score": 4.0},
        "doc4": {"text": "blue car", "color": "blue", "score": 3.5},
    }
    with api.store(3) as store:
        for key, value in docs.items():
            store.put(ns, key, value)
        red_apple = store.search(ns, query="apple", filter={"color": "red"})
        assert red_apple[0].key == "doc1" and len(red_apple) == 2
        red_car = store.search(ns, query="car", filter={"color": "red"})
        assert red_car[0].key == "doc2" and len(red_car) == 2
        over = store.search(ns, query="bbbbluuu", filter={"score": {"$gt": 3.2}})
        assert {i.key for i in over} == {"doc1", "doc3", "doc4"}
        both = store.search(ns, query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
        assert [i.key for i in both] == ["doc3"]
        assert {i.key for i in store.search(ns, filter={"score": {"$lt": 3.5}})} == {"doc2"}
        assert {i.key for i in store.search(ns, filter={"score": {"$lte": 3.5}})} == {
            "doc2",
            "doc4",
        }
        assert {i.key for i in store.search(ns, filter={"color": {"$ne": "red"}})} == {
            "doc3",
            "doc4",
        }
        assert {i.key for i in store.search(ns, filter={"color": {"$eq": "blue"}})} == {"doc4"}


async def test_gathered_puts_deletes_and_puts_then_filtered_searches(api: Served) -> None:
    ns = ("test", "gathered")
    docs = {
        f"doc{i}": {
            "text": f"{COLORS[i % 5]} {THINGS[i % 5]}",
            "color": COLORS[i % 5],
            "score": SCORES[i % 5],
            "index": i,
        }
        for i in range(50)
    }
    with api.store(0) as store:
        # all at once: a put, the delete of what it wrote, the put again, for 50 keys
        await asyncio.gather(
            *(store.aput(ns, k, v) for k, v in docs.items()),
            *(store.adelete(ns, k) for k in docs),
            *(store.aput(ns, k, v) for k, v in docs.items()),
        )
        queries: list[tuple[str, dict[str, object]]] = [
            ("apple", {"color": "red"}),
            ("car", {"color": "blue"}),
            ("phone", {"score": {"$gt": 4.99}}),
            ("book", {"score": {"$lte": 3.5}}),
            ("apple", {"score": {"$gte": 3.0}, "color": "red"}),
            ("house", {"index": {"$gt": 25}}),
            ("phone", {"index": {"$lte": 10}}),
        ]
        answers = await asyncio.gather(
            *(store.asearch(ns, query=q, filter=f, limit=50) for q, f in queries)
        )
        for (query, filter_), found in zip(queries, answers, strict=True):
            expected = {k for k, v in docs.items() if matches(v, filter_)}
            assert {i.key for i in found} == expected, (query, filter_)


def matches(value: dict[str, object], filter_: dict[str, object]) -> bool:
    for field, wanted in filter_.items():
        have = value[field]
        if not isinstance(wanted, dict):
            if have != wanted:
                return False
            continue
        for op, bound in wanted.items():
            assert isinstance(have, int | float) and isinstance(bound, int | float)
            ok = {
                "$gt": have > bound,
                "$gte": have >= bound,
                "$lt": have < bound,
                "$lte": have <= bound,
            }[op]
            if not ok:
                return False
    return True


def test_listing_namespaces_with_wildcards_and_pages(api: Served) -> None:
    with api.store(1) as store:
        for i, ns in enumerate(
            [
                ("lw", "users", "123"),
                ("lw", "users", "456"),
                ("lw", "users", "789", "settings"),
                ("lw", "admin", "users", "789"),
                ("lw", "guests", "123"),
                ("lw", "guests", "456", "preferences"),
            ]
        ):
            store.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})
        assert store.list_namespaces(prefix=("lw", "users", "*")) == [
            ("lw", "users", "123"),
            ("lw", "users", "456"),
            ("lw", "users", "789", "settings"),
        ]
        assert store.list_namespaces(suffix=("*", "preferences")) == [
            ("lw", "guests", "456", "preferences")
        ]
        assert store.list_namespaces(prefix=("lw", "*", "users"), suffix=("*", "settings")) == []
        assert store.list_namespaces(prefix=("lw-none",)) == []

        for i in range(20):
            store.put(("pages", f"sub_{i:02d}"), f"id_{i:02d}", {"data": i})
        for offset in (0, 5, 15):
            assert store.list_namespaces(prefix=("pages",), limit=5, offset=offset) == [
                ("pages", f"sub_{i:02d}") for i in range(offset, offset + 5)
            ]


async def test_a_refused_call_gathered_with_others_fails_alone(api: Served) -> None:
    """Calls made together run together; when the server refuses the whole (a key over
    its limit), each call is answered on its own, in order: only the bad one raises."""
    ns = ("test", "refused")
    with api.store(2) as store:
        outcomes = await asyncio.gather(
            store.aput(ns, "a", {"text": "first"}),
            store.aput(ns, "k" * 300, {"text": "a key past the server's limit"}),
            store.aput(ns, "c", {"text": "third"}),
            return_exceptions=True,
        )
        assert outcomes[0] is None and outcomes[2] is None
        assert isinstance(outcomes[1], Exception), outcomes
        assert {i.key for i in await store.asearch(ns)} == {"a", "c"}
