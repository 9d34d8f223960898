"""A scope's two clocks as columns (``scopeview.py``), so that a read at a moment is
served by the view as a current read is: which rows a moment sees is a mask of a few
numpy comparisons, the predicate the graph's statements apply (``memory/text_hits``:
recorded at or before ``asOf``, not retracted then nor inside a past retraction span,
happened at or before ``validAt``; docs/concepts.md, "Reads at a moment").

Times are microseconds since the epoch, rounded up from the graph's (a moment is whole
microseconds, so each comparison comes out as the graph's does). A time the graph could
not compare (none at all) is ``NEVER``, which no moment reaches; a memory held is never
retracted, ``NEVER`` too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graphmem.domain.moments import Moment, micros
from graphmem.memory.search.scopecolumns import I64, Mask
from graphmem.stores.models import MemoryRows

NEVER = np.iinfo(np.int64).max


def _times(values: Sequence[int | None]) -> I64:
    return np.fromiter(
        (NEVER if v is None else v for v in values), dtype=np.int64, count=len(values)
    )


class Clocks:
    """Each row's record time, valid time and retraction, and the past retraction spans
    of the few rows that were unretracted (``span_rows`` with their bounds)."""

    def __init__(
        self, recorded: I64, occurred: I64, retracted: I64, spans: tuple[I64, I64, I64]
    ) -> None:
        self.recorded, self.occurred, self.retracted = recorded, occurred, retracted
        self.span_rows, self.span_from, self.span_to = spans
        #: what a current read sees; None: every row (no row is retracted)
        held: Mask = retracted == NEVER
        self.held: Mask | None = None if held.all() else held
        self.nbytes = sum(a.nbytes for a in (recorded, occurred, retracted, held, *spans))

    @classmethod
    def of(cls, rows: MemoryRows, first: int = 0) -> Clocks:
        """The rows' clocks, their span rows counted from ``first``."""
        recorded, occurred, retracted, spans = rows.clocks()
        return cls(_times(recorded), _times(occurred), _times(retracted), _spans(spans, first))

    @classmethod
    def joined(cls, parts: Sequence[Clocks]) -> Clocks:
        """The clocks of consecutive blocks of rows, each part's span rows its own."""
        offsets = np.cumsum([0] + [len(p.recorded) for p in parts[:-1]])
        return cls(
            np.concatenate([p.recorded for p in parts]),
            np.concatenate([p.occurred for p in parts]),
            np.concatenate([p.retracted for p in parts]),
            (
                np.concatenate([p.span_rows + o for p, o in zip(parts, offsets, strict=True)]),
                np.concatenate([p.span_from for p in parts]),
                np.concatenate([p.span_to for p in parts]),
            ),
        )

    def kept(self, keep: I64, total: int) -> Clocks:
        """The clocks of the rows ``keep`` (of ``total``), in that order."""
        at = np.full(total, -1, dtype=np.int64)
        at[keep] = np.arange(len(keep))
        moved = at[self.span_rows]
        still = moved >= 0
        return Clocks(
            self.recorded[keep],
            self.occurred[keep],
            self.retracted[keep],
            (moved[still], self.span_from[still], self.span_to[still]),
        )

    def seen(self, moment: Moment) -> Mask | None:
        """The rows a read at ``moment`` sees; None: every row."""
        if moment.current:
            return self.held
        keep = np.ones(len(self.recorded), dtype=np.bool_)
        as_of = None if moment.as_of is None else micros(moment.as_of)
        if as_of is not None:
            keep &= self.recorded <= as_of
        if moment.valid_at is not None:
            keep &= self.occurred <= micros(moment.valid_at)
        if moment.history:
            return keep
        if as_of is None:
            return keep if self.held is None else keep & self.held
        keep &= self.retracted > as_of
        inside = (self.span_from <= as_of) & (as_of < self.span_to)
        keep[self.span_rows[inside]] = False
        return keep


def _spans(spans: Sequence[tuple[Any, ...]], first: int) -> tuple[I64, I64, I64]:
    rows = [first + n for n, held in enumerate(spans) for _ in held]
    return (
        np.asarray(rows, dtype=np.int64),
        np.asarray([s for held in spans for s, _ in held], dtype=np.int64),
        np.asarray([e for held in spans for _, e in held], dtype=np.int64),
    )
