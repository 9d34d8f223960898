"""Values checked at the edge (issue 29), without services: times and numbers Neo4j
cannot hold, ids with a trailing newline, and error messages that name the API's fields
rather than Python's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from graphql import parse
from pydantic import ValidationError

from graphmem.api.graphql.lengths import MAX_INT_DIGITS, long_integer
from graphmem.api.http.bodies import BadBody, decode
from graphmem.domain.models import MemoryItem, MemoryType, as_utc, utcnow
from graphmem.errors import BadInput
from graphmem.memory.inputs import (
    Inputs,
    Limits,
    api_name,
    bad_input,
    check_id,
    stored_problem,
)
from graphmem.memory.tiers.listing import parse_cursor
from graphmem.memory.tiers.retention import PrunePolicy
from graphmem.settings import ID_PATTERN, MemoryConfig
from graphmem.stores.redis.layout import new_name


def at(offset: timedelta) -> datetime:
    return datetime(2024, 1, 1, tzinfo=timezone(offset))


# --- times -------------------------------------------------------------------------------
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


def test_old_redis_keys_with_a_trailing_newline_are_not_moved() -> None:
    assert new_name("gm:{t}:s:s1:items") == "gm:{t:s1}:items"
    assert new_name("gm:{t}:s:s1:items\n") is None
    assert new_name("gm:{t}:wm:task\n") is None
    assert new_name("gm:enrich\n") is None


@pytest.mark.parametrize(
    "cursor", ["\u00b2:mem_x", "9" * 5000 + ":mem_x", "1:mem_x\n", "99999999999999999999:m", "1:"]
)
def test_cursors_that_are_not_ours_are_bad_input(cursor: str) -> None:
    with pytest.raises(BadInput) as refused:
        parse_cursor(cursor)
    assert refused.value.details["field"] == "after"


def test_a_cursor_reads_back() -> None:
    assert parse_cursor("1700000000000000000:mem_abc") == (1700000000000000000, "mem_abc")


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


def test_huge_integer_literals_are_found_before_validation() -> None:
    huge = "9" * 5000
    assert long_integer(parse(f'{{ conversation(sessionId: "s", last: {huge}) {{ role }} }}')) == (
        "last"
    )
    assert (
        long_integer(
            parse(f"mutation {{ addMemory(input: {{metadata: {{a: [{huge}]}}}}) {{ id }} }}")
        )
        == "a"
    )
    assert long_integer(parse(f'query($n: Int = -{huge}) {{ hot(sessionId: "s") {{ id }} }}')) == (
        "a default value"
    )
    fine = "9" * MAX_INT_DIGITS
    assert (
        long_integer(parse(f'{{ conversation(sessionId: "s", last: {fine}) {{ role }} }}')) is None
    )


def test_huge_integers_in_a_body_get_a_message_without_python_internals() -> None:
    with pytest.raises(BadBody) as refused:
        decode(b'{"query": "{ x }", "variables": {"n": ' + b"9" * 5000 + b"}}")
    assert "sys." not in str(refused.value) and "set_int_max_str_digits" not in str(refused.value)
    assert "integer" in str(refused.value)
    with pytest.raises(BadBody, match="NaN is not JSON"):
        decode(b'{"query": NaN}')


async def test_a_content_length_of_thousands_of_digits_is_too_large_not_a_crash() -> None:
    import httpx

    from graphmem.api.http.app import create_app
    from graphmem.settings import Settings

    # No lifespan: the body limit answers before any service is asked.
    app = create_app(Settings(api_keys={"unit-edge-key-01": "t-unit"}))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://gm") as client:
        response = await client.post(
            "/graphql",
            content=b"{}",
            headers={"Content-Length": "9" * 5000, "Authorization": "Bearer unit-edge-key-01"},
        )
    assert response.status_code == 413
