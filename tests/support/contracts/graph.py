"""The graph store's contract (``GraphStore`` with ``GraphSearch``, ``GraphScans`` and
``GraphSpaces``): what spill, promotion, recall and its ranking, removal and maintenance
rely on.

Subclass ``GraphStoreContract`` with a fixture ``graph_setup`` returning a ``GraphSetup``.
Tenants are unique per test, so the real store may hold anything else besides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from graphmem.domain.models import (
    EmbeddingSpace,
    MemoryItem,
    MemoryType,
    Tier,
    TierCount,
    query_scope_tokens,
)
from graphmem.enrich.sentences import Embedded
from graphmem.memory.search.querytext import lucene_query
from graphmem.memory.writepath.analysis import graph_memory, memory_vectors
from graphmem.stores import GraphStore
from graphmem.stores.models import GraphMemory, MemoryRows, ScopeTooLarge
from tests.support.contracts.common import days_ago, item, unique
from tests.support.enrich import HashEmbedder


@dataclass
class GraphSetup:
    store: GraphStore
    embedder: HashEmbedder

    @property
    def space(self) -> EmbeddingSpace:
        return EmbeddingSpace.of(self.embedder)

    def memories(self, items: Sequence[MemoryItem], vectors: bool = True) -> list[GraphMemory]:
        return [
            graph_memory(i, self.embedder.vector(i.content) if vectors else None) for i in items
        ]

    async def spill(self, tenant: str, items: Sequence[MemoryItem], tier: Tier = Tier.COLD) -> None:
        moved = [i.model_copy(update={"tier": tier}) for i in items]
        await self.store.upsert(tenant, self.memories(moved), self.space)


def _by_id(items: Sequence[MemoryItem]) -> dict[str, MemoryItem]:
    return {i.id: i for i in items}


async def _pages(setup: GraphSetup, tenant: str, **scope: Any) -> list[MemoryRows]:
    cap = scope.pop("cap", 1000)
    search = setup.store.search
    return [
        rows
        async for rows in search.scope_pages(
            tenant, scope.get("session_id"), scope.get("user_id"), cap
        )
    ]


class GraphStoreContract:
    async def test_an_upsert_converges_to_one_memory_per_id(self, graph_setup: GraphSetup) -> None:
        store, tenant = graph_setup.store, unique()
        a = item(tenant, "s", "the first words", user_id="u1", metadata={"k": "v"})
        b = item(tenant, "s", "other words")
        await graph_setup.spill(tenant, [a, b], Tier.WARM)
        await graph_setup.spill(tenant, [a.model_copy(update={"content": "changed words"})])
        found = _by_id(await store.get(tenant, [a.id, b.id, "mem-missing"]))
        assert set(found) == {a.id, b.id}
        assert found[a.id].content == "changed words" and found[a.id].tier is Tier.COLD
        assert found[a.id].metadata == {"k": "v"} and found[a.id].user_id == "u1"
        assert found[a.id].session_id == "s" and found[a.id].seq == a.seq
        assert found[a.id].created_at == a.created_at
        assert found[b.id].tier is Tier.WARM
        assert tenant in await graph_setup.store.tenants()

    async def test_no_read_or_write_crosses_tenants(self, graph_setup: GraphSetup) -> None:
        store, one, two = graph_setup.store, unique(), unique()
        a = item(one, "s", "dentist appointment on monday", user_id="u")
        await graph_setup.spill(one, [a])
        assert await store.get(two, [a.id]) == []
        assert await store.record_access(two, [(a.id, 1.0)], datetime.now(UTC), 3) == []
        assert await store.mark_hot(two, [a.id], datetime.now(UTC)) == []
        done = await store.delete_many(two, [a.id])
        assert done.removed == 0 and done.located == []
        vector = graph_setup.embedder.vector(a.content)
        for session_id, user_id in (("s", None), (None, "u")):
            hits = await store.search.vector_hits(
                two, vector, 10, session_id=session_id, user_id=user_id
            )
            assert hits.ids == []
        lucene = lucene_query("dentist", query_scope_tokens(two, "s"))
        assert lucene is not None
        assert (await store.search.text_hits(two, lucene, 10, session_id="s")).ids == []
        assert (await store.search.rows_by_ids(two, [a.id])).ids == []
        assert [r.ids for r in await _pages(graph_setup, two, session_id="s")] == [[]]
        assert await store.get(one, [a.id]) != []

    async def test_the_first_vectors_claim_the_tenant_for_their_model(
        self, graph_setup: GraphSetup
    ) -> None:
        store, tenant = graph_setup.store, unique()
        a, b = item(tenant, "s", "written behind"), item(tenant, "s", "spilled")
        await store.upsert_hot(tenant, graph_setup.memories([a], vectors=False))
        assert await store.spaces.of(tenant) is None  # a node without vectors claims nothing
        await graph_setup.spill(tenant, [b])
        assert await store.spaces.of(tenant) == graph_setup.space.model
        assert (await store.spaces.all())[tenant] == graph_setup.space.model
        # another model's vectors are not written beside them
        other = EmbeddingSpace("another-model", graph_setup.space.dimensions)
        c = item(tenant, "s", "spilled by another model")
        await store.upsert(tenant, graph_setup.memories([c]), other)
        assert [i.id for i in await store.unenriched(tenant, [a.id, b.id, c.id])] == [a.id, c.id]
        vector = graph_setup.embedder.vector(c.content)
        hits = await store.search.vector_hits(tenant, vector, 10, session_id="s")
        assert hits.ids == [b.id]

    async def test_write_behind_creates_hot_nodes_and_leaves_existing_ones(
        self, graph_setup: GraphSetup
    ) -> None:
        store, tenant = graph_setup.store, unique()
        warm, new = item(tenant, "s", "already warm"), item(tenant, "s", "just added")
        await graph_setup.spill(tenant, [warm], Tier.WARM)
        hot_copy = warm.model_copy(update={"content": "stale copy"})
        written = await store.upsert_hot(tenant, graph_setup.memories([hot_copy, new], False))
        assert sorted(written) == sorted([warm.id, new.id])
        found = _by_id(await store.get(tenant, [warm.id, new.id]))
        assert found[warm.id].tier is Tier.WARM and found[warm.id].content == "already warm"
        assert found[new.id].tier is Tier.HOT
        assert [i.id for i in await store.unenriched(tenant, [warm.id, new.id])] == [new.id]
        embedded = Embedded(graph_setup.embedder.vector("just added"), None)
        vectors = [memory_vectors(i, embedded) for i in (new.id, "mem-gone")]
        assert await store.set_vectors(tenant, vectors, graph_setup.space) == [new.id]
        assert await store.unenriched(tenant, [new.id]) == []
        hits = await store.search.vector_hits(
            tenant, graph_setup.embedder.vector("just added"), 1, session_id="s"
        )
        assert hits.ids == [new.id] and hits.scores[0] == pytest.approx(1.0, abs=1e-3)

    async def test_record_access_counts_averages_and_warms_cold_memories(
        self, graph_setup: GraphSetup
    ) -> None:
        store, tenant = graph_setup.store, unique()
        cold, warm = item(tenant, "s", "cold one"), item(tenant, "s", "warm one", access_count=2)
        await graph_setup.spill(tenant, [cold])
        await graph_setup.spill(tenant, [warm], Tier.WARM)
        now = datetime.now(UTC).replace(microsecond=0)
        hits = [(cold.id, 0.4), (warm.id, 0.6), ("mem-gone", 0.9)]
        done = await store.record_access(tenant, hits, now, 0)
        assert [(i.id, was) for i, was in done] == [(cold.id, "cold"), (warm.id, "warm")]
        after = _by_id([i for i, _ in done])
        assert after[cold.id].access_count == 1 and after[cold.id].tier is Tier.WARM
        assert after[cold.id].relevance_score == pytest.approx(0.7)
        assert after[cold.id].last_accessed_at == now
        assert after[warm.id].access_count == 3 and after[warm.id].tier is Tier.WARM
        # below the threshold a cold memory stays cold
        other = item(tenant, "s", "another cold one")
        await graph_setup.spill(tenant, [other])
        ((read, _),) = await store.record_access(tenant, [(other.id, 1.0)], now, 1)
        assert read.tier is Tier.COLD and read.access_count == 1

    async def test_mark_hot_and_delete(self, graph_setup: GraphSetup) -> None:
        store, tenant = graph_setup.store, unique()
        a, b = item(tenant, "s", "one", user_id="u"), item(tenant, "s2", "two")
        await graph_setup.spill(tenant, [a, b])
        assert await store.mark_hot(tenant, [a.id, "mem-gone"], datetime.now(UTC)) == [a.id]
        assert (await store.get(tenant, [a.id]))[0].tier is Tier.HOT
        done = await store.delete_many(tenant, [a.id, b.id, "mem-gone"])
        assert done.removed == 2 and done.keys == []
        assert sorted(done.located) == sorted([(a.id, "s", "u"), (b.id, "s2", None)])
        assert await store.get(tenant, [a.id, b.id]) == []
        assert (await store.delete_many(tenant, [a.id])).removed == 0
        assert await store.delete(tenant, a.id) is None

    async def test_forget_user_removes_their_memories_and_their_empty_sessions(
        self, graph_setup: GraphSetup
    ) -> None:
        store, tenant = graph_setup.store, unique()
        alone = item(tenant, "s1", "only mine", user_id="u")
        shared = item(tenant, "s2", "mine too", user_id="u")
        theirs = item(tenant, "s2", "someone else's", user_id="v")
        await graph_setup.spill(tenant, [alone, shared, theirs])
        done = await store.forget_user(tenant, "u")
        assert done.removed == 2 and done.sessions == 1 and done.keys == []
        assert sorted(i for i, _, _ in done.located) == sorted([alone.id, shared.id])
        assert [i.id for i in await store.get(tenant, [alone.id, shared.id, theirs.id])] == [
            theirs.id
        ]

    async def test_vector_hits_rank_a_scope_by_cosine(self, graph_setup: GraphSetup) -> None:
        store, tenant, embed = graph_setup.store, unique(), graph_setup.embedder.vector
        exact = item(tenant, "s", "booked the dentist for monday", user_id="u")
        close = item(tenant, "s", "the dentist called back", user_id="u")
        far = item(tenant, "s", "bought green apples", user_id="u")
        fact = item(tenant, "s", "dentist monday booked", type=MemoryType.FACT, user_id="w")
        elsewhere = item(tenant, "s2", "booked the dentist for monday", user_id="u")
        await graph_setup.spill(tenant, [exact, close, far, elsewhere])
        await graph_setup.spill(tenant, [fact], Tier.WARM)
        query = embed("booked the dentist for monday")
        hits = await store.search.vector_hits(tenant, query, 10, session_id="s")
        assert hits.ids[0] in {exact.id, fact.id} and set(hits.ids) == {
            exact.id,
            close.id,
            far.id,
            fact.id,
        }
        assert hits.scores == sorted(hits.scores, reverse=True)
        assert all(0.0 <= s <= 1.0 for s in hits.scores)
        assert hits.scores[0] == pytest.approx(1.0, abs=1e-3)
        assert hits.sessions == ["s"] * 4
        top = await store.search.vector_hits(tenant, query, 2, session_id="s")
        assert len(top.ids) == 2 and set(top.ids) <= {exact.id, fact.id, close.id}
        typed = await store.search.vector_hits(
            tenant, query, 10, session_id="s", types=[MemoryType.FACT]
        )
        assert typed.ids == [fact.id] and typed.types == ["fact"]
        cold = await store.search.vector_hits(tenant, query, 10, session_id="s", tiers=["cold"])
        assert fact.id not in cold.ids and exact.id in cold.ids
        mine = await store.search.vector_hits(tenant, query, 10, user_id="u")
        assert set(mine.ids) == {exact.id, close.id, far.id, elsewhere.id}
        assert set(mine.users) == {"u"}
        assert await store.search.scope_size(tenant, "s", None) == 4
        assert await store.search.scope_size(tenant, "s", None, ["warm"]) == 1
        assert await store.search.scope_size(tenant, None, "u") == 4

    async def test_text_hits_rank_by_bm25_inside_the_scope(self, graph_setup: GraphSetup) -> None:
        store, tenant = graph_setup.store, unique()
        both = item(tenant, "s", "the dentist moved my appointment to friday", user_id="u")
        one = item(tenant, "s", "an appointment with the bank", user_id="u")
        none = item(tenant, "s", "green apples are in season", user_id="u")
        other = item(tenant, "s2", "the dentist appointment", user_id="v")
        await graph_setup.spill(tenant, [both, one, none, other])
        lucene = lucene_query("dentist appointment", query_scope_tokens(tenant, "s"))
        assert lucene is not None
        hits = await store.search.text_hits(tenant, lucene, 10, session_id="s", vectors=True)
        assert hits.ids == [both.id, one.id]
        assert hits.scores[0] > hits.scores[1] > 0
        assert all(v is not None for v in hits.vectors)
        bare = await store.search.text_hits(tenant, lucene, 10, session_id="s")
        assert bare.ids == hits.ids and bare.vectors == [None, None]
        by_user = lucene_query("dentist", query_scope_tokens(tenant, None, "v"))
        assert by_user is not None
        assert (await store.search.text_hits(tenant, by_user, 10, user_id="v")).ids == [other.id]
        whole = lucene_query("dentist", query_scope_tokens(tenant))
        assert whole is not None
        assert set((await store.search.text_hits(tenant, whole, 10)).ids) == {both.id, other.id}
        warm_only = await store.search.text_hits(tenant, lucene, 10, session_id="s", tiers=["warm"])
        assert warm_only.ids == []

    async def test_neighbours_are_the_turns_around_a_memory(self, graph_setup: GraphSetup) -> None:
        store, tenant = graph_setup.store, unique()
        turns = [item(tenant, "s", f"turn number {n}", seq=n) for n in range(1, 6)]
        elsewhere = item(tenant, "s2", "another conversation", seq=3)
        await graph_setup.spill(tenant, [*turns, elsewhere])
        rows, items = await store.search.neighbours(tenant, [turns[2].id], 1, also=[elsewhere.id])
        assert rows.anchors == [turns[2].id, turns[2].id]
        assert sorted(rows.ids) == sorted([turns[1].id, turns[3].id])
        assert all(v is not None for v in rows.vectors)
        assert {turns[1].id, turns[2].id, turns[3].id, elsewhere.id} <= set(items)
        assert items[turns[3].id].content == "turn number 4"
        wide, _ = await store.search.neighbours(tenant, [turns[0].id], 2)
        assert sorted(wide.ids) == sorted([turns[1].id, turns[2].id])
        assert (await store.search.neighbours(tenant, [elsewhere.id], 1))[0].ids == []

    async def test_a_scope_is_read_whole_with_vectors_and_stems(
        self, graph_setup: GraphSetup
    ) -> None:
        store, tenant = graph_setup.store, unique()
        a = item(tenant, "s", "alpha words", user_id="u")
        b = item(tenant, "s", "beta words")
        c = item(tenant, "s2", "gamma words", user_id="u")
        await graph_setup.spill(tenant, [a, b])
        await graph_setup.spill(tenant, [c], Tier.WARM)
        await store.mark_hot(tenant, [b.id], datetime.now(UTC))
        session = MemoryRows.joined(await _pages(graph_setup, tenant, session_id="s"))
        assert sorted(session.ids) == sorted([a.id, b.id])  # every tier
        assert all(v is not None for v in session.vectors)
        assert all(t for t in session.terms)
        user = MemoryRows.joined(await _pages(graph_setup, tenant, user_id="u"))
        assert sorted(user.ids) == sorted([a.id, c.id])
        whole = MemoryRows.joined(await _pages(graph_setup, tenant))
        assert sorted(whole.ids) == sorted([a.id, b.id, c.id])
        with pytest.raises(ScopeTooLarge):
            await _pages(graph_setup, tenant, session_id="s", cap=2)
        read = await store.search.rows_by_ids(tenant, [c.id, "mem-gone", a.id])
        assert read.ids == [c.id, a.id] and read.tiers == ["warm", "cold"]
        assert all(t for t in read.terms)

    async def test_scans_count_demote_and_list_prune_candidates(
        self, graph_setup: GraphSetup
    ) -> None:
        store, tenant = graph_setup.store, unique()
        idle = item(tenant, "s", "idle warm words", tokens=3)
        idle = idle.model_copy(update={"last_accessed_at": days_ago(40)})
        recent = item(tenant, "s", "recent warm", tokens=2)
        cold = item(tenant, "s", "cold one", tokens=5, type=MemoryType.FACT)
        await graph_setup.spill(tenant, [idle, recent], Tier.WARM)
        await graph_setup.spill(tenant, [cold])
        assert await store.scans.count_by_tier(tenant, "s") == {
            Tier.WARM: TierCount(items=2, tokens=5),
            Tier.COLD: TierCount(items=1, tokens=5),
        }
        now = datetime.now(UTC)
        assert await store.scans.demote_idle_warm(tenant, days_ago(30), now) == [idle.id]
        assert (await store.get(tenant, [idle.id]))[0].tier is Tier.COLD
        assert await store.scans.demote_idle_warm(tenant, days_ago(30), now) == []
        found = await store.scans.prune_candidates(tenant, ["cold"], ["fact"], "s", None)
        assert [(c["id"], c["bytes"], c["tier"]) for c in found] == [(cold.id, 8, "cold")]
        everything = await store.scans.prune_candidates(tenant, ["warm", "cold"], None, None, None)
        assert {c["id"] for c in everything} == {idle.id, recent.id, cold.id}
