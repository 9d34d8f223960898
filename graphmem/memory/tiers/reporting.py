"""What a session or tenant holds: the hot list, stats per tier and type, substring
search over every tier, and a session's status with its suggestions."""

from __future__ import annotations

import asyncio
from typing import Any

from graphmem.domain.models import (
    EnrichmentStatus,
    HotStatus,
    MemoryItem,
    MemoryStatus,
    Suggestion,
    Tier,
)
from graphmem.errors import BadInput
from graphmem.memory.inputs import Inputs
from graphmem.memory.tiers.sessions import Sessions
from graphmem.memory.tiers.spill import Spiller, spill_order
from graphmem.memory.writepath.worker import EnrichmentWorker
from graphmem.stores import EnrichmentQueue, GraphStore, HotTier


class Reporting:
    def __init__(
        self,
        inputs: Inputs,
        hot: HotTier,
        graph: GraphStore,
        sessions: Sessions,
        spills: Spiller,
        queue: EnrichmentQueue | None = None,
    ) -> None:
        self.inputs = inputs
        self.hot = hot
        self.graph = graph
        self.sessions = sessions
        self.spills = spills
        self.queue = queue

    async def enrichment(self, tenant: str) -> EnrichmentStatus:
        """How far the enrichment workers are with this tenant's memories."""
        if self.queue is None:
            return EnrichmentStatus(enabled=False)
        (waiting, parked), workers = await asyncio.gather(
            self.queue.tenant_backlog(tenant),
            self.queue.workers(EnrichmentWorker.silent_after_seconds),
        )
        return EnrichmentStatus(enabled=True, waiting=waiting, parked=parked, workers=workers)

    async def hot_items(self, tenant: str, session_id: str) -> list[MemoryItem]:
        """A session's hot tier, newest first."""
        Inputs.scope(session_id, None)
        items = await self.hot.items(tenant, session_id)
        return sorted(items, key=lambda i: (i.created_at, i.id), reverse=True)

    async def stats(
        self, tenant: str, session_id: str | None = None, user_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Items, tokens and bytes per tier and type: the hot tier from Redis, the rest
        from the graph."""
        Inputs.scope(session_id, user_id)
        rows = [
            {
                "tier": r["tier"],
                "type": r["type"],
                "items": int(r["items"]),
                "tokens": int(r["tokens"]),
                "bytes": int(r["bytes"]),
            }
            for r in await self.graph.scans.stats(tenant, session_id, user_id)
            if r["tier"] != Tier.HOT.value  # a promoted node's hot copy is counted below
        ]
        hot: dict[str, dict[str, int]] = {}
        sessions = [session_id] if session_id else await self.hot.index.sessions(tenant)
        for sid in sessions:
            for item in await self.hot.items(tenant, sid):
                if user_id is not None and item.user_id != user_id:
                    continue
                row = hot.setdefault(item.type.value, {"items": 0, "tokens": 0, "bytes": 0})
                row["items"] += 1
                row["tokens"] += item.token_count
                row["bytes"] += len(item.content)
        rows += [{"tier": "hot", "type": t, **v} for t, v in sorted(hot.items())]
        return sorted(rows, key=lambda r: (["hot", "warm", "cold"].index(r["tier"]), r["type"]))

    async def find(
        self,
        tenant: str,
        text: str,
        session_id: str | None = None,
        user_id: str | None = None,
        limit: int = 20,
    ) -> list[MemoryItem]:
        """Substring search (any case) over every tier, newest first."""
        Inputs.scope(session_id, user_id)
        self.inputs.limit(limit)
        if not text.strip():
            raise BadInput("text: must not be empty", field="text")
        needle = text.lower()
        hot: list[MemoryItem] = []
        sessions = [session_id] if session_id else await self.hot.index.sessions(tenant)
        for sid in sessions:
            hot += [
                i
                for i in await self.hot.items(tenant, sid)
                if needle in i.content.lower() and (user_id is None or i.user_id == user_id)
            ]
        graph = await self.graph.scans.substring(tenant, needle, session_id, user_id, limit)
        seen = {i.id for i in hot}
        found = hot + [i for i in graph if i.id not in seen]
        return sorted(found, key=lambda i: (i.created_at, i.seq), reverse=True)[:limit]

    async def status(self, tenant: str, session_id: str) -> MemoryStatus:
        """The session's tiers, after the automatic spill its last add started (an add
        returns before its spill ends; the status waits for it, up to spillWaitSeconds)."""
        Inputs.scope(session_id, None)
        await self.spills.settled(tenant, session_id, self.sessions.defaults.spill_wait_seconds)
        hot_items, graph_counts, overrides = await asyncio.gather(
            self.hot.items(tenant, session_id),
            self.graph.scans.count_by_tier(tenant, session_id),
            self.hot.index.session_config(tenant, session_id),
        )
        config = self.sessions.effective(overrides)
        limit = config.hot_token_limit
        hot_tokens = sum(i.token_count for i in hot_items)
        warm, cold = graph_counts[Tier.WARM], graph_counts[Tier.COLD]
        enriched = await self.hot.enrichment(
            tenant,
            session_id,
            [i.id for i in hot_items],
            model=self.spills.enrichment.embedder.name,
        )
        suggestions: list[Suggestion] = []
        if hot_tokens > 0.9 * limit:
            candidates = [i.id for i in spill_order(hot_items)[: config.spill_count]]
            suggestions.append(
                Suggestion(
                    type="spill",
                    reason=f"Hot memory at {100 * hot_tokens / limit:.0f}% of its "
                    f"{limit}-token budget (>90%)",
                    item_ids=candidates,
                )
            )
        if cold.items > config.max_cold_items:
            suggestions.append(
                Suggestion(
                    type="prune",
                    reason=f"Cold storage holds {cold.items} items, more than "
                    f"maxColdItems={config.max_cold_items}",
                )
            )
        if hot_tokens < 0.1 * limit and (warm.items + cold.items) > 0:
            suggestions.append(
                Suggestion(
                    type="recall",
                    reason="Hot memory is nearly empty while warm/cold storage holds "
                    f"{warm.items + cold.items} items; recall what the next turn needs",
                )
            )
        return MemoryStatus(
            session_id=session_id,
            hot=HotStatus(
                items=len(hot_items),
                tokens=hot_tokens,
                limit=limit,
                utilization_percent=round(100.0 * hot_tokens / limit, 2),
                enriched=len(enriched),
            ),
            warm=warm,
            cold=cold,
            suggestions=suggestions,
        )
