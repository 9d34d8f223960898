"""What the contracts share: unique names, and items to store."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from graphmem.domain.models import MemoryItem, MemoryType, Tier, content_hash

#: lets ``seconds`` pass for a store (a sleep for a real one, a clock moved for a fake)
Elapse = Callable[[float], Awaitable[None]]
#: the time a store's index records writes in (``time.time`` for the real ones)
Now = Callable[[], float]


def unique(prefix: str = "t") -> str:
    """A name no other run uses: contract runs against shared services never collide."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


_seq = int(time.time_ns())


def item(
    tenant: str,
    session_id: str,
    content: str,
    *,
    item_id: str | None = None,
    user_id: str | None = None,
    tokens: int | None = None,
    tier: Tier = Tier.HOT,
    type: MemoryType = MemoryType.MESSAGE,
    seq: int | None = None,
    created_at: datetime | None = None,
    access_count: int = 0,
    **extra: Any,
) -> MemoryItem:
    """An item as ingest makes one (``seq`` rising with each call unless given)."""
    global _seq
    _seq += 1
    now = datetime.now(UTC).replace(microsecond=0)
    return MemoryItem(
        id=item_id or unique("mem"),
        tenant=tenant,
        session_id=session_id,
        user_id=user_id,
        content=content,
        type=type,
        tier=tier,
        access_count=access_count,
        last_accessed_at=now,
        created_at=created_at or now,
        relevance_score=1.0,
        token_count=tokens if tokens is not None else max(1, len(content.split())),
        content_hash=content_hash(content),
        seq=_seq if seq is None else seq,
        **extra,
    )


def days_ago(days: float) -> datetime:
    return datetime.now(UTC).replace(microsecond=0) - timedelta(days=days)
