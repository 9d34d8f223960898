"""Graph memories as search reads them, column by column (``MemoryRows``): one Cypher
row of lists per read, so that the driver decodes a few values per memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

V = TypeVar("V")

#: a time before every moment a read may name (``MemoryRows.recorded``): held always
RECORDED_EVER = -(2**63)
#: a retraction that every moment is past (``MemoryRows.retracted``)
RETRACTED_EVER = -(2**63)


@dataclass(frozen=True)
class MemoryRows:
    """Graph memories as search reads them, column by column (one Cypher row of lists):
    where each lives in the conversation, its type and tier, and its vectors. ``vectors``
    holds the float32 bytes of each memory's embedding (None: not embedded yet),
    ``sentences`` the float16 bytes of its sentence vectors (None: one sentence).
    ``scores`` is the retriever's score per memory when a retriever found them, and
    ``anchors`` the memory each row neighbours when they are conversational context.
    ``terms`` holds the uint32 hashes of each memory's stems (``enrich/lexical.py``; None:
    not analysed by this version), for the reads that carry them."""

    ids: list[str]
    sessions: list[str]
    users: list[str | None]
    seqs: list[int]
    types: list[str]
    tiers: list[str]
    vectors: list[bytes | None]
    sentences: list[bytes | None]
    scores: list[float] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)
    terms: list[bytes | None] = field(default_factory=list)
    #: when each memory happened (its ``createdAt``, the ``occurredAt`` it was added
    #: with), in seconds since the epoch; 0 when not known
    created: list[int] = field(default_factory=list)
    #: who said each memory (``enrich/sentences.speaker``); "" when not known
    speakers: list[str] = field(default_factory=list)
    #: the two clocks (docs/concepts.md, "Two clocks"), in microseconds since the epoch
    #: rounded up (a comparison with a moment, itself whole microseconds, comes out as
    #: the graph's would), for the reads that carry them (a scope's view: reads at a
    #: moment are answered from it): record time (``recordedAt``, else ``createdAt``;
    #: None where it is no time, which no read at a moment sees), valid time
    #: (``createdAt``, the same), when it was retracted (None: held; ``RETRACTED_EVER``: a
    #: retraction no moment is past) and its past retraction spans (from, to)
    recorded: list[int | None] = field(default_factory=list)
    occurred: list[int | None] = field(default_factory=list)
    retracted: list[int | None] = field(default_factory=list)
    spans: list[tuple[tuple[int, int], ...]] = field(default_factory=list)

    def dates(self) -> list[int]:
        """``created``, or 0 (not known) for every row of a read that did not carry it."""
        return self._filled(self.created, 0)

    def clocks(
        self,
    ) -> tuple[list[int | None], list[int | None], list[int | None], list[tuple[Any, ...]]]:
        """(recorded, occurred, retracted, spans); a read that did not carry them is of
        memories held from the start: recorded and happened at the earliest time, never
        retracted."""
        return (
            self._filled(self.recorded, RECORDED_EVER),
            self._filled(self.occurred, RECORDED_EVER),
            self._filled(self.retracted, None),
            self._filled(self.spans, ()),
        )

    def said_by(self) -> list[str]:
        """``speakers``, or "" (not known) for every row of a read that did not carry it."""
        return self._filled(self.speakers, "")

    def _filled(self, column: list[V], blank: V) -> list[V]:
        return column if len(column) == len(self.ids) else [blank] * len(self.ids)

    @classmethod
    def joined(cls, parts: Sequence[MemoryRows]) -> MemoryRows:
        """The rows of each part, in order (a statement that pages its rows)."""
        if len(parts) == 1:
            return parts[0]
        columns: dict[str, Any] = {
            f.name: [v for part in parts for v in getattr(part, f.name)] for f in fields(cls)
        }
        return cls(**columns)

    def select(self, keep: Sequence[bool]) -> MemoryRows:
        """The rows where ``keep`` is true."""
        columns: dict[str, Any] = {
            f.name: [v for v, k in zip(getattr(self, f.name), keep, strict=False) if k]
            for f in fields(self)
        }
        return MemoryRows(**columns)
