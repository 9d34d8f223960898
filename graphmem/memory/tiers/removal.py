"""Removal by retention (prune): warm and cold memories a policy no longer keeps.
Entities left without a mention are removed with the memories that mentioned them.
Forgetting on request (a memory, a session, a user) is erasure, with a receipt and
tombstones: ``graphmem/memory/erasure/``."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from graphmem.domain.models import utcnow
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
