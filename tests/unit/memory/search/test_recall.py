"""Recall over the in-memory stores: it counts the accesses of what it returns (search does
not), reports and touches the session's matching hot items, promotes what is relevant or
recalled often, warms up a cold memory recalled often, and keeps to the tenant."""

from __future__ import annotations

from typing import Any

import pytest

from graphmem.domain.models import RecallResult, Tier
from graphmem.memory.inputs import RecallQuery
from tests.support.memory import OTHER_TENANT, TENANT, Fakes, fake_memory


async def spilled(f: Fakes, *contents: str, session_id: str = "s1", **spec: Any) -> list[str]:
    ids = [(await f.add(c, session_id=session_id, **spec)).id for c in contents]
    await f.memory.spills.spill(TENANT, session_id, item_ids=ids)
    return ids


async def recall(f: Fakes, query: str, tenant: str = TENANT, **q: Any) -> RecallResult:
    return await f.memory.recall.recall(tenant, RecallQuery(query=query, **q))


def node(f: Fakes, item_id: str) -> dict[str, Any]:
    found = f.graph.node(TENANT, item_id)
    assert found is not None
    return found


async def test_recall_counts_the_accesses_of_what_it_returns_and_search_does_not() -> None:
    f = fake_memory()
    dentist, bank, apples = await spilled(
        f, "the dentist on monday", "the bank on friday", "green apples"
    )
    await f.memory.recall.search(TENANT, RecallQuery(query="dentist monday", session_id="s1"))
    assert node(f, dentist)["accessCount"] == 0
    result = await recall(f, "dentist monday", session_id="s1", limit=2, auto_promote=False)
    returned = [i.id for i in result.items]
    assert returned[0] == dentist and len(returned) == 2
    assert node(f, dentist)["accessCount"] == 1
    assert node(f, returned[1])["accessCount"] == 1
    left_out = ({dentist, bank, apples} - set(returned)).pop()
    assert node(f, left_out)["accessCount"] == 0
    # relevance moves halfway from where it was (1.0 when spilled) to the similarity
    second = result.scores[1].similarity
    assert second < 1.0
    assert node(f, returned[1])["relevanceScore"] == pytest.approx((1.0 + second) / 2)
    assert result.items[0].access_count == 1  # items as they are after the count
    await recall(f, "dentist monday", session_id="s1", limit=2, auto_promote=False)
    assert node(f, dentist)["accessCount"] == 2


async def test_recall_reports_the_sessions_matching_hot_items_and_touches_them() -> None:
    f = fake_memory()
    match = await f.add("the dentist on monday")
    other = await f.add("completely unrelated groceries")
    elsewhere = await f.add("the dentist on monday", session_id="s2")
    result = await recall(f, "dentist monday", session_id="s1")
    assert [h.item.id for h in result.hot_hits] == [match.id]
    assert result.hot_hits[0].similarity == pytest.approx(1.0)
    (touched,) = await f.hot.get(TENANT, "s1", [match.id])
    assert touched.access_count == 1 and touched.last_accessed_at > match.last_accessed_at
    (untouched,) = await f.hot.get(TENANT, "s1", [other.id])
    assert untouched.access_count == 0
    (away,) = await f.hot.get(TENANT, "s2", [elsewhere.id])
    assert away.access_count == 0


async def test_recall_promotes_what_is_relevant_enough() -> None:
    f = fake_memory(promoteThreshold=0.85)
    close, far = await spilled(f, "the dentist on monday", "the dentist called about bills")
    result = await recall(f, "dentist monday", session_id="s1", limit=2)
    assert result.promoted == [close]
    assert await f.hot_ids() == {close}
    assert f.graph_tiers() == {close: "hot", far: "cold"}
    # without auto promotion nothing moves
    g = fake_memory()
    (kept,) = await spilled(g, "the dentist on monday")
    assert (await recall(g, "dentist monday", session_id="s1", auto_promote=False)).promoted == []
    assert await g.hot_ids() == set() and g.graph_tiers() == {kept: "cold"}


async def test_a_memory_recalled_often_is_promoted_below_the_threshold() -> None:
    f = fake_memory(promoteAccessCount=3, promoteThreshold=0.99, warmAccessThreshold=100)
    (memory,) = await spilled(f, "the dentist called about the bills")
    for _ in range(3):
        result = await recall(f, "dentist bills monday", session_id="s1")
    assert result.promoted == [memory]
    assert await f.hot_ids() == {memory}


async def test_a_cold_memory_recalled_past_the_threshold_warms_up() -> None:
    f = fake_memory(warmAccessThreshold=1, autoPromoteEnabled=False)
    (memory,) = await spilled(f, "the dentist on monday", user_id="u")
    await recall(f, "dentist monday", session_id="s1")
    assert f.graph_tiers() == {memory: "cold"}
    assert f.versions is not None
    bumps = len(f.versions.bumps)
    await recall(f, "dentist monday", session_id="s1")
    assert f.graph_tiers() == {memory: "warm"}
    # the tier change reaches the scopes held in memory
    assert f.versions.bumps[bumps:] == [
        (TENANT, {"t": {memory}, "s:s1": {memory}, "u:u": {memory}}, False)
    ]
    (item,) = await f.graph.get(TENANT, [memory])
    assert item.tier is Tier.WARM


async def test_with_a_user_recall_ranks_every_session_of_theirs() -> None:
    f = fake_memory()
    (there,) = await spilled(f, "the dentist on monday", session_id="s2", user_id="u")
    (not_theirs,) = await spilled(f, "the dentist on monday", session_id="s3", user_id="v")
    result = await recall(f, "dentist monday", session_id="s1", user_id="u", auto_promote=False)
    assert [i.id for i in result.items] == [there]
    only_session = await recall(f, "dentist monday", session_id="s1", auto_promote=False)
    assert only_session.items == []
    assert not_theirs in f.graph_tiers()


async def test_recall_never_returns_or_touches_another_tenants_memories() -> None:
    f = fake_memory()
    (mine,) = await spilled(f, "the dentist on monday")
    await f.add("the dentist on monday", tenant=OTHER_TENANT)
    result = await recall(f, "dentist monday", tenant=OTHER_TENANT, session_id="s1")
    assert result.items == [] and result.promoted == []
    assert [h.item.tenant for h in result.hot_hits] == [OTHER_TENANT]
    assert node(f, mine)["accessCount"] == 0 and await f.hot_ids() == set()
