"""Request bodies as the GraphQL endpoint accepts them: JSON that decodes within limits
into an object (or a batch of objects) whose strings can be stored.

Everything else is the client's mistake and gets a 400 with the GraphQL error shape,
never a 500: malformed or non-UTF-8 bytes, NaN or Infinity, a nesting deeper than the
interpreter's stack, a bare scalar, lone surrogates or NUL characters.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from graphmem import jsonscan
from graphmem.api.graphql.errors import error_response
from graphmem.api.http.limits import BODY_SCOPE_KEY
from graphmem.errors import ErrorCode
from graphmem.memory.inputs import json_problem

#: far above any real request (metadata is capped at 32 levels), far below the stack
MAX_JSON_DEPTH = 64


class BadBody(ValueError):
    pass


def _no_constants(name: str) -> Any:
    raise BadBody(f"{name} is not JSON")


def decode(data: str | bytes) -> Any:
    """The decoded body, or ``BadBody`` saying what is wrong with it."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadBody("the body is not UTF-8") from exc
    try:
        value = json.loads(data, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise BadBody(f"malformed JSON ({exc.msg} at position {exc.pos})") from exc
    except BadBody:
        raise
    except ValueError as exc:
        # An integer of more digits than Python converts; its message names Python's
        # sys.set_int_max_str_digits, which means nothing to a client.
        raise BadBody("an integer too long to read (graphmem holds 64-bit integers)") from exc
    except RecursionError as exc:  # the C decoder stops at the interpreter's limit
        raise BadBody(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from exc
    # Numbers are the stores' concern (and a field's): here only what no request may carry,
    # read from the body's own text when it cannot hold a bad string.
    if jsonscan.plain_source(data):
        if jsonscan.depth(data) > MAX_JSON_DEPTH:
            raise BadBody(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    elif (problem := json_problem(value, MAX_JSON_DEPTH, numbers=False)) is not None:
        raise BadBody(f"JSON {problem}")
    return value


class JsonObjectBody:
    """For ``/mcp``, inside ``limits.BodyLimit``: a POST body must be one JSON object that
    decodes within the limits above and that ``problem`` (the protocol's own check)
    accepts. The MCP SDK answers batches and malformed messages with its validation
    library's text; this answers them first, in graphmem's error shape."""

    def __init__(self, app: ASGIApp, problem: Callable[[dict[str, Any]], str | None]) -> None:
        self.app = app
        self.problem = problem

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body: bytes = scope[BODY_SCOPE_KEY]  # read (within limits) by BodyLimit outside
        try:
            value = decode(body)
            if not isinstance(value, dict):
                raise BadBody("send one JSON-RPC message (a JSON object) per request")
            if (problem := self.problem(value)) is not None:
                raise BadBody(problem)
        except BadBody as exc:
            response = error_response(400, f"unacceptable request body: {exc}", ErrorCode.BAD_INPUT)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
