"""GraphmemStore under concurrency on a real `graphmem serve`: 64 gathered `aput` on one
key leave one item holding one of the values, 64 on 64 keys leave all 64, nothing
raises (RATE_LIMITED answers are waited out), and a get after each settles."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from graphmem.client import Graphmem
from tests.conftest import Stack
from tests.support.lgstore import Served, served


@pytest.fixture(scope="module")
def api(stack: Stack) -> Iterator[Served]:
    # a low expensive-operation limit, so the searches below are refused and waited out
    with served(stack, 3, GRAPHMEM_MAX_CONCURRENT_EXPENSIVE="2") as s:
        yield s


async def test_64_puts_of_one_key_leave_one_item(api: Served) -> None:
    ns = ("users", "ada", "counter")
    with api.store(0) as store:
        await asyncio.gather(*(store.aput(ns, "n", {"n": n}) for n in range(64)))
        found = await store.asearch(ns, limit=100)
        assert len(found) == 1 and found[0].key == "n"
        assert found[0].value["n"] in range(64)
        got = await store.aget(ns, "n")
        assert got is not None and got.value == found[0].value
        # and concurrent deletes with puts end in one state or the other, never an error
        await asyncio.gather(*(store.aput(ns, "n", None if n % 2 else {"n": n}) for n in range(64)))
        after = await store.asearch(ns, limit=100)
        assert len(after) <= 1


async def test_64_puts_of_64_keys_leave_64_items(api: Served) -> None:
    ns = ("users", "bob", "facts")
    with api.store(1) as store:
        await asyncio.gather(
            *(store.aput(ns, f"k{n}", {"text": f"fact number {n}"}) for n in range(64))
        )
        got = await asyncio.gather(*(store.aget(ns, f"k{n}") for n in range(64)))
        assert [g.value["text"] for g in got if g] == [f"fact number {n}" for n in range(64)]
        listed = await store.asearch(ns, limit=100)
        assert sorted(i.key for i in listed) == sorted(f"k{n}" for n in range(64))
    with Graphmem(api.url, api.keys[1]) as gm:
        # nothing else was stored: no hot-tier memory, no graph memory
        assert gm.memories(user_id="bob").items == []


async def test_gathered_searches_wait_out_rate_limits(api: Served) -> None:
    ns = ("users", "cy", "notes")
    with api.store(2) as store:
        await store.aput(ns, "a", {"text": "The boat leaves at noon"})
        found = await asyncio.gather(
            *(store.asearch(("users", "cy"), query="when does the ship depart") for _ in range(24))
        )
        assert all([i.key for i in f] == ["a"] for f in found)
