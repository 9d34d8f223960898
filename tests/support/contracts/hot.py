"""The hot tier's contract (``HotTier`` with its ``SessionIndex`` and ``SessionLocks``):
what ingest, spill, promotion, recall, removal and maintenance rely on.

Subclass ``HotTierContract`` with a fixture ``hot_setup`` returning a ``HotSetup``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import numpy as np

from graphmem.domain.models import MemoryItem
from graphmem.stores import HotTier
from graphmem.stores.models import Enriched
from tests.support.contracts.common import Elapse, Now, item, unique


@dataclass
class HotSetup:
    tier: HotTier
    elapse: Elapse
    now: Now


def _same(a: MemoryItem, b: MemoryItem) -> bool:
    return a.model_dump() == b.model_dump()


class HotTierContract:
    async def test_put_counts_tokens_once_per_item_and_returns_the_overrides(
        self, hot_setup: HotSetup
    ) -> None:
        hot, tenant = hot_setup.tier, unique()
        a, b = item(tenant, "s", "alpha", tokens=3), item(tenant, "s", "beta", tokens=4)
        assert await hot.put(tenant, "s", [a, b]) == (7, {})
        # putting an item again replaces it: its tokens are counted once, as they are now
        total, _ = await hot.put(tenant, "s", [a.model_copy(update={"token_count": 5})])
        assert total == 9
        assert await hot.tokens(tenant, "s") == 9
        await hot.index.set_session_config(tenant, "s", {"hot_token_limit": 50})
        assert await hot.put(tenant, "s", [item(tenant, "s", "gamma", tokens=1)]) == (
            10,
            {"hot_token_limit": 50},
        )
        assert await hot.index.session_config(tenant, "s") == {"hot_token_limit": 50}

    async def test_what_is_put_is_read_back_as_it_was(self, hot_setup: HotSetup) -> None:
        hot, tenant = hot_setup.tier, unique()
        a = item(tenant, "s", "alpha", user_id="u1", metadata={"k": [1, "x"]})
        b = item(tenant, "s", "beta")
        await hot.put(tenant, "s", [a, b])
        held = {i.id: i for i in await hot.items(tenant, "s")}
        assert set(held) == {a.id, b.id}
        assert _same(held[a.id], a) and _same(held[b.id], b)
        # get: the ids asked for that are there, in the order asked
        got = await hot.get(tenant, "s", [b.id, "mem-missing", a.id])
        assert [i.id for i in got] == [b.id, a.id]
        assert await hot.get(tenant, "s", []) == []
        assert await hot.session_of(tenant, a.id) == "s"
        assert await hot.session_of(tenant, "mem-missing") is None

    async def test_remove_returns_what_it_removed_and_an_emptied_session_leaves_the_index(
        self, hot_setup: HotSetup
    ) -> None:
        hot, tenant = hot_setup.tier, unique()
        a, b = item(tenant, "s", "alpha", tokens=2), item(tenant, "s", "beta", tokens=3)
        await hot.put(tenant, "s", [a, b])
        assert await hot.remove(tenant, "s", [a.id, "mem-missing"]) == [a.id]
        assert await hot.remove(tenant, "s", [a.id]) == []
        assert await hot.tokens(tenant, "s") == 3
        assert await hot.session_of(tenant, a.id) is None
        assert await hot.index.sessions(tenant) == ["s"]
        assert await hot.remove(tenant, "s", [b.id]) == [b.id]
        assert await hot.items(tenant, "s") == []
        assert await hot.tokens(tenant, "s") == 0
        assert await hot.index.sessions(tenant) == []
        assert tenant not in await hot.index.tenants()

    async def test_touch_rewrites_only_items_still_there(self, hot_setup: HotSetup) -> None:
        hot, tenant = hot_setup.tier, unique()
        a = item(tenant, "s", "alpha")
        await hot.put(tenant, "s", [a])
        gone = item(tenant, "s", "never put")
        await hot.touch(tenant, "s", [a.model_copy(update={"access_count": 5}), gone])
        (read,) = await hot.items(tenant, "s")
        assert read.access_count == 5
        assert await hot.tokens(tenant, "s") == a.token_count
        # a parked item stays parked, with its reason
        await hot.touch(tenant, "s", [read.model_copy(update={"parked": "too big"})])
        (parked,) = await hot.get(tenant, "s", [a.id])
        assert parked.parked == "too big"

    async def test_tenants_and_sessions_see_only_their_own(self, hot_setup: HotSetup) -> None:
        hot, one, two = hot_setup.tier, unique(), unique()
        mine = item(one, "s", "mine")
        await hot.put(one, "s", [mine])
        await hot.put(one, "other", [item(one, "other", "next door", tokens=7)])
        await hot.put(two, "s", [item(two, "s", "theirs", tokens=11)])
        assert [i.id for i in await hot.items(one, "s")] == [mine.id]
        assert await hot.get(two, "s", [mine.id]) == []
        assert await hot.session_of(two, mine.id) is None
        assert await hot.tokens(one, "s") == mine.token_count
        assert await hot.remove(two, "s", [mine.id]) == []
        assert await hot.remove(one, "other", [mine.id]) == []
        assert [i.id for i in await hot.items(one, "s")] == [mine.id]
        assert sorted(await hot.index.sessions(one)) == ["other", "s"]
        assert await hot.index.sessions(two) == ["s"]
        await hot.index.set_session_config(one, "s", {"spill_count": 2})
        assert await hot.index.session_config(two, "s") == {}
        assert await hot.index.session_config(one, "other") == {}

    async def test_the_vector_cache_holds_one_model_and_only_items_still_there(
        self, hot_setup: HotSetup
    ) -> None:
        hot, tenant = hot_setup.tier, unique()
        a, b = item(tenant, "s", "alpha"), item(tenant, "s", "beta")
        await hot.put(tenant, "s", [a, b])
        assert await hot.cached_model(tenant, "s") is None
        va, vb = [0.1, 0.2, 0.3], [0.3, 0.2, 0.1]
        await hot.cache_embeddings(tenant, "s", {a.id: va, "mem-absent": vb}, model="m1")
        found = await hot.embeddings(tenant, "s", [a.id, b.id, "mem-absent"], model="m1")
        assert list(found) == [a.id]
        np.testing.assert_allclose(found[a.id], va, rtol=1e-6)
        assert await hot.embeddings(tenant, "s", [a.id], model="m2") == {}
        assert await hot.cached_model(tenant, "s") == "m1"
        # another model's vectors replace the first's
        await hot.cache_embeddings(tenant, "s", {b.id: vb}, model="m2")
        assert await hot.embeddings(tenant, "s", [a.id], model="m1") == {}
        assert list(await hot.embeddings(tenant, "s", [a.id, b.id], model="m2")) == [b.id]
        # a removed item's vector goes with it
        await hot.remove(tenant, "s", [b.id])
        assert await hot.embeddings(tenant, "s", [b.id], model="m2") == {}

    async def test_enrichment_is_cached_beside_the_items(self, hot_setup: HotSetup) -> None:
        hot, tenant = hot_setup.tier, unique()
        a, b = item(tenant, "s", "alpha. beta."), item(tenant, "s", "gamma")
        await hot.put(tenant, "s", [a, b])
        entries = {
            a.id: Enriched(vector=[1.0, 0.0], sentences=b"\x00\x01\x02\x03", entities=True),
            b.id: Enriched(vector=[0.0, 1.0]),
        }
        await hot.cache_enrichment(tenant, "s", entries, model="m1")
        done = await hot.enrichment(tenant, "s", [a.id, b.id, "mem-absent"], model="m1")
        assert set(done) == {a.id, b.id}
        assert done[a.id].sentences == b"\x00\x01\x02\x03" and done[a.id].entities
        assert done[b.id].sentences is None and not done[b.id].entities
        assert await hot.enrichment(tenant, "s", [a.id], model="m2") == {}
        # what enrichment cached serves as the item's vector too
        assert set(await hot.embeddings(tenant, "s", [a.id, b.id], model="m1")) == {a.id, b.id}
        # a vector cached alone is not an enrichment
        c = item(tenant, "s", "delta")
        await hot.put(tenant, "s", [c])
        await hot.cache_embeddings(tenant, "s", {c.id: [0.5, 0.5]}, model="m1")
        assert await hot.enrichment(tenant, "s", [c.id], model="m1") == {}

    async def test_the_index_orders_sessions_by_last_write_and_tracks_over_budget(
        self, hot_setup: HotSetup
    ) -> None:
        hot, tenant = hot_setup.tier, unique()
        await hot.put(tenant, "early", [item(tenant, "early", "one")])
        await hot_setup.elapse(0.05)
        between = hot_setup.now()
        await hot_setup.elapse(0.05)
        await hot.put(tenant, "late", [item(tenant, "late", "two")])
        assert tenant in await hot.index.tenants()
        assert await hot.index.sessions(tenant) == ["early", "late"]
        assert await hot.index.idle_sessions(tenant, between) == ["early"]
        # a write moves a session to the end
        await hot_setup.elapse(0.05)
        await hot.put(tenant, "early", [item(tenant, "early", "three")])
        assert await hot.index.sessions(tenant) == ["late", "early"]
        assert await hot.index.idle_sessions(tenant, between) == []

        await hot.index.mark_over_budget(tenant, "late")
        assert await hot.index.over_budget(tenant) == ["late"]
        assert await hot.index.over_budget(unique()) == []
        await hot.index.clear_over_budget(tenant, "late")
        assert await hot.index.over_budget(tenant) == []

    async def test_drop_if_gone_keeps_a_session_with_items(self, hot_setup: HotSetup) -> None:
        hot, tenant = hot_setup.tier, unique()
        a = item(tenant, "s", "alpha")
        await hot.put(tenant, "s", [a])
        await hot.index.mark_over_budget(tenant, "s")
        assert await hot.index.drop_if_gone(tenant, "s") is False
        assert await hot.index.sessions(tenant) == ["s"]
        await hot.remove(tenant, "s", [a.id])  # an emptied session is dropped
        assert await hot.index.sessions(tenant) == []
        assert await hot.index.over_budget(tenant) == []
        assert await hot.index.drop_if_gone(tenant, "s") is True

    async def test_a_session_expires_ttl_seconds_after_its_last_put(
        self, hot_setup: HotSetup
    ) -> None:
        hot, tenant = hot_setup.tier, unique()
        hot.ttl = 1
        a, b = item(tenant, "s", "alpha", tokens=2), item(tenant, "s", "beta", tokens=3)
        await hot.put(tenant, "s", [a])
        await hot.cache_embeddings(tenant, "s", {a.id: [1.0, 0.0]}, model="m1")
        await hot_setup.elapse(0.6)
        await hot.put(tenant, "s", [b])  # refreshes the whole session's lifetime
        await hot_setup.elapse(0.6)
        assert {i.id for i in await hot.items(tenant, "s")} == {a.id, b.id}
        assert set(await hot.embeddings(tenant, "s", [a.id], model="m1")) == {a.id}
        await hot_setup.elapse(0.7)
        assert await hot.items(tenant, "s") == []
        assert await hot.tokens(tenant, "s") == 0
        assert await hot.embeddings(tenant, "s", [a.id], model="m1") == {}
        # the index still names the session until maintenance drops it
        assert await hot.index.sessions(tenant) == ["s"]
        assert await hot.index.drop_if_gone(tenant, "s") is True
        assert await hot.index.sessions(tenant) == []

    async def test_a_session_lock_is_held_by_one_at_a_time(self, hot_setup: HotSetup) -> None:
        hot, tenant = hot_setup.tier, unique()
        order: list[str] = []
        inside = asyncio.Event()

        async def first() -> None:
            async with hot.locks.hold(tenant, "s"):
                order.append("first in")
                inside.set()
                await asyncio.sleep(0.1)
                order.append("first out")

        async def second() -> None:
            await inside.wait()
            async with hot.locks.hold(tenant, "s"):
                order.append("second in")

        async def elsewhere() -> None:
            await inside.wait()
            async with hot.locks.hold(tenant, "other"):  # another session is not held up
                order.append("other session")

        await asyncio.gather(first(), second(), elsewhere())
        assert order == ["first in", "other session", "first out", "second in"]
