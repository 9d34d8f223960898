"""The MCP memory-server tools (docs/integrations.md#mcp-memory-server-tools) through the
official ``mcp`` client, over streamable HTTP and over stdio (``graphmem mcp``): the
reference server's documented behaviour (@modelcontextprotocol/server-memory), on the
tenant's graph in Neo4j."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import LiveApi, Stack, mcp_stdio_params

NINE = {
    "create_entities",
    "create_relations",
    "add_observations",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    "read_graph",
    "search_nodes",
    "open_nodes",
}


@asynccontextmanager
async def over_http(api: LiveApi, tenant: str | None = None) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers=api.headers(tenant), timeout=60)
    async with http, Client(streamable_http_client(f"{api.url}/mcp", http_client=http)) as c:
        yield c


@asynccontextmanager
async def over_stdio(api: LiveApi, stack: Stack) -> AsyncIterator[Client]:
    async with Client(mcp_stdio_params(api, stack)) as c:
        yield c


async def ok(client: Client, tool: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result


async def err(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.is_error, result.content
    error: dict[str, Any] = json.loads(result.content[0].text)["error"]  # type: ignore[union-attr]
    return error


def ent(name: str, kind: str, *obs: str) -> dict[str, Any]:
    return {"name": name, "entityType": kind, "observations": list(obs)}


def rel(a: str, b: str, kind: str) -> dict[str, str]:
    return {"from": a, "to": b, "relationType": kind}


async def reference_behaviour(c: Client) -> None:
    tools = {t.name: t for t in (await c.list_tools()).tools}
    assert NINE <= set(tools)
    assert tools["create_entities"].input_schema["required"] == ["entities"]
    assert (
        tools["read_graph"].annotations is not None
        and tools["read_graph"].annotations.read_only_hint
    )

    # create_entities: a name that exists is ignored; only the new ones come back, and
    # the text content is the created list, as the reference sends it
    first = await ok(
        c, "create_entities", {"entities": [ent("John_Smith", "person", "Speaks fluent Spanish")]}
    )
    assert json.loads(first.content[0].text) == [
        ent("John_Smith", "person", "Speaks fluent Spanish")
    ]
    again = await ok(
        c,
        "create_entities",
        {
            "entities": [
                ent("John_Smith", "robot"),
                ent("Anthropic", "organization"),
                ent("Paris", "city"),
            ]
        },
    )
    assert again.structured_content == {
        "entities": [ent("Anthropic", "organization"), ent("Paris", "city")]
    }

    # create_relations: de-duplicated on (from, to, relationType)
    made = await ok(
        c,
        "create_relations",
        {
            "relations": [
                rel("John_Smith", "Anthropic", "works_at"),
                rel("John_Smith", "Paris", "lives_in"),
            ]
        },
    )
    assert len(made.structured_content["relations"]) == 2
    dup = await ok(
        c,
        "create_relations",
        {
            "relations": [
                rel("John_Smith", "Anthropic", "works_at"),
                rel("Anthropic", "Paris", "has_office_in"),
            ]
        },
    )
    assert dup.structured_content == {"relations": [rel("Anthropic", "Paris", "has_office_in")]}

    # add_observations: only what is new, reported per entity; an unknown entity fails
    # the call and writes nothing
    added = await ok(
        c,
        "add_observations",
        {
            "observations": [
                {
                    "entityName": "John_Smith",
                    "contents": ["Speaks fluent Spanish", "Prefers morning meetings"],
                }
            ]
        },
    )
    assert added.structured_content == {
        "results": [{"entityName": "John_Smith", "addedObservations": ["Prefers morning meetings"]}]
    }
    missing = await err(
        c,
        "add_observations",
        {
            "observations": [
                {"entityName": "Paris", "contents": ["Has the Louvre"]},
                {"entityName": "Nobody", "contents": ["x"]},
            ]
        },
    )
    assert missing["code"] == "NOT_FOUND" and "Nobody" in missing["message"]

    # search_nodes: names, types and observations, ignoring case; relations touching them
    found = (await ok(c, "search_nodes", {"query": "MORNING"})).structured_content
    assert [e["name"] for e in found["entities"]] == ["John_Smith"]
    assert {(r["from"], r["to"]) for r in found["relations"]} == {
        ("John_Smith", "Anthropic"),
        ("John_Smith", "Paris"),
    }
    assert [
        e["name"]
        for e in (await ok(c, "search_nodes", {"query": "organ"})).structured_content["entities"]
    ] == ["Anthropic"]
    assert (await ok(c, "search_nodes", {"query": "Louvre"})).structured_content["entities"] == []

    # open_nodes: the named entities (unknown names left out) and their relations
    opened = (await ok(c, "open_nodes", {"names": ["Paris", "Atlantis"]})).structured_content
    assert opened["entities"] == [ent("Paris", "city")]
    assert len(opened["relations"]) == 2

    # deletions: observations and relations that are absent are ignored
    done = await ok(
        c,
        "delete_observations",
        {
            "deletions": [
                {
                    "entityName": "John_Smith",
                    "observations": ["Speaks fluent Spanish", "never said"],
                },
                {"entityName": "Atlantis", "observations": ["x"]},
            ]
        },
    )
    assert done.structured_content == {
        "success": True,
        "message": "Observations deleted successfully",
    }
    assert done.content[0].text == "Observations deleted successfully"
    await ok(
        c,
        "delete_relations",
        {"relations": [rel("Anthropic", "Paris", "has_office_in"), rel("Paris", "Anthropic", "x")]},
    )

    # delete_entities cascades to the entity's relations
    await ok(c, "delete_entities", {"entityNames": ["Anthropic", "Atlantis"]})
    graph = (await ok(c, "read_graph", {})).structured_content
    assert graph["entities"] == [
        ent("John_Smith", "person", "Prefers morning meetings"),
        ent("Paris", "city"),
    ]
    assert graph["relations"] == [rel("John_Smith", "Paris", "lives_in")]
    assert graph["truncated"] is False and graph["nextCursor"] is None


async def test_the_reference_behaviour_over_streamable_http(live_api: LiveApi) -> None:
    async with over_http(live_api) as c:
        await reference_behaviour(c)


async def test_the_reference_behaviour_over_stdio_on_the_same_graph(
    live_api: LiveApi, stack: Stack
) -> None:
    async with over_stdio(live_api, stack) as c:
        await reference_behaviour(c)
    # graphmem mcp wrote into the key's tenant: the HTTP server sees the same graph
    async with over_http(live_api) as c:
        names = [e["name"] for e in (await ok(c, "read_graph", {})).structured_content["entities"]]
        assert names == ["John_Smith", "Paris"]


async def test_read_graph_pages_with_a_cursor(live_api: LiveApi) -> None:
    async with over_http(live_api) as c:
        await ok(c, "create_entities", {"entities": [ent(f"e{n:02}", "thing") for n in range(25)]})
        await ok(
            c,
            "create_relations",
            {"relations": [rel(f"e{n:02}", "e00", "points_to") for n in range(1, 25)]},
        )
        seen: list[str] = []
        relations = 0
        cursor = None
        while True:
            args = {"limit": 10} | ({"cursor": cursor} if cursor else {})
            page = (await ok(c, "read_graph", args)).structured_content
            seen += [e["name"] for e in page["entities"]]
            relations += len(page["relations"])
            cursor = page["nextCursor"]
            assert page["truncated"] is (cursor is not None)
            if cursor is None:
                break
        assert seen == [f"e{n:02}" for n in range(25)] and relations == 24


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("create_entities", {"entities": [ent("", "person")]}, "BAD_INPUT"),
        ("create_entities", {"entities": [ent("x" * 257, "person")]}, "BAD_INPUT"),
        ("create_entities", {"entities": [ent(f"n{i}", "t") for i in range(101)]}, "BAD_INPUT"),
        ("create_entities", {"entities": [ent("a", "t", "o" * 2001)]}, "BAD_INPUT"),
        ("create_entities", {"entities": "not a list"}, "BAD_INPUT"),
        ("create_entities", {}, "BAD_INPUT"),
        ("create_relations", {"relations": [rel("a", "Ghost", "knows")]}, "NOT_FOUND"),
        ("create_relations", {"relations": [{"from": "a", "to": "b"}]}, "BAD_INPUT"),
        ("add_observations", {"observations": [{"entityName": "a", "contents": [7]}]}, "BAD_INPUT"),
        ("delete_entities", {"entityNames": [None]}, "BAD_INPUT"),
        ("search_nodes", {"query": "q" * 257}, "BAD_INPUT"),
        ("read_graph", {"limit": 0}, "BAD_INPUT"),
        ("read_graph", {"limit": True}, "BAD_INPUT"),
        ("open_nodes", {"names": ["n"] * 101}, "BAD_INPUT"),
    ],
)
async def test_bad_calls_are_typed_errors_and_change_nothing(
    live_api: LiveApi, tool: str, args: dict[str, Any], code: str
) -> None:
    async with over_http(live_api) as c:
        await ok(c, "create_entities", {"entities": [ent("a", "thing", "kept")]})
        error = await err(c, tool, args)
        assert error["code"] == code, error
        assert "Traceback" not in error["message"]
        graph = (await ok(c, "read_graph", {})).structured_content
        assert graph == {
            "entities": [ent("a", "thing", "kept")],
            "relations": [],
            "truncated": False,
            "nextCursor": None,
        }
