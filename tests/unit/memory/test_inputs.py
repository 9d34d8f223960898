"""Inputs checked at the edge, without services: times and numbers Neo4j cannot hold,
ids with a trailing newline, and error messages that name the API's fields rather than
Python's."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from graphmem.domain.models import MemoryItem, MemoryType, utcnow
from graphmem.errors import BadInput
from graphmem.memory.inputs import (
    Inputs,
    Limits,
    api_name,
    bad_input,
    check_id,
    stored_problem,
)
from graphmem.memory.tiers.retention import PrunePolicy
from graphmem.settings import ID_PATTERN, MemoryConfig


def at(offset: timedelta) -> datetime:
    return datetime(2024, 1, 1, tzinfo=timezone(offset))


def test_an_add_names_occurred_at_in_the_api_spelling() -> None:
    inputs = Inputs(Limits())
    with pytest.raises(BadInput) as refused:
        inputs.add({"session_id": "s", "content": "x", "occurred_at": at(timedelta(hours=20))})
    assert refused.value.details["field"] == "occurredAt"
    assert refused.value.message.startswith("occurredAt: the time zone offset")
    with pytest.raises(BadInput):
        inputs.add({"session_id": "s", "content": "x", "occurred_at": "0001-01-01T00:00:00+01:00"})


def test_stored_items_the_graph_cannot_hold_are_named() -> None:
    def item(**changes: object) -> MemoryItem:
        base = MemoryItem(
            id="mem_x",
            tenant="t",
            session_id="s",
            content="fine",
            type=MemoryType.FACT,
            last_accessed_at=utcnow(),
            created_at=utcnow(),
            token_count=1,
            content_hash="h",
        )
        return base.model_copy(update=changes)

    assert stored_problem(item()) is None
    assert "createdAt" in str(stored_problem(item(created_at=at(timedelta(hours=23)))))
    assert "content" in str(stored_problem(item(content="\ud800")))
    assert "metadata" in str(stored_problem(item(metadata={"n": float("nan")})))
    assert "metadata" in str(stored_problem(item(metadata={"n": 2**64})))
    assert "accessCount" in str(stored_problem(item(access_count=2**64)))
    assert "relevanceScore" in str(stored_problem(item(relevance_score=float("inf"))))


# --- ids -----------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["abc\n", "abc\r\n", "\nabc", "a\nb"])
def test_ids_with_a_newline_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        check_id(bad, "sessionId")
    with pytest.raises(BadInput):
        Inputs.scope(bad, None)
    with pytest.raises(BadInput):
        Inputs.scope(None, bad)
    with pytest.raises(BadInput):
        Inputs.item_id(bad)
    with pytest.raises(BadInput):
        Inputs(Limits()).add({"session_id": bad, "content": "x"})
    assert ID_PATTERN.match(bad) is None  # even for a caller that does not fullmatch


# --- messages in the API's words --------------------------------------------------------
def test_pydantic_errors_name_the_api_fields() -> None:
    assert api_name("older_than_seconds") == "olderThanSeconds"
    assert api_name("limit") == "limit"
    with pytest.raises(ValidationError) as prune:
        PrunePolicy(older_than_seconds=-1)
    refused = bad_input(prune.value)
    assert refused.details["field"] == "olderThanSeconds"
    assert refused.message.startswith("olderThanSeconds: ")
    with pytest.raises(ValidationError) as config:
        MemoryConfig().merged(hot_token_limit=1)
    assert bad_input(config.value).details["field"] == "hotTokenLimit"


def test_limits_name_the_argument_they_check() -> None:
    inputs = Inputs(Limits())
    with pytest.raises(BadInput) as refused:
        inputs.limit(0, "first")
    assert refused.value.details["field"] == "first"
    assert refused.value.message.startswith("first: ")
