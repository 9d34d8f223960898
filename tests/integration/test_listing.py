"""memories (pages over every tier, metadata lookups), sessions, and spill with a tier."""

from __future__ import annotations

from tests.conftest import Api

PAGE = (
    "query($s: ID, $u: ID, $f: String, $v: [JSON!], $n: Int!, $a: String) "
    "{ memories(sessionId: $s, userId: $u, metadataField: $f, metadataValues: $v, first: $n, "
    "after: $a) { items { id content tier metadata } next } }"
)


async def test_pages_cover_every_tier_in_order_and_find_by_metadata(api: Api) -> None:
    inputs = [
        {"sessionId": "ls-a", "userId": "u1", "content": f"note {n}", "metadata": {"k": n % 3}}
        for n in range(7)
    ] + [{"sessionId": "ls-b", "userId": "u2", "content": "other user", "metadata": {"k": 0}}]
    added = (
        await api.data(
            "mutation($m: [AddMemoryInput!]!) { addMemories(inputs: $m) { id } }", {"m": inputs}
        )
    )["addMemories"]
    ids = [a["id"] for a in added]
    spilled = await api.data(
        'mutation($i: [ID!]) { spill(sessionId: "ls-a", itemIds: $i, tier: WARM) '
        "{ warmIds coldIds } }",
        {"i": ids[1:4]},
    )
    assert spilled["spill"] == {"warmIds": ids[1:4], "coldIds": []}
    seen, after = [], None
    while True:
        page = (await api.data(PAGE, {"u": "u1", "n": 3, "a": after}))["memories"]
        seen += page["items"]
        if page["next"] is None:
            break
        after = page["next"]
    assert [i["content"] for i in seen] == [f"note {n}" for n in range(7)]
    assert [i["tier"] for i in seen] == ["HOT", "WARM", "WARM", "WARM", "HOT", "HOT", "HOT"]
    found = (await api.data(PAGE, {"s": "ls-a", "f": "k", "v": [1], "n": 100}))["memories"]
    assert [i["content"] for i in found["items"]] == ["note 1", "note 4"]
    assert found["next"] is None
    none = (await api.data(PAGE, {"s": "ls-a", "f": "k", "v": [True], "n": 100}))["memories"]
    assert none["items"] == []  # JSON true is not 1
    sessions = await api.data(
        '{ a: sessions(prefix: "ls-") b: sessions(prefix: "ls-", userId: "u2") }'
    )
    assert sessions == {"a": ["ls-a", "ls-b"], "b": ["ls-b"]}
    bad = await api.gql('mutation { spill(sessionId: "ls-a", tier: HOT) { spilledCount } }')
    assert bad["errors"][0]["extensions"]["code"] == "BAD_INPUT"
