"""Stored inputs that once broke reads: nothing a client can store may break a read of
its session or tenant, or keep maintenance from reaching other tenants."""

from __future__ import annotations

import json

import pytest

from graphmem.memory import Memory
from graphmem.stores.redis.keys import session_keys
from tests.conftest import Api, Stack, empty_redis_db, run_cypher
from tests.support.documents import ADD, HOT, RECALL, SPILL, STATUS

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
    key = session_keys(tenant, "old").items
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


REGISTER = "mutation($n: String!, $s: JSON!) { registerRecordSchema(name: $n, schema: $s) }"
ADD_RECORD = "mutation($n: String!, $d: JSON!) { addRecord(schema: $n, data: $d) { id } }"
RECORDS = "query($n: String!, $w: JSON) { records(schema: $n, where: $w) { id } }"


async def test_record_patterns_run_in_linear_time(api: Api) -> None:
    import time

    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}},
        "patternProperties": {"^(b+)+$": {"type": "string"}},
        "additionalProperties": False,
    }
    assert (await api.data(REGISTER, {"n": "redos", "s": schema}))["registerRecordSchema"]
    started = time.perf_counter()
    body = await api.gql(ADD_RECORD, {"n": "redos", "d": {"code": "a" * 40 + "!"}})
    assert code_of(body) == "BAD_INPUT" and "does not match" in body["errors"][0]["message"]
    body = await api.gql(ADD_RECORD, {"n": "redos", "d": {"b" * 40 + "!": "x"}})
    assert code_of(body) == "BAD_INPUT" and "additional properties" in body["errors"][0]["message"]
    # with Python's backtracking engine each of these took minutes; RE2 is linear
    assert time.perf_counter() - started < 2.0
    ok = await api.gql(ADD_RECORD, {"n": "redos", "d": {"code": "aaa", "bbb": "x"}})
    assert "errors" not in ok, ok


async def test_patterns_re2_cannot_run_are_refused_at_registration(api: Api) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string", "pattern": "(a)\\1"}}}
    body = await api.gql(REGISTER, {"n": "backref", "s": schema})
    assert code_of(body) == "BAD_INPUT" and "RE2" in body["errors"][0]["message"]


async def test_integers_beyond_64_bits_and_huge_ages_are_bad_input(api: Api) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    await api.data(REGISTER, {"n": "ints", "s": schema})
    assert code_of(await api.gql(ADD_RECORD, {"n": "ints", "d": {"n": 2**64}})) == "BAD_INPUT"
    assert code_of(await api.gql(RECORDS, {"n": "ints", "w": {"n": 2**64}})) == "BAD_INPUT"
    assert "errors" not in await api.gql(ADD_RECORD, {"n": "ints", "d": {"n": 2**62}})
    prune = "mutation { prune(policy: {olderThanSeconds: 8e13}, dryRun: true) { count } }"
    assert code_of(await api.gql(prune)) == "BAD_INPUT"


async def test_a_subscription_over_http_post_is_bad_input(api: Api) -> None:
    body = await api.gql("subscription { memoryEvents { kind } }")
    assert code_of(body) == "BAD_INPUT"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 2.5])
async def test_mcp_numbers_must_be_whole_and_finite(service: Memory, bad: float) -> None:
    from graphmem.api.mcp import call
    from graphmem.errors import BadInput

    with pytest.raises(BadInput):
        await call(service, "t-mcp", "memory_spill", {"sessionId": "s", "count": bad})
    with pytest.raises(BadInput):
        await call(
            service, "t-mcp", "memory_recall", {"sessionId": "s", "query": "q", "limit": bad}
        )


@pytest.mark.parametrize(
    "body",
    [
        b"1",
        b"true",
        b"null",
        b'"x"',
        b"\xff\xfe{",
        b"[" * 50_000 + b"]" * 50_000,
        b'{"query": NaN}',
    ],
    ids=["int", "bool", "null", "string", "not-utf8", "deep", "nan"],
)
async def test_malformed_bodies_get_400_with_the_error_shape(api: Api, body: bytes) -> None:
    key = next(iter(api.keys.values()))
    response = await api.client.post(
        "/graphql",
        content=body,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert code_of(response.json()) == "BAD_INPUT"


@pytest.mark.parametrize(
    ("query", "variables", "field"),
    [
        (
            "mutation($d: String!) { createTask(description: $d) { id } }",
            {"d": "x" * 900_0},
            "description",
        ),
        (
            "mutation($o: String!) { recordEpisode(input: {outcome: $o, success: true,"
            ' description: "d"}) { id } }',
            {"o": "y" * 4_001},
            "outcome",
        ),
        (
            'mutation($l: [String!]) { recordEpisode(input: {outcome: "ok", success: true,'
            ' description: "d", lessons: $l}) { id } }',
            {"l": ["fine", "z" * 2_001]},
            "lessons",
        ),
        ('mutation { setEntityAlias(alias: "' + "a" * 201 + '", canonical: "b") }', {}, "alias"),
        (
            'query($t: String! = "' + "x" * 20_001 + '") { find(text: $t) { id } }',
            {},
            "a default value",
        ),
    ],
    ids=["task-description", "episode-outcome", "episode-lessons", "alias-literal", "default"],
)
async def test_free_text_fields_have_lengths(
    api: Api, query: str, variables: dict, field: str
) -> None:
    body = await api.gql(query, variables)
    assert code_of(body) == "BAD_INPUT"
    assert body["errors"][0]["extensions"]["field"] == field


async def test_json_scalars_keep_their_own_key_names(api: Api) -> None:
    metadata = {"description": "d" * 5_000}  # a client's key, not the createTask argument
    body = await api.gql(ADD, {"input": {"sessionId": "s", "content": "x", "metadata": metadata}})
    assert "errors" not in body, body


async def test_one_failing_session_does_not_starve_maintenance_of_other_tenants(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session whose flush fails (the poison of the past: a bad row, a store error) is
    reported and skipped; every other tenant's idle sessions are still flushed."""
    import asyncio

    from tests.conftest import new_tenant
    from tests.support.apis import build

    own_db = await empty_redis_db(stack, 8)
    service = await build(
        stack,
        redis_url=own_db,
        config={"sessionTtlSeconds": 10, "flushBeforeExpirySeconds": 9},
    )
    poisoned, healthy = new_tenant(), new_tenant()
    flush = service.spills.flush

    async def failing_for_one_tenant(tenant: str, *args: object, **kwargs: object) -> object:
        if tenant == poisoned:
            raise ValueError("a row that cannot be written")
        return await flush(tenant, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(service.spills, "flush", failing_for_one_tenant)
    try:
        for tenant in (poisoned, healthy):
            await service.ingest.add(tenant, {"session_id": "s", "content": "flush me"})
        await asyncio.sleep(1.5)  # idle for longer than TTL minus the flush margin
        report = await service.maintenance.run_once()
        assert f"{healthy}/s" in report.flushed
        assert any(e.startswith(f"{poisoned}/s") for e in report.errors), report.errors
        assert await service.reports.hot_items(healthy, "s") == []
        assert len(await service.reports.hot_items(poisoned, "s")) == 1  # kept, not lost
    finally:
        await service.close()


async def test_fuzz_findings_answer_bad_input_not_internal(api: Api) -> None:
    """Reproducers bench/fuzz.py found (each was INTERNAL or a plain-text 500)."""
    ok = await api.gql('mutation { setWorkingMemory(taskId: "t1", key: "plan") }')
    assert ok == {"data": {"setWorkingMemory": {"plan": None}}}
    for when in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"):
        body = await api.gql(
            ADD, {"input": {"sessionId": "dates", "content": "x", "occurredAt": when}}
        )
        assert code_of(body) == "BAD_INPUT", when
    key = next(iter(api.keys.values()))
    auth = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    huge = b'{"query": "query($n: Int!) { conversation(sessionId: \\"s\\", last: $n) { role } }",'
    huge += b' "variables": {"n": ' + b"9" * 5000 + b"}}"
    response = await api.client.post("/graphql", content=huge, headers=auth)
    assert response.status_code == 400 and code_of(response.json()) == "BAD_INPUT"
    batch = [{"jsonrpc": "2.0", "id": n, "method": "tools/list"} for n in (1, 2)]
    response = await api.client.post(
        "http://127.0.0.1:8000/mcp",
        json=batch,
        headers=auth | {"Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 400 and code_of(response.json()) == "BAD_INPUT"
    assert "pydantic" not in response.text
    no_version = {"id": 1, "method": "tools/list"}  # an object, but not JSON-RPC 2.0
    response = await api.client.post(
        "http://127.0.0.1:8000/mcp",
        json=no_version,
        headers=auth | {"Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 400 and code_of(response.json()) == "BAD_INPUT"
    assert "pydantic" not in response.text
