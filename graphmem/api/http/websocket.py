"""What a graphql-transport-ws connection may hold: subscriptions per connection and per
tenant in this process, refused with a typed error (strawberry's own per-connection
limit answers without a code).

Each subscription holds a Redis pub/sub connection for as long as it lasts
(``events.EventBus.subscribe``), so a tenant opening them without bound would take Redis'
connections from every other tenant. The message size is ``limits.BodyLimit``'s; the
document's cost is the guard's, as over HTTP.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from graphql import GraphQLError
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.types import (
    ErrorMessage,
    SubscribeMessage,
)

from graphmem.errors import RateLimited


class TenantSubscriptions:
    """How many subscriptions each tenant holds in this process."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held: Counter[str] = Counter()

    def take(self, tenant: str) -> bool:
        if self.held[tenant] >= self.limit:
            return False
        self.held[tenant] += 1
        return True

    def give(self, tenant: str) -> None:
        self.held[tenant] -= 1
        if self.held[tenant] <= 0:
            del self.held[tenant]


class LimitedTransportWS(BaseGraphQLTransportWSHandler[Any, Any]):
    """strawberry's graphql-transport-ws handler with both limits checked, and counted,
    before an operation starts. The view provides ``tenant_subscriptions``."""

    async def handle_subscribe(self, message: SubscribeMessage) -> None:
        op = message["id"]
        if not self.connection_acknowledged or op in self.operations:
            await super().handle_subscribe(message)  # strawberry closes the connection
            return
        limit, tenant = self.max_subscriptions_per_connection, self.context.get("tenant")
        if limit is not None and len(self.operations) >= limit:
            await self._refuse(
                op,
                f"this connection holds {limit} subscriptions, as many as one may;"
                " complete one first",
            )
            return
        held: TenantSubscriptions = self.view.tenant_subscriptions  # type: ignore[attr-defined]
        if not tenant or not held.take(tenant):
            await self._refuse(
                op,
                f"this key holds {held.limit} subscriptions in this API process, as many"
                " as it may; complete one first",
            )
            return
        task = None
        try:
            await super().handle_subscribe(message)
            started = self.operations.get(op)
            task = started.task if started is not None else None
        finally:
            if task is None:  # refused, or the message was malformed
                held.give(tenant)
        if task is not None:
            # A callback, not a finally in the task: a task cancelled before its first
            # step (a complete right behind the subscribe) never runs its body.
            task.add_done_callback(lambda _: held.give(tenant))

    async def _refuse(self, op: str, message: str) -> None:
        error = RateLimited(message, retryAfterMs=1000)
        formatted = GraphQLError(error.message, extensions=error.extensions()).formatted
        await self.send_message(ErrorMessage(id=op, type="error", payload=[formatted]))
