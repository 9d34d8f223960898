"""Removal: forget one memory, forget everything a user owns, and retention (prune).
Entities left without a mention are removed with the memories that mentioned them."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from graphmem.domain.models import EventKind, utcnow
from graphmem.memory.entities.memory import EntityMemory
from graphmem.memory.inputs import Inputs, bad_input
from graphmem.memory.tiers.retention import PrunePolicy
from graphmem.memory.tiers.retention import select as retention_select
from graphmem.memory.tiers.sessions import Sessions
from graphmem.memory.writepath.changes import ScopeChanges
from graphmem.stores import ChangeFeed, GraphStore, HotTier


class Removal:
    def __init__(
        self,
        hot: HotTier,
        graph: GraphStore,
        sessions: Sessions,
        events: ChangeFeed,
        changes: ScopeChanges | None = None,
        entities: EntityMemory | None = None,
    ) -> None:
        self.hot = hot
        self.graph = graph
        self.sessions = sessions
        self.events = events
        self.changes = changes or ScopeChanges(None)
        self.entities = entities

    async def forget(self, tenant: str, item_id: str) -> bool:
        """Remove a memory from every tier; False when the tenant has no such memory."""
        Inputs.item_id(item_id)
        session_id = await self.hot.session_of(tenant, item_id)
        if session_id is None:
            # The lookup by id is cleaned after a removal, on another key (another
            # Redis Cluster node), so a promotion racing a spill can leave a hot item
            # it does not name: the graph's copy knows the session too.
            found = await self.graph.get(tenant, [item_id])
            session_id = found[0].session_id if found else None
        removed_hot: list[str] = []
        if session_id is None:
            done = await self.graph.delete_many(tenant, [item_id])
        else:
            # Under the session lock, so a spill in flight cannot write the item back.
            async with self.sessions.lock(tenant, session_id):
                removed_hot = await self.hot.remove(tenant, session_id, [item_id])
                done = await self.graph.delete_many(tenant, [item_id])
        await self.changes.written(tenant, done.located)
        if done.keys and self.entities is not None:
            await self.entities.store.refresh(tenant, done.keys)  # drops orphaned entities
        forgotten = bool(removed_hot) or bool(done.removed)
        if forgotten:
            await self.events.publish(
                tenant, EventKind.FORGOTTEN, sessionId=session_id, itemIds=[item_id]
            )
        return forgotten

    async def forget_user(self, tenant: str, user_id: str) -> dict[str, int]:
        """Remove everything a user owns: memories in every tier, the entities only they
        mentioned, their MENTIONED edges, sessions left empty and the user node."""
        Inputs.scope(None, user_id)
        hot_removed = 0
        for session_id in await self.hot.index.sessions(tenant):
            async with self.sessions.lock(tenant, session_id):
                ids = [
                    i.id for i in await self.hot.items(tenant, session_id) if i.user_id == user_id
                ]
                hot_removed += len(await self.hot.remove(tenant, session_id, ids))
        result = await self.graph.forget_user(tenant, user_id)
        await self.changes.written(tenant, result.located)
        entities = 0
        if self.entities is not None and result.keys:
            entities = await self.entities.store.refresh(tenant, result.keys)
        return {
            "hotMemories": hot_removed,
            "graphMemories": result.removed,
            "sessions": result.sessions,
            "entities": entities,
        }

    async def prune(
        self, tenant: str, policy: PrunePolicy | dict[str, Any], dry_run: bool = True
    ) -> dict[str, Any]:
        """Apply a retention policy to warm and cold memories; a dry run reports exactly
        the ids an apply of the same policy removes (given no writes in between)."""
        try:
            policy = policy if isinstance(policy, PrunePolicy) else PrunePolicy(**policy)
        except ValidationError as exc:
            raise bad_input(exc) from exc
        Inputs.scope(policy.session_id, policy.user_id)
        candidates = await self.graph.scans.prune_candidates(
            tenant,
            [t.value for t in policy.tiers],
            [t.value for t in policy.types] if policy.types else None,
            policy.session_id,
            policy.user_id,
        )
        ids = retention_select(candidates, policy, utcnow())
        by_id = {c["id"]: c for c in candidates}
        report: dict[str, Any] = {
            "dryRun": dry_run,
            "ids": ids,
            "count": len(ids),
            "bytes": sum(int(by_id[i]["bytes"] or 0) for i in ids),
            "removed": 0,
        }
        if dry_run or not ids:
            return report
        for start in range(0, len(ids), 500):
            done = await self.graph.delete_many(tenant, ids[start : start + 500])
            await self.changes.written(tenant, done.located)
            report["removed"] += done.removed
            if self.entities is not None and done.keys:
                await self.entities.store.refresh(tenant, done.keys)
        return report
