"""Services and APIs built for one test: an API with limits of its own, and a service
built from the stack's settings with rules of its own."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from graphmem.api.http.app import create_app
from graphmem.memory import Memory
from graphmem.memory.builder import MemoryBuilder
from tests.conftest import Api, Stack, new_tenant, running


@asynccontextmanager
async def limited_api(stack: Stack, **limits: Any) -> AsyncIterator[Api]:
    tenants = [new_tenant(), new_tenant()]
    keys = {t: f"key-{uuid.uuid4().hex}" for t in tenants}
    settings = stack.settings(api_keys={k: t for t, k in keys.items()}, **limits)
    async with running(create_app(settings)) as app:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://graphmem") as client:
            yield Api(client, keys, app)


def codes(bodies: list[dict[str, Any]]) -> list[str | None]:
    return [b["errors"][0]["extensions"]["code"] if b.get("errors") else None for b in bodies]


async def build(stack: Stack, redis_url: str | None = None, **rules: Any) -> Memory:
    config = rules.pop("config", {})
    settings = stack.settings(redis_url=redis_url or stack.redis_url)
    svc = MemoryBuilder.from_settings(settings).with_config(**config)
    if rules:
        svc = svc.with_rules(**rules)
    service = svc.build()
    await service.migrate()
    return service
