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
from typing import Any

from pydantic import TypeAdapter

from graphmem.domain.knowledge import KGSubgraph
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
    return kg.parsed(adapter, value, field)


def _graph(g: KGSubgraph, paged: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "entities": [e.doc() for e in g.entities],
        "relations": [r.doc() for r in g.relations],
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
        return {"entities": [e.doc() for e in made]}
    if name == "create_relations":
        rels = _parse(_ADAPTERS[RelationInput], args, "relations")
        return {"relations": [r.doc() for r in await graph.create_relations(tenant, rels)]}
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
