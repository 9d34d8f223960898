"""Typed errors. Every error a client may see carries one of these codes.

The API layer turns them into GraphQL errors with ``extensions.code``; anything
else is masked so that no stack trace or driver message reaches a client.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    BAD_INPUT = "BAD_INPUT"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    UNAVAILABLE = "UNAVAILABLE"
    RATE_LIMITED = "RATE_LIMITED"
    QUOTA_EXCEEDED = "QUOTA_EXCEEDED"
    INTERNAL = "INTERNAL"


class GraphmemError(Exception):
    code: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def extensions(self) -> dict[str, Any]:
        ext: dict[str, Any] = {"code": self.code.value}
        ext.update(self.details)
        return ext


class BadInput(GraphmemError):
    code = ErrorCode.BAD_INPUT


class Unauthenticated(GraphmemError):
    code = ErrorCode.UNAUTHENTICATED


class Forbidden(GraphmemError):
    code = ErrorCode.FORBIDDEN


class NotFound(GraphmemError):
    code = ErrorCode.NOT_FOUND


class Unavailable(GraphmemError):
    code = ErrorCode.UNAVAILABLE


class RateLimited(GraphmemError):
    """Too many requests, or too many expensive ones at once, for one key; retry later."""

    code = ErrorCode.RATE_LIMITED


class QuotaExceeded(GraphmemError):
    """The tenant holds as many memories (or bytes) as it may."""

    code = ErrorCode.QUOTA_EXCEEDED


class ConfigurationError(GraphmemError):
    """A builder or settings problem, raised at start-up rather than per request."""

    code = ErrorCode.BAD_INPUT
