"""The quota every memory type's writes are charged to: one budget of items and bytes
per tenant (``memory/tiers/admission.py`` keeps it, in Redis for every replica).

A memory, a record, a record schema, a persona, a task, a step, a hand-over, an episode,
a reflection, a short-term message and a key of working memory are each one item; its
bytes are the text and JSON it holds. A write is charged before it is made, so one past
the quota is refused (``QUOTA_EXCEEDED``) with nothing stored. The memory types hold a
``Quota``; without one (``UNLIMITED``) nothing is counted.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from enum import StrEnum
from typing import Protocol

from graphmem.errors import GraphmemError

log = logging.getLogger("graphmem.memory")


class Pad(StrEnum):
    """What a tenant keeps in Redis with a time to live, found again by the exact count:
    a session's short-term messages, a task's working memory."""

    MESSAGES = "m"
    WORKING = "w"


class Quota(Protocol):
    async def reserve(self, tenant: str, items: int, size: int) -> None:
        """QUOTA_EXCEEDED if ``items`` more (``size`` bytes) would pass the quota."""

    async def added(self, tenant: str, items: int, size: int) -> None:
        """Count what a write stored."""

    async def holding(self, tenant: str, pad: Pad, owner: str, ttl_seconds: int) -> None:
        """The tenant keeps ``pad`` of ``owner`` (a session, a task) for ``ttl_seconds``."""


class Unlimited:
    async def reserve(self, tenant: str, items: int, size: int) -> None:
        return None

    async def added(self, tenant: str, items: int, size: int) -> None:
        return None

    async def holding(self, tenant: str, pad: Pad, owner: str, ttl_seconds: int) -> None:
        return None


UNLIMITED = Unlimited()


#: inside a charged block: what the block writes is paid for already
_paid: ContextVar[bool] = ContextVar("graphmem_quota_paid", default=False)


@asynccontextmanager
async def charged(quota: Quota, tenant: str, items: int, size: int) -> AsyncIterator[None]:
    """Reserve before the write runs in the block, count it once it succeeded (an error
    out of the block counts nothing). A write made of others (an episode that starts its
    task and adds its steps) is charged once, whole, by the outermost block: the blocks
    inside it charge nothing, so it is refused before any part of it is stored."""
    if _paid.get():
        yield
        return
    await quota.reserve(tenant, items, size)
    token = _paid.set(True)
    try:
        yield
    finally:
        _paid.reset(token)
    try:
        await quota.added(tenant, items, size)
    except GraphmemError as exc:  # the exact count catches up near the limit
        log.warning("quota usage of %s not counted: %s", tenant, exc.message)


def text_bytes(*texts: str | None) -> int:
    """The bytes a write's text takes, in UTF-8."""
    return sum(len(t.encode("utf-8", "surrogatepass")) for t in texts if t)
