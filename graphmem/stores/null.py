"""What a service built without some store uses in its place."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from graphmem.domain.models import EventKind
from graphmem.errors import Unavailable


class NullBus:
    """The change feed of a service built without Redis events (notebooks, tests of pure
    logic): publishing does nothing, subscribing is refused."""

    async def publish(self, tenant: str, kind: EventKind, **data: Any) -> None:
        return None

    def subscribe(self, tenant: str) -> AsyncIterator[dict[str, Any]]:
        raise Unavailable("the change feed needs Redis events (MemoryBuilder.with_events)")
