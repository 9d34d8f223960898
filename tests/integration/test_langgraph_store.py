"""GraphmemStore (LangGraph's BaseStore) against a real `graphmem serve`: put, get,
replace and delete, batches in order, values LangGraph's stores take (large, nested,
unicode), refused input changing nothing, sync and async, and the docs' example agent.
Search, namespaces and concurrency have files of their own."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import datetime

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, Item, PutOp, SearchOp

from graphmem.client import BadInput
from tests.conftest import ROOT, Stack
from tests.support.lgstore import Served, served


@pytest.fixture(scope="module")
def api(stack: Stack) -> Iterator[Served]:
    with served(stack, 6) as s:
        yield s


def test_put_get_replace_delete(api: Served) -> None:
    ns = ("users", "ada", "prefs")
    with api.store(0) as store:
        assert store.get(ns, "food") is None
        store.put(ns, "food", {"text": "Ada loves spicy ramen", "stars": 5})
        first = store.get(ns, "food")
        assert first is not None and first.value == {"text": "Ada loves spicy ramen", "stars": 5}
        assert (first.namespace, first.key) == (ns, "food")
        assert first.created_at == first.updated_at
        store.put(ns, "food", {"text": "Ada is vegetarian now"})
        second = store.get(ns, "food")
        assert second is not None and second.value == {"text": "Ada is vegetarian now"}
        assert second.created_at == first.created_at  # the key's first write
        assert second.updated_at > first.updated_at
        assert len(store.search(ns)) == 1  # replaced, not added beside
        store.put(ns, "drink", {"text": "tea"})
        store.delete(ns, "food")
        assert store.get(ns, "food") is None
        assert [i.key for i in store.search(ns)] == ["drink"]
        store.delete(ns, "never-there")  # deleting a missing key is no error
        # the same key in another namespace is another item
        store.put(("users", "bob", "prefs"), "drink", {"text": "coffee"})
        assert store.get(ns, "drink").value == {"text": "tea"}  # type: ignore[union-attr]


def test_values_any_json_object_up_to_the_body_limit(api: Served) -> None:
    ns = ("docs", "big")
    big = {"text": "x" * 200_000, "nested": {"list": [1, 2.5, None, True, {"deep": ["a"]}]}}
    odd = {"ünïcødé": "日本語 🙂", "empty": {}, "quote": 'say "hi"\n', "n": -(2**53)}
    with api.store(1) as store:
        store.put(ns, "big", big)
        store.put(ns, "odd", odd)
        store.put(ns, "key with spaces/and:colons ✓", {"k": 1})
        assert store.get(ns, "big").value == big  # type: ignore[union-attr]
        assert store.get(ns, "odd").value == odd  # type: ignore[union-attr]
        assert store.get(ns, "key with spaces/and:colons ✓").value == {"k": 1}  # type: ignore[union-attr]
        with pytest.raises(BadInput):  # past the body limit: refused, clearly
            store.put(ns, "huge", {"text": "y" * 1_200_000})
        assert store.get(ns, "huge") is None


def test_a_get_answers_with_at_most_its_budget_of_values(api: Served) -> None:
    """The same key asked many times is read once, and an answer of more than
    MAX_GET_ANSWER of values is refused: one stored megabyte asked for a thousand
    times was a gigabyte for the process to build and send."""
    ns = ("docs", "asked-often")
    with api.store(1) as store:
        store.put(ns, "big", {"text": "z" * 900_000})
        ten = store.batch([GetOp(ns, "big") for _ in range(10)])
        assert [len(i.value["text"]) for i in ten] == [900_000] * 10  # type: ignore[union-attr]
        with pytest.raises(BadInput, match="ask for fewer keys"):
            store.batch([GetOp(ns, "big") for _ in range(1_000)])


def test_refused_input_changes_nothing(api: Served) -> None:
    ns = ("users", "eve", "notes")
    with api.store(2) as store:
        store.put(ns, "a", {"text": "kept"})
        with pytest.raises(InvalidNamespaceError):
            store.put(("users", "bad.label"), "a", {"text": "x"})
        with pytest.raises(InvalidNamespaceError):
            store.put((), "a", {"text": "x"})
        # one bad put in a batch refuses the whole batch: nothing of it is stored
        with pytest.raises(BadInput):
            store.batch([PutOp(ns, "a", {"text": "replaced"}), PutOp(ns, "k" * 300, {"v": 1})])
        assert store.get(ns, "a").value == {"text": "kept"}  # type: ignore[union-attr]
        with pytest.raises(NotImplementedError):
            store.put(ns, "ttl", {"v": 1}, ttl=5)


def test_batch_runs_in_order(api: Served) -> None:
    ns = ("users", "cy", "notes")
    with api.store(3) as store:
        results = store.batch(
            [
                GetOp(ns, "a"),
                PutOp(ns, "a", {"text": "The meeting moved to Thursday"}),
                GetOp(ns, "a"),
                PutOp(ns, "a", {"text": "The meeting moved to Friday"}),
                PutOp(ns, "a", None),
                GetOp(ns, "a"),
                PutOp(ns, "b", {"text": "Budget approved at 50K"}),
                PutOp(ns, "b", {"text": "Budget approved at 60K"}),  # last put wins
                GetOp(ns, "b"),
                SearchOp(("users", "cy"), query="money budget"),
            ]
        )
        assert results[0] is None
        assert isinstance(results[2], Item) and results[2].value["text"].endswith("Thursday")
        assert results[5] is None
        assert isinstance(results[8], Item) and results[8].value["text"].endswith("60K")
        assert [i.key for i in results[9]] == ["b"]  # type: ignore[union-attr]
        # many gets in one batch, results in the order asked
        store.batch([PutOp(ns, f"k{n}", {"n": n}) for n in range(30)])
        got = store.batch([GetOp(ns, f"k{n}") for n in reversed(range(32))])
        assert [g.value["n"] if g else None for g in got] == [None, None, *reversed(range(30))]  # type: ignore[union-attr]


async def test_async_methods(api: Served) -> None:
    ns = ("users", "dee", "notes")
    with api.store(4) as store:
        await store.aput(ns, "c", {"text": "call Dana"})
        got = await store.aget(ns, "c")
        assert got is not None and isinstance(got.updated_at, datetime)
        assert [i.key for i in await store.asearch(("users",), query="phone Dana")] == ["c"]
        assert await store.alist_namespaces(prefix=("users",)) == [ns]
        await store.adelete(ns, "c")
        assert await store.aget(ns, "c") is None
        assert await store.alist_namespaces() == []


def test_the_docs_example_agent(
    api: Served, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (ROOT / "docs" / "integrations.md").read_text()
    (example,) = re.findall(r"### Example agent.*?```python\n(.*?)```", text, re.S)
    monkeypatch.setenv("GRAPHMEM_URL", api.url)
    monkeypatch.setenv("GRAPHMEM_KEY", api.keys[5])
    exec(compile(example, "docs/integrations.md", "exec"), {"__name__": "example"})
    assert capsys.readouterr().out.strip() == (
        "Remember that I love spicy ramen -> How about a spicy ramen?"
    )
    assert os.environ["GRAPHMEM_KEY"] == api.keys[5]
