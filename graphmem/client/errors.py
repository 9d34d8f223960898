"""Errors the API answers with, as exceptions carrying their GraphQL error code."""

from __future__ import annotations

from typing import Any


class GraphmemError(Exception):
    """An error answered by graphmem (or no answer at all: UNAVAILABLE)."""

    code = "INTERNAL"

    def __init__(self, message: str, extensions: dict[str, Any] | None = None) -> None:
        super().__init__(f"{self.code}: {message}")
        self.message = message
        self.extensions = extensions or {}


class BadInput(GraphmemError):
    code = "BAD_INPUT"


class Unauthenticated(GraphmemError):
    code = "UNAUTHENTICATED"


class Forbidden(GraphmemError):
    code = "FORBIDDEN"


class NotFound(GraphmemError):
    code = "NOT_FOUND"


class Unavailable(GraphmemError):
    """Neo4j or Redis did not answer the server, or the server did not answer: retried."""

    code = "UNAVAILABLE"


class RateLimited(GraphmemError):
    code = "RATE_LIMITED"

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asks to wait before the next try."""
        ms = self.extensions.get("retryAfterMs")
        return ms / 1000 if isinstance(ms, int | float) else None


class QuotaExceeded(GraphmemError):
    code = "QUOTA_EXCEEDED"


class Internal(GraphmemError):
    code = "INTERNAL"


BY_CODE: dict[str, type[GraphmemError]] = {
    cls.code: cls
    for cls in (
        BadInput,
        Unauthenticated,
        Forbidden,
        NotFound,
        Unavailable,
        RateLimited,
        QuotaExceeded,
        Internal,
    )
}


def from_graphql(error: Any) -> GraphmemError:
    """A GraphQL error as its exception; ``Internal`` for one without a known code, or
    not shaped as a GraphQL error at all."""
    if not isinstance(error, dict):
        return Internal(f"an error not shaped as GraphQL's: {str(error)[:200]}")
    extensions = error.get("extensions")
    if not isinstance(extensions, dict):
        extensions = {}
    cls = BY_CODE.get(str(extensions.get("code")), Internal)
    return cls(str(error.get("message", "")), extensions)
