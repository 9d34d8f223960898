"""Search keeps scopes' vectors in memory, and never serves what the graph no longer
holds: every change made through one service (one replica) shows at once in a search
through another, built independently, with a cache of its own on the same Redis and
Neo4j."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest

from graphmem.domain.models import EmbeddingSpace, Tier, utcnow
from graphmem.enrich import lexical
from graphmem.memory import Memory, RecallQuery
from graphmem.memory.search.fusion import Retriever
from graphmem.memory.writepath.analysis import graph_memory
from graphmem.stores.models import MemoryRows
from tests.conftest import Stack, run_cypher

NOTES = [
    "Alice adopted a greyhound called Biscuit",
    "Alice plays the cello on Sundays",
    "Alice is learning to bake sourdough bread",
    "Alice went hiking in the Alps last summer",
]


async def stored(
    service: Memory, tenant: str, session: str = "s1", user: str = "alice"
) -> list[str]:
    items = await service.ingest.add_many(
        tenant, [{"session_id": session, "user_id": user, "content": c} for c in NOTES]
    )
    await service.spills.spill(tenant, session, count=len(items))
    return [i.id for i in items]


async def found(
    service: Memory, tenant: str, query: str = "greyhound Biscuit", **scope: str
) -> list[str]:
    hits = await service.recall.search(
        tenant,
        RecallQuery(query=query, limit=10, **scope),  # type: ignore[arg-type]
    )
    return [h.item.id for h in hits]


async def both_cached(a: Memory, b: Memory, tenant: str, **scope: str) -> list[str]:
    """Search through both services, so that each holds the scope in memory."""
    first = await found(a, tenant, **scope)
    assert await found(b, tenant, **scope) == first
    assert len(b.ranker.cache._held) >= 1
    return first


async def test_the_second_search_of_a_scope_is_served_from_memory_with_the_same_ranking(
    service: Memory, replica: Memory, tenant: str
) -> None:
    ids = await stored(service, tenant)
    for retriever in Retriever:
        query = RecallQuery(query="greyhound Biscuit", user_id="alice", retriever=retriever)
        replica.ranker.cache.clear()
        built = await replica.recall.search(tenant, query)
        held = await replica.recall.search(tenant, query)
        # and the same as a search that never holds anything in memory (cosines from
        # Neo4j's arithmetic instead of numpy's: equal to float precision)
        service.ranker.cache.versions = None
        try:
            from_graph = await service.recall.search(tenant, query)
        finally:
            service.ranker.cache.versions = replica.ranker.cache.versions
        for hits in (held, from_graph):
            assert [h.item for h in hits] == [h.item for h in built], retriever
            for h, b in zip(hits, built, strict=True):
                assert h.score == pytest.approx(b.score, abs=1e-5), retriever
                assert h.similarity == pytest.approx(b.similarity, abs=1e-5), retriever
    assert (await found(replica, tenant, user_id="alice"))[0] == ids[0]


async def test_forget_through_one_replica_shows_at_once_in_another(
    service: Memory, replica: Memory, tenant: str
) -> None:
    ids = await stored(service, tenant)
    for scope in ({"user_id": "alice"}, {"session_id": "s1"}, {}):
        assert ids[0] in await both_cached(service, replica, tenant, **scope)
    assert await service.erasure.forget(tenant, ids[0])
    for scope in ({"user_id": "alice"}, {"session_id": "s1"}, {}):
        assert ids[0] not in await found(replica, tenant, **scope), scope


async def test_forget_user_through_one_replica_shows_at_once_in_another(
    service: Memory, replica: Memory, tenant: str
) -> None:
    ids = await stored(service, tenant)
    assert ids[0] in await both_cached(service, replica, tenant, user_id="alice")
    assert ids[0] in await both_cached(service, replica, tenant)
    await service.erasure.forget_user(tenant, "alice")
    assert await found(replica, tenant, user_id="alice") == []
    assert await found(replica, tenant) == []


async def test_prune_through_one_replica_shows_at_once_in_another(
    service: Memory, replica: Memory, tenant: str
) -> None:
    ids = await stored(service, tenant)
    assert ids[0] in await both_cached(service, replica, tenant, user_id="alice")
    report = await service.removal.prune(
        tenant, {"user_id": "alice", "keep_newest": 0}, dry_run=False
    )
    assert report["removed"] == len(ids)
    assert await found(replica, tenant, user_id="alice") == []


async def test_a_spill_through_one_replica_shows_at_once_in_another(
    service: Memory, replica: Memory, tenant: str
) -> None:
    await stored(service, tenant)
    await both_cached(service, replica, tenant, user_id="alice", query="marathon")
    (new,) = await service.ingest.add_many(
        tenant, [{"session_id": "s2", "user_id": "alice", "content": "Alice ran a marathon"}]
    )
    await service.spills.spill(tenant, "s2", count=1)
    assert (await found(replica, tenant, "marathon", user_id="alice"))[0] == new.id
    assert (await found(replica, tenant, "marathon"))[0] == new.id


async def test_promotion_through_one_replica_shows_at_once_in_another(
    service: Memory, replica: Memory, tenant: str
) -> None:
    ids = await stored(service, tenant)
    assert ids[0] in await both_cached(service, replica, tenant, user_id="alice")
    promoted = await service.promotion.promote(tenant, ids[0])
    assert promoted.tier is Tier.HOT
    # the other replica's search still finds it (every tier is searched), now hot
    every = RecallQuery(query="greyhound Biscuit", user_id="alice")
    hits = await replica.recall.search(tenant, every)
    assert hits[0].item.id == ids[0] and hits[0].item.tier is Tier.HOT
    # and a search of the graph's own tiers leaves it out at once
    graph_only = RecallQuery(
        query="greyhound Biscuit", user_id="alice", tiers=[Tier.WARM, Tier.COLD]
    )
    assert ids[0] not in {h.item.id for h in await replica.recall.search(tenant, graph_only)}


async def test_demotion_through_one_replica_shows_at_once_in_another(
    service: Memory, replica: Memory, tenant: str, stack: Stack
) -> None:
    ids = await stored(service, tenant)
    await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $tenant}) SET m.tier = 'warm', m.lastAccessedAt = $old",
        tenant=tenant,
        old=utcnow() - timedelta(days=365),
    )
    await service.changes.everything(tenant)  # the hand-made change above, announced
    warm_only = RecallQuery(query="greyhound Biscuit", user_id="alice", tiers=[Tier.WARM])
    assert (await replica.recall.search(tenant, warm_only))[0].item.id == ids[0]
    report = await service.maintenance.run_once()
    assert ids[0] in report.demoted[tenant]
    assert await replica.recall.search(tenant, warm_only) == []


async def test_a_search_reads_fresh_access_counts_and_never_a_deleted_memory(
    service: Memory, replica: Memory, tenant: str
) -> None:
    ids = await stored(service, tenant)
    query = RecallQuery(query="greyhound Biscuit", user_id="alice", limit=1, auto_promote=False)
    before = (await replica.recall.search(tenant, query))[0].item
    await service.recall.recall(tenant, query)
    after = (await replica.recall.search(tenant, query))[0].item
    assert after.id == before.id == ids[0]
    assert after.access_count == before.access_count + 1


async def test_memories_without_an_embedding_are_found_by_bm25_and_break_nothing(
    service: Memory, replica: Memory, tenant: str, stack: Stack
) -> None:
    # as the write-behind path leaves a memory until its enrichment lands
    ids = await stored(service, tenant)
    await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $tenant, id: $id}) "
        "REMOVE m.embedding, m.vectorBytes, m.sentenceVectors",
        tenant=tenant,
        id=ids[0],
    )
    await service.changes.written(tenant, [(ids[0], "s1", "alice")])
    for retriever in Retriever:
        query = RecallQuery(query="greyhound Biscuit", user_id="alice", retriever=retriever)
        hits = [h.item.id for h in await replica.recall.search(tenant, query)]
        if retriever is Retriever.VECTOR:
            assert ids[0] not in hits
        else:
            assert hits[0] == ids[0], retriever


async def test_a_view_past_its_age_is_read_again_without_missing_a_change(
    service: Memory, replica: Memory, tenant: str
) -> None:
    ids = await stored(service, tenant)
    replica.ranker.cache.max_age = 0.0  # every view is old: each search reads it anew
    for _ in range(3):
        assert (await found(replica, tenant, user_id="alice"))[0] == ids[0]
    assert await service.erasure.forget(tenant, ids[0])
    assert ids[0] not in await found(replica, tenant, user_id="alice")


async def test_a_scope_larger_than_the_whole_cache_is_read_once_then_searched_in_the_graph(
    service: Memory, replica: Memory, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A view no cache holds would otherwise be read whole again for every search."""
    ids = await stored(service, tenant)
    cache = replica.ranker.cache
    cache._held.max_bytes = 1  # every view is larger than the whole cache
    reads: list[tuple[object, ...]] = []
    whole = cache.graph.scope_pages

    def counted(*args: Any) -> AsyncIterator[MemoryRows]:
        reads.append(args)
        return whole(*args)

    monkeypatch.setattr(cache.graph, "scope_pages", counted)
    for _ in range(3):
        assert (await found(replica, tenant, user_id="alice"))[0] == ids[0]
    assert len(reads) == 1 and len(cache._held) == 0
    assert not cache.likely(tenant, None, "alice")
    assert cache.likely(tenant, None, "bob")  # only that scope


async def test_a_scope_larger_than_a_page_is_read_whole(service: Memory, tenant: str) -> None:
    """Whole-scope reads come a page of memories per row (the driver keeps a connection's
    receive buffer at its largest message's size): every page arrives, in one scope."""
    import numpy as np

    from graphmem.domain.models import MemoryItem, MemoryType, content_hash
    from graphmem.memory.search.scopeview import Pages, ScopeView
    from graphmem.stores.models import MemoryRows, ScopeTooLarge
    from graphmem.stores.neo4j.search import SCOPE_PAGE

    n = 2 * SCOPE_PAGE + 7
    rng = np.random.default_rng(7)
    rows, ids = [], []
    for i in range(n):
        vector = rng.normal(size=service.embedder.dimension).astype(np.float32)
        vector /= np.linalg.norm(vector)
        at = utcnow() - timedelta(minutes=n - i)
        item = MemoryItem(
            id=f"page-{i:04d}",
            tenant=tenant,
            session_id=f"s{i // 100}",
            user_id="pager",
            content=f"note number {i}",
            type=MemoryType.MESSAGE,
            tier=Tier.COLD,
            access_count=0,
            last_accessed_at=at,
            created_at=at,
            relevance_score=1.0,
            token_count=3,
            content_hash=content_hash(f"note number {i}"),
            metadata={},
            seq=i,
        )
        rows.append(graph_memory(item, vector.tolist()))
        ids.append(item.id)
    await service.graph.upsert(tenant, rows, EmbeddingSpace.of(service.embedder))
    search = service.graph.search
    pages = [page async for page in search.scope_pages(tenant, None, "pager", n + 1)]
    assert [len(page.ids) for page in pages] == [SCOPE_PAGE, SCOPE_PAGE, 7]
    whole = MemoryRows.joined(pages)
    assert sorted(whole.ids) == ids
    assert all(v is not None and len(v) == 4 * service.embedder.dimension for v in whole.vectors)
    # each memory's stems come along, for BM25 inside the scope
    analysed = {m.item.id: lexical.term_bytes(m.item.content) for m in rows}
    assert dict(zip(whole.ids, whole.terms, strict=True)) == analysed
    with pytest.raises(ScopeTooLarge):  # over the cap
        _ = [page async for page in search.scope_pages(tenant, None, "pager", n)]
    tenant_wide = [page async for page in search.scope_pages(tenant, None, None, n + 1)]
    assert sorted(MemoryRows.joined(tenant_wide).ids) == ids
    # the view built a page at a time is the view of the rows read whole
    built = Pages(service.embedder.dimension)
    for page in pages:
        built.add(page)
    paged, joined = built.view(), ScopeView.from_rows(whole, service.embedder.dimension)
    for column in ("ids", "seqs", "vectors", "sentences", "counts", "terms", "term_counts"):
        assert np.array_equal(getattr(paged, column), getattr(joined, column)), column
    # no message larger than a page: three rows of at most SCOPE_PAGE memories
    params = {
        "tenant": tenant,
        "userId": "pager",
        "cap": n + 1,
        "page": SCOPE_PAGE,
        "termVersion": lexical.VERSION,
    }
    records = await service.graph.run("memory/scope_rows_user", params)
    assert [len(r["meta"]) for r in records] == [SCOPE_PAGE, SCOPE_PAGE, 7]
