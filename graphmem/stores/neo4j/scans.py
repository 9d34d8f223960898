"""Scans over a whole scope of the graph store, for reports and maintenance: counts
and stats, substring find, retention's prune candidates and the demotion of idle warm
memories.

Reached as ``Neo4jGraphStore.scans``; runs on the store's driver.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from graphmem.domain.models import MemoryItem, Tier, TierCount
from graphmem.domain.moments import NOW, Moment
from graphmem.stores.neo4j.records import memory_item, parsed
from graphmem.stores.neo4j.session import Neo4jSession


class Neo4jGraphScans:
    def __init__(self, session: Neo4jSession) -> None:
        self._session = session

    async def count_by_tier(self, tenant: str, session_id: str) -> dict[Tier, TierCount]:
        records = await self._session.run(
            "memory/count_by_tier", {"tenant": tenant, "sessionId": session_id}
        )
        counts = {Tier.WARM: TierCount(), Tier.COLD: TierCount()}
        for r in records:
            counts[Tier(r["tier"])] = TierCount(items=r["items"], tokens=r["tokens"])
        return counts

    async def demote_idle_warm(self, tenant: str, before: datetime, now: datetime) -> list[str]:
        records = await self._session.run(
            "memory/demote_idle_warm",
            {"tenant": tenant, "before": before, "now": now},
        )
        return [r["id"] for r in records]

    async def prune_candidates(
        self,
        tenant: str,
        tiers: Sequence[str],
        types: Sequence[str] | None,
        session_id: str | None,
        user_id: str | None,
    ) -> list[dict[str, Any]]:
        records = await self._session.run(
            "memory/prune_candidates",
            {
                "tenant": tenant,
                "tiers": list(tiers),
                "types": list(types) if types else None,
                "sessionId": session_id,
                "userId": user_id,
            },
        )
        return [dict(r) for r in records]

    async def stats(
        self, tenant: str, session_id: str | None, user_id: str | None
    ) -> list[dict[str, Any]]:
        records = await self._session.run(
            "memory/stats", {"tenant": tenant, "sessionId": session_id, "userId": user_id}
        )
        return [dict(r) for r in records]

    async def substring(
        self, tenant: str, needle: str, session_id: str | None, user_id: str | None, limit: int
    ) -> list[MemoryItem]:
        records = await self._session.run(
            "memory/substring",
            {
                "tenant": tenant,
                "needle": needle.lower(),
                "sessionId": session_id,
                "userId": user_id,
                "limit": limit,
            },
        )
        return parsed(records, lambda r: memory_item(tenant, r["memory"]))

    async def page(
        self,
        tenant: str,
        session_id: str | None,
        user_id: str | None,
        after: tuple[int, str],
        first: int,
        needles: Sequence[str] | None = None,
        moment: Moment = NOW,
    ) -> list[MemoryItem]:
        records = await self._session.run(
            "memory/page",
            {
                "tenant": tenant,
                "sessionId": session_id,
                "userId": user_id,
                "afterSeq": after[0],
                "afterId": after[1],
                "first": first,
                "needles": list(needles) if needles is not None else None,
                **moment.params(),
            },
        )
        return parsed(records, lambda r: memory_item(tenant, r["memory"]))

    async def sessions(
        self, tenant: str, prefix: str, user_id: str | None, after: str, first: int
    ) -> list[str]:
        records = await self._session.run(
            "memory/sessions_page",
            {"tenant": tenant, "prefix": prefix, "userId": user_id, "after": after, "first": first},
        )
        return [r["id"] for r in records]

    async def kinds_usage(self, tenant: str) -> tuple[int, int]:
        """Items and bytes of every kind a tenant stores in the graph besides memories
        (records, tasks, episodes ...), for the quota's exact count."""
        records = await self._session.run("tenant/usage", {"tenant": tenant})
        return sum(int(r["items"]) for r in records), sum(int(r["bytes"] or 0) for r in records)
