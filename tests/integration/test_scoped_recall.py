"""BM25 ranks inside the asked scope, and memories written before scope tokens existed
are backfilled by migrate."""

from __future__ import annotations

from graphmem.models import scope_token
from graphmem.retrieval import Retriever
from graphmem.service import MemoryService, RecallQuery
from tests.conftest import Stack, run_cypher


async def test_a_user_finds_their_memory_when_others_match_the_query_far_more(
    service: MemoryService, tenant: str
) -> None:
    # 150 memories of another user outrank ours on BM25; a tenant-wide top 100 filtered
    # to our user afterwards would hold none of ours.
    await service.add_many(
        tenant,
        [
            {"session_id": "noisy", "user_id": "bob", "content": f"zebra zebra zebra note {n}"}
            for n in range(150)
        ],
    )
    (ours,) = await service.add_many(
        tenant,
        [{"session_id": "quiet", "user_id": "alice", "content": "a zebra at the zoo today"}],
    )
    await service.spill(tenant, "noisy", count=150)
    await service.spill(tenant, "quiet", count=1)
    for retriever in (Retriever.FULLTEXT, Retriever.HYBRID):
        hits = await service.search(
            tenant, RecallQuery(query="zebra", user_id="alice", limit=5, retriever=retriever)
        )
        assert [h.item.id for h in hits] == [ours.id], retriever
    by_session = await service.search(
        tenant, RecallQuery(query="zebra", session_id="quiet", retriever=Retriever.FULLTEXT)
    )
    assert [h.item.id for h in by_session] == [ours.id]


async def test_migrate_gives_old_memories_their_session_and_user_tokens(
    service: MemoryService, tenant: str, stack: Stack
) -> None:
    (item,) = await service.add_many(
        tenant, [{"session_id": "old", "user_id": "carol", "content": "the okapi enclosure"}]
    )
    await service.spill(tenant, "old", count=1)
    # as a memory written before session and user tokens existed
    await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $tenant, id: $id}) SET m.scopeToken = $token",
        tenant=tenant,
        id=item.id,
        token=scope_token(tenant),
    )
    query = RecallQuery(query="okapi", user_id="carol", retriever=Retriever.FULLTEXT)
    assert await service.search(tenant, query) == []
    await service.migrate()
    assert [h.item.id for h in await service.search(tenant, query)] == [item.id]
