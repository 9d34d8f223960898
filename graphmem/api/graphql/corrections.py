"""Corrections (docs/concepts.md, "Corrections"): retract memories that were wrong, and
undo a retraction. Both mark; nothing is deleted."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.types import Info

from graphmem.api.graphql.context import service_of
from graphmem.memory.tiers.corrections import Correction


@strawberry.type(description="What a retract or unretract did.")
class CorrectionResult:
    item_ids: list[strawberry.ID] = strawberry.field(description="The memories named")
    changed_ids: list[strawberry.ID] = strawberry.field(
        description="Those this call changed (the others already were as asked)"
    )
    at: datetime = strawberry.field(description="Record time of the change")

    @classmethod
    def of(cls, done: Correction) -> CorrectionResult:
        return cls(
            item_ids=[strawberry.ID(i) for i in done.item_ids],
            changed_ids=[strawberry.ID(i) for i in done.changed_ids],
            at=done.at,
        )


@strawberry.type
class CorrectionMutation:
    @strawberry.mutation(
        description="Mark memories as no longer held: kept for history (reads with asOf "
        "before now, or includeHistory), left out of search, recall and the default "
        "reads. A hot item is spilled to the graph first. Undo with unretract."
    )
    async def retract(
        self, info: Info[Any, Any], item_ids: list[strawberry.ID], reason: str = ""
    ) -> CorrectionResult:
        service, tenant = service_of(info)
        done = await service.corrections.retract(tenant, [str(i) for i in item_ids], reason)
        return CorrectionResult.of(done)

    @strawberry.mutation(
        description="Hold retracted memories again from now; their retraction stays in "
        "their history (a read asOf a moment inside it still leaves them out)."
    )
    async def unretract(
        self, info: Info[Any, Any], item_ids: list[strawberry.ID]
    ) -> CorrectionResult:
        service, tenant = service_of(info)
        done = await service.corrections.unretract(tenant, [str(i) for i in item_ids])
        return CorrectionResult.of(done)
