"""The MCP tools of the tier API (docs/concepts.md#tiers) — memory_add, memory_recall,
memory_spill, memory_status — and the nine memory-server tools of ``mcp_graph.py`` (the
reference knowledge-graph server's), on the official ``mcp`` SDK's low-level server, so
the input schemas are exactly the published ones.

Served two ways: streamable HTTP at ``/mcp`` on the API app (same Bearer key, same
tenant), and stdio from ``graphmem mcp`` (the key is given on the command line or in
``GRAPHMEM_KEY``).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError

from graphmem.api import mcp_graph, mcp_graph_tools
from graphmem.api.http.auth import TENANT_SCOPE_KEY
from graphmem.domain.moments import Moment
from graphmem.errors import BadInput, GraphmemError
from graphmem.memory import Memory, RecallQuery

log = logging.getLogger("graphmem.mcp")

TOOL_TYPES = ["message", "fact", "decision", "entity", "context", "preference"]

#: the reads' moment (``_moment``), on every tier tool that reads memories. memory_status
#: has none: it reports the tiers as they are now and what to do next, as GraphQL's
#: memoryStatus does; the nine memory-server tools keep the reference's shapes.
MOMENT_PROPERTIES: dict[str, Any] = {
    "asOf": {"type": "string", "description": "ISO 8601: what graphmem held then (record time)"},
    "validAt": {"type": "string", "description": "ISO 8601: what was true then (valid time)"},
    "includeHistory": {
        "type": "boolean",
        "default": False,
        "description": "retracted memories too",
    },
}

TIER_TOOLS = [
    types.Tool(
        name="memory_add",
        description="Add item to hot memory",
        input_schema={
            "type": "object",
            "properties": {
                "sessionId": {"type": "string"},
                "content": {"type": "string"},
                "type": {"type": "string", "enum": TOOL_TYPES},
            },
            "required": ["sessionId", "content", "type"],
        },
    ),
    types.Tool(
        name="memory_recall",
        description="Recall relevant items from cold storage",
        input_schema={
            "type": "object",
            "properties": {
                "sessionId": {"type": "string"},
                "query": {"type": "string", "description": "What to search for"},
                "limit": {"type": "number", "default": 3},
                "autoPromote": {"type": "boolean", "default": True},
                **MOMENT_PROPERTIES,
            },
            "required": ["sessionId", "query"],
        },
    ),
    types.Tool(
        name="memory_spill",
        description="Force spill hot memory to cold storage",
        input_schema={
            "type": "object",
            "properties": {
                "sessionId": {"type": "string"},
                "count": {"type": "number", "description": "Number of items to spill"},
            },
            "required": ["sessionId"],
        },
    ),
    types.Tool(
        name="memory_status",
        description="Get memory tier status and suggestions",
        input_schema={
            "type": "object",
            "properties": {"sessionId": {"type": "string"}},
            "required": ["sessionId"],
        },
    ),
]
TOOLS = [*TIER_TOOLS, *mcp_graph_tools.TOOLS]


def _str(args: dict[str, Any], name: str, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise BadInput(f"{name}: a string is required", field=name)
    return value


def _when(args: dict[str, Any], name: str) -> datetime | None:
    text = _str(args, name, required=False)
    if text is None:
        return None
    try:
        if len(text) > 64:  # refused whole, not cut: what a cut leaves may still parse
            raise ValueError(name)
        return datetime.fromisoformat(text)
    except ValueError:
        raise BadInput(f"{name}: an ISO 8601 date and time", field=name) from None


def _moment(args: dict[str, Any]) -> Moment:
    """The moment a read looks at (docs/concepts.md, "Two clocks"), as GraphQL's
    ``asOf``, ``validAt`` and ``includeHistory`` give it."""
    history = args.get("includeHistory", False)
    if not isinstance(history, bool):
        raise BadInput("includeHistory: true or false", field="includeHistory")
    return Moment.of(_when(args, "asOf"), _when(args, "validAt"), history)


def _int(args: dict[str, Any], name: str, default: int | None) -> int | None:
    value = args.get(name, default)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value != int(value)
    ):
        raise BadInput(f"{name}: a whole number is required", field=name)
    return int(value)


async def call(service: Memory, tenant: str, name: str, args: dict[str, Any]) -> Any:
    """Run one tool under the tenant's admission limits (the request itself was counted
    at the edge, ``limits.FairTurns``); returns JSON-ready data."""
    if name in ("memory_recall", "memory_spill") or name in mcp_graph_tools.EXPENSIVE:
        async with service.admission.expensive(tenant):
            return await _call(service, tenant, name, args)
    return await _call(service, tenant, name, args)


async def _call(service: Memory, tenant: str, name: str, args: dict[str, Any]) -> Any:
    """Run one tool; returns JSON-ready data (camelCase, as the GraphQL API)."""
    if name in mcp_graph_tools.NAMES:
        return await mcp_graph.call(service, tenant, name, args)
    if name == "memory_add":
        kind = _str(args, "type")
        if kind not in TOOL_TYPES:
            raise BadInput(f"type: one of {', '.join(TOOL_TYPES)}", field="type")
        item = await service.ingest.add(
            tenant,
            {"session_id": _str(args, "sessionId"), "content": _str(args, "content"), "type": kind},
        )
        return _item(item.model_dump(mode="json"))
    if name == "memory_recall":
        auto = args.get("autoPromote", True)
        if not isinstance(auto, bool):
            raise BadInput("autoPromote: true or false", field="autoPromote")
        result = await service.recall.recall(
            tenant,
            RecallQuery(
                session_id=_str(args, "sessionId"),
                query=_str(args, "query") or "",
                limit=_int(args, "limit", 3) or 0,
                auto_promote=auto,
                moment=_moment(args),
            ),
        )
        return {
            "items": [_item(i.model_dump(mode="json")) for i in result.items],
            "promoted": result.promoted,
            "relevanceScores": {s.item.id: s.score for s in result.scores},
            "hotHits": [
                {"item": _item(h.item.model_dump(mode="json")), "score": h.score}
                for h in result.hot_hits
            ],
        }
    if name == "memory_spill":
        spilled = await service.spills.spill(
            tenant, _str(args, "sessionId") or "", count=_int(args, "count", None)
        )
        return _camel(spilled.model_dump(mode="json"))
    if name == "memory_status":
        status = await service.reports.status(tenant, _str(args, "sessionId") or "")
        return _camel(status.model_dump(mode="json"))
    raise BadInput(f"unknown tool {name!r}")


def _camel_key(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p.title() for p in rest)


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {_camel_key(k): _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _item(raw: dict[str, Any]) -> dict[str, Any]:
    raw.pop("tenant", None)
    metadata = raw.pop("metadata", {})
    out: dict[str, Any] = _camel(raw)
    out["metadata"] = metadata  # returned exactly as given, keys untouched
    return out


def build_server(service: Callable[[], Memory], tenant_of: Callable[[Any], str]) -> Server[Any]:
    """An MCP server over the memory service; ``tenant_of(request context)`` names the tenant."""

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            data = await call(service(), tenant_of(ctx), params.name, dict(params.arguments or {}))
        except GraphmemError as exc:
            body = {"error": {"code": exc.code.value, "message": exc.message}}
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=json.dumps(body))], is_error=True
            )
        except Exception:
            log.exception("MCP tool %s failed", params.name)
            body = {"error": {"code": "INTERNAL", "message": "internal error"}}
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=json.dumps(body))], is_error=True
            )
        # the memory-server tools answer with the reference server's text beside the data
        text = (
            mcp_graph.text_of(params.name, data)
            if params.name in mcp_graph_tools.NAMES
            else json.dumps(data)
        )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=data if isinstance(data, dict) else {"result": data},
        )

    return Server("graphmem", version="0.1.0", on_list_tools=list_tools, on_call_tool=call_tool)


def tenant_from_http(ctx: Any) -> str:
    request = getattr(ctx, "request", None)
    tenant = request.scope.get(TENANT_SCOPE_KEY) if request is not None else None
    if not tenant:  # BearerAuth guards /mcp, so this is a wiring error, not a client one
        raise RuntimeError("MCP request without an authenticated tenant")
    return str(tenant)


def envelope_problem(message: dict[str, Any]) -> str | None:
    """Why ``message`` is not a JSON-RPC 2.0 message the transport accepts, in our words
    (the SDK's own answer quotes its validation library)."""
    try:
        types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        return 'not a JSON-RPC 2.0 message ({"jsonrpc": "2.0", "method": ..., "id": ...})'
    return None


def http_app(
    service: Callable[[], Memory], allowed_hosts: list[str]
) -> tuple[StreamableHTTPASGIApp, StreamableHTTPSessionManager]:
    """The ``/mcp`` ASGI app and its session manager (run it in the app's lifespan)."""
    manager = StreamableHTTPSessionManager(
        app=build_server(service, tenant_from_http),
        json_response=True,
        stateless=True,
        security_settings=TransportSecuritySettings(
            enable_dns_rebinding_protection=bool(allowed_hosts),
            allowed_hosts=allowed_hosts,
            allowed_origins=[f"http://{h}" for h in allowed_hosts],
        ),
    )
    return StreamableHTTPASGIApp(manager), manager
