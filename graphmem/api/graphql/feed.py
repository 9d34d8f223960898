"""The change feed: memory events from every API replica, filtered per subscriber."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import strawberry
from strawberry.types import Info

from graphmem.api.graphql.context import service_of
from graphmem.api.graphql.types import EventFilter, MemoryEvent


@strawberry.type
class Subscription:
    @strawberry.subscription(
        description="The tenant's change feed over graphql-transport-ws: added, spilled, "
        "promoted, recalled, forgotten, retracted, restored, entity merged and task transferred "
        "events, store items put and deleted, knowledge-graph entities, relations and "
        "observations created, added and deleted, from every API replica (Redis pub/sub)."
    )
    async def memory_events(
        self, info: Info[Any, Any], filter: EventFilter | None = None
    ) -> AsyncGenerator[MemoryEvent, None]:
        service, tenant = service_of(info)
        async for event in service.subscribe(tenant):
            if filter is None or filter.matches(event):
                yield MemoryEvent.of(event)
