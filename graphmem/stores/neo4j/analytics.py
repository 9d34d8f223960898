"""One tenant's memory in rows for analysts' tables (``ops/analytics.py``): the named
statements of ``cypher/analytics``, each row as plain Python values."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graphmem.stores.neo4j.records import native_row
from graphmem.stores.neo4j.session import Neo4jSession


class Neo4jAnalytics:
    def __init__(self, session: Neo4jSession) -> None:
        self._session = session

    async def _rows(self, name: str, tenant: str, **params: Any) -> list[dict[str, Any]]:
        records = await self._session.run(name, {"tenant": tenant, **params})
        return [native_row(r) for r in records]

    async def memory_age(self, tenant: str, now: datetime) -> list[dict[str, Any]]:
        """Graph memories by type, tier and age bucket."""
        return await self._rows("analytics/memory_age", tenant, now=now)

    async def entity_mentions(self, tenant: str) -> list[dict[str, Any]]:
        return await self._rows("analytics/entity_mentions", tenant)

    async def cooccurrence(self, tenant: str) -> list[dict[str, Any]]:
        return await self._rows("analytics/cooccurrence", tenant)

    async def episode_success(self, tenant: str) -> list[dict[str, Any]]:
        return await self._rows("analytics/episode_success", tenant)
