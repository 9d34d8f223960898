"""pandas DataFrames over one tenant's memory, for analysts in notebooks.

Access is the API's: an API key names the tenant (``graphmem/apikeys.py``), and the graph's
tables come from the named, tenant-scoped Cypher of ``cypher/analytics``
(``stores/neo4j/analytics.py``).

    from graphmem.ops.analytics import Analytics
    analytics = await Analytics.connect(api_key)      # settings from env / graphmem.yaml
    await analytics.entity_mentions()
"""

from __future__ import annotations

import pandas as pd

from graphmem.apikeys import KeyRing, api_keys
from graphmem.domain.models import utcnow
from graphmem.errors import Unauthenticated
from graphmem.memory import Memory
from graphmem.memory.builder import MemoryBuilder
from graphmem.settings import Settings, load_settings
from graphmem.stores.neo4j.analytics import Neo4jAnalytics
from graphmem.stores.neo4j.graph import Neo4jGraphStore


class Analytics:
    def __init__(self, service: Memory, tenant: str) -> None:
        self.service = service
        self.tenant = tenant
        if not isinstance(service.graph, Neo4jGraphStore):
            raise TypeError("analytics reads the Neo4j graph store")
        self._rows = Neo4jAnalytics(service.graph)

    @classmethod
    async def connect(cls, api_key: str, settings: Settings | None = None) -> Analytics:
        settings = settings or load_settings()
        tenant = KeyRing(api_keys(settings)).tenant(f"Bearer {api_key}")
        if tenant is None:
            raise Unauthenticated("unknown API key")
        service = MemoryBuilder.from_settings(settings).build()
        await service.migrate()
        return cls(service, tenant)

    async def close(self) -> None:
        await self.service.close()

    async def tier_utilisation(self, session_ids: list[str] | None = None) -> pd.DataFrame:
        """Per session: hot items, tokens, budget and utilisation; warm and cold counts."""
        sessions = session_ids or await self.service.hot_tier.index.sessions(self.tenant)
        rows = []
        for sid in sessions:
            s = await self.service.reports.status(self.tenant, sid)
            rows.append(
                {
                    "session": sid,
                    "hot_items": s.hot.items,
                    "hot_tokens": s.hot.tokens,
                    "limit": s.hot.limit,
                    "utilization_percent": s.hot.utilization_percent,
                    "warm_items": s.warm.items,
                    "cold_items": s.cold.items,
                }
            )
        return pd.DataFrame(
            rows,
            columns=[
                "session",
                "hot_items",
                "hot_tokens",
                "limit",
                "utilization_percent",
                "warm_items",
                "cold_items",
            ],
        )

    async def memory_counts(self) -> pd.DataFrame:
        """Graph memories by type, tier and age bucket, plus the hot tier."""
        graph = pd.DataFrame(await self._rows.memory_age(self.tenant, utcnow()))
        hot = [
            {
                "type": r["type"],
                "tier": "hot",
                "age": "hot",
                "items": r["items"],
                "tokens": r["tokens"],
            }
            for r in await self.service.reports.stats(self.tenant)
            if r["tier"] == "hot"
        ]
        return pd.concat([graph, pd.DataFrame(hot)], ignore_index=True) if hot else graph

    async def entity_mentions(self) -> pd.DataFrame:
        return pd.DataFrame(await self._rows.entity_mentions(self.tenant))

    async def cooccurrence(self) -> pd.DataFrame:
        return pd.DataFrame(await self._rows.cooccurrence(self.tenant))

    async def episode_success(self) -> pd.DataFrame:
        frame = pd.DataFrame(await self._rows.episode_success(self.tenant))
        if not frame.empty:
            frame["success_rate"] = frame["succeeded"] / frame["episodes"]
        return frame

    def recall_hit_rate(self) -> pd.DataFrame:
        """Recalls and hits of this process's service (the /metrics counters)."""
        total, hits = self.service.metrics.recall_counts(self.tenant)
        return pd.DataFrame(
            [{"recalls": total, "hits": hits, "hit_rate": hits / total if total else 0.0}]
        )
