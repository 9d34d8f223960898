"""Personas and structured records in Neo4j, by named Cypher."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graphmem.settings import PersonaConfig
from graphmem.stores.models import StoredRecord
from graphmem.stores.neo4j import record_fields
from graphmem.stores.neo4j import records_kinds as parse
from graphmem.stores.neo4j.records import when
from graphmem.stores.neo4j.session import Neo4jSession


class Neo4jProfileStore:
    def __init__(self, graph: Neo4jSession) -> None:
        self.graph = graph

    async def persona(self, tenant: str, agent_id: str) -> PersonaConfig | None:
        records = await self.graph.run("persona/get", {"tenant": tenant, "agentId": agent_id})
        return parse.persona(records[0]["persona"]) if records else None

    async def set_persona(
        self, tenant: str, agent_id: str, persona: PersonaConfig, now: datetime
    ) -> PersonaConfig:
        records = await self.graph.run(
            "persona/set",
            {"tenant": tenant, "agentId": agent_id, "now": now, **persona.model_dump()},
        )
        return parse.persona(records[0]["persona"])

    async def set_schema(self, tenant: str, name: str, schema: str, now: datetime) -> None:
        await self.graph.run(
            "record/set_schema",
            {"tenant": tenant, "name": name, "schema": schema, "now": now},
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
    ) -> datetime | None:
        """When the record was written; None when the schema is unknown. ``fields``:
        the top-level fields ``records`` can match on."""
        records = await self.graph.run(
            "record/add",
            {
                "tenant": tenant,
                "schema": schema,
                "id": record_id,
                "data": data,
                "fields": record_fields.tokens(fields),
                "now": now,
            },
        )
        return when(records[0]["createdAt"]) if records else None

    async def records(
        self,
        tenant: str,
        schema: str,
        where: dict[str, Any],
        limit: int,
        as_of: datetime | None = None,
    ) -> list[StoredRecord]:
        tokens = record_fields.tokens(where)
        records = await self.graph.run(
            "record/query",
            {"tenant": tenant, "schema": schema, "tokens": tokens, "limit": limit, "asOf": as_of},
        )
        return [parse.stored_record(r) for r in records]
