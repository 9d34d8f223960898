"""What both clients share about a request: reading the answer into data or an
exception, and how long to wait before retrying an UNAVAILABLE one."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import httpx

from .errors import GraphmemError, Internal, Unavailable, from_graphql


@dataclass(frozen=True)
class Retry:
    """Retries of UNAVAILABLE answers (and of requests no server answered): exponential
    backoff with full jitter, so clients that failed together do not return together."""

    attempts: int = 4
    first_delay: float = 0.2
    max_delay: float = 5.0

    def delay(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_delay, self.first_delay * 2**attempt))


def body(query: str, variables: dict[str, Any]) -> dict[str, Any]:
    return {"query": query, "variables": variables}


def data_of(response: httpx.Response) -> dict[str, Any]:
    """The data of a GraphQL answer, or the first error as an exception."""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        if response.status_code in (502, 503, 504):
            raise Unavailable(f"HTTP {response.status_code} without a GraphQL answer")
        raise Internal(f"HTTP {response.status_code}: not a GraphQL answer")
    errors = payload.get("errors")
    if errors:
        raise from_graphql(errors[0])
    data = payload.get("data")
    if not isinstance(data, dict):
        raise Internal("a GraphQL answer without data or errors")
    return data


def unreachable(exc: httpx.TransportError) -> GraphmemError:
    return Unavailable(f"graphmem did not answer: {exc.__class__.__name__}: {exc}")
