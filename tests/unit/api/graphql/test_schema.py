"""The served schema: schema.graphql is exactly what `graphmem schema` prints, and a
long-lived subscription holds no memory per event (graphql-core 3.3 let every event's
executor add to a memo shared for the life of the subscription: ``EventExecutionContext``).
The change feed behind the subscription is a stand-in that yields events as fast as they
are read."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

from graphql.execution.collect_fields import CollectedFields

from graphmem.api.graphql.schema import build_schema
from tests.conftest import ROOT


def test_schema_graphql_matches_the_served_schema() -> None:
    committed = (ROOT / "schema.graphql").read_text()
    assert committed == build_schema().as_str() + "\n", (
        "schema.graphql is stale: run `graphmem schema > schema.graphql`"
    )


def test_cli_prints_the_same_sdl() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "graphmem.ops.cli", "schema"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == (ROOT / "schema.graphql").read_text()


def test_contract_operations_exist() -> None:
    sdl = build_schema().as_str()
    for op in (
        "hot(sessionId: ID!): [MemoryItem!]!",
        "memoryStatus(sessionId: ID!): MemoryStatus!",
        "addMemory(input: AddMemoryInput!): MemoryItem!",
        "addMemories(inputs: [AddMemoryInput!]!): [MemoryItem!]!",
        "recall(input: RecallInput!): RecallResult!",
        "promote(itemId: ID!): MemoryItem!",
        "forget(itemId: ID!): Boolean!",
    ):
        assert op in sdl, op
    assert "search(query: String!, sessionId: ID = null, userId: ID = null, limit: Int! = 10" in sdl
    assert (
        "spill(sessionId: ID!, count: Int = null, itemIds: [ID!] = null, tier: Tier = null): "
        "SpillResult!"
    ) in sdl
    for value in ("MESSAGE", "FACT", "DECISION", "ENTITY", "CONTEXT", "PREFERENCE"):
        assert f"  {value}\n" in sdl


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
