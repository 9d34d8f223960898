"""The item store creates a tenant's fulltext index on first use: one tenant whose index
is slow to come online holds up its own first write, nobody else's."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from graphmem.domain.models import tenant_item_fulltext
from graphmem.stores.models_items import ItemWrite
from graphmem.stores.neo4j.items import Neo4jItemStore


class SlowIndexGraph:
    """The session calls the item store makes, with one tenant's index never online
    until ``online`` is set."""

    def __init__(self, slow_index: str) -> None:
        self.cypher = {"tenant/item_fulltext_index": "CREATE FULLTEXT INDEX __INDEX__"}
        self.slow_index = slow_index
        self.online = asyncio.Event()
        self.writes: list[str] = []

    async def run_schema(self, statement: str, params: dict[str, Any]) -> None:
        return None

    async def run(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if name == "admin/await_index" and params["name"] == self.slow_index:
            await self.online.wait()
        if name == "item/write":
            self.writes.append(params["tenant"])
            return [{"written": len(params["puts"]), "deleted": 0}]
        return []


def put(key: str) -> ItemWrite:
    now = datetime.now(UTC)
    return ItemWrite.model_validate(
        {
            "path": "a.",
            "key": key,
            "value": "{}",
            "text": "",
            "scope": "a.",
            "created_at": now,
            "updated_at": now,
        }
    )


async def test_a_slow_index_holds_up_only_its_own_tenant() -> None:
    graph = SlowIndexGraph(tenant_item_fulltext("slow")[0])
    store = Neo4jItemStore(graph)  # type: ignore[arg-type]
    now = datetime.now(UTC)
    slow = asyncio.create_task(store.write("slow", [put("k")], now, "m"))
    await asyncio.sleep(0.05)
    assert await asyncio.wait_for(store.write("other", [put("k")], now, "m"), 1) == 1
    assert graph.writes == ["other"] and not slow.done()
    graph.online.set()
    assert await slow == 1
    assert graph.writes == ["other", "slow"]
