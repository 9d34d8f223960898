"""The input and output schemas of the MCP memory-server tools (``mcp_graph.py`` runs
them): the reference server's (@modelcontextprotocol/server-memory) as its zod
definitions publish them, with its titles, descriptions and hints, plus ``read_graph``'s
paging and the ``truncated`` flag of the reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mcp.types as types

from graphmem.memory.entities import graph as kg

_STRING = {"type": "string"}
_STRINGS = {"type": "array", "items": _STRING}
_ENTITY = {
    "type": "object",
    "properties": {
        "name": {**_STRING, "description": "The name of the entity"},
        "entityType": {**_STRING, "description": "The type of the entity"},
        "observations": {
            **_STRINGS,
            "description": "An array of observation contents associated with the entity",
        },
    },
    "required": ["name", "entityType", "observations"],
}
_RELATION = {
    "type": "object",
    "properties": {
        "from": {**_STRING, "description": "The name of the entity where the relation starts"},
        "to": {**_STRING, "description": "The name of the entity where the relation ends"},
        "relationType": {**_STRING, "description": "The type of the relation"},
    },
    "required": ["from", "to", "relationType"],
}
_DONE = {
    "type": "object",
    "properties": {"success": {"type": "boolean"}, "message": _STRING},
    "required": ["success", "message"],
}
_GRAPH = {
    "type": "object",
    "properties": {
        "entities": {"type": "array", "items": _ENTITY},
        "relations": {"type": "array", "items": _RELATION},
        "truncated": {
            "type": "boolean",
            "description": "true when a bound cut the answer (read_graph: more pages)",
        },
        "nextCursor": {
            "type": ["string", "null"],
            "description": "read_graph: give it as cursor to read the next page",
        },
    },
    "required": ["entities", "relations"],
}


def _object(properties: dict[str, Any], required: Sequence[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


def _hints(read_only: bool, destructive: bool, idempotent: bool) -> types.ToolAnnotations:
    return types.ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


def _tool(
    name: str,
    title: str,
    description: str,
    inputs: dict[str, Any],
    outputs: dict[str, Any],
    hints: types.ToolAnnotations,
) -> types.Tool:
    return types.Tool(
        name=name,
        title=title,
        description=description,
        input_schema=inputs,
        output_schema=outputs,
        annotations=hints,
    )


_WRITES, _DELETES, _READS = (
    _hints(False, False, False),
    _hints(False, True, True),
    _hints(True, False, True),
)

TOOLS = [
    _tool(
        "create_entities",
        "Create Entities",
        "Create multiple new entities in the knowledge graph",
        _object({"entities": {"type": "array", "items": _ENTITY}}, ["entities"]),
        _object({"entities": {"type": "array", "items": _ENTITY}}, ["entities"]),
        _WRITES,
    ),
    _tool(
        "create_relations",
        "Create Relations",
        "Create multiple new relations between entities in the knowledge graph. "
        "Relations should be in active voice",
        _object({"relations": {"type": "array", "items": _RELATION}}, ["relations"]),
        _object({"relations": {"type": "array", "items": _RELATION}}, ["relations"]),
        _WRITES,
    ),
    _tool(
        "add_observations",
        "Add Observations",
        "Add new observations to existing entities in the knowledge graph",
        _object(
            {
                "observations": {
                    "type": "array",
                    "items": _object(
                        {
                            "entityName": {
                                **_STRING,
                                "description": "The name of the entity to add the observations to",
                            },
                            "contents": {
                                **_STRINGS,
                                "description": "An array of observation contents to add",
                            },
                        },
                        ["entityName", "contents"],
                    ),
                }
            },
            ["observations"],
        ),
        _object(
            {
                "results": {
                    "type": "array",
                    "items": _object(
                        {"entityName": _STRING, "addedObservations": _STRINGS},
                        ["entityName", "addedObservations"],
                    ),
                }
            },
            ["results"],
        ),
        _WRITES,
    ),
    _tool(
        "delete_entities",
        "Delete Entities",
        "Delete multiple entities and their associated relations from the knowledge graph",
        _object(
            {"entityNames": {**_STRINGS, "description": "An array of entity names to delete"}},
            ["entityNames"],
        ),
        _DONE,
        _DELETES,
    ),
    _tool(
        "delete_observations",
        "Delete Observations",
        "Delete specific observations from entities in the knowledge graph",
        _object(
            {
                "deletions": {
                    "type": "array",
                    "items": _object(
                        {
                            "entityName": {
                                **_STRING,
                                "description": "The name of the entity containing the observations",
                            },
                            "observations": {
                                **_STRINGS,
                                "description": "An array of observations to delete",
                            },
                        },
                        ["entityName", "observations"],
                    ),
                }
            },
            ["deletions"],
        ),
        _DONE,
        _DELETES,
    ),
    _tool(
        "delete_relations",
        "Delete Relations",
        "Delete multiple relations from the knowledge graph",
        _object(
            {
                "relations": {
                    "type": "array",
                    "items": _RELATION,
                    "description": "An array of relations to delete",
                }
            },
            ["relations"],
        ),
        _DONE,
        _DELETES,
    ),
    _tool(
        "read_graph",
        "Read Graph",
        f"Read the entire knowledge graph, a page at a time: up to {kg.PAGE_DEFAULT} entities "
        "(by name) with the relations that start at them; when truncated, call again with "
        "cursor set to nextCursor",
        _object(
            {
                "cursor": {**_STRING, "description": "nextCursor of the previous page"},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": kg.PAGE_MAX,
                    "default": kg.PAGE_DEFAULT,
                    "description": "entities per page",
                },
            },
            [],
        ),
        _GRAPH,
        _READS,
    ),
    _tool(
        "search_nodes",
        "Search Nodes",
        "Search for nodes in the knowledge graph based on a query",
        _object(
            {
                "query": {
                    **_STRING,
                    "description": "The search query to match against entity names, types, "
                    "and observation content",
                }
            },
            ["query"],
        ),
        _GRAPH,
        _READS,
    ),
    _tool(
        "open_nodes",
        "Open Nodes",
        "Open specific nodes in the knowledge graph by their names",
        _object(
            {"names": {**_STRINGS, "description": "An array of entity names to retrieve"}},
            ["names"],
        ),
        _GRAPH,
        _READS,
    ),
]

NAMES = frozenset(t.name for t in TOOLS)
#: the tools that scan the tenant's graph: they take a slot of the expensive admission
EXPENSIVE = frozenset({"read_graph", "search_nodes"})
