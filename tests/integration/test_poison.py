"""Stored inputs that once broke reads: nothing a client can store may break a read of
its session or tenant, or keep maintenance from reaching other tenants."""

from __future__ import annotations

import json

import pytest

from graphmem.memory import Memory
from tests.conftest import Api, Stack, run_cypher
from tests.integration.test_memory_slice import ADD, HOT, RECALL, SPILL, STATUS

FIND = 'query($s: ID) { find(text: "poison", sessionId: $s) { id } }'
STATS = "query { stats { tier type items } }"
PRUNE = "mutation { prune(policy: {olderThanSeconds: 60}, dryRun: true) { count } }"
FORGET_USER = 'mutation { forgetUser(userId: "nobody") { hotMemories } }'


def nested(depth: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(depth):
        value = {"x": value}
    return value


def code_of(body: dict) -> str:
    assert body.get("errors"), body
    return str(body["errors"][0]["extensions"]["code"])


async def test_deeply_nested_metadata_is_refused(api: Api) -> None:
    body = await api.gql(
        ADD, {"input": {"sessionId": "deep", "content": "poison", "metadata": nested(200)}}
    )
    assert code_of(body) == "BAD_INPUT"  # refused with the request body (over 64 levels)
    body = await api.gql(
        ADD, {"input": {"sessionId": "deep", "content": "poison", "metadata": nested(40)}}
    )
    assert code_of(body) == "BAD_INPUT"
    assert "metadata: nested deeper than 32 levels" in body["errors"][0]["message"]
    # a modest nesting is still fine
    ok = await api.gql(
        ADD, {"input": {"sessionId": "deep", "content": "poison", "metadata": nested(10)}}
    )
    assert "errors" not in ok, ok


async def test_a_date_without_time_zone_is_read_as_utc_and_breaks_nothing(api: Api) -> None:
    body = await api.data(
        ADD,
        {
            "input": {
                "sessionId": "naive",
                "content": "poison pill",
                "occurredAt": "2020-01-01T00:00:00",
            }
        },
    )
    assert body["addMemory"]["createdAt"].startswith("2020-01-01T00:00:00")
    assert body["addMemory"]["createdAt"].endswith(("+00:00", "Z"))
    await api.data(ADD, {"input": {"sessionId": "naive", "content": "a second memory"}})
    for query, variables in [
        (HOT, {"s": "naive"}),
        (STATUS, {"s": "naive"}),
        (FIND, {"s": "naive"}),
        (RECALL, {"input": {"sessionId": "naive", "query": "poison"}}),
        (SPILL, {"s": "naive", "count": 2}),
        (STATS, {}),
        (PRUNE, {}),
        (FORGET_USER, {}),
    ]:
        result = await api.gql(query, variables)
        assert "errors" not in result, (query, result)


async def test_bad_rows_already_stored_are_skipped_not_fatal(
    api: Api, stack: Stack, service: Memory
) -> None:
    """Rows written before the edge checks existed (or by hand): a naive LocalDateTime in
    the graph and an undecodable hot item in Redis."""
    tenant = next(iter(api.keys))
    await api.data(ADD, {"input": {"sessionId": "old", "content": "poison kept", "userId": "u"}})
    await api.data(SPILL, {"s": "old"})
    await run_cypher(
        stack,
        "MATCH (m:Memory {tenant: $t, sessionId: 'old'}) "
        "SET m.createdAt = localdatetime('2019-05-05T10:00:00'), m.metadata = '{not json'",
        t=tenant,
    )
    hot = service.hot_tier
    await service.ingest.add(tenant, {"session_id": "old", "content": "fresh hot item"})
    key = hot._keys(tenant, "old")[0]  # type: ignore[attr-defined]
    await hot.client.hset(key, "mem_broken", '{"id": "mem_broken", "oops": true}')  # type: ignore[attr-defined]
    for query, variables in [
        (HOT, {"s": "old"}),
        (STATUS, {"s": "old"}),
        (FIND, {"s": "old"}),
        (RECALL, {"input": {"sessionId": "old", "query": "poison kept", "autoPromote": False}}),
        (STATS, {}),
        (PRUNE, {}),
    ]:
        result = await api.gql(query, variables)
        assert "errors" not in result, (query, result)
    hot_ids = [i["id"] for i in (await api.data(HOT, {"s": "old"}))["hot"]]
    assert "mem_broken" not in hot_ids and hot_ids


@pytest.mark.parametrize(
    "text", ["\ud800", "a\udfffb", "nul\x00byte"], ids=["lone-high", "lone-low", "nul"]
)
async def test_lone_surrogates_and_nul_are_bad_input(api: Api, text: str) -> None:
    key = next(iter(api.keys.values()))
    payload = {"query": ADD, "variables": {"input": {"sessionId": "s", "content": text}}}
    response = await api.client.post(
        "/graphql",
        content=json.dumps(payload, ensure_ascii=True),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert code_of(response.json()) == "BAD_INPUT"
