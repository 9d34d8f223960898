"""The API's key check: every /graphql and /mcp request carries `Authorization: Bearer <key>`,
and the key names the tenant (``graphmem/apikeys.py``)."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from graphmem.api.graphql.errors import error_response
from graphmem.apikeys import KeyRing
from graphmem.errors import ErrorCode

TENANT_SCOPE_KEY = "graphmem.tenant"


class BearerAuth:
    """ASGI middleware: resolves the tenant or answers 401 with a GraphQL-style body."""

    def __init__(self, app: ASGIApp, keys: KeyRing) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        raw = headers.get(b"authorization")
        tenant = self.keys.tenant(raw.decode("latin-1") if raw else None)
        if tenant is None and raw is None and scope["type"] == "websocket":
            # Browsers cannot set headers on a WebSocket: the key may come in the
            # graphql-transport-ws connection_init payload instead (checked by the view).
            scope[TENANT_SCOPE_KEY] = None
            await self.app(scope, receive, send)
            return
        if tenant is None:
            message = (
                "missing API key: send Authorization: Bearer <key>"
                if raw is None
                else "unknown API key"
            )
            response = error_response(401, message, ErrorCode.UNAUTHENTICATED)
            response.headers["WWW-Authenticate"] = 'Bearer realm="graphmem"'
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 4401, "reason": message})
                return
            await response(scope, receive, send)
            return
        scope[TENANT_SCOPE_KEY] = tenant
        await self.app(scope, receive, send)
