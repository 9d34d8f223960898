"""Erasure and removal over the in-memory stores: forget takes a memory out of every
tier, forget_user takes everything a user owns, and a prune's dry run names exactly what
its apply removes."""

from __future__ import annotations

from graphmem.memory.tiers.retention import PrunePolicy
from tests.support.contracts.common import days_ago, item
from tests.support.memory import OTHER_TENANT, TENANT, fake_memory


async def test_forget_removes_a_memory_from_both_tiers() -> None:
    f = fake_memory(rules={"write_through": True})
    memory = await f.add("forget me", user_id="u")
    other = await f.add("keep me")
    assert memory.id in await f.hot_ids() and memory.id in f.graph_tiers()
    assert await f.memory.erasure.forget(TENANT, memory.id) is True
    assert await f.hot_ids() == {other.id}
    assert set(f.graph_tiers()) == {other.id}
    assert await f.hot.session_of(TENANT, memory.id) is None
    assert f.versions is not None
    assert f.versions.bumps[-1][1] == {"t": {memory.id}, "s:s1": {memory.id}, "u:u": {memory.id}}
    assert await f.memory.erasure.forget(TENANT, memory.id) is False


async def test_forget_finds_a_spilled_memory_in_the_graph() -> None:
    f = fake_memory()
    memory = await f.add("spilled then forgotten")
    await f.memory.spills.spill(TENANT, "s1", item_ids=[memory.id])
    assert await f.memory.erasure.forget(TENANT, memory.id) is True
    assert f.graph.nodes(TENANT) == [] and await f.hot_ids() == set()


async def test_forget_in_another_tenant_removes_nothing() -> None:
    f = fake_memory(rules={"write_through": True})
    memory = await f.add("tenant a's")
    assert await f.memory.erasure.forget(OTHER_TENANT, memory.id) is False
    assert await f.hot_ids() == {memory.id} and set(f.graph_tiers()) == {memory.id}


async def test_forget_user_removes_what_they_own_in_every_tier_and_nothing_else() -> None:
    f = fake_memory()
    spilled = await f.add("u's old memory", session_id="s1", user_id="u")
    await f.memory.spills.spill(TENANT, "s1", item_ids=[spilled.id])
    hot = await f.add("u's recent memory", session_id="s2", user_id="u")
    theirs = await f.add("v's memory", session_id="s2", user_id="v")
    elsewhere = await f.add("u in another tenant", tenant=OTHER_TENANT, user_id="u")
    report = (await f.memory.erasure.forget_user(TENANT, "u")).counts
    assert report["hotMemories"] == 1 and report["graphMemories"] == 1
    assert report["sessions"] == 1 and report["entities"] == 0
    assert await f.hot_ids("s2") == {theirs.id}
    assert f.graph.nodes(TENANT) == []
    assert hot.id not in await f.hot_ids("s2")
    assert await f.hot_ids(tenant=OTHER_TENANT) == {elsewhere.id}


async def test_a_prune_dry_run_names_exactly_what_its_apply_removes() -> None:
    f = fake_memory()
    old = [item(TENANT, "s1", f"old {n}", created_at=days_ago(40 + n)) for n in range(3)]
    new = [item(TENANT, "s1", f"new {n}", created_at=days_ago(n)) for n in range(2)]
    for memory in old + new:
        await f.hot.put(TENANT, "s1", [memory])
    await f.memory.spills.spill(TENANT, "s1", count=5)
    policy = PrunePolicy(older_than_seconds=30 * 24 * 3600)
    dry = await f.memory.removal.prune(TENANT, policy)
    assert set(dry["ids"]) == {m.id for m in old} and dry["removed"] == 0
    assert dry["bytes"] == sum(len(m.content) for m in old)
    assert len(f.graph.nodes(TENANT)) == 5
    done = await f.memory.removal.prune(TENANT, policy, dry_run=False)
    assert done["ids"] == dry["ids"] and done["removed"] == 3
    assert set(f.graph_tiers()) == {m.id for m in new}
