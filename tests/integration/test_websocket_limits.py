"""The change feed's WebSocket under the same limits as an HTTP request: every message
within the body limit (refused before it is decoded), the body's decoding rules, the
cost guard, and a bound on what one connection (and one tenant) may hold. Against a real
uvicorn server, with the options `graphmem serve` gives it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import uvicorn
import websockets

from graphmem.api.http.app import create_app
from graphmem.api.http.server import uvicorn_options
from tests.conftest import Stack, free_port, new_tenant
from tests.support.documents import fragment_bomb

SUBSCRIBE = "subscription($f: EventFilter) { memoryEvents(filter: $f) { kind itemIds } }"
TOO_BIG = 1009  # RFC 6455: message too big


@asynccontextmanager
async def serving(
    stack: Stack, uvicorn_overrides: dict[str, Any] | None = None, **settings: Any
) -> AsyncIterator[tuple[str, str]]:
    """A uvicorn server on its own port with ``graphmem serve``'s options; the key of its
    one tenant is yielded with its URL."""
    key = f"key-{uuid.uuid4().hex}"
    values = stack.settings(api_keys={key: new_tenant()}, maintenance_enabled=False, **settings)
    options = uvicorn_options(values) | {
        "port": free_port(),
        "log_level": "warning",
        "lifespan": "on",
        **(uvicorn_overrides or {}),
    }
    server = uvicorn.Server(uvicorn.Config(create_app(values), **options))
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done(), "uvicorn exited during start-up"
        await asyncio.sleep(0.05)
    try:
        yield f"ws://127.0.0.1:{options['port']}/graphql", key
    finally:
        server.should_exit = True
        await task


@asynccontextmanager
async def connected(url: str, key: str | None) -> AsyncIterator[websockets.ClientConnection]:
    """A graphql-transport-ws connection, acknowledged when ``key`` is given."""
    protocols = [websockets.Subprotocol("graphql-transport-ws")]
    async with websockets.connect(url, subprotocols=protocols, max_size=None) as ws:
        if key is not None:
            init = {"type": "connection_init", "payload": {"Authorization": f"Bearer {key}"}}
            await ws.send(json.dumps(init))
            ack = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert ack["type"] == "connection_ack", ack
        yield ws


def subscribe(op: str, query: str = SUBSCRIBE, variables: dict[str, Any] | None = None) -> str:
    payload = {"query": query, "variables": variables or {}}
    return json.dumps({"id": op, "type": "subscribe", "payload": payload})


async def closed_with(ws: websockets.ClientConnection) -> tuple[int, str]:
    """The close code and reason the server ends the connection with."""
    with pytest.raises(websockets.ConnectionClosed) as closed:
        while True:
            await asyncio.wait_for(ws.recv(), 10)
    assert closed.value.rcvd is not None, "the server sent no close frame"
    return closed.value.rcvd.code, closed.value.rcvd.reason


async def answer(ws: websockets.ClientConnection, op: str) -> dict[str, Any]:
    """The next message about operation ``op``."""
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if message.get("id") == op:
            return dict(message)


async def test_a_message_over_the_body_limit_is_refused_before_it_is_decoded(
    stack: Stack,
) -> None:
    # uvicorn's own frame limit at its default (16 MiB): the app refuses by itself
    async with serving(stack, {"ws_max_size": 16 * 2**20}, max_body_bytes=100_000) as (url, key):
        # a well-formed subscribe of 2 MB (the finding sent 15 MB, and it was parsed)
        async with connected(url, key) as ws:
            await ws.send(subscribe("1", variables={"f": {"sessionId": "s" * 2_000_000}}))
            code, reason = await closed_with(ws)
        assert code == TOO_BIG and "100000 bytes" in reason, (code, reason)
        # not even decoded: malformed JSON would have closed with 4400
        async with connected(url, key) as ws:
            await ws.send("[" * 150_000)
            assert (await closed_with(ws))[0] == TOO_BIG
        # before the key is checked, too: connection_init is a message like any other
        async with connected(url, None) as ws:
            await ws.send(json.dumps({"type": "connection_init", "payload": {"x": "y" * 200_000}}))
            assert (await closed_with(ws))[0] == TOO_BIG
        # bytes count, not characters; binary messages too
        async with connected(url, key) as ws:
            await ws.send(subscribe("1", variables={"f": {"sessionId": "é" * 60_000}}))
            assert (await closed_with(ws))[0] == TOO_BIG
        async with connected(url, key) as ws:
            await ws.send(b"x" * 100_001)
            assert (await closed_with(ws))[0] == TOO_BIG
        # a message within the limit still works
        async with connected(url, key) as ws:
            await ws.send(json.dumps({"type": "ping"}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == {"type": "pong"}


async def test_uvicorn_refuses_frames_past_the_body_limit(stack: Stack) -> None:
    assert uvicorn_options(stack.settings(max_body_bytes=123_456))["ws_max_size"] == 123_456
    async with serving(stack, max_body_bytes=50_000) as (url, key):
        async with connected(url, key) as ws:
            await ws.send("x" * 3_000_000)
            assert (await closed_with(ws))[0] == TOO_BIG


@pytest.mark.parametrize(
    "message",
    [
        '{"type": "ping", "payload": {"n": NaN}}',
        '{"type": "ping", "payload": {"s": "\\ud800"}}',
        '{"type": "ping", "payload": {"s": "a\\u0000b"}}',
        '{"type": "ping", "payload": ' + "[" * 100 + "]" * 100 + "}",
        '"ping"',
    ],
    ids=["nan", "lone-surrogate", "nul", "too-deep", "not-an-object"],
)
async def test_messages_follow_the_request_body_rules(stack: Stack, message: str) -> None:
    async with serving(stack) as (url, key):
        async with connected(url, key) as ws:
            await ws.send(message)
            code, _ = await closed_with(ws)
    assert code == 4400


async def test_a_subscription_goes_through_the_cost_guard(stack: Stack) -> None:
    async with serving(stack) as (url, key):
        async with connected(url, key) as ws:
            bomb = fragment_bomb(30).replace("query {", "subscription {", 1)
            bomb = bomb.replace("on Query", "on Subscription")
            await ws.send(subscribe("1", bomb))
            error = await answer(ws, "1")
            assert error["type"] == "error", error
            assert error["payload"][0]["extensions"]["code"] == "BAD_INPUT"
            assert "more than 500 fields" in error["payload"][0]["message"]
            deep = "subscription { memoryEvents { " + "data " * 1 + "} }"
            await ws.send(subscribe("2", deep.replace("data", "x" * 30_000)))
            error = await answer(ws, "2")
            assert error["type"] == "error" and error["payload"][0]["extensions"]["code"]
            # the connection still serves a subscription within the limits
            await ws.send(subscribe("3"))
            await ws.send(json.dumps({"type": "ping"}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == {"type": "pong"}


async def test_queries_and_mutations_go_over_http_only(stack: Stack) -> None:
    async with serving(stack) as (url, key):
        async with connected(url, key) as ws:
            add = 'mutation { addMemory(input: {sessionId: "ws", content: "over ws"}) { id } }'
            await ws.send(subscribe("1", add))
            refused = await answer(ws, "1")
            assert refused["type"] == "error", refused
            assert refused["payload"][0]["extensions"]["code"] == "BAD_INPUT"
            await ws.send(subscribe("2", '{ hot(sessionId: "ws") { id } }'))
            assert (await answer(ws, "2"))["type"] == "error"


async def accepted(ws: websockets.ClientConnection, *ops: str) -> None:
    """Subscribe ``ops``; a refusal would arrive before the pong that follows them."""
    for op in ops:
        await ws.send(subscribe(op))
    await ws.send(json.dumps({"type": "ping"}))
    assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == {"type": "pong"}


async def test_subscriptions_per_connection_and_per_tenant_are_bounded(stack: Stack) -> None:
    async with serving(stack, ws_max_subscriptions=2, tenant_max_subscriptions=3) as (url, key):
        async with connected(url, key) as ws:
            # completed ones give their places back, however soon they are completed
            # (while one's Redis subscription is still being closed it holds its place)
            for n in range(20):
                await ws.send(subscribe(f"x{n}"))
                await asyncio.sleep(n * 0.001)
                await ws.send(json.dumps({"id": f"x{n}", "type": "complete"}))
            await asyncio.sleep(1)
            with contextlib.suppress(TimeoutError):
                while True:  # the refusals of those that found no place
                    await asyncio.wait_for(ws.recv(), 0.2)
            await accepted(ws, "1", "2")
            await ws.send(subscribe("3"))
            refused = await answer(ws, "3")
            assert refused["type"] == "error", refused
            assert refused["payload"][0]["extensions"]["code"] == "RATE_LIMITED"
            assert "2 subscriptions" in refused["payload"][0]["message"]
            await ws.send(json.dumps({"id": "1", "type": "complete"}))
            await asyncio.sleep(0.3)
            await accepted(ws, "4")
            # the tenant's third on another connection, and no fourth
            async with connected(url, key) as other:
                await asyncio.sleep(0.3)
                await accepted(other, "a")
                await other.send(subscribe("b"))
                refused = await answer(other, "b")
                assert refused["type"] == "error", refused
                assert refused["payload"][0]["extensions"]["code"] == "RATE_LIMITED"
                assert "3 subscriptions" in refused["payload"][0]["message"]
        # closed connections give their places back
        await asyncio.sleep(0.5)
        async with connected(url, key) as ws, connected(url, key) as other:
            await accepted(ws, "1", "2")
            await accepted(other, "3")


async def test_the_older_graphql_ws_protocol_is_refused(stack: Stack) -> None:
    """It skips messages it cannot decode and has no deadline for connection_init."""
    async with serving(stack) as (url, _):
        async with websockets.connect(
            url, subprotocols=[websockets.Subprotocol("graphql-ws")]
        ) as ws:
            assert (await closed_with(ws))[0] == 4406
