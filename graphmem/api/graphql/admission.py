"""Admission control at the GraphQL edge, by cost: each operation was counted when it
took its turn (``limits.FairTurns``); here the expensive root fields it will run are
counted, however written (aliases, inline fragments, fragment spreads), before it runs.
Each one costs ``expensive_cost`` units and holds one of the tenant's expensive slots
(``memory/tiers/admission.py`` keeps the counts)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
)
from starlette.requests import Request
from strawberry.extensions import SchemaExtension

#: root fields that embed, rank, or write in bulk: each holds a slot while it runs
#: (``putItems`` takes one itself when it embeds on its request path: ``memory/kinds/items``)
EXPENSIVE = frozenset(
    {
        "recall",
        "search",
        "searchItems",
        "spill",
        "prune",
        "forgetUser",
        "forgetSession",
        "forgetMemories",
        "forgetTask",
        "forgetRecords",
        "find",
        "stats",
        "retrieve",
        "remember",
        "reflect",
        "priorKnowledge",
        "similarEpisodes",
        "knowledgeGraph",  # a page of up to 1,000 entities, as MCP's read_graph
    }
)

#: counts stop here: an operation past any tenant's limit is refused whatever its count
_CAP = 1_000


def expensive_fields(document: DocumentNode, operation_name: str | None) -> int:
    """How many expensive root fields the chosen operation executes, every fragment at
    the root expanded (each visited once per spread; cycles count nothing: validation
    refuses them)."""
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    memo: dict[str, int] = {}
    visiting: set[str] = set()

    def count(selection_set: SelectionSetNode) -> int:
        total = 0
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                total += selection.name.value in EXPENSIVE
            elif isinstance(selection, InlineFragmentNode):
                total += count(selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode):
                total += spread(selection.name.value)
            if total >= _CAP:
                return _CAP
        return total

    def spread(name: str) -> int:
        if name in memo:
            return memo[name]
        definition = fragments.get(name)
        if definition is None or name in visiting:
            return 0
        visiting.add(name)
        memo[name] = count(definition.selection_set)
        visiting.discard(name)
        return memo[name]

    for definition in document.definitions:
        if not isinstance(definition, OperationDefinitionNode):
            continue
        name = definition.name.value if definition.name else None
        if operation_name not in (None, name):
            continue
        return count(definition.selection_set)
    return 0


class AdmissionControl(SchemaExtension):
    async def on_execute(self) -> AsyncIterator[None]:
        context = self.execution_context
        values = context.context if isinstance(context.context, dict) else {}
        memory, tenant = values.get("service"), values.get("tenant")
        if memory is None or tenant is None:
            yield
            return
        request = values.get("request")
        if not isinstance(request, Request):
            # A subscription over a WebSocket took no turn at the edge: count it here.
            await memory.admission.request(tenant)
        document = context.graphql_document
        count = 0 if document is None else expensive_fields(document, context.operation_name)
        if not count:
            yield
            return
        async with memory.admission.expensive(tenant, count):
            yield
