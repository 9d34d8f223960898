"""Nothing is stored unless acknowledged: a value Neo4j cannot hold is refused
at the edge naming its field, an add that answers an error has stored nothing, and an
item stored before the edge checks (a poison in the hot tier) is parked with its reason
while the rest of its session spills."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from graphmem.domain.models import MemoryItem, MemoryType, content_hash, utcnow
from graphmem.errors import BadInput, Unavailable
from graphmem.memory import Memory
from graphmem.stores.redis.keys import session_keys
from tests.conftest import Api, Stack, run_cypher
from tests.support.documents import ADD, HOT

ADD_MANY = "mutation($i: [AddMemoryInput!]!) { addMemories(inputs: $i) { id } }"
CONFIGURE = (
    "mutation($s: ID!, $c: SessionConfigInput!) "
    "{ configureSession(sessionId: $s, config: $c) { hotTokenLimit } }"
)
IMPORT_TASK = "mutation($t: TaskImportInput!) { importTask(input: $t) { created } }"


def code_of(body: dict) -> str:
    assert body.get("errors"), body
    return str(body["errors"][0]["extensions"]["code"])


def field_of(body: dict) -> str:
    return str(body["errors"][0]["extensions"].get("field"))


async def hot_ids(api: Api, session: str) -> list[str]:
    return [i["id"] for i in (await api.data(HOT, {"s": session}))["hot"]]


def poison(tenant: str, session: str, offset: timedelta) -> MemoryItem:
    """A hot item as an add stored it before the edge checks: a time whose offset Neo4j
    cannot hold."""
    when = datetime(2024, 1, 1, tzinfo=timezone(offset))
    return MemoryItem(
        id=f"mem_poison_{int(offset.total_seconds())}",
        tenant=tenant,
        session_id=session,
        content="a poison pill from before the edge checks",
        type=MemoryType.MESSAGE,
        last_accessed_at=utcnow(),
        created_at=when,
        token_count=9,
        content_hash=content_hash("poison"),
    )


@pytest.fixture
async def poisoned(
    api: Api, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[Memory, str, MemoryItem]]:
    """A session of the api's first tenant with a poison item in its hot tier (a time
    offset of +23:59, or the field values ``request.param``); the item is forgotten
    afterwards (the shared Redis must not keep it for other tests)."""
    service: Memory = api.app.state.service
    tenant = next(iter(api.keys))
    item = poison(tenant, "poisoned", timedelta(hours=23, minutes=59))
    item = item.model_copy(update=getattr(request, "param", {}))
    await service.hot_tier.put(tenant, "poisoned", [item])
    try:
        yield service, tenant, item
    finally:
        await service.erasure.forget(tenant, item.id)


@pytest.mark.parametrize(
    "when",
    [
        "2024-01-01T00:00:00+23:59",
        "2024-01-01T00:00:00-18:30",
        "2024-01-01T00:00:00+18:01",
        "0001-01-01T00:00:00+01:00",
    ],
)
async def test_times_neo4j_cannot_hold_are_refused_naming_the_field(api: Api, when: str) -> None:
    body = await api.gql(ADD, {"input": {"sessionId": "when", "content": "x", "occurredAt": when}})
    assert code_of(body) == "BAD_INPUT" and field_of(body) == "occurredAt", body
    assert body["errors"][0]["message"].startswith("occurredAt: ")
    assert await hot_ids(api, "when") == []


async def test_the_widest_offsets_neo4j_holds_are_kept(api: Api) -> None:
    for when in ("2024-01-01T00:00:00+18:00", "2024-01-01T00:00:00-18:00"):
        await api.data(ADD, {"input": {"sessionId": "wide", "content": when, "occurredAt": when}})
    spilled = await api.data('mutation { spill(sessionId: "wide", count: 2) { spilledCount } }')
    assert spilled["spill"]["spilledCount"] == 2


async def test_a_batch_with_one_refused_memory_stores_none(api: Api) -> None:
    inputs = [
        {"sessionId": "batch", "content": "fine"},
        {"sessionId": "batch", "content": "bad", "occurredAt": "2024-01-01T00:00:00+23:59"},
        {"sessionId": "other", "content": "fine too"},
    ]
    body = await api.gql(ADD_MANY, {"i": inputs})
    assert code_of(body) == "BAD_INPUT" and field_of(body) == "occurredAt"
    assert await hot_ids(api, "batch") == [] and await hot_ids(api, "other") == []


async def test_offsets_in_seconds_are_refused_by_the_service_too(
    service: Memory, tenant: str
) -> None:
    """The facade (MCP, the Python API) parses times with pydantic, which takes offsets
    in seconds; the driver cannot send them."""
    odd = datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=1, seconds=30)))
    spec = {"session_id": "s", "content": "x", "occurred_at": odd}
    with pytest.raises(BadInput) as refused:
        await service.ingest.add(tenant, spec)
    assert refused.value.details["field"] == "occurredAt"
    assert await service.reports.hot_items(tenant, "s") == []


async def test_imported_task_times_and_episode_metrics_are_checked(api: Api) -> None:
    task = {
        "importId": "bad-offset",
        "description": "a task from elsewhere",
        "createdAt": "2024-01-01T00:00:00+23:59",
    }
    body = await api.gql(IMPORT_TASK, {"t": task})
    assert code_of(body) == "BAD_INPUT" and field_of(body) == "createdAt", body
    for metrics in ("{a: 1e400}", "{a: 99999999999999999999999}"):
        body = await api.gql(
            'mutation { recordEpisode(input: {outcome: "o", success: true, description: "d",'
            f" metrics: {metrics}}}) {{ id }} }}"
        )
        assert code_of(body) == "BAD_INPUT" and field_of(body) == "metrics", (metrics, body)
    body = await api.gql(
        IMPORT_TASK,
        {
            "t": {
                "importId": "bad-metrics",
                "description": "d",
                "episodes": [{"outcome": "o", "success": True, "metrics": {"n": 2**70}}],
            }
        },
    )
    assert code_of(body) == "BAD_INPUT" and field_of(body) == "metrics", body


async def test_a_refused_episode_leaves_no_task_behind(api: Api, stack: Stack) -> None:
    tenant = next(iter(api.keys))
    body = await api.gql(
        'mutation { recordEpisode(input: {outcome: "o", success: true, description: "fresh",'
        ' steps: [{action: "fine"}, {action: "  "}]}) { id } }'
    )
    assert code_of(body) == "BAD_INPUT" and field_of(body) == "action"
    tasks = await run_cypher(stack, "MATCH (t:Task {tenant: $t}) RETURN count(t) AS n", t=tenant)
    assert tasks == [{"n": 0}]


async def test_a_poison_item_does_not_make_adds_answer_errors_nor_duplicate(
    api: Api, poisoned: tuple[Memory, str, MemoryItem]
) -> None:
    """The issue's run: past twice the budget an add waits for its spill, and the
    spill's failure on the poison was the add's answer (BAD_INPUT) though it was stored."""
    _, _, item = poisoned
    await api.data(CONFIGURE, {"s": "poisoned", "c": {"hotTokenLimit": 20}})
    added = []
    for n in range(8):
        text = f"memory number {n} with a handful of words to count as tokens"
        body = await api.gql(ADD, {"input": {"sessionId": "poisoned", "content": text}})
        assert "errors" not in body, (n, body)
        added.append(body["data"]["addMemory"]["id"])
    await api.settle()
    page = await api.data('query { memories(sessionId: "poisoned") { items { id tier } } }')
    stored = [i["id"] for i in page["memories"]["items"]]
    assert sorted(stored) == sorted([*added, item.id])  # each once, none lost
    assert {i["id"] for i in page["memories"]["items"] if i["tier"] == "HOT"} >= {item.id}


async def test_a_poison_item_is_parked_and_the_rest_spill(
    api: Api, poisoned: tuple[Memory, str, MemoryItem]
) -> None:
    service, tenant, item = poisoned
    for n in range(3):
        await api.data(ADD, {"input": {"sessionId": "poisoned", "content": f"healthy {n}"}})
    first = await api.data('mutation { spill(sessionId: "poisoned", count: 10) { spilledIds } }')
    assert len(first["spill"]["spilledIds"]) == 3 and item.id not in first["spill"]["spilledIds"]
    raw = await service.hot_tier.client.hget(  # type: ignore[attr-defined]
        session_keys(tenant, "poisoned").items, item.id
    )
    reason = json.loads(raw)["parked"]
    assert "createdAt" in reason and "18:00" in reason, reason
    # parked, the item is passed by: later spills of the session go on
    await api.data(ADD, {"input": {"sessionId": "poisoned", "content": "one more"}})
    again = await api.data('mutation { spill(sessionId: "poisoned") { spilledIds } }')
    assert len(again["spill"]["spilledIds"]) == 1
    assert await hot_ids(api, "poisoned") == [item.id]  # still readable (and forgettable)


@pytest.mark.parametrize(
    "poisoned",
    [{}, {"created_at": datetime(2024, 1, 1, tzinfo=UTC), "access_count": 2**64}],
    ids=["refused-by-neo4j", "refused-by-the-driver"],
    indirect=True,
)
async def test_a_value_only_the_graph_refuses_is_found_and_parked(
    api: Api, poisoned: tuple[Memory, str, MemoryItem], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without an edge check to name it, the refused item is found by halving the batch."""
    from graphmem.memory.tiers import flush as flush_module

    service, tenant, item = poisoned
    for n in range(5):
        await api.data(ADD, {"input": {"sessionId": "poisoned", "content": f"healthy {n}"}})
    monkeypatch.setattr(flush_module, "stored_problem", lambda _item: None)
    done = await api.data('mutation { spill(sessionId: "poisoned", count: 10) { spilledIds } }')
    assert len(done["spill"]["spilledIds"]) == 5
    (left,) = await service.hot_tier.items(tenant, "poisoned")
    assert left.id == item.id and left.parked and "cannot hold" in left.parked


async def test_an_add_that_fails_after_its_put_is_undone(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    service: Memory = api.app.state.service
    assert service.ingest.queue is not None

    async def down(*args: Any) -> None:
        raise Unavailable("the enrichment queue is unreachable")

    monkeypatch.setattr(service.ingest.queue, "add", down)
    body = await api.gql(ADD, {"input": {"sessionId": "undone", "content": "not acknowledged"}})
    assert code_of(body) == "UNAVAILABLE"
    assert await hot_ids(api, "undone") == []


async def test_a_time_is_kept_with_its_offset(api: Api) -> None:
    when = datetime(2024, 5, 1, 12, tzinfo=timezone(timedelta(hours=-7)))
    item = (
        await api.data(
            ADD, {"input": {"sessionId": "kept", "content": "x", "occurredAt": when.isoformat()}}
        )
    )["addMemory"]
    assert datetime.fromisoformat(item["createdAt"]).astimezone(UTC) == when.astimezone(UTC)


async def test_an_add_that_must_reach_the_graph_is_undone_when_it_cannot(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """learnPersonaTrait and remember(ENTITY) add, then spill at once: a failed spill
    answered an error and left the memory behind, so a retry stored it twice."""
    service: Memory = api.app.state.service

    async def down(*args: Any, **kwargs: Any) -> None:
        raise Unavailable("the graph store (Neo4j) is unreachable")

    monkeypatch.setattr(service.spills, "spill", down)
    body = await api.gql('mutation { learnPersonaTrait(agentId: "agent-u", trait: "terse") }')
    assert code_of(body) == "UNAVAILABLE"
    assert await hot_ids(api, "persona.agent-u") == []
    body = await api.gql(
        'mutation { remember(input: {kind: ENTITY, sessionId: "ent-u", content: "Ada Lovelace"})'
        " { memoryId } }"
    )
    assert code_of(body) == "UNAVAILABLE"
    assert await hot_ids(api, "ent-u") == []
