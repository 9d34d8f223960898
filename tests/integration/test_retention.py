"""Retention, stats and substring search through the API (docs/concepts.md#primitive)."""

from __future__ import annotations

from tests.conftest import Api, Stack, run_cypher

ADD = "mutation($i: [AddMemoryInput!]!) { addMemories(inputs: $i) { id } }"
SPILL = "mutation($s: ID!) { spill(sessionId: $s, count: 100) { spilledCount } }"
PRUNE = """mutation($p: PrunePolicyInput!, $d: Boolean!) { prune(policy: $p, dryRun: $d) {
  dryRun count bytes ids removed } }"""


async def seed(api: Api) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {}
    for session, days in (("s1", [90, 60, 30, 1]), ("s2", [80, 2])):
        inputs = [
            {
                "sessionId": session,
                "content": f"{session} note from {d} days ago",
                "type": "FACT" if d > 50 else "MESSAGE",
                "occurredAt": f"2026-{11 - d // 30:02d}-{1 + d % 28:02d}T10:00:00+00:00",
            }
            for d in days
        ]
        ids[session] = [m["id"] for m in (await api.data(ADD, {"i": inputs}))["addMemories"]]
        await api.data(SPILL, {"s": session})
    return ids


async def test_dry_run_reports_exactly_what_apply_removes(api: Api, stack: Stack) -> None:
    tenant = next(iter(api.keys))
    ids = await seed(api)
    policy = {"keepNewest": 2}
    dry = (await api.data(PRUNE, {"p": policy, "d": True}))["prune"]
    assert dry["dryRun"] is True and dry["removed"] == 0
    assert sorted(dry["ids"]) == sorted(ids["s1"][:2])  # s1's two oldest; s2 keeps both
    still = await run_cypher(stack, "MATCH (m:Memory {tenant: $t}) RETURN count(m) AS n", t=tenant)
    assert still[0]["n"] == 6  # a dry run touches nothing
    applied = (await api.data(PRUNE, {"p": policy, "d": False}))["prune"]
    assert applied["ids"] == dry["ids"] and applied["count"] == dry["count"]
    assert applied["removed"] == dry["count"] and applied["bytes"] == dry["bytes"]
    left = await run_cypher(stack, "MATCH (m:Memory {tenant: $t}) RETURN m.id AS id", t=tenant)
    assert sorted(r["id"] for r in left) == sorted(ids["s1"][2:] + ids["s2"])


async def test_nothing_outside_the_policy_is_touched(api: Api, stack: Stack) -> None:
    a, b = list(api.keys)
    ids = await seed(api)
    await api.data(
        ADD,
        {
            "i": [
                {
                    "sessionId": "s1",
                    "content": "B's old note",
                    "occurredAt": "2025-01-01T00:00:00+00:00",
                }
            ]
        },
        tenant=b,
    )
    await api.data(SPILL, {"s": "s1"}, tenant=b)
    # only FACTs older than 40 days in session s1 of tenant a
    policy = {"olderThanSeconds": 40 * 86400, "types": ["FACT"], "sessionId": "s1"}
    done = (await api.data(PRUNE, {"p": policy, "d": False}))["prune"]
    assert sorted(done["ids"]) == sorted(ids["s1"][:2])
    left = await run_cypher(
        stack, "MATCH (m:Memory) WHERE m.tenant IN $ts RETURN m.tenant AS t, m.id AS id", ts=[a, b]
    )
    assert sum(1 for r in left if r["t"] == b) == 1  # the other tenant's old note stays
    assert sorted(r["id"] for r in left if r["t"] == a) == sorted(ids["s1"][2:] + ids["s2"])


async def test_bad_policies_are_rejected(api: Api) -> None:
    body = await api.gql(PRUNE, {"p": {}, "d": True})
    assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    body = await api.gql(PRUNE, {"p": {"tiers": ["HOT"], "keepNewest": 1}, "d": True})
    assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT"


async def test_stats_and_substring_search_cover_every_tier(api: Api) -> None:
    await seed(api)
    await api.data(ADD, {"i": [{"sessionId": "s3", "content": "A HOT note about Kyoto"}]})
    rows = (await api.data("{ stats { tier type items tokens bytes } }"))["stats"]
    by = {(r["tier"], r["type"]): r for r in rows}
    assert by[("HOT", "MESSAGE")]["items"] == 1
    assert by[("COLD", "FACT")]["items"] == 3 and by[("COLD", "MESSAGE")]["items"] == 3
    assert all(r["bytes"] > 0 and r["tokens"] > 0 for r in rows)
    found = (await api.data('{ find(text: "kyoto") { content tier } }'))["find"]
    assert found == [{"content": "A HOT note about Kyoto", "tier": "HOT"}]
    old = (await api.data('{ find(text: "DAYS AGO", sessionId: "s2") { content } }'))["find"]
    assert len(old) == 2
