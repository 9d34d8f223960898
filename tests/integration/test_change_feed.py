"""The change feed: GraphQL subscriptions over graphql-transport-ws, fanned out through Redis
pub/sub, so an event produced through one API process reaches subscribers of another."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websockets

from tests.conftest import Stack, free_port, new_tenant, stack_env, start_server
from tests.support.feed import next_event, subscription


@pytest.fixture
def two_replicas(stack: Stack) -> Iterator[tuple[list[int], dict[str, str]]]:
    tenants = [new_tenant(), new_tenant()]
    keys = {t: f"key-{uuid.uuid4().hex}" for t in tenants}
    env = stack_env(
        stack,
        GRAPHMEM_API_KEYS=",".join(f"{k}={t}" for t, k in keys.items()),
        GRAPHMEM_MAINTENANCE_ENABLED="false",
    )
    ports = [free_port(), free_port()]
    procs = [start_server(env, port) for port in ports]
    try:
        yield ports, keys
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=30)


async def gql(port: int, key: str, query: str, variables: dict[str, Any] | None = None) -> dict:
    async with httpx.AsyncClient(timeout=60) as client:
        body = (
            await client.post(
                f"http://127.0.0.1:{port}/graphql",
                json={"query": query, "variables": variables or {}},
                headers={"Authorization": f"Bearer {key}"},
            )
        ).json()
    assert "errors" not in body, body
    return dict(body["data"])


async def test_an_event_from_one_replica_reaches_a_subscriber_of_the_other(
    two_replicas: tuple[list[int], dict[str, str]],
) -> None:
    (a, b), keys = two_replicas
    mine, other = list(keys)
    async with subscription(b, keys[mine]) as ws, subscription(b, keys[other]) as stranger:
        added = await gql(
            a,
            keys[mine],
            'mutation { addMemory(input: {sessionId: "s", content: "the budget is $50K"}) { id } }',
        )
        event = await next_event(ws)
        assert event["kind"] == "ADDED" and event["sessionId"] == "s"
        assert event["itemIds"] == [added["addMemory"]["id"]]
        await gql(a, keys[mine], 'mutation { spill(sessionId: "s") { spilledCount } }')
        spilled = await next_event(ws)
        assert spilled["kind"] == "SPILLED" and spilled["data"]["cold"] == event["itemIds"]
        # the other tenant's subscriber heard nothing
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(stranger.recv(), 2)


async def test_filters_and_the_other_event_kinds(
    two_replicas: tuple[list[int], dict[str, str]],
) -> None:
    (a, b), keys = two_replicas
    key = next(iter(keys.values()))
    only = {"f": {"kinds": ["TASK_TRANSFERRED", "FORGOTTEN", "RECALLED"]}}
    async with subscription(b, key, only) as ws:
        item = (
            await gql(
                a,
                key,
                'mutation { addMemory(input: {sessionId: "t", content: "Important fact"}) { id } }',
            )
        )["addMemory"]["id"]
        await gql(a, key, 'mutation { spill(sessionId: "t") { spilledCount } }')
        await gql(
            a,
            key,
            'mutation { recall(input: {sessionId: "t", query: "important fact", '
            "autoPromote: false}) { promoted } }",
        )
        assert (await next_event(ws))["kind"] == "RECALLED"  # ADDED, SPILLED filtered out
        task = (
            await gql(a, key, 'mutation { createTask(description: "x", owner: "one") { id } }')
        )["createTask"]["id"]
        await gql(
            a,
            key,
            'mutation($t: ID!) { transferTask(taskId: $t, fromOwner: "one", '
            'toOwner: "two", generation: 1) { generation } }',
            {"t": task},
        )
        moved = await next_event(ws)
        assert moved["kind"] == "TASK_TRANSFERRED"
        assert moved["data"]["taskId"] == task and moved["data"]["toOwner"] == "two"
        await gql(a, key, "mutation($i: ID!) { forget(itemId: $i) }", {"i": item})
        gone = await next_event(ws)
        assert gone["kind"] == "FORGOTTEN" and gone["itemIds"] == [item]


async def test_a_subscription_needs_a_key(two_replicas: tuple[list[int], dict[str, str]]) -> None:
    (_, b), _ = two_replicas
    async with websockets.connect(
        f"ws://127.0.0.1:{b}/graphql", subprotocols=["graphql-transport-ws"]
    ) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4403
    # a wrong key in the header is refused at the handshake
    with pytest.raises(websockets.InvalidStatus):
        async with websockets.connect(
            f"ws://127.0.0.1:{b}/graphql",
            subprotocols=["graphql-transport-ws"],
            additional_headers={"Authorization": "Bearer wrong-key"},
        ):
            pass


async def test_promotion_and_entity_merge_events(
    two_replicas: tuple[list[int], dict[str, str]],
) -> None:
    (a, b), keys = two_replicas
    key = next(iter(keys.values()))
    async with subscription(b, key, {"f": {"kinds": ["PROMOTED", "ENTITY_MERGED"]}}) as ws:
        item = (
            await gql(
                a,
                key,
                'mutation { addMemory(input: {sessionId: "m", content: '
                '"Dinner at Le Chat Noir in Paris near the Eiffel Tower."}) '
                "{ id } }",
            )
        )["addMemory"]["id"]
        await gql(a, key, 'mutation { spill(sessionId: "m") { spilledCount } }')
        await gql(a, key, "mutation($i: ID!) { promote(itemId: $i) { tier } }", {"i": item})
        promoted = await next_event(ws)
        assert promoted["kind"] == "PROMOTED" and promoted["itemIds"] == [item]
        merged = await gql(
            a,
            key,
            'mutation { mergeEntities(sourceId: "PLACE|eiffel tower", '
            'targetId: "PLACE|paris") { mergeId } }',
        )
        event = await next_event(ws)
        assert event["kind"] == "ENTITY_MERGED"
        assert event["data"]["mergeId"] == merged["mergeEntities"]["mergeId"]
        assert event["data"]["entityIds"] == ["PLACE|eiffel tower", "PLACE|paris"]
