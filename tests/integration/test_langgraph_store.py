"""GraphmemStore (LangGraph's BaseStore) against a real `graphmem serve`: LangGraph's
store behaviour — put/get, replace, delete, search by meaning with filter, limit and
offset, namespace listing — sync and async, and the docs' example agent."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from datetime import datetime

import pytest
from langgraph.store.base import GetOp, Item, PutOp, SearchOp

from graphmem.client import Graphmem
from graphmem.integrations.langgraph import GraphmemStore, namespace_of, session_of
from tests.conftest import ROOT, Stack, free_port, stack_env, start_server

KEYS = [f"lg-key-{n}-{uuid.uuid4().hex[:8]}" for n in range(6)]


@pytest.fixture(scope="module")
def url(stack: Stack) -> Iterator[str]:
    port = free_port()
    keys = ",".join(f"{k}=t-lg{n}-{uuid.uuid4().hex[:8]}" for n, k in enumerate(KEYS))
    proc = start_server(stack_env(stack, GRAPHMEM_API_KEYS=keys), port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def store_of(url: str, n: int) -> GraphmemStore:
    return GraphmemStore(url, KEYS[n])


def test_namespaces_map_to_sessions_and_back() -> None:
    for namespace in [("users", "ada", "prefs"), ("notes", "my list", "ünï_cødé"), ("a",)]:
        assert namespace_of(session_of(namespace)) == namespace
    assert session_of(("users", "ada", "prefs")) == "lg.users.ada.prefs"
    assert session_of(("notes", "my list")) == "lg.notes.my_20list"


def test_put_get_replace_delete(url: str) -> None:
    ns = ("users", "ada", "prefs")
    with store_of(url, 0) as store:
        assert store.get(ns, "food") is None
        store.put(ns, "food", {"text": "Ada loves spicy ramen", "stars": 5})
        first = store.get(ns, "food")
        assert first is not None and first.value == {"text": "Ada loves spicy ramen", "stars": 5}
        assert (first.namespace, first.key) == (ns, "food")
        store.put(ns, "food", {"text": "Ada is vegetarian now"})
        second = store.get(ns, "food")
        assert second is not None and second.value == {"text": "Ada is vegetarian now"}
        assert second.created_at == first.created_at  # the key's first write
        assert second.updated_at >= first.updated_at
        assert len(store.search(ns)) == 1  # replaced, not added beside
        store.put(ns, "drink", {"text": "tea"})
        store.delete(ns, "food")
        assert store.get(ns, "food") is None
        assert [i.key for i in store.search(ns)] == ["drink"]
        # the key is in the memory's metadata, the user scope is graphmem's userId
    with Graphmem(url, KEYS[0]) as gm:
        (memory,) = gm.memories(user_id="ada").items
        assert memory.session_id == "lg.users.ada.prefs"
        assert memory.metadata["lgKey"] == "drink" and memory.content == "tea"


def test_search_ranks_by_meaning_and_honours_filter_limit_offset(url: str) -> None:
    facts = {
        "f1": ({"text": "Ada's cat is called Whiskers", "kind": "pet", "year": 2019}),
        "f2": ({"text": "Ada works as a pilot for an airline", "kind": "job", "year": 2021}),
        "f3": ({"text": "Ada plays the violin every evening", "kind": "hobby", "year": 2020}),
        "f4": ({"text": "Ada adopted a puppy named Rex", "kind": "pet", "year": 2023}),
    }
    with store_of(url, 1) as store:
        for key, value in facts.items():
            store.put(("users", "ada", "facts"), key, value)
        store.put(("users", "bob", "facts"), "b1", {"text": "Bob has a pet hamster", "kind": "pet"})
        store.put(("users", "ada", "facts"), "secret", {"text": "a pet parrot"}, index=False)

        job = store.search(("users", "ada"), query="what is her profession? flying planes")
        assert job[0].key == "f2" and job[0].score is not None
        pets = store.search(("users", "ada"), query="animals she owns", filter={"kind": "pet"})
        assert {i.key for i in pets} == {"f1", "f4"}  # not Bob's, not the unindexed one
        recent = store.search(("users", "ada"), query="pets", filter={"year": {"$gte": 2020}})
        assert "f1" not in {i.key for i in recent}
        ranked = store.search(("users", "ada"), query="her pets and animals", limit=4)
        assert [
            i.key
            for i in store.search(("users", "ada"), query="her pets and animals", limit=2, offset=1)
        ] == [i.key for i in ranked[1:3]]
        assert len(store.search(("users", "ada", "facts"), limit=2)) == 2
        listed = store.search(("users", "ada"))
        assert {i.key for i in listed} == {*facts, "secret"}
        assert [i.updated_at for i in listed] == sorted(
            (i.updated_at for i in listed), reverse=True
        )


def test_list_namespaces_prefix_suffix_depth(url: str) -> None:
    with store_of(url, 2) as store:
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


async def test_async_batch(url: str) -> None:
    ns = ("users", "cy", "notes")
    with store_of(url, 3) as store:
        results = await store.abatch(
            [
                PutOp(ns, "a", {"text": "The meeting moved to Thursday"}),
                GetOp(ns, "a"),
                PutOp(ns, "a", None),
                GetOp(ns, "a"),
                PutOp(ns, "b", {"text": "Budget approved at 50K"}),
                SearchOp(("users", "cy"), query="money"),
            ]
        )
        put_then_got, deleted_then_got, searched = results[1], results[3], results[5]
        assert isinstance(put_then_got, Item)
        assert put_then_got.value["text"].startswith("The meeting")
        assert deleted_then_got is None
        assert isinstance(searched, list)
        assert [i.key for i in searched if isinstance(i, Item)] == ["b"]
        await store.aput(ns, "c", {"text": "call Dana"})
        got = await store.aget(ns, "c")
        assert got is not None and isinstance(got.updated_at, datetime)
        assert await store.alist_namespaces(prefix=("users",)) == [ns]


def test_the_docs_example_agent(
    url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (ROOT / "docs" / "integrations.md").read_text()
    (example,) = re.findall(r"### Example agent.*?```python\n(.*?)```", text, re.S)
    monkeypatch.setenv("GRAPHMEM_URL", url)
    monkeypatch.setenv("GRAPHMEM_KEY", KEYS[4])
    exec(compile(example, "docs/integrations.md", "exec"), {"__name__": "example"})
    assert capsys.readouterr().out.strip() == (
        "Remember that I love spicy ramen -> How about a spicy ramen?"
    )
    assert os.environ["GRAPHMEM_KEY"] == KEYS[4]
