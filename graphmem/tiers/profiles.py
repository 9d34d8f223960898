"""Personas and structured records in Neo4j (seed 003), by named Cypher."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .graph import Neo4jGraphStore


class ProfileStore:
    def __init__(self, graph: Neo4jGraphStore) -> None:
        self.graph = graph

    async def persona(self, tenant: str, agent_id: str) -> dict[str, Any] | None:
        records = await self.graph.run("persona/get", {"tenant": tenant, "agentId": agent_id})
        return dict(records[0]["persona"]) if records else None

    async def set_persona(
        self, tenant: str, agent_id: str, persona: dict[str, Any], now: datetime
    ) -> dict[str, Any]:
        records = await self.graph.run(
            "persona/set",
            {"tenant": tenant, "agentId": agent_id, "now": now, **persona},
            write=True,
        )
        return dict(records[0]["persona"])

    async def set_schema(self, tenant: str, name: str, schema: str, now: datetime) -> None:
        await self.graph.run(
            "record/set_schema",
            {"tenant": tenant, "name": name, "schema": schema, "now": now},
            write=True,
        )

    async def schema(self, tenant: str, name: str) -> str | None:
        records = await self.graph.run("record/get_schema", {"tenant": tenant, "name": name})
        return str(records[0]["schema"]) if records else None

    async def add_record(
        self,
        tenant: str,
        schema: str,
        record_id: str,
        data: str,
        fields: dict[str, Any],
        now: datetime,
    ) -> dict[str, Any] | None:
        records = await self.graph.run(
            "record/add",
            {
                "tenant": tenant,
                "schema": schema,
                "id": record_id,
                "data": data,
                "fields": fields,
                "now": now,
            },
            write=True,
        )
        return dict(records[0]) if records else None

    async def records(
        self, tenant: str, schema: str, where: dict[str, Any], limit: int
    ) -> list[dict[str, Any]]:
        records = await self.graph.run(
            "record/query", {"tenant": tenant, "schema": schema, "where": where, "limit": limit}
        )
        return [dict(r) for r in records]
