"""Admission control per tenant: requests per second, expensive operations at once, and
quotas, counted in Redis so every replica enforces one limit."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from graphmem.api.app import create_app
from tests.conftest import Api, Stack, new_tenant, running
from tests.integration.test_memory_slice import ADD, SEARCH


@asynccontextmanager
async def limited_api(stack: Stack, **limits: Any) -> AsyncIterator[Api]:
    tenants = [new_tenant(), new_tenant()]
    keys = {t: f"key-{uuid.uuid4().hex}" for t in tenants}
    settings = stack.settings(api_keys={k: t for t, k in keys.items()}, **limits)
    async with running(create_app(settings)) as app:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://graphmem") as client:
            yield Api(client, keys, app)


def codes(bodies: list[dict]) -> list[str | None]:
    return [b["errors"][0]["extensions"]["code"] if b.get("errors") else None for b in bodies]


async def test_requests_per_second_are_limited_per_tenant(stack: Stack) -> None:
    async with limited_api(stack, rate_limit_per_second=5) as api:
        a, b = list(api.keys)
        bodies = [await api.gql('{ hot(sessionId: "s") { id } }', tenant=a) for _ in range(30)]
        limited = [x for x in bodies if codes([x]) == ["RATE_LIMITED"]]
        assert limited, codes(bodies)
        assert 0 < limited[0]["errors"][0]["extensions"]["retryAfterMs"] <= 1000
        # ... while the other tenant is served
        assert "errors" not in await api.gql('{ hot(sessionId: "s") { id } }', tenant=b)


async def test_expensive_operations_hold_a_slot(stack: Stack) -> None:
    async with limited_api(stack, max_concurrent_expensive=1) as api:
        a, b = list(api.keys)
        memory = api.client._transport.app.state.service  # type: ignore[attr-defined]
        async with memory.admission.expensive(a):  # one search of A's is running
            busy = await api.gql(SEARCH, {"q": "anything"}, tenant=a)
            assert codes([busy]) == ["RATE_LIMITED"]
            assert "errors" not in await api.gql(SEARCH, {"q": "anything"}, tenant=b)
            # cheap operations are not held back
            assert "errors" not in await api.gql('{ hot(sessionId: "s") { id } }', tenant=a)
        assert "errors" not in await api.gql(SEARCH, {"q": "anything"}, tenant=a)


async def test_quota_of_memories_per_tenant(stack: Stack) -> None:
    async with limited_api(stack, quota_memories=3) as api:
        a, b = list(api.keys)
        ids = []
        for n in range(3):
            body = await api.data(ADD, {"input": {"sessionId": "q", "content": f"m{n}"}}, tenant=a)
            ids.append(body["addMemory"]["id"])
        over = await api.gql(ADD, {"input": {"sessionId": "q", "content": "m3"}}, tenant=a)
        assert codes([over]) == ["QUOTA_EXCEEDED"]
        assert over["errors"][0]["extensions"]["memories"] == 3
        assert "errors" not in await api.gql(
            ADD, {"input": {"sessionId": "q", "content": "b0"}}, tenant=b
        )
        await api.data("mutation($i: ID!) { forget(itemId: $i) }", {"i": ids[0]}, tenant=a)
        again = await api.gql(ADD, {"input": {"sessionId": "q", "content": "m3"}}, tenant=a)
        assert "errors" not in again, again
