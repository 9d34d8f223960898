"""The Starlette application: /graphql (and its IDE), /mcp, /metrics, /healthz, /readyz."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hmac
import json
import logging
import sys
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from cross_web import HTTPException
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL

from graphmem.api import ide
from graphmem.api.graphql.errors import error_response
from graphmem.api.graphql.guard import Limits
from graphmem.api.graphql.schema import build_schema
from graphmem.api.http import bodies
from graphmem.api.http.auth import TENANT_SCOPE_KEY, BearerAuth
from graphmem.api.http.fairshare import FairShare, ShareLimits
from graphmem.api.http.limits import BodyLimit, FairTurns, PostOnly, StreamLifetime
from graphmem.api.http.websocket import LimitedTransportWS, TenantSubscriptions
from graphmem.api.mcp import envelope_problem as mcp_envelope_problem
from graphmem.api.mcp import http_app as mcp_http_app
from graphmem.apikeys import KeyRing, api_keys
from graphmem.cputime import meter_tasks
from graphmem.errors import ErrorCode, GraphmemError
from graphmem.memory import Memory
from graphmem.memory.builder import MemoryBuilder
from graphmem.settings import Settings, load_settings

log = logging.getLogger("graphmem.api")

#: seconds a thread running Python may keep the GIL once the event loop asks for it
SWITCH_INTERVAL = 0.0005


class GraphQLEndpoint(GraphQL):
    """strawberry's ASGI view with the tenant in the context and JSON error bodies.
    WebSockets speak graphql-transport-ws only (the older graphql-ws protocol skips
    messages it cannot decode, and has no deadline for its connection_init), with the
    subscriptions they hold bounded (``websocket``)."""

    graphql_transport_ws_handler_class = LimitedTransportWS

    def __init__(
        self, *args: Any, keys: KeyRing, tenant_subscriptions: int = 100, **kwargs: Any
    ) -> None:
        kwargs["subscription_protocols"] = (GRAPHQL_TRANSPORT_WS_PROTOCOL,)
        super().__init__(*args, **kwargs)
        self.keys = keys
        self.tenant_subscriptions = TenantSubscriptions(tenant_subscriptions)

    def decode_json(self, data: str | bytes) -> object:
        # Only WebSocket messages come here (HTTP bodies: parse_json). strawberry answers
        # a JSONDecodeError with a 4400 close, as the body rules answer a 400.
        try:
            value = bodies.decode(data)
            if not isinstance(value, dict):
                raise bodies.BadBody("a graphql-transport-ws message is a JSON object")
        except bodies.BadBody as exc:
            raise json.JSONDecodeError(str(exc), "", 0) from exc
        return value

    def parse_json(self, data: str | bytes) -> Any:
        try:
            value = bodies.decode(data)
        except bodies.BadBody as exc:
            raise HTTPException(400, f"unacceptable request body: {exc}") from exc
        if not isinstance(value, dict | list):
            raise HTTPException(400, "the request body must be a JSON object")
        return value

    async def on_ws_connect(self, context: dict[str, Any]) -> dict[str, object] | None:  # type: ignore[override]
        """A subscription needs a tenant: from the handshake's header, or from
        ``{"Authorization": "Bearer <key>"}`` in the connection_init payload."""
        if context.get("tenant"):
            return None
        params = context.get("connection_params") or {}
        raw = (
            params.get("Authorization") or params.get("authorization")
            if isinstance(params, dict)
            else None
        )
        tenant = self.keys.tenant(str(raw)) if raw else None
        if tenant is None:
            raise ConnectionRejectionError(
                {"code": "UNAUTHENTICATED", "message": "send Authorization: Bearer <key>"}
            )
        context["tenant"] = tenant
        return None

    async def get_context(  # type: ignore[override]  # strawberry types the context as None
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> dict[str, Any]:
        return {
            "request": request,
            "response": response,
            "service": request.app.state.service,
            "tenant": request.scope[TENANT_SCOPE_KEY],
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        try:
            response = await self.run(Request(scope=scope, receive=receive))
        except HTTPException as exc:
            # Malformed JSON, a missing query, a wrong method: the client's mistake.
            code = ErrorCode.BAD_INPUT if exc.status_code < 500 else ErrorCode.INTERNAL
            response = error_response(exc.status_code, exc.reason, code)
        await response(scope, receive, send)


async def healthz(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


async def metrics(request: Request) -> Response:
    """Prometheus text for the operator: series are labelled by tenant, so only the
    metrics token (never an API key) may read them."""
    token = request.app.state.settings.metrics_token
    sent = request.headers.get("authorization", "")
    if not token or not hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        reason = "send Authorization: Bearer <GRAPHMEM_METRICS_TOKEN>"
        if not token:
            reason = "/metrics is off: set GRAPHMEM_METRICS_TOKEN to read it"
        return error_response(403, reason, ErrorCode.FORBIDDEN)
    service: Memory | None = getattr(request.app.state, "service", None)
    if service is None:
        return Response(status_code=503)
    await service.observe_queue()
    return Response(service.metrics.exposition(), media_type=CONTENT_TYPE_LATEST)


async def readyz(request: Request) -> JSONResponse:
    service: Memory | None = getattr(request.app.state, "service", None)
    if service is None:
        return JSONResponse({"status": "starting"}, status_code=503)
    report = await service.readiness()
    ready = all(v == "ok" for v in report.values())
    return JSONResponse(
        {"status": "ready" if ready else "unavailable", **report},
        status_code=200 if ready else 503,
    )


async def _backfill_terms(service: Memory) -> None:
    """Analyse the memories an older version wrote (``Memory.backfill_terms``), after
    start: serving does not wait for it. A failure is logged; the next start retries."""
    try:
        done = await service.backfill_terms()
    except GraphmemError as exc:
        log.warning("analysing older memories' terms failed: %s", exc.message)
        return
    except Exception:  # a background task: whatever it raised must not stop shutdown
        log.exception("analysing older memories' terms failed")
        return
    if done:
        log.info("analysed the terms of %d memories written by an older version", done)


def create_app(
    settings: Settings | None = None,
    service: Memory | None = None,
    *,
    migrate: bool = True,
) -> Starlette:
    """The ASGI app. Pass ``service`` to share one (tests, notebooks); otherwise the app
    builds it from ``settings`` at start-up, applies the schema migration and closes it
    at shutdown."""
    settings = settings or load_settings()
    configured = api_keys(settings)
    keys = KeyRing(configured)
    schema = build_schema(
        Limits(
            max_depth=settings.max_query_depth,
            max_aliases=settings.max_aliases,
            max_fields=settings.max_query_fields,
            max_tokens=settings.max_query_tokens,
            max_chars=settings.max_query_chars,
            max_string=settings.max_content_chars,
        )
    )
    graphql = GraphQLEndpoint(
        schema,
        graphql_ide=None,
        allow_queries_via_get=False,
        keys=keys,
        connection_init_wait_timeout=timedelta(seconds=10),
        max_subscriptions_per_connection=settings.ws_max_subscriptions,
        tenant_subscriptions=settings.tenant_max_subscriptions,
    )
    # One share for /graphql and /mcp alike: they draw on the same event loop.
    share = FairShare(
        ShareLimits(
            slots=settings.fair_slots,
            tenant_slots=settings.fair_tenant_slots,
            light_slots=settings.fair_light_slots,
            solo_bytes=settings.fair_solo_bytes,
            capacity=settings.fair_capacity,
            max_wait=settings.fair_max_wait_seconds,
            max_queued=settings.fair_max_queued,
        )
    )
    protected = BearerAuth(
        BodyLimit(
            FairTurns(PostOnly(graphql), share),
            settings.max_body_bytes,
            settings.body_timeout_seconds,
        ),
        keys,
    )
    holder: dict[str, Memory] = {}
    mcp_app, mcp_sessions = mcp_http_app(lambda: holder["service"], settings.mcp_allowed_hosts)
    mcp = BearerAuth(
        StreamLifetime(
            BodyLimit(
                FairTurns(bodies.JsonObjectBody(mcp_app, mcp_envelope_problem), share),
                settings.max_body_bytes,
                settings.body_timeout_seconds,
            ),
            settings.mcp_stream_seconds,
        ),
        keys,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        owned = service is None
        app.state.service = holder["service"] = (
            service or MemoryBuilder.from_settings(settings).build()
        )
        stop = asyncio.Event()
        maintenance: asyncio.Task[None] | None = None
        backfill: asyncio.Task[None] | None = None
        item_vectors: asyncio.Task[None] | None = None
        try:
            if migrate:
                applied = await app.state.service.migrate()
                log.info("schema migration applied: %s", ", ".join(applied))
                backfill = asyncio.create_task(_backfill_terms(app.state.service))
            # before the first request: a tenant's indexes made on its first write would
            # make Neo4j plan every tenant's queries again (stores/neo4j/fulltext.py)
            if created := await app.state.service.provision(configured.values()):
                log.info("tenant indexes created: %s", ", ".join(created))
            if line := await app.state.service.spaces.report():
                log.warning(line)
            if settings.maintenance_enabled:
                maintenance = asyncio.create_task(app.state.service.maintenance.run(stop))
            if (items := app.state.service.items) is not None and items.vectors is not None:
                # every replica: its own puts' vectors, and any a dead one left due
                item_vectors = asyncio.create_task(items.vectors.run(stop))
            # What start-up built (schema, models, drivers) lives as long as the process:
            # out of the collector's view, a full collection stops every request for
            # ~100 ms less (measured: 80-110 ms pauses before, under 15 ms after).
            gc.collect()
            gc.freeze()
            # A thread running Python (a record's schema validation, a GraphQL parse)
            # hands the GIL back to the event loop only when the loop has asked for it
            # for a switch interval: at the default 5 ms, each of a request's steps
            # could wait that long. At 0.5 ms the loop is back within a step's time.
            sys.setswitchinterval(SWITCH_INTERVAL)
            # Each request's steps on the loop are charged to its tenant's fair share.
            with meter_tasks():
                async with mcp_sessions.run():
                    yield
        finally:
            stop.set()
            if backfill is not None:
                backfill.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await backfill
            if maintenance is not None:
                await maintenance
            if item_vectors is not None:
                await item_vectors
            if owned:
                await app.state.service.close()

    app = Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
            Route("/graphql", ide.IdeOrGraphQL(protected), methods=["GET", "POST"]),
            Route(ide.PREFIX + "{name}", ide.asset, methods=["GET"]),
            WebSocketRoute("/graphql", protected),
            Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]),
        ],
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.ide_files = ide.files()
    return app
