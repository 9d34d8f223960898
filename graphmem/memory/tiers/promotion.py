"""Promotion back into the hot tier, and the cascading read (hot first, then the graph)."""

from __future__ import annotations

from collections.abc import Sequence

from graphmem.domain.models import EventKind, MemoryItem, Tier, utcnow
from graphmem.errors import BadInput, NotFound
from graphmem.memory.inputs import Inputs
from graphmem.memory.policy import MemoryRules
from graphmem.memory.tiers.sessions import Sessions
from graphmem.memory.tiers.spill import Spiller
from graphmem.memory.writepath.changes import ScopeChanges
from graphmem.metrics import Metrics
from graphmem.settings import MemoryConfig
from graphmem.stores import ChangeFeed, GraphStore, HotTier


class Promotion:
    def __init__(
        self,
        hot: HotTier,
        graph: GraphStore,
        sessions: Sessions,
        spiller: Spiller,
        rules: MemoryRules,
        metrics: Metrics,
        events: ChangeFeed,
        changes: ScopeChanges | None = None,
    ) -> None:
        self.hot = hot
        self.graph = graph
        self.sessions = sessions
        self.spiller = spiller
        self.rules = rules
        self.metrics = metrics
        self.events = events
        self.changes = changes or ScopeChanges(None)

    async def items(
        self, tenant: str, items: Sequence[MemoryItem], config: MemoryConfig | None = None
    ) -> list[MemoryItem]:
        """Copy graph memories into their sessions' hot tiers, spilling others if that
        takes a session over budget."""
        by_session: dict[str, list[MemoryItem]] = {}
        for item in items:
            hot = item.model_copy(update={"tier": Tier.HOT, "relevance_score": 1.0})
            by_session.setdefault(item.session_id, []).append(hot)
        promoted: list[MemoryItem] = []
        for session_id, batch in by_session.items():
            # Hot copy first, then mark the graph node: a crash in between leaves the item
            # in both tiers (visible twice), never in neither.
            total, overrides = await self.hot.put(tenant, session_id, batch)
            await self.graph.mark_hot(tenant, [i.id for i in batch], utcnow())
            await self.changes.items(tenant, batch)
            promoted += batch
            await self.events.publish(
                tenant, EventKind.PROMOTED, sessionId=session_id, itemIds=[i.id for i in batch]
            )
            session_config = config if config is not None else self.sessions.effective(overrides)
            if total > session_config.hot_token_limit:
                await self.spiller.to_budget(
                    tenant, session_id, session_config, keep=[i.id for i in batch]
                )
        self.metrics.promoted(tenant, len(promoted))
        return promoted

    async def promote(self, tenant: str, item_id: str) -> MemoryItem:
        Inputs.item_id(item_id)
        found = await self.graph.get(tenant, [item_id])
        if found and found[0].retracted_at is not None:
            # a retracted memory is kept for history, not brought back to work with
            raise BadInput(f"itemId: {item_id} is retracted (unretract it first)", field="itemId")
        if found and found[0].tier is not Tier.HOT:
            (item,) = await self.items(tenant, found)
            return item
        session_id = found[0].session_id if found else await self.hot.session_of(tenant, item_id)
        if session_id:
            hot = await self.hot.get(tenant, session_id, [item_id])
            if hot:
                return hot[0]
            if found:  # marked hot in the graph but its hot copy is gone: promote again
                (item,) = await self.items(tenant, found)
                return item
        raise NotFound(f"no memory {item_id}", itemId=item_id)

    async def get(self, tenant: str, item_id: str) -> MemoryItem | None:
        """The cascading read: hot first, then (``read_fallback``) the graph, promoting
        what the graph returns when ``promote_on_read`` is on."""
        Inputs.item_id(item_id)
        session_id = await self.hot.session_of(tenant, item_id)
        if session_id:
            found = await self.hot.get(tenant, session_id, [item_id])
            if found:
                return found[0]
        if not self.rules.read_fallback:
            return None
        graph = await self.graph.get(tenant, [item_id])
        if not graph:
            return None
        if self.rules.promote_on_read and graph[0].retracted_at is None:
            (promoted,) = await self.items(tenant, graph)
            return promoted
        return graph[0]
