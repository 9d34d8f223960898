"""The MCP memory-server tools: the nine tools of the reference knowledge-graph server
``@modelcontextprotocol/server-memory`` (create_entities, create_relations,
add_observations, delete_entities, delete_observations, delete_relations, read_graph,
search_nodes, open_nodes) with its argument and result shapes, on the tenant's knowledge
graph (``graphmem.memory.entities.graph``), served beside the tier tools of ``mcp.py``.

An agent configured for the reference server switches by changing only the server
command or URL (docs/integrations.md#mcp-memory-server-tools). What graphmem adds: bounds
(BAD_INPUT), NOT_FOUND for a relation to an unknown entity, and read_graph in pages
(``cursor``, ``limit``, ``truncated``, ``nextCursor``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import mcp.types as types
from pydantic import TypeAdapter, ValidationError

from graphmem.domain.knowledge import KGEntity, KGRelation, KGSubgraph
from graphmem.errors import BadInput, Unavailable
from graphmem.memory import Memory
from graphmem.memory.entities import graph as kg
from graphmem.memory.entities.graph import (
    DeletionInput,
    EntityInput,
    KnowledgeGraph,
    Name,
    ObservationInput,
    Query,
    RelationInput,
)

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

_DONE_MESSAGES = {
    "delete_entities": "Entities deleted successfully",
    "delete_observations": "Observations deleted successfully",
    "delete_relations": "Relations deleted successfully",
}
_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {
    t: TypeAdapter(list[t])  # type: ignore[valid-type]
    for t in (EntityInput, RelationInput, ObservationInput, DeletionInput)
}
_NAMES: TypeAdapter[list[str]] = TypeAdapter(list[Name])
_NAME: TypeAdapter[str] = TypeAdapter(Name)
_QUERY: TypeAdapter[str] = TypeAdapter(Query)


def _parse(adapter: TypeAdapter[Any], args: dict[str, Any], field: str) -> Any:
    """``args[field]`` through ``adapter``; BAD_INPUT naming where it is wrong (pydantic's
    own text, which never quotes the input here)."""
    if field not in args:
        raise BadInput(f"{field}: required", field=field)
    value = args[field]
    if isinstance(value, list) and len(value) > kg.MAX_ITEMS:
        # refused before validating: a huge list costs nothing more than this
        raise BadInput(f"{field}: at most {kg.MAX_ITEMS} per call", field=field)
    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in (field, *first["loc"]))
        raise BadInput(f"{where}: {first['msg']}", field=field) from None


def _entity(e: KGEntity) -> dict[str, Any]:
    return {"name": e.name, "entityType": e.entity_type, "observations": list(e.observations)}


def _relation(r: KGRelation) -> dict[str, Any]:
    return {"from": r.source, "to": r.target, "relationType": r.relation_type}


def _graph(g: KGSubgraph, paged: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "entities": [_entity(e) for e in g.entities],
        "relations": [_relation(r) for r in g.relations],
        "truncated": g.truncated,
    }
    if paged:
        out["nextCursor"] = g.next_cursor
    return out


def _limit(args: dict[str, Any]) -> int:
    value = args.get("limit", kg.PAGE_DEFAULT)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInput("limit: a whole number is required", field="limit")
    return value


async def call(service: Memory, tenant: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Run one memory-server tool; returns its structured result (the reference's shape)."""
    graph: KnowledgeGraph | None = service.knowledge
    if graph is None:
        raise Unavailable("this server keeps no knowledge graph")
    if name == "create_entities":
        made = await graph.create_entities(tenant, _parse(_ADAPTERS[EntityInput], args, "entities"))
        return {"entities": [_entity(e) for e in made]}
    if name == "create_relations":
        rels = _parse(_ADAPTERS[RelationInput], args, "relations")
        return {"relations": [_relation(r) for r in await graph.create_relations(tenant, rels)]}
    if name == "add_observations":
        adds = _parse(_ADAPTERS[ObservationInput], args, "observations")
        added = await graph.add_observations(tenant, adds)
        return {"results": [{"entityName": n, "addedObservations": a} for n, a in added]}
    if name == "delete_entities":
        await graph.delete_entities(tenant, _parse(_NAMES, args, "entityNames"))
    elif name == "delete_observations":
        await graph.delete_observations(tenant, _parse(_ADAPTERS[DeletionInput], args, "deletions"))
    elif name == "delete_relations":
        await graph.delete_relations(tenant, _parse(_ADAPTERS[RelationInput], args, "relations"))
    elif name == "read_graph":
        cursor = _parse(_NAME, args, "cursor") if args.get("cursor") is not None else None
        return _graph(await graph.read_graph(tenant, cursor, _limit(args)), paged=True)
    elif name == "search_nodes":
        return _graph(await graph.search_nodes(tenant, _parse(_QUERY, args, "query")))
    elif name == "open_nodes":
        return _graph(await graph.open_nodes(tenant, _parse(_NAMES, args, "names")))
    else:
        raise BadInput(f"unknown tool {name!r}")
    return {"success": True, "message": _DONE_MESSAGES[name]}


def text_of(name: str, data: dict[str, Any]) -> str:
    """The text content the reference server sends beside the structured result: the
    created list itself for the three creating tools, the message for deletions, the
    graph for reads."""
    if name in _DONE_MESSAGES:
        return str(data["message"])
    for key in ("entities", "relations", "results"):
        if name in ("create_entities", "create_relations", "add_observations") and key in data:
            return json.dumps(data[key], indent=2)
    return json.dumps(data, indent=2)
