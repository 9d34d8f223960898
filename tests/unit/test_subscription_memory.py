"""A long-lived subscription holds no memory per event: graphql-core 3.3 let every
event's executor add to a memo shared for the life of the subscription
(``api/graphql/schema.py``: ``EventExecutionContext``). The schema is the service's own; the
change feed behind it is a stand-in that yields events as fast as they are read."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from typing import Any

from graphql.execution.collect_fields import CollectedFields

from graphmem.api.graphql.schema import build_schema

SUBSCRIBE = "subscription { memoryEvents { kind at sessionId itemIds data } }"


async def feed(tenant: str) -> AsyncIterator[dict[str, Any]]:
    """The change feed, without Redis: the events come from here."""
    n = 0
    while True:
        n += 1
        yield {
            "kind": "added",
            "at": "2026-11-25T12:00:00+00:00",
            "sessionId": "s1",
            "itemIds": [f"m{n}"],
            "tokens": n,
        }


class Admission:
    """Admits every request (rate limits are not under test)."""

    async def request(self, tenant: str) -> None:
        return None


class Service:
    admission = Admission()

    def subscribe(self, tenant: str) -> AsyncIterator[dict[str, Any]]:
        return feed(tenant)


def held() -> int:
    gc.collect()
    return sum(isinstance(o, CollectedFields) for o in gc.get_objects())


async def test_a_subscription_holds_nothing_per_event() -> None:
    schema = build_schema()
    context = {"service": Service(), "tenant": "t1"}
    stream = await schema.subscribe(SUBSCRIBE, context_value=context)
    assert not isinstance(stream, Exception) and hasattr(stream, "__anext__"), stream
    try:
        for _ in range(20):  # warmed up
            first = await stream.__anext__()
            assert not first.errors, first.errors
        before = held()
        for _ in range(500):
            result = await stream.__anext__()
            assert not result.errors and result.data is not None
        assert result.data["memoryEvents"]["itemIds"] == ["m520"]
        # without a memo per event, each event kept its collected fields: +500
        assert held() - before < 10
    finally:
        await stream.aclose()
