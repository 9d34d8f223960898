"""The memory operations through the API over the real Neo4j and Redis: add, spill, recall,
status, search and forget."""

from __future__ import annotations

from tests.conftest import Api, Stack, run_cypher, running
from tests.support.documents import ADD, HOT, RECALL, SEARCH, SPILL, STATUS


async def add(api: Api, session: str, content: str, **extra: object) -> dict:
    data = await api.data(ADD, {"input": {"sessionId": session, "content": content, **extra}})
    return data["addMemory"]


async def test_add_lands_in_hot_tier_with_metadata_round_trip(api: Api) -> None:
    metadata = {"speaker": "Ada", "nested": {"list": [1, 2.5, None, "x"]}, "flag": True}
    item = await add(api, "s1", "The budget is $50K", type="FACT", userId="u1", metadata=metadata)
    assert item["tier"] == "HOT"
    assert item["type"] == "FACT"
    assert item["userId"] == "u1"
    assert item["metadata"] == metadata
    assert item["accessCount"] == 0
    assert item["relevanceScore"] == 1.0
    # WordPiece: [the, budget, is, $, 50, ##k]
    assert item["tokenCount"] == 6
    hot = (await api.data(HOT, {"s": "s1"}))["hot"]
    assert [h["id"] for h in hot] == [item["id"]]


async def test_spill_writes_embedded_memory_to_neo4j_and_leaves_redis(
    api: Api, stack: Stack
) -> None:
    tenant = next(iter(api.keys))
    item = await add(api, "s1", "The budget is $50K", type="FACT", metadata={"k": "v"})
    result = (await api.data(SPILL, {"s": "s1"}))["spill"]
    assert result["spilledIds"] == [item["id"]]
    assert result["spilledCount"] == 1
    assert result["targetTier"] == "COLD"
    assert (await api.data(HOT, {"s": "s1"}))["hot"] == []

    records = await run_cypher(
        stack,
        "MATCH (s:Session {tenant: $t, id: 's1'})-[:HAS_MEMORY]->(m:Memory {tenant: $t}) "
        "RETURN m.id AS id, m.tier AS tier, size(m.embedding) AS dims, m.content AS content",
        t=tenant,
    )
    assert [(r["id"], r["tier"], r["dims"], r["content"]) for r in records] == [
        (item["id"], "cold", 384, "The budget is $50K")
    ]


async def test_spill_is_idempotent_and_explicit_ids_are_checked(api: Api) -> None:
    a = await add(api, "s1", "first thing")
    b = await add(api, "s1", "second thing")
    result = (await api.data(SPILL, {"s": "s1", "ids": [b["id"]]}))["spill"]
    assert result["spilledIds"] == [b["id"]]
    # spilling the same id again: it is no longer hot → NOT_FOUND, nothing duplicated
    body = await api.gql(SPILL, {"s": "s1", "ids": [b["id"]]})
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    status = (await api.data(STATUS, {"s": "s1"}))["memoryStatus"]
    assert status["cold"]["items"] == 1
    assert status["hot"]["items"] == 1
    assert [h["id"] for h in (await api.data(HOT, {"s": "s1"}))["hot"]] == [a["id"]]


async def test_spill_takes_lowest_relevance_oldest_first(api: Api) -> None:
    first = await add(api, "s1", "oldest")
    await add(api, "s1", "middle")
    await add(api, "s1", "newest")
    result = (await api.data(SPILL, {"s": "s1", "count": 1}))["spill"]
    assert result["spilledIds"] == [first["id"]]


async def test_recall_returns_budget_first_and_tracks_access(api: Api) -> None:
    budget = await add(api, "s1", "The budget is $50K", type="FACT")
    for text in ["We met in Lisbon", "The logo should be blue", "Lunch was pasta"]:
        await add(api, "s1", text)
    await api.data(SPILL, {"s": "s1", "count": 4})
    recall = (
        await api.data(
            RECALL, {"input": {"sessionId": "s1", "query": "what was the budget?", "limit": 3}}
        )
    )["recall"]
    assert recall["items"][0]["id"] == budget["id"]
    assert recall["items"][0]["accessCount"] == 1
    assert len(recall["items"]) == 3
    scores = [s["score"] for s in recall["scores"]]
    assert scores == sorted(scores, reverse=True)  # ranked by the fused score
    similarity = recall["scores"][0]["similarity"]
    assert all(0.0 <= s["similarity"] <= 1.0 for s in recall["scores"])
    # relevance = (old + new) / 2 with the stored 1.0 of a fresh item, on the cosine scale
    assert abs(recall["items"][0]["relevanceScore"] - (1.0 + similarity) / 2) < 1e-6
    # search ranks the same way but records nothing
    hits = await api.data(SEARCH, {"q": "what was the budget?", "s": "s1", "limit": 3})
    assert hits["search"][0]["item"]["id"] == budget["id"]
    assert hits["search"][0]["item"]["accessCount"] == 1


async def test_recall_promotes_close_match_to_hot(api: Api) -> None:
    item = await add(api, "s1", "Important fact", type="FACT")
    await api.data(SPILL, {"s": "s1"})
    recall = await api.data(RECALL, {"input": {"sessionId": "s1", "query": "important fact"}})
    assert recall["recall"]["promoted"] == [item["id"]]
    hot = (await api.data(HOT, {"s": "s1"}))["hot"]
    assert [h["content"] for h in hot] == ["Important fact"]
    status = (await api.data(STATUS, {"s": "s1"}))["memoryStatus"]
    assert status["hot"]["items"] == 1
    assert status["cold"]["items"] == 0  # the graph copy is marked hot, not counted twice


async def test_status_counts_tokens_per_tier_and_suggests(api: Api) -> None:
    for i in range(3):
        await add(api, "s1", f"note number {i} about the launch")
    before = (await api.data(STATUS, {"s": "s1"}))["memoryStatus"]
    assert before["hot"]["items"] == 3
    assert before["hot"]["limit"] == 4000
    assert before["hot"]["tokens"] > 0
    assert before["hot"]["utilizationPercent"] == round(100 * before["hot"]["tokens"] / 4000, 2)
    await api.data(SPILL, {"s": "s1", "count": 3})
    after = (await api.data(STATUS, {"s": "s1"}))["memoryStatus"]
    assert after["hot"] == {"items": 0, "tokens": 0, "limit": 4000, "utilizationPercent": 0.0}
    assert after["cold"] == {"items": 3, "tokens": before["hot"]["tokens"]}
    assert [s["type"] for s in after["suggestions"]] == ["recall"]


async def test_search_filters_by_user_and_type(api: Api) -> None:
    await add(api, "s1", "Ada prefers tea", type="PREFERENCE", userId="ada")
    await add(api, "s2", "Bob prefers coffee", type="PREFERENCE", userId="bob")
    await add(api, "s2", "Bob said hello", userId="bob")
    await api.data(SPILL, {"s": "s1"})
    await api.data(SPILL, {"s": "s2"})
    hits = (
        await api.data(
            SEARCH, {"q": "what does someone prefer to drink", "u": "bob", "types": ["PREFERENCE"]}
        )
    )["search"]
    assert [h["item"]["content"] for h in hits] == ["Bob prefers coffee"]


async def test_forget_removes_from_every_tier(api: Api) -> None:
    hot = await add(api, "s1", "keep me hot")
    cold = await add(api, "s1", "send me cold")
    await api.data(SPILL, {"s": "s1", "ids": [cold["id"]]})
    forget = "mutation F($id: ID!) { forget(itemId: $id) }"
    assert (await api.data(forget, {"id": hot["id"]}))["forget"] is True
    assert (await api.data(forget, {"id": cold["id"]}))["forget"] is True
    assert (await api.data(forget, {"id": cold["id"]}))["forget"] is False
    status = (await api.data(STATUS, {"s": "s1"}))["memoryStatus"]
    assert (status["hot"]["items"], status["cold"]["items"]) == (0, 0)


async def test_auto_spill_keeps_hot_within_budget(api: Api, stack: Stack) -> None:
    # 20 adds of ~8 tokens each overflow a small budget; the service spills as it goes.
    import httpx

    from graphmem.api.http.app import create_app

    tenant, key = next(iter(api.keys.items()))
    app = create_app(stack.settings(api_keys={key: tenant}, memory={"hotTokenLimit": 60}))
    async with running(app):
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://graphmem"
        ) as client:
            small = Api(client, {tenant: key}, app)
            for i in range(20):
                await add(small, "s-auto", f"Message {i} with some content")
            status = (await small.data(STATUS, {"s": "s-auto"}))["memoryStatus"]
    assert status["hot"]["tokens"] <= status["hot"]["limit"] == 60
    assert status["cold"]["items"] > 0
    assert status["hot"]["items"] + status["cold"]["items"] == 20


async def test_hybrid_recall_finds_exact_words_vectors_miss_and_reads_context(api: Api) -> None:
    """BM25 brings the rare exact token; the neighbouring turn rides along as context."""
    for n, text in enumerate(
        [
            "Ada: Did you pick a code for the vault?",
            "Bob: Yes, it is XJ-4471.",
            "Ada: Great, and the weather was lovely today.",
            "Bob: We should plan the picnic for Sunday.",
        ]
    ):
        await add(api, "s1", text, metadata={"turn": n})
    await api.data(SPILL, {"s": "s1", "count": 10})
    search = """query($q: String!, $r: Retriever!) { search(query: $q, sessionId: "s1",
      limit: 2, retriever: $r) { score similarity item { content } } }"""
    hybrid = (await api.data(search, {"q": "what is XJ-4471 for?", "r": "HYBRID"}))["search"]
    assert hybrid[0]["item"]["content"] == "Bob: Yes, it is XJ-4471."
    # the question turn right before the answer comes second, through context
    assert hybrid[1]["item"]["content"] == "Ada: Did you pick a code for the vault?"
    text = (await api.data(search, {"q": "what is XJ-4471 for?", "r": "FULLTEXT"}))["search"]
    assert [h["item"]["content"] for h in text] == ["Bob: Yes, it is XJ-4471."]
    vector = (await api.data(search, {"q": "what is XJ-4471 for?", "r": "VECTOR"}))["search"]
    assert len(vector) == 2 and all(0 <= h["similarity"] <= 1 for h in vector)
