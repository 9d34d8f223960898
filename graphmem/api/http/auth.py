"""API keys → tenants: every /graphql and /mcp request carries `Authorization: Bearer <key>`."""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from graphmem.api.graphql.errors import error_response
from graphmem.errors import ErrorCode
from graphmem.settings import Settings

TENANT_SCOPE_KEY = "graphmem.tenant"
DEV_TENANT = "dev"


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def dev_key(path: Path) -> str:
    """The local development key, created on first use (mode 0600)."""
    if path.is_file():
        key = path.read_text(encoding="utf-8").strip()
        if key:
            return key
    path.parent.mkdir(parents=True, exist_ok=True)
    key = f"gm_dev_{secrets.token_urlsafe(24)}"
    path.write_text(key + "\n", encoding="utf-8")
    path.chmod(0o600)
    return key


def api_keys(settings: Settings) -> dict[str, str]:
    """Configured keys, or the dev key for tenant 'dev' when none are configured."""
    if settings.api_keys:
        return dict(settings.api_keys)
    return {dev_key(settings.dev_key_file): DEV_TENANT}


class KeyRing:
    """Looks keys up by digest, so lookup time does not depend on how much of a key matches."""

    def __init__(self, keys: dict[str, str]) -> None:
        self._tenants = {_digest(k): t for k, t in keys.items()}

    def tenant(self, authorization: str | None) -> str | None:
        if not authorization:
            return None
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self._tenants.get(_digest(token.strip()))


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
