"""The two clocks of what can change, and the moment a read looks at.

Valid time says when something was true (a memory's ``occurredAt``, stored as
``createdAt``; a relation's ``validFrom`` and ``validUntil``). Record time says when
graphmem learned it and when it stopped holding it (``recordedAt``; ``retractedAt`` on a
memory, ``closedAt`` on a relation). A read at a ``Moment`` sees what graphmem held at
``as_of`` (record time) of what was true at ``valid_at`` (valid time); docs/concepts.md,
"Two clocks".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from graphmem.errors import BadInput

#: the earliest and latest moment a read may name: past these, a comparison with what
#: graphmem holds says nothing more, and Neo4j's DateTime arithmetic stays in range
EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def micros(value: datetime) -> int:
    """A UTC time as whole microseconds since the epoch (how a scope's view holds the
    clocks, ``memory/search/scopeclocks.py``)."""
    return (value - EPOCH) // timedelta(microseconds=1)


def _checked(value: datetime | None, field: str) -> datetime | None:
    if value is None:
        return None
    # the checks occurredAt passes at the edge (domain.models.as_utc), here without its
    # import cycle: a naive time is UTC, and Neo4j must be able to hold the offset
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    offset = aware.utcoffset()
    if offset is not None and (abs(offset.total_seconds()) > 18 * 3600 or offset.seconds % 60):
        raise BadInput(
            f"{field}: the time zone offset must be whole minutes between -18:00 and +18:00",
            field=field,
        )
    try:
        utc = aware.astimezone(UTC)
    except OverflowError:
        # past either end of what Python holds in UTC: before or after everything
        return LATEST if aware.year == 9999 else EARLIEST
    return min(max(utc, EARLIEST), LATEST)


@dataclass(frozen=True)
class Moment:
    """What a read sees. ``as_of``: what graphmem held then (record time; None: now);
    ``valid_at``: what was true then (valid time; None: whenever); ``history``: closed
    relations and retracted memories too (still none recorded after ``as_of``)."""

    as_of: datetime | None = None
    valid_at: datetime | None = None
    history: bool = False

    @classmethod
    def of(
        cls,
        as_of: datetime | None = None,
        valid_at: datetime | None = None,
        history: bool | None = False,
    ) -> Moment:
        """A moment from a client's arguments: BAD_INPUT for an offset Neo4j cannot hold;
        a time at either end of years 1-9999 (in UTC, or past them once converted) is
        clamped to EARLIEST or LATEST: nothing is recorded out there."""
        return cls(_checked(as_of, "asOf"), _checked(valid_at, "validAt"), bool(history))

    @property
    def current(self) -> bool:
        """The default read: what graphmem holds now, retracted memories left out."""
        return self.as_of is None and self.valid_at is None and not self.history

    def params(self) -> dict[str, Any]:
        """The parameters every statement that reads at a moment takes."""
        return {"asOf": self.as_of, "validAt": self.valid_at, "history": self.history}

    def holds(self, recorded: datetime, occurred: datetime, retracted: datetime | None) -> bool:
        """Whether a memory is seen at this moment (the predicate the statements apply,
        for items read from Redis; a hot item was never retracted before)."""
        if self.as_of is not None and recorded > self.as_of:
            return False
        if self.valid_at is not None and occurred > self.valid_at:
            return False
        if self.history or retracted is None:
            return True
        return self.as_of is not None and retracted > self.as_of


#: the default read
NOW = Moment()
