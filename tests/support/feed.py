"""The change feed over graphql-transport-ws, as a subscriber sees it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import websockets
from websockets.typing import Subprotocol

SUBSCRIBE = """subscription($f: EventFilter) { memoryEvents(filter: $f) {
  kind sessionId itemIds data } }"""


@asynccontextmanager
async def subscription(
    port: int, key: str | None, variables: dict[str, Any] | None = None
) -> AsyncIterator[websockets.ClientConnection]:
    async with websockets.connect(
        f"ws://127.0.0.1:{port}/graphql", subprotocols=[Subprotocol("graphql-transport-ws")]
    ) as ws:
        payload = {"Authorization": f"Bearer {key}"} if key else {}
        await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
        ack = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert ack["type"] == "connection_ack", ack
        await ws.send(
            json.dumps(
                {
                    "id": "1",
                    "type": "subscribe",
                    "payload": {"query": SUBSCRIBE, "variables": variables or {}},
                }
            )
        )
        await asyncio.sleep(0.5)  # let the server subscribe to the tenant's channel
        yield ws


async def next_event(ws: websockets.ClientConnection, wait: float = 10) -> dict[str, Any]:
    message = json.loads(await asyncio.wait_for(ws.recv(), wait))
    assert message["type"] == "next", message
    event: dict[str, Any] = message["payload"]["data"]["memoryEvents"]
    return event
