"""Corrections: retract memories an agent learned were wrong, and undo that.

A retraction marks, it never deletes (docs/concepts.md, "Corrections"): the memory stays
in the graph with ``retractedAt`` and a reason, left out of search, recall and the
default reads, and seen by a read at an earlier moment or with ``includeHistory``. A
memory still in the hot tier is spilled first (an item leaves Redis only once the graph
holds it), so that the graph is the one place a retraction is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel

from graphmem.domain.models import EventKind, utcnow
from graphmem.errors import BadInput, NotFound
from graphmem.memory.inputs import Inputs, text_problem
from graphmem.memory.tiers.spill import Spiller
from graphmem.memory.writepath.changes import ScopeChanges
from graphmem.stores import ChangeFeed, GraphStore, HotTier

#: the longest reason a retraction keeps
MAX_REASON_CHARS = 1000


class Correction(BaseModel):
    """What a retract or unretract did: the memories named, those this call changed
    (the others already were as asked), and when."""

    item_ids: list[str]
    changed_ids: list[str]
    at: datetime


class Corrections:
    def __init__(
        self,
        inputs: Inputs,
        hot: HotTier,
        graph: GraphStore,
        spills: Spiller,
        events: ChangeFeed,
        changes: ScopeChanges | None = None,
    ) -> None:
        self.inputs = inputs
        self.hot = hot
        self.graph = graph
        self.spills = spills
        self.events = events
        self.changes = changes or ScopeChanges(None)

    def _ids(self, item_ids: Sequence[str]) -> list[str]:
        if not item_ids:
            raise BadInput("itemIds: at least one memory id is required", field="itemIds")
        most = self.inputs.limits.max_batch_items
        if len(item_ids) > most:
            raise BadInput(f"itemIds: at most {most} per call", field="itemIds")
        for item_id in item_ids:
            Inputs.item_id(item_id)
        return list(dict.fromkeys(item_ids))

    async def retract(self, tenant: str, item_ids: Sequence[str], reason: str = "") -> Correction:
        """Mark memories no longer held; NOT_FOUND (and nothing changed) when one of
        them is not the tenant's."""
        ids = self._ids(item_ids)
        if len(reason) > MAX_REASON_CHARS:
            raise BadInput(f"reason: at most {MAX_REASON_CHARS} characters", field="reason")
        if (problem := text_problem(reason)) is not None:
            raise BadInput(f"reason: {problem}", field="reason")
        in_hot = await self._hot_sessions(tenant, ids)
        in_graph = {i.id for i in await self.graph.get(tenant, ids)}
        missing = sorted(set(ids) - in_graph - {i for held in in_hot.values() for i in held})
        if missing:
            raise NotFound("no such memories: " + ", ".join(missing), itemIds=missing)
        for session_id, held in in_hot.items():
            parked = [i.id for i in await self.hot.get(tenant, session_id, held) if i.parked]
            if parked:
                raise BadInput(
                    "the graph cannot hold these hot items, so they cannot be retracted "
                    "(forget them instead): " + ", ".join(parked),
                    field="itemIds",
                )
        for session_id, held in in_hot.items():
            await self.spills.spill(tenant, session_id, item_ids=held)
        now = utcnow()
        done = await self.graph.retract(tenant, ids, reason, now)
        return await self._done(tenant, ids, done, now, EventKind.RETRACTED)

    async def unretract(self, tenant: str, item_ids: Sequence[str]) -> Correction:
        """Hold retracted memories again from now (their retraction stays in their
        history); NOT_FOUND (and nothing changed) when one of them is not the tenant's."""
        ids = self._ids(item_ids)
        found = {i.id for i in await self.graph.get(tenant, ids)}
        missing = sorted(set(ids) - found)
        if missing:
            raise NotFound("no such memories: " + ", ".join(missing), itemIds=missing)
        now = utcnow()
        done = await self.graph.unretract(tenant, ids, now)
        return await self._done(tenant, ids, done, now, EventKind.RESTORED)

    async def _hot_sessions(self, tenant: str, ids: Sequence[str]) -> dict[str, list[str]]:
        """The ids of the hot tier, by session."""
        out: dict[str, list[str]] = {}
        for item_id in ids:
            session_id = await self.hot.session_of(tenant, item_id)
            if session_id is not None and await self.hot.get(tenant, session_id, [item_id]):
                out.setdefault(session_id, []).append(item_id)
        return out

    async def _done(
        self,
        tenant: str,
        ids: list[str],
        done: Sequence[tuple[tuple[str, str | None, str | None], bool]],
        now: datetime,
        kind: EventKind,
    ) -> Correction:
        changed = [located for located, fresh in done if fresh]
        # the scopes' views in memory leave a retracted memory out (and take one back)
        await self.changes.written(tenant, changed)
        changed_ids = [i for i, _, _ in changed]
        if changed_ids:
            await self.events.publish(tenant, kind, itemIds=changed_ids)
        return Correction(item_ids=ids, changed_ids=changed_ids, at=now)
