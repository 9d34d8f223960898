"""The operation-cost guard: one linear pass over a parsed document, before validation.

graphql-core's validation rules, and strawberry's alias limiter, walk fragment spreads
recursively. A document of a few hundred bytes in which every fragment spreads the next
one twice expands to 2^n fields: walking it pins a core and, on the event loop, stops
every other request. This pass computes the depth, the alias count and the expanded
field count of each operation with every fragment visited once (memoised), so its cost
is linear in the document, and rejects the document before any rule expands it.

Only a document that passes reaches graphql-core's validation, and then in a worker
thread, so even a legitimately large first-seen document does not hold the event loop.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Hashable
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLSchema,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    parse,
)
from graphql import validate as graphql_validate
from graphql.validation import ASTValidationRule
from strawberry.extensions import SchemaExtension
from strawberry.schema.validation_rules.maybe_null import MaybeNullValidationRule
from strawberry.schema.validation_rules.one_of import OneOfInputValidationRule

from graphmem.api.graphql.lengths import MAX_INT_DIGITS, long_integer, too_long
from graphmem.cputime import in_thread


@dataclass(frozen=True)
class Limits:
    """What one operation may cost. ``max_fields`` counts fields as execution would
    see them, every fragment spread expanded."""

    max_depth: int = 15
    max_aliases: int = 15
    max_fields: int = 500
    max_tokens: int = 2_000
    max_chars: int = 100_000
    #: any one string argument, literal or variable (memory content has the same cap)
    max_string: int = 20_000


@dataclass(frozen=True)
class Cost:
    depth: int = 0
    aliases: int = 0
    fields: int = 0


class DocumentTooCostly(ValueError):
    pass


def operation_costs(document: DocumentNode, cap: int) -> dict[str, Cost]:
    """Cost of every operation in ``document``, keyed by operation name ("" when anonymous).

    Counts saturate at ``cap`` so that the arithmetic stays small whatever the nesting.
    Unknown fragments and fragment cycles count as empty: the standard validation rules
    report them, and they must not make this pass loop.
    """
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    memo: dict[str, Cost] = {}
    in_progress: set[str] = set()

    def fragment_cost(name: str) -> Cost:
        known = memo.get(name)
        if known is not None:
            return known
        definition = fragments.get(name)
        if definition is None or name in in_progress:
            return Cost()
        in_progress.add(name)
        cost = selection_cost(definition.selection_set)
        in_progress.discard(name)
        memo[name] = cost
        return cost

    def selection_cost(selection_set: SelectionSetNode | None) -> Cost:
        if selection_set is None:
            return Cost()
        depth = aliases = fields = 0
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                inner = selection_cost(selection.selection_set)
                depth = max(depth, inner.depth + 1)
                aliases += inner.aliases + (1 if selection.alias is not None else 0)
                fields += inner.fields + 1
            else:
                if isinstance(selection, InlineFragmentNode):
                    inner = selection_cost(selection.selection_set)
                elif isinstance(selection, FragmentSpreadNode):
                    inner = fragment_cost(selection.name.value)
                else:  # pragma: no cover - graphql-core has no other selection kinds
                    continue
                depth = max(depth, inner.depth)
                aliases += inner.aliases
                fields += inner.fields
            aliases, fields = min(aliases, cap), min(fields, cap)
        return Cost(depth, aliases, fields)

    costs: dict[str, Cost] = {}
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            name = definition.name.value if definition.name else ""
            costs[name] = selection_cost(definition.selection_set)
    return costs


def check(document: DocumentNode, limits: Limits) -> None:
    """Raises ``DocumentTooCostly`` naming the first limit an operation exceeds."""
    cap = max(limits.max_fields, limits.max_aliases) + 1
    for name, cost in operation_costs(document, cap).items():
        label = f"operation {name!r}" if name else "the operation"
        if cost.depth > limits.max_depth:
            raise DocumentTooCostly(
                f"{label} is nested {cost.depth} deep; the maximum depth is {limits.max_depth}"
            )
        if cost.aliases > limits.max_aliases:
            raise DocumentTooCostly(
                f"{label} uses more than {limits.max_aliases} aliases"
                " (fragments counted where they are spread)"
            )
        if cost.fields > limits.max_fields:
            raise DocumentTooCostly(
                f"{label} selects more than {limits.max_fields} fields"
                " (fragments counted where they are spread)"
            )


class _Lru:
    """A bounded mapping with a lookup that does not compute: the caller decides where
    (event loop or worker thread) a miss is computed."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.items: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable) -> Any:
        value = self.items.get(key, _MISSING)
        if value is not _MISSING:
            self.items.move_to_end(key)
        return value

    def put(self, key: Hashable, value: Any) -> None:
        self.items[key] = value
        self.items.move_to_end(key)
        while len(self.items) > self.maxsize:
            self.items.popitem(last=False)


_MISSING = object()
# The rules strawberry's own validate_document adds to graphql-core's.
_STRAWBERRY_RULES = (MaybeNullValidationRule, OneOfInputValidationRule)
# Below this size a parse takes well under a millisecond: not worth a thread hop.
_INLINE_PARSE_CHARS = 2_000
# Keyed by query text: a cached document is validated again only when it leaves the LRU.
_documents = _Lru(256)
_verdicts = _Lru(256)


def validate(
    schema: GraphQLSchema,
    document: DocumentNode,
    rules: tuple[type[ASTValidationRule], ...],
    limits: Limits,
) -> list[GraphQLError]:
    """The cost check, then graphql-core's rules only for a document that passed it."""
    try:
        check(document, limits)
    except DocumentTooCostly as exc:
        return [GraphQLError(str(exc), extensions={"reason": "TOO_COSTLY"})]
    if (name := long_integer(document)) is not None:
        message = f"{name}: an integer of more than {MAX_INT_DIGITS} digits (at most 64 bits)"
        return [GraphQLError(message, extensions={"field": name, "reason": "TOO_LONG"})]
    # Ten errors say enough; each one costs the event loop its source locations later.
    return graphql_validate(schema, document, (*rules, *_STRAWBERRY_RULES), max_errors=10)


class DocumentGuard(SchemaExtension):
    """Parses with a token limit, checks the cost, then validates; parse and validation
    results are cached per query text (bounded LRU), since agents send the same few
    documents over and over.

    Every step that may take more than a millisecond runs in a worker thread.
    """

    def __init__(self, limits: Limits) -> None:
        super().__init__()
        self.limits = limits

    async def on_parse(self) -> AsyncIterator[None]:
        context = self.execution_context
        query = context.query
        if query is not None:
            context.graphql_document = await self.parse(query)
        yield

    async def parse(self, query: str) -> DocumentNode:
        """Raises the syntax error itself: left to strawberry, a failed text would be
        parsed a second time on the event loop."""
        if len(query) > self.limits.max_chars:
            raise GraphQLError(
                f"the document is longer than {self.limits.max_chars} characters;"
                " send large values as variables",
                extensions={"reason": "TOO_LONG"},
            )
        key = (query, self.limits.max_tokens)
        document = _documents.get(key)
        if document is _MISSING:
            if len(query) > _INLINE_PARSE_CHARS:
                document = await in_thread(parse, query, max_tokens=self.limits.max_tokens)
            else:
                document = parse(query, max_tokens=self.limits.max_tokens)
            _documents.put(key, document)
        assert isinstance(document, DocumentNode)
        return document

    async def on_validate(self) -> AsyncIterator[None]:
        context = self.execution_context
        document = context.graphql_document
        if document is not None and context.pre_execution_errors is None:
            schema = context.schema._schema
            rules = tuple(context.validation_rules)
            key = (context.query, id(schema), rules, self.limits)
            errors = _verdicts.get(key)
            if errors is _MISSING:
                # A document seen for the first time is checked in a worker thread: the
                # cost check bounds validation, and the thread keeps even that bounded
                # work from holding the event loop (the GIL switches every few ms).
                errors = await in_thread(validate, schema, document, rules, self.limits)
                if context.query is not None:
                    _verdicts.put(key, errors)
            context.pre_execution_errors = list(errors)
            if not errors:
                found = too_long(document, context.variables, self.limits.max_string)
                if found is not None:
                    name, limit = found
                    context.pre_execution_errors = [
                        GraphQLError(
                            f"{name}: at most {limit} characters",
                            extensions={"field": name, "reason": "TOO_LONG"},
                        )
                    ]
        yield
