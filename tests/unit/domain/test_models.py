"""The domain models' own checks, without services: time zone offsets Neo4j can hold,
a parked item's reason through Redis, and the scope tokens search filters by."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from graphmem.domain.models import (
    MemoryItem,
    MemoryType,
    as_utc,
    scope_token,
    scope_tokens,
)


def at(offset: timedelta) -> datetime:
    return datetime(2024, 1, 1, tzinfo=timezone(offset))


@pytest.mark.parametrize(
    "offset",
    [timedelta(hours=18), -timedelta(hours=18), timedelta(hours=5, minutes=45), timedelta(0)],
)
def test_offsets_neo4j_holds_are_kept(offset: timedelta) -> None:
    assert as_utc(at(offset)).utcoffset() == offset


@pytest.mark.parametrize(
    ("offset", "why"),
    [
        (timedelta(hours=23, minutes=59), r"between -18:00 and \+18:00"),
        (-timedelta(hours=18, minutes=30), r"between -18:00 and \+18:00"),
        (timedelta(hours=18, minutes=1), r"between -18:00 and \+18:00"),
        (timedelta(hours=1, seconds=30), "whole minutes"),
        (timedelta(minutes=1, microseconds=5), "whole minutes"),
    ],
)
def test_offsets_neo4j_cannot_hold_are_refused(offset: timedelta, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        as_utc(at(offset))


def test_a_parked_item_keeps_its_reason_through_redis() -> None:
    plain = MemoryItem(
        id="mem_x",
        tenant="t",
        session_id="s",
        content="c",
        type=MemoryType.FACT,
        last_accessed_at=datetime(2024, 1, 1, tzinfo=UTC),
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
        token_count=1,
        content_hash="h",
    )
    assert "parked" not in plain.to_json()  # items carry nothing extra while unparked
    parked = plain.model_copy(update={"parked": "createdAt: out of range"})
    assert MemoryItem.from_json(parked.to_json()).parked == "createdAt: out of range"
    assert "parked" not in parked.model_dump()  # nor in what the API shows


def test_scope_tokens_name_tenant_session_and_user_apart() -> None:
    both = scope_tokens("acme", "s1", "u1").split()
    assert both[0] == scope_token("acme")
    assert len(both) == 3 and len(set(both)) == 3
    assert all(t.isalnum() for t in both)
    assert scope_tokens("acme", user_id="u1").split()[1] == both[2]
    assert scope_tokens("other", "s1", "u1").split()[1:] != both[1:]  # per tenant
    assert scope_tokens("acme") == scope_token("acme")
