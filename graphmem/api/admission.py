"""Admission control at the GraphQL edge: every operation counts against its tenant's
requests per second, and operations whose root fields are expensive hold one of the
tenant's slots while they run (``memory/admission.py`` keeps the counts)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from graphql import FieldNode, OperationDefinitionNode
from strawberry.extensions import SchemaExtension

#: root fields that embed, rank, or write in bulk: each holds a slot while it runs
EXPENSIVE = frozenset(
    {
        "recall",
        "search",
        "spill",
        "prune",
        "forgetUser",
        "find",
        "stats",
        "retrieve",
        "remember",
        "reflect",
        "priorKnowledge",
        "similarEpisodes",
    }
)


class AdmissionControl(SchemaExtension):
    async def on_execute(self) -> AsyncIterator[None]:
        context = self.execution_context
        values = context.context if isinstance(context.context, dict) else {}
        memory, tenant = values.get("service"), values.get("tenant")
        if memory is None or tenant is None:
            yield
            return
        await memory.admission.request(tenant)
        if self._expensive():
            async with memory.admission.expensive(tenant):
                yield
        else:
            yield

    def _expensive(self) -> bool:
        context = self.execution_context
        document = context.graphql_document
        if document is None:
            return False
        for definition in document.definitions:
            if not isinstance(definition, OperationDefinitionNode):
                continue
            name = definition.name.value if definition.name else None
            if context.operation_name not in (None, name):
                continue
            for selection in definition.selection_set.selections:
                if isinstance(selection, FieldNode) and selection.name.value in EXPENSIVE:
                    return True
        return False
