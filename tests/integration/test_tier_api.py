"""The tiers end to end (docs/concepts.md#tiers): hot memory spills past its limit,
recall finds what was spilled, and what is recalled often comes back to the hot tier;
through GraphQL and through MCP (streamable HTTP and stdio)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import LiveApi, Stack, mcp_stdio_params

ADD = "mutation($s: ID!, $c: String!, $t: MemoryType!) { addMemory(input: {sessionId: $s, content: $c, type: $t}) { id } }"  # noqa: E501
SPILL = "mutation($s: ID!) { spill(sessionId: $s) { spilledCount } }"
RECALL = "mutation($s: ID!, $q: String!) { recall(input: {sessionId: $s, query: $q}) { items { content } promoted } }"  # noqa: E501
STATUS = "query($s: ID!) { memoryStatus(sessionId: $s) { hot { tokens limit } cold { items } } }"
HOT = "query($s: ID!) { hot(sessionId: $s) { content } }"
CONFIGURE = "mutation($s: ID!) { configureSession(sessionId: $s, config: {hotTokenLimit: 50}) { hotTokenLimit } }"  # noqa: E501

Call = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


class GraphQLDriver:
    def __init__(self, api: LiveApi) -> None:
        self.api = api

    async def add(self, session: str, content: str, kind: str) -> None:
        await self.api.gql(ADD, {"s": session, "c": content, "t": kind.upper()})

    async def spill(self, session: str) -> None:
        await self.api.gql(SPILL, {"s": session})

    async def recall(self, session: str, query: str) -> list[str]:
        data = await self.api.gql(RECALL, {"s": session, "q": query})
        return [i["content"] for i in data["recall"]["items"]]

    async def status(self, session: str) -> tuple[int, int, int]:
        s = (await self.api.gql(STATUS, {"s": session}))["memoryStatus"]
        return s["hot"]["tokens"], s["hot"]["limit"], s["cold"]["items"]


class McpDriver:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def _call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await self.client.call_tool(tool, args)
        assert not result.is_error, result.content
        data: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
        return data

    async def add(self, session: str, content: str, kind: str) -> None:
        await self._call("memory_add", {"sessionId": session, "content": content, "type": kind})

    async def spill(self, session: str) -> None:
        await self._call("memory_spill", {"sessionId": session})

    async def recall(self, session: str, query: str) -> list[str]:
        data = await self._call("memory_recall", {"sessionId": session, "query": query})
        return [i["content"] for i in data["items"]]

    async def status(self, session: str) -> tuple[int, int, int]:
        s = await self._call("memory_status", {"sessionId": session})
        return s["hot"]["tokens"], s["hot"]["limit"], s["cold"]["items"]


@asynccontextmanager
async def mcp_http(api: LiveApi) -> AsyncIterator[McpDriver]:
    http = httpx2.AsyncClient(headers=api.headers(), timeout=60)
    async with http, Client(streamable_http_client(f"{api.url}/mcp", http_client=http)) as c:
        yield McpDriver(c)


@asynccontextmanager
async def mcp_stdio(api: LiveApi, stack: Stack) -> AsyncIterator[McpDriver]:
    async with Client(mcp_stdio_params(api, stack)) as c:
        yield McpDriver(c)


async def spill_recall_promote(driver: GraphQLDriver | McpDriver, api: LiveApi) -> None:
    # 1. should auto-spill when hot memory exceeds limit
    await api.gql(CONFIGURE, {"s": "session-1"})
    for i in range(20):
        await driver.add("session-1", f"Message {i} with some content", "message")
    tokens, limit, cold = await driver.status("session-1")
    assert tokens <= limit == 50
    assert cold > 0

    # 2. should recall from cold storage
    await driver.add("session-2", "The budget is $50K", "fact")
    await driver.spill("session-2")
    assert "$50K" in (await driver.recall("session-2", "what was the budget?"))[0]

    # 3. should promote frequently accessed items
    await driver.add("session-3", "Important fact", "fact")
    await driver.spill("session-3")
    for _ in range(5):
        await driver.recall("session-3", "important fact")
    hot = (await api.gql(HOT, {"s": "session-3"}))["hot"]
    assert any(i["content"] == "Important fact" for i in hot)


async def test_spill_recall_and_promote_via_graphql(live_api: LiveApi) -> None:
    await spill_recall_promote(GraphQLDriver(live_api), live_api)


async def test_spill_recall_and_promote_via_mcp_streamable_http(live_api: LiveApi) -> None:
    async with mcp_http(live_api) as driver:
        tools = {t.name: t for t in (await driver.client.list_tools()).tools}
        tier = {"memory_add", "memory_recall", "memory_spill", "memory_status"}
        # beside them, the nine memory-server tools (test_mcp_memory_server.py)
        assert tier < set(tools) and len(tools) == len(tier) + 9
        assert tools["memory_add"].input_schema["required"] == ["sessionId", "content", "type"]
        assert tools["memory_recall"].input_schema["properties"]["limit"] == {
            "type": "number",
            "default": 3,
        }
        await spill_recall_promote(driver, live_api)


async def test_spill_recall_and_promote_via_mcp_stdio(live_api: LiveApi, stack: Stack) -> None:
    async with mcp_stdio(live_api, stack) as driver:
        await spill_recall_promote(driver, live_api)


async def test_mcp_needs_the_key_and_reports_typed_errors(live_api: LiveApi) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            f"{live_api.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        )
    assert response.status_code == 401
    assert response.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    async with mcp_http(live_api) as driver:
        result = await driver.client.call_tool(
            "memory_add", {"sessionId": "s", "content": "", "type": "fact"}
        )
        assert result.is_error
        assert json.loads(result.content[0].text)["error"]["code"] == "BAD_INPUT"  # type: ignore[union-attr]
        result = await driver.client.call_tool(
            "memory_recall", {"sessionId": "s", "query": "q", "limit": 0}
        )
        assert json.loads(result.content[0].text)["error"]["code"] == "BAD_INPUT"  # type: ignore[union-attr]


@pytest.mark.parametrize("tool", ["memory_status"])
async def test_mcp_tenants_are_isolated(live_api: LiveApi, tool: str) -> None:
    a, b = list(live_api.keys)
    await live_api.gql(ADD, {"s": "shared", "c": "A's note", "t": "FACT"}, tenant=a)
    http = httpx2.AsyncClient(headers=live_api.headers(b), timeout=60)
    async with http, Client(streamable_http_client(f"{live_api.url}/mcp", http_client=http)) as c:
        result = await c.call_tool(tool, {"sessionId": "shared"})
        assert json.loads(result.content[0].text)["hot"]["items"] == 0  # type: ignore[union-attr]


async def test_mcp_recall_reads_at_a_moment(live_api: LiveApi) -> None:
    """``memory_recall`` takes the reads' ``asOf``, ``validAt`` and ``includeHistory``:
    before a memory was recorded it is not there; a retracted one only with history."""
    session = f"moment-{uuid.uuid4().hex[:8]}"
    before = datetime.now(UTC).isoformat()
    await asyncio.sleep(0.05)
    async with mcp_http(live_api) as driver:
        await driver.add(session, "The offsite budget is $50K", "fact")
        wrong = await driver._call(
            "memory_add",
            {"sessionId": session, "content": "The offsite budget is $90K", "type": "fact"},
        )
        await driver.spill(session)
        await live_api.gql(
            "mutation($i: [ID!]!) { retract(itemIds: $i) { changedIds } }", {"i": [wrong["id"]]}
        )

        async def recall(**at: Any) -> list[str]:
            args = {
                "sessionId": session,
                "query": "offsite budget",
                "limit": 5,
                "autoPromote": False,
            }
            data = await driver._call("memory_recall", args | at)
            return sorted(i["content"] for i in data["items"])

        assert await recall() == ["The offsite budget is $50K"]
        assert await recall(asOf=before) == []
        assert await recall(includeHistory=True) == [
            "The offsite budget is $50K",
            "The offsite budget is $90K",
        ]
        assert await recall(validAt="2001-01-01T00:00:00+00:00") == []
        for bad in (
            {"asOf": "yesterday"},
            {"validAt": "2024-01-01T00:00:00+23:59"},
            {"includeHistory": "yes"},
        ):
            result = await driver.client.call_tool(
                "memory_recall", {"sessionId": session, "query": "q"} | bad
            )
            assert result.is_error
            assert json.loads(result.content[0].text)["error"]["code"] == "BAD_INPUT"  # type: ignore[union-attr]


async def test_mcp_tools_that_read_memories_take_the_moment(
    live_api: LiveApi, stack: Stack
) -> None:
    """Every graphmem tool that reads memories takes the reads' moment, over both
    transports; memory_status (the tiers now) and the nine memory-server tools (the
    reference's shapes) take none (docs/integrations.md)."""
    moment = {"asOf", "validAt", "includeHistory"}
    async with mcp_http(live_api) as driver:
        tools = {t.name: t for t in (await driver.client.list_tools()).tools}
    with_moment = {n for n, t in tools.items() if moment <= set(t.input_schema["properties"])}
    assert with_moment == {"memory_recall"}
    assert all(
        not moment & set(t.input_schema["properties"])
        for t in tools.values()
        if t.name not in with_moment
    )
    session = f"moment-{uuid.uuid4().hex[:8]}"
    before = datetime.now(UTC).isoformat()
    await asyncio.sleep(0.05)
    async with mcp_stdio(live_api, stack) as driver:
        await driver.add(session, "The offsite is in Lisbon", "fact")
        await driver.spill(session)
        args = {"sessionId": session, "query": "offsite", "autoPromote": False}
        now = await driver._call("memory_recall", args)
        assert [i["content"] for i in now["items"]] == ["The offsite is in Lisbon"]
        assert (await driver._call("memory_recall", args | {"asOf": before}))["items"] == []
        assert (await driver._call("memory_recall", args | {"validAt": before}))["items"] == []
