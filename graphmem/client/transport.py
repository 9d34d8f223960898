"""What both clients share about a request: reading the answer into data or an
exception, and how long to wait before retrying an UNAVAILABLE one."""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from graphmem.client.errors import BadInput, GraphmemError, Internal, Unavailable, from_graphql
from graphmem.client.operations import Op

T = TypeVar("T")


@dataclass(frozen=True)
class Retry:
    """Retries of UNAVAILABLE answers (and of requests no server answered): exponential
    backoff with full jitter, so clients that failed together do not return together."""

    attempts: int = 4
    first_delay: float = 0.2
    max_delay: float = 5.0

    def delay(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_delay, self.first_delay * 2**attempt))


#: the headers of every request body ``encode`` makes
JSON_HEADERS = {"Content-Type": "application/json"}


def auth_headers(key: str) -> dict[str, str]:
    """The Authorization header for ``key``; ``BadInput`` for a key no HTTP header can
    carry (httpx would raise UnicodeEncodeError on the first request)."""
    if not key.isascii() or not key.isprintable():
        raise BadInput("key: an API key is printable ASCII", {"code": "BAD_INPUT", "field": "key"})
    return {"Authorization": f"Bearer {key}"}


def body(query: str, variables: dict[str, Any]) -> dict[str, Any]:
    return {"query": query, "variables": variables}


def encode(query: str, variables: dict[str, Any]) -> bytes:
    """The request body, or ``BadInput`` naming the first value JSON cannot carry: a
    string that is not valid Unicode (a lone surrogate such as "\\ud800"), NaN or an
    infinity, an integer too long to write, a value that is not JSON at all."""
    try:
        text = json.dumps(
            body(query, variables), ensure_ascii=False, allow_nan=False, separators=(",", ":")
        )
        return text.encode("utf-8")
    except (UnicodeEncodeError, ValueError, TypeError, RecursionError) as exc:
        found = _unsendable(variables) or _unsendable({"": query}, "query")
        where, why = found or ("variables", "not JSON")
        raise BadInput(f"{where}: {why}", {"code": "BAD_INPUT", "field": where}) from exc


def _unsendable(variables: dict[str, Any], top: str = "an argument") -> tuple[str, str] | None:
    """Where in the variables (a dotted path of API field names, without the client's
    own variable names) JSON cannot carry a value, and why; iterative, so a deep nesting
    is walked too."""
    stack: list[tuple[Any, str]] = [(inner, "") for inner in variables.values()]
    while stack:
        node, path = stack.pop()
        where = path or top
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return where, "not valid Unicode (a lone surrogate?)"
        elif isinstance(node, float) and not math.isfinite(node):
            return where, "NaN and infinities are not JSON"
        elif isinstance(node, int) and abs(node).bit_length() > 14_000:  # about 4,200 digits
            return where, "an integer too long to send"
        elif isinstance(node, dict):
            for key, inner in node.items():
                stack.append((inner, f"{path}.{key}".lstrip(".")))
                stack.append((str(key), f"{path}.{key}".lstrip(".")))
        elif isinstance(node, list | tuple):
            stack.extend((inner, f"{path}.{n}".lstrip(".")) for n, inner in enumerate(node))
        elif not (node is None or isinstance(node, bool | int | float)):
            return where, f"a {type(node).__name__} is not JSON"
    return None


def data_of(response: httpx.Response) -> dict[str, Any]:
    """The data of a GraphQL answer, or the first error as an exception; ``Internal``
    for an answer that is not GraphQL's shape (no JSON, no data, errors of the wrong
    form)."""
    try:
        payload = response.json()
    except (ValueError, RecursionError):  # not JSON, not UTF-8, nested past the stack
        payload = None
    if not isinstance(payload, dict):
        if response.status_code in (502, 503, 504):
            raise Unavailable(f"HTTP {response.status_code} without a GraphQL answer")
        raise Internal(f"HTTP {response.status_code}: not a GraphQL answer")
    errors = payload.get("errors")
    if errors:
        raise from_graphql(errors[0] if isinstance(errors, list) else errors)
    data = payload.get("data")
    if not isinstance(data, dict):
        raise Internal(f"HTTP {response.status_code}: a GraphQL answer without data or errors")
    return data


def read(op: Op[T], data: dict[str, Any]) -> T:
    """The operation's result from its data; ``Internal`` when the data is not the
    shape the operation asked for."""
    try:
        return op.read(data)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise Internal(f"an answer of the wrong shape ({type(exc).__name__}: {exc})") from exc


def unreachable(exc: httpx.TransportError) -> GraphmemError:
    return Unavailable(f"graphmem did not answer: {exc.__class__.__name__}: {exc}")
