"""The GraphQL schema: the domain fragments merged into one Query and one Mutation.

Each domain module (memory, entities, episodes, kinds, feed) holds thin resolvers that
hand the caller's tenant to one capability of the service; this module only assembles
them and types the errors.
"""

from __future__ import annotations

from typing import Any

import strawberry
from graphql.error import GraphQLError
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.types import ExecutionContext, ExecutionResult
from strawberry.types.graphql import OperationType

from graphmem.api.graphql.admission import AdmissionControl
from graphmem.api.graphql.corrections import CorrectionMutation
from graphmem.api.graphql.entities import EntityMutation, EntityQuery
from graphmem.api.graphql.episodes import EpisodeMutation, EpisodeQuery
from graphmem.api.graphql.erasure import ErasureMutation, ErasureQuery
from graphmem.api.graphql.errors import TypedErrors, typed_error
from graphmem.api.graphql.feed import Subscription
from graphmem.api.graphql.guard import DocumentGuard, Limits
from graphmem.api.graphql.items import ItemMutation, ItemQuery
from graphmem.api.graphql.kinds import KindsMutation, KindsQuery
from graphmem.api.graphql.knowledge import KnowledgeMutation, KnowledgeQuery
from graphmem.api.graphql.memory import MemoryMutation, MemoryQuery
from graphmem.api.graphql.task_transfer import TaskTransferMutation, TaskTransferQuery


# The SDL lists the fragments' fields in base order, so memory's core operations come first.
@strawberry.type
class Query(
    MemoryQuery,
    EntityQuery,
    EpisodeQuery,
    TaskTransferQuery,
    KindsQuery,
    ItemQuery,
    KnowledgeQuery,
    ErasureQuery,
):
    pass


@strawberry.type
class Mutation(
    MemoryMutation,
    EntityMutation,
    EpisodeMutation,
    TaskTransferMutation,
    KindsMutation,
    ItemMutation,
    KnowledgeMutation,
    ErasureMutation,
    CorrectionMutation,
):
    pass


class EventExecutionContext(StrawberryGraphQLCoreExecutionContext):
    """graphql-core (3.3) executes each subscription event with a shallow copy of the
    subscription's executor, and the copies share its memo of collected subfields. That
    memo is keyed by field lists each event builds anew and keeps them alive: it grew by
    every event for the life of the subscription (an API process with four busy
    subscriptions gained about 3 MB a minute). Each event gets a memo of its own."""

    def build_per_event_executor(self, payload: Any) -> Any:
        executor = super().build_per_event_executor(payload)
        if isinstance(getattr(executor, "_relevant_sub_fields", None), dict):
            executor._relevant_sub_fields = {}
        return executor


class GraphmemSchema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        # TypedErrors already logged what was unexpected; client mistakes (bad input,
        # unknown ids) are not server problems and would only flood the log.
        return None

    async def stream(self, *args: Any, **kwargs: Any) -> Any:
        # Streams are graphql-transport-ws's alone (no HTTP streaming protocol is on):
        # subscriptions only. Queries and mutations go over HTTP, where each takes its
        # turn of the process's fair share (limits.FairTurns).
        if kwargs.get("allowed_operation_types") is None:
            kwargs["allowed_operation_types"] = (OperationType.SUBSCRIPTION,)
        return await super().stream(*args, **kwargs)

    async def execute(self, *args: Any, **kwargs: Any) -> ExecutionResult:
        # Subscriptions stream over graphql-transport-ws (``subscribe``); executed once
        # over HTTP, their resolver has nothing to return.
        allowed = kwargs.get("allowed_operation_types")
        if allowed is not None:
            kwargs["allowed_operation_types"] = set(allowed) - {OperationType.SUBSCRIPTION}
        result = await super().execute(*args, **kwargs)
        # An error raised by an extension's parse hook (the guard's "too long") leaves
        # the operation before TypedErrors sees the result: type it here.
        if result.errors and any(not (e.extensions or {}).get("code") for e in result.errors):
            result.errors = [
                e if (e.extensions or {}).get("code") else typed_error(e) for e in result.errors
            ]
        return result


def build_schema(limits: Limits | None = None) -> strawberry.Schema:
    limits = limits or Limits()
    return GraphmemSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        execution_context_class=EventExecutionContext,
        extensions=[
            # Token, depth, alias and expanded-size limits in one linear pass before
            # any fragment-expanding rule runs; parse and validation cached per text.
            lambda: DocumentGuard(limits),
            AdmissionControl,
            TypedErrors,
        ],
    )
