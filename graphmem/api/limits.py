"""Request limits: body size (ASGI middleware) and query depth (a validation rule)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress
from functools import cache, lru_cache

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValidationRule,
    parse,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.extensions import AddValidationRules, SchemaExtension
from strawberry.extensions.max_aliases import create_validator

from ..errors import ErrorCode
from .errors import error_response


class BodyLimit:
    """Reads at most ``max_bytes`` of a request body; larger requests get 413."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._reject(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._reject(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _reject(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            413,
            f"request body larger than {self.max_bytes} bytes",
            ErrorCode.BAD_INPUT,
            maxBytes=self.max_bytes,
        )
        await response(scope, receive, send)


class DepthLimit(AddValidationRules):
    """Rejects documents nested deeper than ``max_depth``, introspection included.

    strawberry's QueryDepthLimiter skips ``__schema``/``__type`` fields, and nested
    ``ofType`` selections are the classic way to make an expensive introspection
    query; this rule counts every field. The standard introspection query of
    GraphQL IDEs is 13 deep.
    """

    def __init__(self, max_depth: int) -> None:
        super().__init__([_depth_rule(max_depth)])


@lru_cache(maxsize=256)
def _parse(query: str, max_tokens: int | None) -> DocumentNode:
    return parse(query, max_tokens=max_tokens)


class ParseCache(SchemaExtension):
    """Parses each distinct query text once (bounded LRU). strawberry's ParserCache raises
    syntax errors from inside its hook, past the error typing; here a text that does not
    parse is left to strawberry's own parse, which reports it as BAD_INPUT."""

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        if context.query is not None:
            with suppress(GraphQLError):
                context.graphql_document = _parse(
                    context.query, context.parse_options.get("max_tokens")
                )
        yield


class AliasLimit(AddValidationRules):
    """strawberry's MaxAliasesLimiter with one rule class per limit, so that validation
    results can be cached (see ``_depth_rule``)."""

    def __init__(self, max_aliases: int) -> None:
        super().__init__([_alias_rule(max_aliases)])


@cache
def _alias_rule(max_aliases: int) -> type[ValidationRule]:
    return create_validator(max_aliases)


@cache
def _depth_rule(max_depth: int) -> type[ValidationRule]:
    # One class per limit: validation results are cached per (document, rules), so a
    # fresh class per request would never hit the cache.
    class DepthRule(ValidationRule):
        def enter_operation_definition(self, node: OperationDefinitionNode, *_: object) -> None:
            fragments = {
                d.name.value: d
                for d in self.context.document.definitions
                if isinstance(d, FragmentDefinitionNode)
            }
            depth = _depth(node.selection_set, fragments, 0, frozenset())
            if depth > max_depth:
                self.report_error(
                    GraphQLError(
                        f"query depth {depth} exceeds the maximum depth of {max_depth}",
                        node,
                    )
                )

    return DepthRule


def _depth(
    selection_set: SelectionSetNode | None,
    fragments: dict[str, FragmentDefinitionNode],
    depth: int,
    seen: frozenset[str],
) -> int:
    if selection_set is None:
        return depth
    deepest = depth
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            inner = _depth(selection.selection_set, fragments, depth + 1, seen)
        elif isinstance(selection, InlineFragmentNode):
            inner = _depth(selection.selection_set, fragments, depth, seen)
        elif isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            if name in seen or name not in fragments:
                continue  # cycles and unknown fragments are reported by standard rules
            inner = _depth(fragments[name].selection_set, fragments, depth, seen | {name})
        else:
            continue
        deepest = max(deepest, inner)
    return deepest
