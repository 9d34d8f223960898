"""Typed GraphQL errors: known errors keep their message and code, the rest are masked."""

from __future__ import annotations

import logging
from typing import Any

from graphql.error import GraphQLError
from starlette.responses import JSONResponse
from strawberry.extensions import MaskErrors
from strawberry.schema.exceptions import InvalidOperationTypeError

from graphmem.errors import ErrorCode, GraphmemError

log = logging.getLogger("graphmem.api")

INTERNAL_MESSAGE = "Internal error; the server log has the details"


def error_body(message: str, code: ErrorCode, **extensions: Any) -> dict[str, Any]:
    return {
        "data": None,
        "errors": [{"message": message, "extensions": {"code": code.value, **extensions}}],
    }


def error_response(status: int, message: str, code: ErrorCode, **extensions: Any) -> JSONResponse:
    return JSONResponse(error_body(message, code, **extensions), status_code=status)


def typed_error(error: GraphQLError) -> GraphQLError:
    original = error.original_error
    if isinstance(original, GraphmemError):
        message, extensions = original.message, original.extensions()
    elif isinstance(original, InvalidOperationTypeError):
        # Only a stream (a WebSocket) reports it as an error: HTTP answers it with a 400.
        message = f"{error.message} over a WebSocket; send them as HTTP POST requests"
        extensions = {"code": ErrorCode.BAD_INPUT.value}
    elif original is None or (error.path is None and isinstance(original, GraphQLError)):
        # Parse, validation and variable-coercion errors (syntax, unknown enum value,
        # depth limit ...): the request itself is wrong, and graphql-core says how.
        message = error.message
        extensions = {"code": ErrorCode.BAD_INPUT.value, **(error.extensions or {})}
    else:
        log.error("unexpected error in %s", error.path, exc_info=original)
        message, extensions = INTERNAL_MESSAGE, {"code": ErrorCode.INTERNAL.value}
    return GraphQLError(
        message,
        nodes=error.nodes,
        source=error.source,
        positions=error.positions,
        path=error.path,
        original_error=None,
        extensions=extensions,
    )


class TypedErrors(MaskErrors):
    """Runs last: every error leaves with ``extensions.code`` and no internals."""

    def _process_errors(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        return [typed_error(e) for e in errors]
