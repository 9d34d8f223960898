"""The moment a read looks at: hostile times, clamping, and the predicate of a memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from graphmem.domain.moments import EARLIEST, LATEST, NOW, Moment
from graphmem.errors import BadInput


def test_the_default_is_the_current_read() -> None:
    assert NOW.current and Moment.of().current
    assert not Moment.of(history=True).current
    assert NOW.params() == {"asOf": None, "validAt": None, "history": False}


def test_a_naive_time_is_utc_and_offsets_convert() -> None:
    naive = Moment.of(datetime(2024, 1, 1, 12))
    assert naive.as_of == datetime(2024, 1, 1, 12, tzinfo=UTC)
    india = timezone(timedelta(hours=5, minutes=30))
    assert Moment.of(valid_at=datetime(2024, 1, 1, 12, tzinfo=india)).valid_at == datetime(
        2024, 1, 1, 6, 30, tzinfo=UTC
    )


@pytest.mark.parametrize(
    ("offset", "field"),
    [(timedelta(hours=18, minutes=1), "asOf"), (timedelta(hours=1, seconds=30), "validAt")],
)
def test_offsets_neo4j_cannot_hold_are_bad_input(offset: timedelta, field: str) -> None:
    when = datetime(2024, 1, 1, tzinfo=timezone(offset))
    with pytest.raises(BadInput) as err:
        Moment.of(when, None) if field == "asOf" else Moment.of(None, when)
    assert err.value.code == "BAD_INPUT" and err.value.message.startswith(field)


def test_the_ends_of_time_clamp() -> None:
    east = timezone(timedelta(hours=18))
    west = timezone(timedelta(hours=-18))
    assert Moment.of(datetime(1, 1, 1, tzinfo=east)).as_of == EARLIEST
    assert Moment.of(datetime(9999, 12, 31, 23, tzinfo=west)).as_of == LATEST
    assert Moment.of(valid_at=datetime(9999, 12, 31, 23, 59, tzinfo=UTC)).valid_at == LATEST


def test_what_a_memory_is_seen_as() -> None:
    t = datetime(2024, 6, 1, tzinfo=UTC)
    recorded, occurred, retracted = t, t - timedelta(days=365), t + timedelta(days=10)
    assert NOW.holds(recorded, occurred, None)
    assert not NOW.holds(recorded, occurred, retracted)
    assert Moment.of(history=True).holds(recorded, occurred, retracted)
    assert Moment.of(t + timedelta(days=1)).holds(recorded, occurred, retracted)
    assert not Moment.of(t + timedelta(days=11)).holds(recorded, occurred, retracted)
    assert not Moment.of(t - timedelta(seconds=1)).holds(recorded, occurred, None)
    assert not Moment.of(valid_at=occurred - timedelta(days=1)).holds(recorded, occurred, None)
    # history never shows what was recorded after asOf
    assert not Moment.of(t - timedelta(days=1), history=True).holds(recorded, occurred, None)
